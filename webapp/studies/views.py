"""Study pages: list, new (form or preset), detail with live progress, trend plot, table, CSV, re-runs."""

from __future__ import annotations

import csv

from bokeh.embed import json_item
from django.contrib import messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine.api import metric_label, safe_cells
from webapp.core.permissions import Viewer, can_change, get_owned_or_404, get_visible_or_404, visible_to
from webapp.experiments.models import Run
from webapp.experiments.reproduce import PRESETS as PAPER_PRESETS
from webapp.experiments.reproduce import paper_trace, paper_trace_note
from webapp.experiments.services import ExperimentError, rerun
from webapp.experiments.tasks import reconcile
from webapp.studies import services
from webapp.studies.figures import study_trend
from webapp.studies.forms import StudyForm
from webapp.studies.models import LOAD, Study
from webapp.studies.presets import PRESETS, create_preset_study
from webapp.traces.models import Trace

#: The metrics of each point in the study's table (names, units and formats from engine.metrics.units).
TABLE_METRICS = ("weighted_turnaround", "mean_abs_skip", "mean_wait", "utilization")


def _studies(user: Viewer) -> QuerySet[Study]:
    return visible_to(Study, user).select_related("experiment__owner", "experiment__trace")


@require_GET
def study_list(request: HttpRequest) -> HttpResponse:
    studies = [(study, services.progress(study)) for study in _studies(request.user)]
    return render(request, "studies/list.html", {"studies": studies})


@require_http_methods(["GET", "POST"])
def study_new(request: HttpRequest) -> HttpResponse:
    form = StudyForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            study = services.create_study(
                request.user, name=data["name"], trace=data["trace"], procs=data["procs"],
                policies=[{"preset": p} for p in data["policies"]], grid=data["grid"],
                allocation=data["allocation"], exact_estimates=data["exact_estimates"], seed=data["seed"],
                shared=data["shared"],
            )
        except ExperimentError as e:
            form.add_error(None, str(e))
        else:
            messages.success(request, f"Queued {study.points.count()} point(s) over every worker.")
            return redirect(study)
    traces = visible_to(Trace, request.user).filter(status=Trace.Status.READY)
    paper = PAPER_PRESETS.get(request.GET.get("preset", ""))
    paper = paper if paper and paper.study else None
    chosen = paper_trace(paper, traces) if paper else None    # the paper's trace, not the newest upload
    return render(request, "studies/new.html", {"form": form, "presets": PRESETS.values(), "traces": traces,
                                                "reproduce": paper, "paper_trace": chosen,
                                                "paper_trace_note": paper_trace_note(paper, chosen) if paper else ""},
                  status=400 if request.method == "POST" else 200)


@require_POST
def study_preset(request: HttpRequest) -> HttpResponse:
    preset = PRESETS.get(request.POST.get("preset", ""))
    try:
        trace = get_visible_or_404(Trace, request.user, request.POST.get("trace"))
    except Http404:
        trace = None
    if preset is None or trace is None:
        messages.error(request, "Choose a preset and one of your parsed traces.")
        return redirect("studies:new")
    try:
        study = create_preset_study(request.user, preset.name, trace)
    except ExperimentError as e:
        messages.error(request, str(e))
        return redirect("studies:new")
    messages.success(request, f"Queued {study.points.count()} point(s) of “{preset.title}”.")
    return redirect(study)


def _choice(request: HttpRequest, name: str, allowed: list[str], default: str) -> str:
    value = request.GET.get(name, "")
    return value if value in allowed else default


@require_GET
def study_detail(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_visible_or_404(_studies(request.user), request.user, pk)
    axes = list(study.grid) or [LOAD]
    metrics = services.grid_metrics()
    x = _choice(request, "x", axes, axes[0])
    metric = _choice(request, "metric", metrics, "weighted_turnaround")
    preset = PRESETS.get(study.preset)
    figures = [{"x": fx, "metric": fm, "caption": caption,
                "url": reverse("studies:plot", args=[pk]) + f"?x={fx}&metric={fm}"}
               for fx, fm, caption in (preset.figures if preset else [])]
    if not figures or request.GET.get("x") or request.GET.get("metric"):
        figures.insert(0, {"x": x, "metric": metric, "caption": "",
                           "url": reverse("studies:plot", args=[pk]) + f"?x={x}&metric={metric}"})
    return render(request, "studies/detail.html", {
        "study": study, "experiment": study.experiment, "points": services.points(study),
        "columns": services.table_columns(study), "progress": services.progress(study),
        "axes": axes, "metrics": [(code, metric_label(code)) for code in metrics], "x": x, "metric": metric,
        "figures": [{**f, "metric_label": metric_label(f["metric"])} for f in figures],
        "table_metrics": [(code, metric_label(code)) for code in TABLE_METRICS],
        "can_change": can_change(study.experiment, request.user),
    })


@require_GET
def study_progress(request: HttpRequest, pk: int) -> JsonResponse:
    study = get_visible_or_404(_studies(request.user), request.user, pk)
    reconcile(study.experiment.runs.all())  # the page's poll doubles as the lost-worker check
    return JsonResponse(services.progress(study))


@require_GET
def study_plot(request: HttpRequest, pk: int) -> JsonResponse:
    study = get_visible_or_404(_studies(request.user), request.user, pk)
    axes = list(study.grid)
    if not axes:
        return JsonResponse({"error": "This study has no grid to plot against."}, status=409)
    x = _choice(request, "x", axes, axes[0])
    metric = _choice(request, "metric", services.grid_metrics(), "weighted_turnaround")
    values, series = services.trend_series(study, x)
    if not any(any(s for s in line) for line in series.values()):
        return JsonResponse({"error": "No point of this plot has finished yet."}, status=409)
    layout = study_trend(x, values, series, metric, metric_label(metric))
    return JsonResponse(json_item(layout, request.GET.get("target") or f"plot-{x}-{metric}"))


@require_GET
def study_csv(request: HttpRequest, pk: int) -> HttpResponse:
    return csv_download(get_visible_or_404(_studies(request.user), request.user, pk))


def csv_download(study: Study) -> HttpResponse:
    """The study's table as a CSV attachment (the page's link and GET /api/studies/<id>/study.csv)."""
    response = HttpResponse(content_type="text/csv")
    filename = f"{slugify(study.name) or 'study'}-{study.pk}.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    for row in services.csv_rows(study):
        writer.writerow(safe_cells(row))
    return response


@require_POST
def study_rerun_failed(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_owned_or_404(Study, request.user, pk)
    count = services.rerun_failed(study)
    messages.success(request, f"Queued {count} failed point(s) again.")
    return redirect(study)


@require_POST
def point_rerun(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_owned_or_404(Run.objects.select_related("study_point__study"), request.user, pk)
    point = getattr(run, "study_point", None)
    if point is None:
        return redirect(run.experiment)
    if rerun(run):
        messages.success(request, f"Queued {run.label} again.")
    else:
        messages.error(request, f"{run.label} is still {run.status}.")
    return redirect(point.study)
