"""What a preview's page shows, and its downloads (the page as one HTML file, its tables as CSV):
built from the preview's runs by webapp.preview.services, drawn by webapp.dashboards.figures.preview."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

from bokeh.embed import file_html, json_item
from bokeh.layouts import column
from bokeh.models import Div, LayoutDOM
from bokeh.resources import INLINE
from django.http import Http404, HttpRequest
from django.utils.html import escape
from django.template.loader import render_to_string

from engine.api import QueueConfig, WorkloadError, error_line, metric_label, metric_text, safe_cells, walltime_text
from webapp.core.permissions import can_change
from webapp.dashboards.data import table_css
from webapp.dashboards.figures.preview import preview_layout, sweep_figure
from webapp.experiments.models import CURRENT, PROPOSED, Experiment, Run
from webapp.experiments.views import page_metrics, with_time_left
from webapp.preview.models import PARAMS, OnExperiment, Preview
from webapp.preview.proposal import ProposalForm, differences, pool_words, yaml_diff
from webapp.preview.services import (
    COUNTERPART,
    RECORDED,
    Side,
    inferred_texts,
    results,
    schedules,
    side_of,
    window_dates,
)

HOUR = 3600.0


# -- what a preview's page and a site preview's page share -----------------------------------------


def page_context(request: HttpRequest, preview: OnExperiment) -> dict[str, Any]:
    """The context every preview page starts from: the preview, its experiment and runs, and whether
    the visitor may change it."""
    experiment = preview.experiment      # type: ignore[attr-defined]
    return {"preview": preview, "experiment": experiment, "can_change": can_change(preview, request.user),
            "runs": with_time_left(experiment.runs.all()), "page_metrics": page_metrics()}


def chosen_value(request: HttpRequest, experiment: Experiment) -> Any:
    """The swept value whose runs the page shows (``?value=`` its position), the first by default."""
    values = list(experiment.sweep_values) if experiment.sweep_param else [None]
    try:
        return values[int(request.GET.get("value", 0))]
    except (ValueError, IndexError):
        raise Http404("No such value.") from None


def embedded(context: dict[str, Any]) -> dict[str, Any]:
    """``context`` with its Bokeh figures (``layout``, the sweep's) as json items in JSON data blocks,
    embedded by a static script: the CSP allows no inline script."""
    if context.get("layout") is not None:
        context["bokeh_item"] = json_item(context.pop("layout"), "preview-plots")
    sweep = context.get("sweep")
    if sweep is not None and sweep["figure"] is not None:
        context["sweep_item"] = json_item(sweep["figure"], "sweep-plot")
    return context


def page_results(preview: Preview, value: Any = None) -> dict[str, Any]:
    """The page's context besides the runs: the setup in words, and once the runs of ``value`` are done
    the results and their figures (``layout``)."""
    experiment = preview.experiment
    runs = list(experiment.runs.all())
    side = side_of(preview, runs, value)
    context: dict[str, Any] = {
        "side": side, "window": window_dates(preview), "inferred": inferred_texts(preview),
        "values": list(enumerate(experiment.sweep_values)) if experiment.sweep_param else [],
        "value": value, "params": params_of(side), "configurations": configurations(preview),
        "sweep": sweep_overview(experiment, ((CURRENT, preview.current_name), (PROPOSED, preview.proposed_name)),
                                lambda at: side_of(preview, runs, at).runs, value),
    }
    if not side.done or CURRENT not in side.runs or PROPOSED not in side.runs:
        return context
    try:
        frames = schedules(side)
    except OSError:
        return {**context, "missing": True}
    summary = {**results(preview, side, frames), "submission": submission(preview, side),
               "pending": pending(side)}
    empty = [name for name in (CURRENT, PROPOSED, COUNTERPART) if name in frames and not len(frames[name])]
    if empty:   # every job rejected at submission, say: the tables say so, there is nothing to draw
        return {**context, **summary, "results_ready": True, "layout": None,
                "no_figures": f"No job ran under the {' and the '.join(empty)} run: no figures to draw."}
    names = (f"current: {preview.current_name}", f"proposed: {preview.proposed_name}")
    params = context["params"]
    layout = preview_layout(
        frames[CURRENT], frames[PROPOSED], frames[COUNTERPART] if COUNTERPART in frames else frames[PROPOSED],
        labels=names, clusters=summary["clusters"], policy_is_multi=preview.policy.startswith("mrfs"),
        recorded=frames.get(RECORDED), zone=summary["time_zone"],
        **{key: params[key] for key in ("decay_hours", "decay_factor") if key in params})
    return {**context, **summary, "results_ready": True, "layout": layout}


#: the metrics the sweep's table shows for every value, current beside proposed
SWEEP_METRICS = ("rejected_total", "mean_wait", "p95_wait", "mean_bsld", "utilization")


def value_text(value: Any) -> str:
    """A swept value as the sweep's form takes it (``10``, ``0.5``, ``inf``)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def sweep_overview(experiment: Experiment, sides: tuple[tuple[str, str], ...],
                   runs_at: Callable[[Any], dict[str, Run]], chosen: Any = None,
                   label: str | None = None) -> dict[str, Any] | None:
    """Every swept value at once (None without a sweep): a row per value with the runs' SWEEP_METRICS
    on each of ``sides`` ((CURRENT, its name), (PROPOSED, its name); ``runs_at(value)``: the runs of a
    value by side; a run not done yet: its status, not made yet: "–") and the change in mean wait, and
    the figure of the mean waits across the values (``figure``: None until some value's runs are done).
    ``label``: the swept parameter in words (default: its name with spaces)."""
    if not experiment.sweep_param:
        return None
    words = label or experiment.sweep_param.replace("_", " ")
    rows: list[dict[str, Any]] = []
    waits: dict[str, list[float | None]] = {f"{name}: {label}": [] for name, label in sides}
    for index, value in enumerate(experiment.sweep_values):
        found = runs_at(value)
        done = {name: (found[name].summary or {}) if name in found and found[name].status == Run.Status.DONE
                else None for name, _ in sides}
        cells = []
        for code in SWEEP_METRICS:
            for name, _ in sides:
                summary = done[name]
                cells.append(metric_text(code, summary.get(code)) if summary is not None
                             else found[name].status if name in found else "–")
        for name, label in sides:
            wait = (done[name] or {}).get("mean_wait")
            waits[f"{name}: {label}"].append(None if wait is None else wait / HOUR)
        current, proposed = ((done[name] or {}).get("mean_wait") for name, _ in sides)
        rows.append({"index": index, "value": value_text(value), "cells": cells, "chosen": value == chosen,
                     "change": proposed - current if current is not None and proposed is not None else None})
    texts = [row["value"] for row in rows]
    drawn = {name: hours for name, hours in waits.items() if any(h is not None for h in hours)}   # no empty lines
    return {"param": experiment.sweep_param, "label": words,
            "metrics": [(code, metric_label(code)) for code in SWEEP_METRICS], "sides": sides, "rows": rows,
            "figure": sweep_figure(words, texts, drawn) if drawn else None}


