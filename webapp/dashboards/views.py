"""Thin glue: permission check, load, build the figure, return it (json_item, page or HTML file)."""

from __future__ import annotations

from urllib.parse import urlencode

from bokeh.embed import file_html, json_item
from bokeh.resources import INLINE
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from webapp.core.permissions import get_visible_or_404
from webapp.dashboards import comparison as plots
from webapp.dashboards.data import load_comparison, unique_labels
from webapp.dashboards.figures import trace_characterization
from webapp.dashboards.plot_cache import cache_key, cached_gzip_json, gzip_json_response
from webapp.experiments.models import Experiment, Run
from webapp.traces.models import Trace

#: Query parameters the plots read (ratio pair, Gantt window); passed from the page to each plot URL.
PLOT_PARAMS = ("a", "b", "start", "end")


def _params(request: HttpRequest) -> dict[str, str]:
    return {key: request.GET[key] for key in PLOT_PARAMS if request.GET.get(key)}


@require_GET
def trace_plots(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_visible_or_404(Trace, request.user, pk)
    if not trace.is_ready or trace.cache_path is None or not trace.cache_path.exists():
        return JsonResponse({"error": "The trace is not parsed (yet)."}, status=409)
    target = request.GET.get("target", "trace-plots")

    def build() -> dict:
        workload = trace.workload()
        # the page shows the cleaning report itself (an HTML table), so not again as a plot
        return json_item(trace_characterization(workload.jobs, workload.metadata), target)

    key = cache_key("trace", trace.pk, trace.cache, trace.sha256, target)
    return gzip_json_response(request, cached_gzip_json(f"traces/{trace.pk}", "characterization", key, build))


@require_GET
def comparison(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_visible_or_404(Experiment, request.user, pk)
    runs = list(experiment.runs.order_by("position", "pk"))
    labels = unique_labels(runs)
    done_labels = [label for label, run in zip(labels, runs) if run.status == run.Status.DONE]
    params = _params(request)
    query = f"?{urlencode(params)}" if params else ""
    names = plots.plot_names(bool(experiment.sweep_param and experiment.sweep_values), runs_have_deadlines(runs))
    sections = [{"name": name, "title": plots.SECTION_TITLES[name],
                 "url": reverse("dashboards:comparison_plot", args=[pk, name]) + query} for name in names]
    return render(request, "dashboards/comparison.html", {
        "experiment": experiment, "runs": runs, "done": done_labels, "labels": done_labels,
        "sections": sections, "params": params,
        "download_url": reverse("dashboards:comparison_download", args=[pk]) + query,
    })


def runs_have_deadlines(runs) -> bool:  # noqa: ANN001 - Run objects
    """Whether a finished run had deadline jobs (its summary counts them; see engine.metrics.deadlines)."""
    return any((run.summary or {}).get("deadline_jobs") for run in runs)


def _runs_state(experiment: Experiment) -> list:
    """What a comparison plot depends on besides its parameters: each run's id, status and finish time."""
    return [experiment.procs, experiment.allocation, experiment.sweep_param, experiment.sweep_values,
            list(experiment.runs.order_by("position", "pk").values_list("pk", "label", "status", "finished_at"))]


def comparison_plot_gzip(experiment: Experiment, name: str, params: dict[str, str]) -> bytes:
    """One plot's gzipped json_item, from the cache or built now (no permission check: callers do it)."""
    def build() -> dict:
        return json_item(plots.build_plot(name, load_comparison(experiment), params), f"plot-{name}")

    key = cache_key("comparison", name, params, _runs_state(experiment))
    return cached_gzip_json(f"experiments/{experiment.pk}", name, key, build)


def prebuild_comparison(experiment: Experiment) -> None:
    """Build and cache every default plot of the comparison, e.g. from the worker when the last run is
    done, so the first person to open the page does not wait for the computation."""
    runs = experiment.runs.all()
    for name in plots.plot_names(bool(experiment.sweep_param and experiment.sweep_values), runs_have_deadlines(runs)):
        comparison_plot_gzip(experiment, name, {})


@require_GET
def comparison_plot(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    experiment = get_visible_or_404(Experiment, request.user, pk)
    if name not in plots.PLOTS:
        raise Http404("No such plot.")
    if not experiment.runs.filter(status=Run.Status.DONE).exists():
        return JsonResponse({"error": "No run of this experiment has finished yet."}, status=409)
    return gzip_json_response(request, comparison_plot_gzip(experiment, name, _params(request)))


@require_GET
def comparison_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The whole comparison as one self-contained HTML file (BokehJS inline, works offline)."""
    experiment = get_visible_or_404(Experiment, request.user, pk)
    data = load_comparison(experiment)
    if not data.schedules:
        return HttpResponse("No run of this experiment has finished yet.", status=409, content_type="text/plain")
    title = f"SchedLab comparison: {experiment.name}"
    layout = plots.full_layout(data, _params(request), title)
    html = file_html(layout, INLINE, title=title)
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    filename = f"{slugify(experiment.name) or 'experiment'}-{experiment.pk}-comparison.html"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
