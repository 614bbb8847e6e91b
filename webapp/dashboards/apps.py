from __future__ import annotations

from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "webapp.dashboards"
    label = "dashboards"
    verbose_name = "Dashboards"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Not at the top: Django loads apps.py before any models, and the receivers reach models;
        # ready() is where Django says they may load. Importing the module connects its receivers.
        from webapp.dashboards import receivers  # noqa: F401
        from webapp.dashboards.plot_cache import plots_bytes_of
        from webapp.quotas.services import measures_disk

        measures_disk("plots", "Cached plots", plots_bytes_of)
