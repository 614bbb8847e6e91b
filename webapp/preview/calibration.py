"""Calibrating a Slurm site preview's baseline in the background (issue 24 §3): the engine's
calibration (engine.api.calibrate_site: the site as configured and each candidate explanation,
replayed against the recording) on the preview's own trace and current files, its table and the
trust per partition on the page, and the chosen candidate's ``--set`` parameters applied to both the
current and the proposed runs (run again)."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from engine.api import INPUT_ERRORS, Cancelled, calibrate_site, error_line
from webapp.core.limits import LIMIT_ERRORS, limit_message, memory_limit
from webapp.core.progress import Reporter
from webapp.experiments.models import CURRENT, Run
from webapp.experiments.services import rerun
from webapp.preview.models import SiteCalibration, SitePreview
from webapp.preview.services import PreviewError
from webapp.preview.sites import run_label, side_label

log = logging.getLogger(__name__)


def stale(calibration: SiteCalibration) -> bool:
    """Whether a running calibration's worker is gone (no heartbeat for the runs' stale limit). A queued
    one waits for a worker as long as the simulation queue is busy; asking again replaces it (its
    message then finds no row to run)."""
    if calibration.status != SiteCalibration.Status.RUNNING or calibration.heartbeat_at is None:
        return False
    return calibration.heartbeat_at < timezone.now() - timedelta(seconds=settings.SCHEDLAB_RUN_STALE_SECONDS)


def settled(calibration: SiteCalibration | None) -> SiteCalibration | None:
    """``calibration`` as the page shows it: one whose worker is gone is marked failed, to be asked again
    (cancelled if that was asked)."""
    if calibration is not None and stale(calibration):
        lost = "the worker running it was lost (restarted?): calibrate again"
        SiteCalibration.objects.filter(pk=calibration.pk, status=calibration.status).update(
            status=SiteCalibration.Status.CANCELLED if calibration.cancel_requested else SiteCalibration.Status.FAILED,
            finished_at=timezone.now(), error="cancelled (worker lost)" if calibration.cancel_requested else lost)
        calibration.refresh_from_db()
    return calibration


def run_calibration(calibration_id: int) -> None:
    """The task's work: replay the candidates with progress and a lease, store the report or one
    line saying why it failed (an input the engine refuses, a limit, or an internal error); cancelled
    (webapp.preview.tasks.cancel_calibration) it stops at its next progress check."""
    now = timezone.now()
    started = SiteCalibration.objects.filter(pk=calibration_id, status=SiteCalibration.Status.QUEUED,
                                             cancel_requested=False).update(
        status=SiteCalibration.Status.RUNNING, heartbeat_at=now, started_at=now, progress=0.0, error="")
    if not started:      # replaced, deleted, cancelled, or a duplicate delivery
        return
    row = SiteCalibration.objects.filter(pk=calibration_id, status=SiteCalibration.Status.RUNNING)
    reporter = Reporter(row, row.filter(cancel_requested=False))
    preview = SitePreview.objects.select_related("experiment__trace").get(calibration__pk=calibration_id)

    def progress(fraction: float) -> None:
        reporter.progress(fraction)
        if reporter.should_stop():
            raise Cancelled("the calibration was cancelled")

    try:
        with reporter.lease(), memory_limit(settings.SCHEDLAB_TASK_MEMORY_BYTES):
            report = calibrate_site(preview.experiment.trace.workload(), preview.site(CURRENT),
                                    capacity=preview.experiment.procs, phases=settings.SCHEDLAB_CALIBRATION_PHASES,
                                    progress=progress)
    except Cancelled:
        row.update(status=SiteCalibration.Status.CANCELLED, error="cancelled", finished_at=timezone.now())
    except INPUT_ERRORS as error:
        row.update(status=SiteCalibration.Status.FAILED, error=error_line(error), finished_at=timezone.now())
    except LIMIT_ERRORS as error:
        row.update(status=SiteCalibration.Status.FAILED, finished_at=timezone.now(), error=limit_message(
            error, "the calibration", settings.SCHEDLAB_RUN_TIME_LIMIT, settings.SCHEDLAB_TASK_MEMORY_BYTES))
    except Exception as error:  # noqa: BLE001 - the page gets one line, the log the traceback
        log.exception("calibration %s failed", calibration_id)
        row.update(status=SiteCalibration.Status.FAILED, finished_at=timezone.now(),
                   error=f"internal error while calibrating ({type(error).__name__}); see the worker log")
    else:
        row.update(status=SiteCalibration.Status.DONE, progress=1.0, report=jsonable(report),
                   finished_at=timezone.now())


def jsonable(value: Any) -> Any:
    """The engine's report with numpy scalars as Python numbers (the JSON field stores it)."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    return value.item() if hasattr(value, "item") else value