#: rejected jobs listed on the page (all of them in the run's rejected.csv)
LISTED_REJECTED = 200
#: users listed with the hours their jobs were held (the most held first)
LISTED_USERS = 15


def submission(preview: Preview, side: Side) -> list[dict[str, Any]]:
    """Per configuration: what its queues refused or routed at submission (the engine's admission
    summary: lines, per queue, per user) and the jobs it rejected, named (native id, user), the first
    LISTED_REJECTED of them."""
    parts = []
    for name, label in ((CURRENT, preview.current_name), (PROPOSED, preview.proposed_name)):
        run = side.runs.get(name)
        if run is None:
            continue
        admission = (run.summary or {}).get("admission") or {}
        rejected = run.load_rejected()
        jobs = [] if rejected is None else rejected.head(LISTED_REJECTED).to_dict("records")
        parts.append({"side": name, "name": label, "run": run, "admission": admission, "jobs": jobs,
                      "rejected": 0 if rejected is None else len(rejected),
                      "per_queue": sorted((admission.get("per_queue") or {}).items()),
                      "per_user": sorted((admission.get("per_user") or {}).items(),
                                         key=lambda item: (-item[1].get("rejected", 0) - item[1].get("routed", 0),
                                                           item[0]))})
    return parts


def pending(side: Side) -> dict[str, Any] | None:
    """What held the jobs that waited, in job-hours by reason (engine.sim.pending): overall, per queue of
    each configuration and for the most held users, current beside proposed; None without the engine's
    pending summary (a run made before it)."""
    sides = {name: (side.runs[name].summary or {}).get("pending") for name in (CURRENT, PROPOSED) if name in side.runs}
    if not all(sides.values()):
        return None
    reasons = sides[CURRENT]["reasons"]  # type: ignore[index]

    def rows(key: str, limit: int | None = None) -> list[dict[str, Any]]:
        labels = sorted(set().union(*[(s or {}).get(key, {}) for s in sides.values()]))
        table = [{"label": label, **{name: [(s or {}).get(key, {}).get(label, {}).get(r, 0.0) for r in reasons]
                                     for name, s in sides.items()}} for label in labels]
        table.sort(key=lambda row: -sum(row.get(PROPOSED, [])) - sum(row.get(CURRENT, [])))
        return table[:limit] if limit else sorted(table, key=lambda row: row["label"])

    overall = [{"label": "all jobs", **{name: [s["hours"][r] for r in reasons] for name, s in sides.items()}}]  # type: ignore[index]
    return {"reasons": reasons, "overall": overall, "per_queue": rows("per_queue"),
            "per_user": rows("per_user", LISTED_USERS)}


