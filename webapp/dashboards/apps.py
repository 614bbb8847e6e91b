from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "webapp.dashboards"
    label = "dashboards"
    verbose_name = "Dashboards"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # imported here, not at the top: models (which the views import) are loadable only once apps are ready
        from webapp.experiments.signals import experiment_finished

        experiment_finished.connect(prebuild_plots, dispatch_uid="dashboards.prebuild_plots")


def prebuild_plots(sender: Any, experiment: Any, **kwargs: Any) -> None:
    """Build the finished experiment's comparison plots in the worker, so the first person to open the
    comparison does not wait for them."""
    from webapp.dashboards import views  # imported when called: apps.py loads before the models views need

    views.prebuild_comparison(experiment)
