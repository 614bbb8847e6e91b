"""Thin glue: permission check, load, build the figure, return it (json_item, page or HTML file)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlencode

from bokeh.embed import file_html, json_item
from bokeh.layouts import column
from bokeh.models import Div
from bokeh.resources import INLINE
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from webapp.core.permissions import get_visible_or_404
from webapp.core.responses import attachment
from webapp.dashboards import comparison as plots
from webapp.dashboards.data import (
    choose_baseline,
    fidelity_table,
    load_comparison,
    unique_labels,
)
from webapp.dashboards.figures import (
    forest_figure,
    forest_frame,
    interval_texts,
    metrics_table_html,
    policy_colours,
    trace_characterization,
)
from webapp.dashboards.page_facts import prebuild_page, table_facts, window_text
from webapp.dashboards.plot_cache import (
    cache_key,
    cached_gzip_json,
    comparison_folder,
    gzip_json_response,
    runs_state,
)
from webapp.experiments.models import Experiment, ReplicateSet, Run
from webapp.experiments.provenance import provenance_html
from webapp.experiments.reproduce import PRESETS as PAPER_PRESETS
from webapp.experiments.reproduce import findings_verdict, judge_paper, judge_runs, paper_runs, paper_verdict
from webapp.traces.models import Trace

#: The provenance tables' look in the HTML download.
PROVENANCE_CSS = ("table.provenance{border-collapse:collapse;margin:6px 0 14px;font-size:13px}"
                  "table.provenance th,table.provenance td{border:1px solid #ccc;padding:3px 6px;text-align:left;"
                  "vertical-align:top}table.provenance code{white-space:pre-wrap;word-break:break-all}")

#: Query parameters the plots read (ratio pair, Gantt window); passed from the page to each plot URL.
PLOT_PARAMS = ("a", "b", "start", "end", "baseline", "zero_wait")


def _params(request: HttpRequest) -> dict[str, str]:
    return {key: request.GET[key] for key in PLOT_PARAMS if request.GET.get(key)}


@require_GET
def trace_plots(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_visible_or_404(Trace, request.user, pk)
    if not trace.is_ready or trace.cache_path is None or not trace.cache_path.exists():
        return JsonResponse({"error": "The trace is not parsed (yet)."}, status=409)
    return gzip_json_response(request, characterization_gzip(trace, request.GET.get("target", "trace-plots")))


def characterization_gzip(trace: Trace, target: str = "trace-plots") -> bytes:
    """The trace page's plots (gzipped json_item into the element `target`), from the cache or built
    now; the quick worker builds the page's own (the default target) when it parses (receivers)."""
    def build() -> dict:
        workload = trace.workload()
        # the page shows the cleaning report itself (an HTML table), so not again as a plot
        return json_item(trace_characterization(workload.jobs, workload.metadata), target)

    key = cache_key("trace", trace.pk, trace.cache, trace.sha256, target)
    return cached_gzip_json(f"traces/{trace.pk}", "characterization", key, build)


#: At most this many runs on one comparison page (legends and tables stay readable).
MAX_RUNS = 12


def _done_labels(runs: list[Run]) -> list[str]:
    return [label for label, run in zip(unique_labels(runs), runs) if run.status == Run.Status.DONE]


