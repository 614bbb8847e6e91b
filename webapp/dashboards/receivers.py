"""What the dashboards do when other apps announce something: a finished experiment gets its
comparison plots built in the worker, so the first person to open the comparison does not wait."""

from __future__ import annotations

from django.dispatch import receiver

from webapp.dashboards import views
from webapp.experiments.models import Experiment
from webapp.experiments.signals import experiment_finished


@receiver(experiment_finished, dispatch_uid="dashboards.prebuild_plots")
def prebuild_plots(sender: object, experiment: Experiment, **kwargs: object) -> None:
    views.prebuild_comparison(experiment)
