"""A site preview's downloads (issue 24 §4): the page as one self-contained HTML file, its tables as
CSV (per partition, account and user the mean wait recorded / current / proposed, and the jobs and
hours each pending reason held), and the job-level differences as CSV (each job's start, wait and
reason under each side). Built as the ordinary preview's are (webapp.preview.page: report_html,
sweep_parts, csv_text), from what the page shows (webapp.preview.sites.site_results)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from django.template.loader import render_to_string
from django.utils.html import escape

from engine.api import SITE_FILES, WorkloadError, error_line, pending_reasons
from webapp.experiments.models import CURRENT, PROPOSED, Run
from webapp.preview.calibration import calibration_table
from webapp.preview.models import SiteCalibration, SitePreview
from webapp.preview.page import csv_text, report_html, sweep_overview, sweep_parts, value_text
from webapp.preview.services import RECORDED
from webapp.preview.sites import changed_keys, side_runs, site_readings, site_results, text_diff

#: the sides in the downloads' column order
SIDES = (RECORDED, CURRENT, PROPOSED)


def ready_runs(preview: SitePreview, value: Any, runs: list[Run] | None = None) -> dict[str, Run] | None:
    """The runs of ``value`` by side when every one is done (None before: the downloads wait for them)."""
    found = side_runs(preview, value, runs)
    if not found or any(run.status != Run.Status.DONE for run in found.values()):
        return None
    return found


def sweep_of(preview: SitePreview, value: Any, runs: list[Run]) -> dict[str, Any] | None:
    """The sweep's table and figure across the values, as the page builds it."""
    return sweep_overview(preview.experiment, ((CURRENT, "as configured"), (PROPOSED, preview.proposed_name or "none yet")),
                          lambda at: side_runs(preview, at, runs), value, label=preview.experiment.sweep_param)


def changes_context(preview: SitePreview) -> dict[str, Any]:
    """What the proposal changes (the keys and the diff) for _site_changes.html; nothing without a proposal."""
    if not preview.proposed:
        return {}
    context: dict[str, Any] = {"diff": text_diff(preview.current, preview.proposed, SITE_FILES[preview.kind])}
    try:
        context["changes"] = changed_keys(preview.site(CURRENT), preview.site(PROPOSED))
    except WorkloadError as error:
        context["changes_error"] = error_line(error)
    swept = preview.experiment.sweep_param
    context["swept_only"] = bool(swept and context.get("changes")) and all(
        change.key.label == swept for change in context["changes"])
    return context


def download_html(preview: SitePreview, value: Any = None) -> str | None:
    """The page (its warnings, setup, the proposal's changes, what SchedLab read from the files, the
    sweep, the tables, the calibration) in the page's order and from the page's builders, as one HTML
    file with BokehJS inline; None until the runs of ``value`` are done."""
    every = list(preview.experiment.runs.all())
    runs = ready_runs(preview, value, every)
    if runs is None:
        return None
    experiment = preview.experiment
    context: dict[str, Any] = {"preview": preview, "experiment": experiment, "files": SITE_FILES[preview.kind],
                               "value": value, **changes_context(preview), **site_results(preview, runs),
                               **site_readings(preview)}
    if context.get("missing"):
        return None
    warnings = render_to_string("preview/_site_warnings.html", context)
    setup = render_to_string("preview/_site_setup.html", context)
    read = render_to_string("preview/_site_read.html", context)
    changes = render_to_string("preview/_site_changes.html", context)
    tables = render_to_string("preview/_site_tables.html", context)
    if experiment.sweep_param:
        tables = f"<h2>{escape(experiment.sweep_param)} = {escape(value_text(value))}</h2>{tables}"
    title = f"SchedLab site preview: {preview.name} ({experiment.trace.name})"
    return report_html(title, [warnings, setup, changes, read, *sweep_parts(sweep_of(preview, value, every), context), tables,
                               *calibration_part(preview, context)])


def calibration_part(preview: SitePreview, context: dict[str, Any]) -> list[str]:
    """The done calibration's table and trust per partition, without the page's buttons (nothing before)."""
    calibration = SiteCalibration.objects.filter(site_preview=preview, status=SiteCalibration.Status.DONE).first()
    if calibration is None or not calibration.report:
        return []
    return [render_to_string("preview/_site_calibration.html", {
        **context, "calibration": calibration, "calibration_table": calibration_table(calibration.report),
        "calibration_phases": calibration.report.get("averaged_over_phases", 1), "can_change": False})]