def _comparison_page(request: HttpRequest, experiment: Experiment, runs: list[Run], *, plot_url, download_url: str,
                     cross: bool, query: dict[str, str], replicates: ReplicateSet | None = None) -> HttpResponse:
    """The comparison page of ``runs`` (one experiment's, or picked from several on one trace)."""
    labels = unique_labels(runs)
    done = [(label, run) for label, run in zip(labels, runs) if run.status == Run.Status.DONE]
    done_labels = [label for label, _ in done]
    colours = policy_colours(done_labels)
    params = _params(request)
    window = window_text(experiment, runs, params, cross=cross)
    plot_params = {k: v for k, v in params.items() if k not in ("start", "end")} if window.get("error") else params
    suffix = f"?{urlencode({**plot_params, **query})}" if plot_params or query else ""
    sweep = bool(not cross and experiment.sweep_param and experiment.sweep_values)
    names = [name for name in plots.plot_names(sweep, runs_have_deadlines(runs), len(done)) if name != "metrics"]
    sections = [{"name": name, "title": plots.SECTION_TITLES[name], "url": plot_url(name) + suffix,
                 "on_demand": plots.on_demand(name, params), "show": plots.SHOW_LABELS.get(name, "")} for name in names]
    table = table_facts(experiment, runs, cross=cross)   # cached: the page reads no schedule once built
    summaries = table.summaries
    baseline = choose_baseline(done_labels, table.unusable, params.get("baseline"))
    fidelity = table.fidelity
    experiments = {run.experiment_id: run.experiment for run in runs}
    replicated = replicated_context(replicates, baseline) if replicates is not None and summaries else {}
    findings = paper_findings(experiment, done) if not cross and replicates is None else {}
    if replicated.get("forest_url"):
        sections = [*sections, {"name": "forest", "title": "Every difference with its interval (replicates)",
                                "url": replicated["forest_url"]}]
    shown = sections if summaries or not done else []
    return render(request, "dashboards/comparison.html", {
        "replicated": replicated, "findings": findings,
        "experiment": experiment, "runs": runs, "cross": cross, "labels": done_labels,
        "done": done_labels, "legend": [{"label": label, "colour": colours[label], "run": run} for label, run in done],
        "title": ", ".join(done_labels or labels),
        "machines": sorted({e.machine_label for e in experiments.values()}), "experiments": list(experiments.values()),
        "metrics_table": mark_safe(metrics_table_html(
            summaries, baseline=baseline, colours=colours, unusable=table.unusable,
            intervals=replicated.get("intervals"),
            interval_note=replicated.get("interval_note", ""))) if summaries else "",
        "job_warning": table.jobs_note, "nothing_common": bool(done) and not summaries,
        "fidelity": fidelity, "baselines": [label for label in done_labels if label not in table.unusable],
        "baseline": baseline, "sections": shown, "params": params, "query": query,
        "prefetch": [section["url"] for section in shown if not section.get("on_demand")],
        "window": window,
        "download_url": download_url + suffix,
    })


def paper_findings(experiment: Experiment, done: list[tuple[str, Run]]) -> dict:
    """An experiment made from a reproduce-a-paper preset, without replicates: the paper's claims beside
    our runs' own figures, each with agree / partly / disagree (webapp.experiments.reproduce.judge_runs);
    {} for any other experiment."""
    paper = PAPER_PRESETS.get(experiment.paper)
    if paper is None:
        return {}
    rows = judge_runs(paper, paper_runs([run for _, run in done], [label for label, _ in done]),
                      experiment.sweep_param)
    compared = list(dict.fromkeys(f"{claim.b} with {claim.a}" for claim in paper.claims))
    missing = (f"None of the paper's claims compares two of these runs (they compare {'; '.join(compared)})."
               if compared else "This paper's findings are not counted from the runs' metrics: the plots below show them.")
    return {"paper": paper, "rows": rows, "verdict": findings_verdict(rows), "missing": missing}


def replicated_context(replicates: ReplicateSet, baseline: str) -> dict:
    """What the comparison page shows of a replicate set: its state, and once combined (the report is
    cached with the set: nothing is recomputed here) the intervals beside the table's changes, the
    verdicts and the forest plot's address."""
    report = replicates.report
    if report is None:
        return {"pending": True, "error": replicates.error, "spec": replicates.spec}
    first = report["sets"][0]["name"]
    paper = PAPER_PRESETS.get((replicates.options or {}).get("paper") or replicates.experiment.paper)
    judgements = judge_paper(report, paper) if paper is not None else []
    return {
        "paper": paper, "judgements": judgements, "paper_verdict": paper_verdict(judgements),
        "spec": replicates.spec, "report": report,
        "sets": report["sets"], "counted": report["counted"]["description"],
        "bootstrap": report["bootstrap"]["description"], "flurries": report["flurries"],
        "verdicts": [pair for pair in report["pairs"] if pair["set"] == first],
        "others": [pair for pair in report["pairs"] if pair["set"] != first],
        "intervals": interval_texts(report, baseline),
        "interval_note": f"Intervals: {report['bootstrap']['description']}, over {report['sets'][0]['description']} "
                         f"(the change of the means over the replicates; the values are the whole-trace runs').",
        "forest_url": reverse("dashboards:forest", args=[replicates.experiment_id]),
    }