# -- the page ----------------------------------------------------------------------------------------


def applicable(row: dict[str, Any]) -> bool:
    """Whether a candidate is policy parameters alone (``--set``), which both sides can take; the limits'
    candidates change the site's files instead."""
    return not row.get("without_limits") and not row.get("inferred_limits")


def calibration_table(report: dict[str, Any]) -> dict[str, Any]:
    """The report as the page shows it: the partitions, the candidates closest first (mean wait,
    error, rank correlation, each partition's mean and error, distance, whether it is the closest and
    can be applied, its --set options), the closest, and the trust per partition."""
    rows = sorted(report["candidates"], key=lambda row: row["distance"])
    partitions = sorted({name for row in rows for name in row["per_partition"]})
    shown = [{**row, "rank": row["rank_correlation"], "best": row["name"] == report["best"],
              "applicable": applicable(row), "sets": set_options(row["params"]), "error_text": signed(row["error"]),
              "partitions": [{**row["per_partition"][name], "error_text": signed(row["per_partition"][name]["error"])}
                             if name in row["per_partition"] else None for name in partitions]} for row in rows]
    best = next(row for row in shown if row["best"])
    recorded = rows[0]["per_partition"] if rows else {}
    return {"partitions": [(name, recorded[name]["recorded"] if name in recorded else None) for name in partitions],
            "rows": shown, "best": best,
            "trust": [(name, {**trust, "best_error_text": signed(trust["best_error"])})
                      for name, trust in sorted(report["trust"].items())],
            "recorded_mean_wait": report["recorded_mean_wait"], "jobs": report["jobs"],
            "phases": report.get("averaged_over_phases", 1), "idle_with_waiting": report["idle_with_waiting"],
            "phase_mean_wait": report["phase_mean_wait"]}


def signed(share: float) -> str:
    """An error against the recording: ``+3.2%``, ``-19.1%``."""
    return f"{share:+.1%}"


def set_options(params: dict[str, Any]) -> str:
    """A candidate's parameters as the command line writes them: ``--set backfill_agent=true --set sched_cycle=10``."""
    return " ".join(f"--set {key}={str(value).lower() if isinstance(value, bool) else value}"
                    for key, value in params.items())


def apply_candidate(preview: SitePreview, name: str) -> int:
    """Replay both sides with the calibration's candidate ``name`` (its --set parameters on every current
    and proposed run, run again; "as configured" takes them off). PreviewError (one line): no done
    calibration, no such candidate, one that changes the limits, or a run still unfinished. Returns
    how many runs were queued."""
    calibration = SiteCalibration.objects.filter(site_preview=preview, status=SiteCalibration.Status.DONE).first()
    if calibration is None or not calibration.report:
        raise PreviewError("calibrate the baseline first")
    row = next((row for row in calibration.report["candidates"] if row["name"] == name), None)
    if row is None:
        raise PreviewError(f"no candidate {name!r} in the calibration")
    if not applicable(row):
        raise PreviewError(f"{name} changes the site's limits, not the scheduler's parameters: edit the files instead")
    runs = [run for run in preview.experiment.runs.all() if run.queues]
    busy = [run.label for run in runs if not run.is_final]
    if busy:
        raise PreviewError(f"{busy[0]} is still running: wait for it or cancel it first")
    calibrated = {"name": name, "params": dict(row["params"])} if row["params"] else {}
    with transaction.atomic():
        SitePreview.objects.filter(pk=preview.pk).update(calibrated=calibrated)
        preview.calibrated = calibrated
        key = preview.swept_key()
        for run in runs:
            Run.objects.filter(pk=run.pk).update(policy=preview.policy(),
                                                 label=run_label(side_label(preview, run.queues), key, run.sweep_value))
        return sum(rerun(run) for run in runs)