def params_of(side: Side) -> dict[str, Any]:
    """The parameters a preview asks (PARAMS), as its runs took them."""
    run = side.runs.get(CURRENT) or side.runs.get(PROPOSED)
    params = (run.policy or {}).get("params", {}) if run is not None else {}
    return {key: params[key] for key in PARAMS if key in params}


def configurations(preview: Preview) -> list[dict[str, Any]]:
    """Both configurations' queues in hours and days, for the setup table (a text that does not read: its error)."""
    described = []
    for side, name in ((CURRENT, preview.current_name), (PROPOSED, preview.proposed_name)):
        try:
            config = preview.configuration(side)
        except WorkloadError as error:   # a stored text the engine no longer reads: say so
            described.append({"side": side, "name": name, "error": error_line(error), "queues": []})
            continue
        described.append({"side": side, "name": name, "mode": config.mode, "queues": [
            {"name": q.name, "walltime": walltime_text(q.walltime), "priority": q.priority, "max_cores": q.max_cores,
             "user_max_jobs": q.user_max_jobs, "user_max_cores": q.user_max_cores, "pool": pool_words(q.pool)}
            for q in config.queues]})
    return described


def proposal_form(preview: Preview, data: Any = None) -> ProposalForm:
    """The editor of ``preview``'s proposal (bound to ``data`` when posted). A stored text the engine no
    longer reads leaves only the YAML to fix, with its error."""
    try:
        base, current = preview.configuration(PROPOSED), preview.configuration(CURRENT)
    except WorkloadError as error:
        base, current, problem = QueueConfig(()), None, error_line(error)
    else:
        problem = ""
    form = ProposalForm(data, base=base, base_text=preview.proposed_text,
                        clusters=[c.name for c in preview.machine().clusters],
                        initial={"name": preview.proposed_name})
    form.problem = problem  # type: ignore[attr-defined]
    form.changes = differences(current, base) if current else []  # type: ignore[attr-defined]
    form.yaml_diff = yaml_diff(current, base) if current else ""  # type: ignore[attr-defined]
    return form