def tables_csv(preview: SitePreview, value: Any = None) -> str | None:
    """The page's tables as CSV: a row per partition, account and user (jobs, mean wait in minutes
    recorded / current / proposed), then per pending reason the jobs it held and the hours; None
    until the runs are done."""
    runs = ready_runs(preview, value)
    if runs is None:
        return None
    results = site_results(preview, runs)
    if results.get("missing"):
        return None
    sides = results["sides"]
    rows: list[list[Any]] = [["table", "name", "jobs", *(f"{side}" for side in SIDES)]]
    for heading, table in results["tables"]:
        for row in table:
            rows.append([f"mean wait per {heading} (minutes)", row["name"], row["jobs"],
                         *[_rounded(row.get(side)) for side in SIDES]])
    for what, unit in (("jobs", "jobs held"), ("hours", "hours held")):
        for row in results["pending"]:
            held = dict(zip(sides, row["values"]))
            rows.append([f"pending reason: {unit}", row["reason"], "",
                         *[_rounded((held.get(side) or {}).get(what), whole=what == "jobs") for side in SIDES]])
    return csv_text(rows)


def jobs_csv(preview: SitePreview, value: Any = None) -> str | None:
    """Each job of the trace: its recorded, current and proposed start and wait (seconds; empty when
    the side refused it or has no such run) and the reason that held it longest on each side (the
    replayed scheduler's own; the recorded run's estimated from its schedule against the current
    files, engine.metrics.sitepending), "refused: ..." for a job refused at submission; None until
    the runs are done."""
    runs = ready_runs(preview, value)
    if runs is None:
        return None
    workload = preview.experiment.trace.workload()
    jobs = workload.jobs
    names = workload.metadata.get("user_names", {})
    frame = pd.DataFrame({"job_id": jobs["job_id"].to_numpy()})
    if "jobid" in jobs:
        frame["native_id"] = jobs["jobid"].astype(str).to_numpy()
    for column, source in (("user", "user"), ("account", "account"), ("partition", "queue_name")):
        if source in jobs:
            values = jobs[source].astype(str)
            frame[column] = [names.get(v, v) for v in values] if column == "user" else values.to_numpy()
    frame["submit"] = jobs["submit"].to_numpy(np.int64)
    for side in SIDES:
        run = runs.get(side)
        if run is None:
            continue
        try:
            schedule = run.load_schedule()
        except OSError:
            return None
        by_job = schedule.set_index("job_id")
        frame[f"{side}_start"] = _seconds(by_job["start"].reindex(frame["job_id"]))
        frame[f"{side}_wait"] = _seconds((by_job["start"] - by_job["submit"]).reindex(frame["job_id"]))
        frame[f"{side}_reason"] = main_reasons(preview, side, value, schedule, workload, run).reindex(
            frame["job_id"]).fillna("").to_numpy()
    return csv_text([list(frame.columns), *(list(row) for row in frame.itertuples(index=False, name=None))])


def _seconds(values: pd.Series) -> list[Any]:
    """Whole seconds, "" where the side has no such job (refused at submission)."""
    return ["" if pd.isna(value) else int(value) for value in values]


def main_reasons(preview: SitePreview, side: str, value: Any, schedule: pd.DataFrame, workload: Any,
                 run: Run) -> pd.Series:
    """By job id: the reason that held the job longest on ``side`` ("refused: ..." when refused): the
    replayed scheduler's own (the schedule's ``slurm_reason`` / ``pbs_reason`` column), else (the
    recorded run) estimated from the schedule against the side's files."""
    own = f"{preview.kind}_reason"
    if own in schedule:
        reasons = schedule[own].astype(str)
        found = pd.Series(reasons.to_numpy(), index=schedule["job_id"].to_numpy(), dtype=object)[reasons.to_numpy() != ""]
    else:
        site = preview.site(CURRENT if side == RECORDED else side, value)
        held = pending_reasons(schedule, workload.jobs, site, preview.experiment.procs,
                               workload.metadata.get("user_names", {}),
                               workload.metadata.get("group_names", {}))
        found = pd.Series(held.drop(columns="job_id").idxmax(axis=1).to_numpy(), index=held["job_id"].to_numpy(),
                          dtype=object) if len(held) else pd.Series(dtype=object)
    rejected = run.load_rejected()
    if rejected is not None and len(rejected):
        refused = pd.Series([f"refused: {reason}" for reason in rejected["reason"].astype(str)],
                            index=rejected["job_id"].to_numpy(), dtype=object)
        found = pd.concat([found[~found.index.isin(refused.index)], refused])
    return found


def _rounded(number: Any, whole: bool = False) -> Any:
    if number is None:
        return ""
    return int(number) if whole else round(float(number), 4)
