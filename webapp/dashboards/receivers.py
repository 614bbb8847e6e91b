"""What the dashboards do when other apps announce something: a finished experiment gets its
comparison plots built in the worker, a parsed trace its page's plots in the quick worker before it
says ready, so the first person to open the page does not wait (nor hold a web server thread while
they are built)."""

from __future__ import annotations

from django.dispatch import receiver

from webapp.dashboards import views
from webapp.experiments.models import Experiment
from webapp.experiments.signals import experiment_finished
from webapp.traces.models import Trace
from webapp.traces.signals import trace_parsed


@receiver(experiment_finished, dispatch_uid="dashboards.prebuild_plots")
def prebuild_plots(sender: object, experiment: Experiment, **kwargs: object) -> None:
    views.prebuild_comparison(experiment)


@receiver(trace_parsed, dispatch_uid="dashboards.prebuild_trace_plots")
def prebuild_trace_plots(sender: object, trace: Trace, **kwargs: object) -> None:
    views.characterization_gzip(trace)