def proposal_check(preview: Preview, form: ProposalForm) -> dict[str, Any]:
    """For the page's script after an edit: the proposal's YAML and rows, and its difference from current."""
    config = form.cleaned_data["config"]
    current = preview.configuration(CURRENT)
    diff = render_to_string("preview/_diff.html", {"changes": differences(current, config),
                                                   "yaml_diff": yaml_diff(current, config)})
    return {"yaml": form.cleaned_data["text"], "fields": form.field_values(), "diff": diff}


def download_html(preview: Preview, value: Any = None) -> str | None:
    """The page (setup, tables, figures) as one HTML file with BokehJS inline; None until it is done."""
    context = page_results(preview, value)
    if not context.get("results_ready"):
        return None
    layout: LayoutDOM | None = context.pop("layout", None)
    sweep = context.get("sweep")
    parts = {"preview": preview, "experiment": preview.experiment, **context}
    tables = render_to_string("preview/_results.html", parts)
    title = f"SchedLab preview: {preview.name} ({preview.experiment.trace.name})"
    shown = sweep_parts(sweep, parts)
    if sweep is not None and context.get("value") is not None:
        tables = f"<h2>{escape(sweep['label'])} = {escape(value_text(context['value']))}</h2>{tables}"
    return report_html(title, [*shown, tables, *([layout] if layout is not None else [])])


def sweep_parts(sweep: dict[str, Any] | None, context: dict[str, Any]) -> list[str | LayoutDOM]:
    """A download's sweep: every swept value's table, then the figure across the values (nothing without a sweep)."""
    if sweep is None:
        return []
    table = render_to_string("preview/_sweep.html", {**context, "sweep": sweep, "download": True})
    return [table, *([sweep["figure"]] if sweep["figure"] is not None else [])]


def report_html(title: str, parts: list[str | LayoutDOM]) -> str:
    """One self-contained HTML file (a preview's or a site preview's download): ``title`` as its
    heading, then each part (HTML text, or a Bokeh figure), the tables styled as on the site and
    BokehJS inline (bokeh.resources.INLINE: the installed package's own files, no CDN), so it works
    offline."""
    head = Div(text=f"<style>{table_css()}</style><h1>{escape(title)}</h1>", sizing_mode="stretch_width")
    shown = [Div(text=part, sizing_mode="stretch_width") if isinstance(part, str) else part for part in parts]
    return file_html(column(head, *shown), INLINE, title=title)


def tables_csv(preview: Preview, value: Any = None) -> str | None:
    """The page's tables as CSV (waits in hours); None until the runs are done."""
    context = page_results(preview, value)
    if not context.get("results_ready"):
        return None
    rows: list[list[Any]] = [["table", "queue or user", "jobs", "recorded_h", "current_h", "proposed_h", "change_h"]]
    for row in context["changes"]:
        waits = row["mean_wait"]
        rows.append(["mean wait per trace queue", row["queue"], row["jobs"],
                     *[_hours(waits.get(k)) for k in (RECORDED, CURRENT, PROPOSED)], _hours(row["change"])])
    for side, title in (("gain", "users who wait less"), ("lose", "users who wait more")):
        for user in context["users"].get(side, []):
            rows.append([title, user["user"], user["jobs"], "", _hours(user["before"]), _hours(user["after"]),
                         _hours(user["change"])])
    for row in context["rows"]:
        for side in (CURRENT, PROPOSED):
            queue = row[side]
            if queue:
                wait = _hours(queue.get("mean_wait"))
                waits = [wait, ""] if side == CURRENT else ["", wait]
                rows.append([f"{side} configuration's queue", row["queue"], queue.get("jobs"), "", *waits, ""])
    return csv_text(rows)


def csv_text(rows: list[list[Any]]) -> str:
    """``rows`` as CSV text, each cell made inert for spreadsheets (names come from uploads)."""
    text = io.StringIO()
    csv.writer(text).writerows(safe_cells(row) for row in rows)
    return text.getvalue()


def _hours(seconds: Any) -> Any:
    return "" if seconds is None else round(float(seconds) / HOUR, 4)