@require_GET
def comparison(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_visible_or_404(Experiment.objects.select_related("trace", "replicate_set"), request.user, pk)
    runs = list(experiment.runs.select_related("experiment").order_by("position", "pk"))
    replicates = getattr(experiment, "replicate_set", None)
    return _comparison_page(request, experiment, runs, cross=False, query={}, replicates=replicates,
                            plot_url=lambda name: reverse("dashboards:comparison_plot", args=[pk, name]),
                            download_url=reverse("dashboards:comparison_download", args=[pk]))


class BadRequest(ValueError):
    """A comparison request that names no run, too many, or runs of different traces."""


def requested_runs(request: HttpRequest) -> list[Run]:
    """``?runs=ID,ID,...`` (or repeated ``runs=``) as visible runs in that order; Http404 when one is
    not visible to the user (as if it did not exist), BadRequest when they cannot be compared."""
    ids: list[int] = []
    for part in ",".join(request.GET.getlist("runs")).split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            raise BadRequest(f"runs: {part!r} is not a run number (expected runs=ID,ID,...)")
        if int(part) not in ids:
            ids.append(int(part))
    if not ids:
        raise BadRequest("Choose the runs to compare: runs=ID,ID,...")
    if len(ids) > MAX_RUNS:
        raise BadRequest(f"At most {MAX_RUNS} runs on one page; {len(ids)} were asked for.")
    queryset = Run.objects.select_related("experiment__trace", "experiment__machine", "experiment__owner")
    runs = [get_visible_or_404(queryset, request.user, pk) for pk in ids]
    traces = {run.experiment.trace_id for run in runs}
    if len(traces) > 1:
        raise BadRequest("These runs are on different traces; only runs on the same trace can be compared job by job.")
    return runs


def _bad_request(error: BadRequest) -> HttpResponse:
    return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")


@require_GET
def compare_runs(request: HttpRequest) -> HttpResponse:
    try:
        runs = requested_runs(request)
    except BadRequest as e:
        return _bad_request(e)
    query = {"runs": ",".join(str(run.pk) for run in runs)}
    return _comparison_page(request, runs[0].experiment, runs, cross=True, query=query,
                            plot_url=lambda name: reverse("dashboards:compare_plot", args=[name]),
                            download_url=reverse("dashboards:compare_download"))


def runs_have_deadlines(runs: Iterable[Run]) -> bool:
    """Whether a finished run had deadline jobs (its summary counts them; see engine.metrics.deadlines)."""
    return any((run.summary or {}).get("deadline_jobs") for run in runs)


def comparison_plot_gzip(experiment: Experiment, name: str, params: dict[str, str], runs: list[Run] | None = None,
                         own: list[Run] | None = None) -> bytes:
    """One plot's gzipped json_item, from the cache or built now (no permission check: callers do it).
    ``runs``: a cross-experiment selection; None = the experiment's own runs (``own``, when the caller
    has them already, in position order)."""
    if runs is None:
        listed = own if own is not None else list(experiment.runs.order_by("position", "pk"))
    else:
        listed = runs
    own_runs = runs is None

    def build() -> dict:
        return json_item(plots.build_plot(name, load_comparison(experiment, None if own_runs else runs), params),
                         f"plot-{name}")

    key = cache_key("comparison", name, params, runs_state(experiment, listed))
    return cached_gzip_json(comparison_folder(experiment, listed, own_runs), name, key, build)


def prebuild_comparison(experiment: Experiment) -> None:
    """Build and cache the page's tables and every default plot of the comparison, e.g. from the worker
    when the last run is done, so the first person to open the page does not wait for the computation."""
    runs = list(experiment.runs.order_by("position", "pk"))
    prebuild_page(experiment, runs)
    done = sum(run.status == Run.Status.DONE for run in runs)
    for name in plots.plot_names(bool(experiment.sweep_param and experiment.sweep_values), runs_have_deadlines(runs), done):
        if name != "metrics":
            comparison_plot_gzip(experiment, name, {}, own=runs)


def _plot_response(request: HttpRequest, experiment: Experiment, name: str, runs: list[Run] | None) -> HttpResponse:
    if name not in plots.PLOTS:
        raise Http404("No such plot.")
    listed = runs if runs is not None else list(experiment.runs.order_by("position", "pk"))
    if not any(run.status == Run.Status.DONE for run in listed):
        return JsonResponse({"error": "None of these runs has finished yet."}, status=409)
    try:
        data = comparison_plot_gzip(experiment, name, _params(request), runs, own=listed)
    except plots.WindowError as e:
        return JsonResponse({"error": str(e)}, status=400)
    return gzip_json_response(request, data)


@require_GET
def comparison_plot(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    experiment = get_visible_or_404(Experiment, request.user, pk)
    return _plot_response(request, experiment, name, None)


@require_GET
def forest_plot(request: HttpRequest, pk: int) -> HttpResponse:
    """The forest plot of the experiment's replicate set (cached with its report)."""
    experiment = get_visible_or_404(Experiment, request.user, pk)
    replicates = ReplicateSet.objects.filter(experiment=experiment).first()
    if replicates is None or replicates.report is None:
        return JsonResponse({"error": "The replicates have not all finished yet."}, status=409)
    report = replicates.report

    def build() -> dict:
        return json_item(forest_figure(forest_frame(report)), "plot-forest")

    key = cache_key("forest", replicates.pk, report["pairs"])
    return gzip_json_response(request, cached_gzip_json(f"experiments/{pk}", "forest", key, build))


@require_GET
def compare_plot(request: HttpRequest, name: str) -> HttpResponse:
    try:
        runs = requested_runs(request)
    except BadRequest as e:
        return JsonResponse({"error": str(e)}, status=400)
    return _plot_response(request, runs[0].experiment, name, runs)


def _download(request: HttpRequest, experiment: Experiment, runs: list[Run] | None, name: str) -> HttpResponse:
    listed = runs if runs is not None else list(experiment.runs.select_related("experiment__trace", "experiment__owner")
                                                .order_by("position", "pk"))
    data = load_comparison(experiment, runs)
    html = None
    if data.schedules:
        title = f"SchedLab comparison: {', '.join(data.schedules)} ({experiment.trace.name})"
        try:
            layout = plots.full_layout(data, _params(request), title)
        except plots.WindowError as e:
            return HttpResponse(str(e), status=400, content_type="text/plain; charset=utf-8")
        # after the plots: how close the runs are to what happened (where the trace records it), and where
        # the results come from
        fidelity = render_to_string("_fidelity.html",
                                    {"fidelity": fidelity_table(experiment, listed, unique_labels(listed),
                                                                    data.schedules)})
        if runs is None and getattr(experiment, "replicate_set", None) is None:   # the paper's claims, as on the page
            done = [(label, run) for label, run in zip(unique_labels(listed), listed) if run.status == Run.Status.DONE]
            findings = paper_findings(experiment, done)
            if findings:
                fidelity += render_to_string("dashboards/_paper_findings.html", {"findings": findings})
        layout = column(layout, Div(text=f"<style>{PROVENANCE_CSS}</style>{fidelity}{provenance_html(listed)}",
                                    width=1100), sizing_mode="stretch_width")
        html = file_html(layout, INLINE, title=title)
    return attachment(html, f"{slugify(name) or 'comparison'}-comparison.html", "text/html; charset=utf-8",
                      unfinished="None of these runs has finished yet.")


@require_GET
def comparison_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The whole comparison as one self-contained HTML file (BokehJS inline, works offline)."""
    experiment = get_visible_or_404(Experiment, request.user, pk)
    return _download(request, experiment, None, f"{experiment.name}-{experiment.pk}")


@require_GET
def compare_download(request: HttpRequest) -> HttpResponse:
    try:
        runs = requested_runs(request)
    except BadRequest as e:
        return _bad_request(e)
    return _download(request, runs[0].experiment, runs, "runs-" + "-".join(str(run.pk) for run in runs))
