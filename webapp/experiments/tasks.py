"""Running one simulation in the background: thin over the engine's face (engine.api).

The task owns the run's state machine (queued → running → done | failed | cancelled); every
transition is a guarded UPDATE (filter on the expected status), so a duplicate delivery, a cancel
or the reconcile step never races a worker into an inconsistent state.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

import pandas as pd
from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import task_revoked, worker_ready
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone

from engine.api import (INPUT_ERRORS, Cancelled, Clusters, Pool, Scenario, SimResult, SimulationError, Transforms,
                        deadline_summaries_at, error_line, parse_days)
from engine.api import run as run_scenario
from engine.api import held_by_reason, pending_reasons, policy_pending, safe_cells, summarize
from webapp.allocations.services import allocations_of
from webapp.core.broker import resend_lost as resend_lost_messages
from webapp.core.files import replace_dir
from webapp.core.limits import limit_message, memory_limit
from webapp.core.progress import Reporter as ProgressReporter
from webapp.experiments.fairqueue import WORK, choose, current_turns
from webapp.experiments.models import AT_SWEEP_VALUES, CURRENT, Experiment, Run, save_frame
from webapp.experiments.replicate_runs import execute_replicate, replicate_set_of, settle
from webapp.experiments.signals import experiment_finished

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 2  # a run whose worker is lost is re-queued once, then failed


class Reporter(ProgressReporter):
    """The engine's callbacks for one run: progress and heartbeat about once a second; stop when it
    is cancelled or no longer this worker's."""

    def __init__(self, run_id: int, interval: float = 1.0) -> None:
        row = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING)
        super().__init__(row, row.filter(cancel_requested=False), interval)
        self.run_id = run_id


@shared_task(
    bind=True, acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=settings.SCHEDLAB_RUN_TIME_LIMIT, time_limit=settings.SCHEDLAB_RUN_TIME_LIMIT + 60,
)
def run_simulation(self: Task, run_id: int) -> int:
    now = timezone.now()
    started = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED, cancel_requested=False).update(
        status=Run.Status.RUNNING, started_at=now, heartbeat_at=now, finished_at=None, progress=0.0,
        error="", attempts=F("attempts") + 1, task_id=self.request.id or "",
    )
    if not started:  # cancelled, deleted, or a duplicate delivery of a message already handled
        if not self.request.called_directly:
            dispatch_in_worker()  # a cancelled run's slot may be free
        return run_id
    reporter = Reporter(run_id)
    try:
        with reporter.lease():
            execute(run_id, reporter)
    except Exception as e:  # noqa: BLE001
        if isinstance(e, Cancelled):
            _finish(run_id, Run.Status.CANCELLED, error="cancelled")
        elif isinstance(e, SoftTimeLimitExceeded):
            _finish(run_id, Run.Status.FAILED,
                    error=f"time limit: the run took longer than {settings.SCHEDLAB_RUN_TIME_LIMIT} s")
        elif isinstance(e, PreviewMemoryLimit):
            log.warning("preview run %s stopped at the memory limit", run_id)
            _finish(run_id, Run.Status.FAILED, error=limit_message(
                e, "the preview", settings.SCHEDLAB_RUN_TIME_LIMIT, settings.SCHEDLAB_TASK_MEMORY_BYTES))
        else:
            _finish(run_id, Run.Status.FAILED, error=failure_message(e))
            if not is_input_error(e):
                log.exception("run %s failed", run_id)
    settle_quietly(run_id)
    if not self.request.called_directly:  # in a worker; a direct call (tests, scripts) leaves it to the caller
        dispatch_in_worker()  # this slot is free: the next run by turn takes it
        prebuild_when_last(run_id)
    return run_id


@task_revoked.connect
def _ended_by_revoke(sender: object = None, request: object = None, terminated: bool = False,
                     **_: object) -> None:
    """In the worker, when a cancel's revoke ended a run's pool process (webapp.experiments.stopping):
    the run is cancelled, its slot goes to the next run by turn. Only a run still running under that
    task and asked to stop; never fails the worker."""
    if not terminated or getattr(sender, "name", None) != run_simulation.name:
        return
    task_id = getattr(request, "id", None)
    try:
        ids = list(Run.objects.filter(task_id=task_id, status=Run.Status.RUNNING, cancel_requested=True)
                   .values_list("pk", flat=True))
        for run_id in ids:
            if _finish(run_id, Run.Status.CANCELLED, error="cancelled"):
                settle_quietly(run_id)
                prebuild_when_last(run_id)
        if ids:
            dispatch_in_worker()
    except Exception:  # noqa: BLE001 - the run is then judged lost by the minute check
        log.exception("marking the run of revoked task %s cancelled failed", task_id)


def settle_quietly(run_id: int) -> None:
    """A replicate run's set settled after it ends (webapp.experiments.replicate_runs.settle), never
    failing the run itself; the experiment page's poll settles it again otherwise."""
    try:
        experiment_id = Run.objects.filter(pk=run_id).values_list("experiment_id", flat=True).first()
        if experiment_id is not None:
            settle(experiment_id)
    except Exception:  # noqa: BLE001
        log.exception("settling the replicate set of run %s failed", run_id)


def dispatch() -> int:
    """Send waiting runs (and the work other apps registered: webapp.experiments.fairqueue.Work) to the
    simulation queue while slots are free, each time the run of the user whose turn it is
    (webapp.experiments.fairqueue). Called when runs are queued, when one ends and
    every few seconds; calls never overlap (a lock), so the slots are never oversubscribed.
    Returns how many runs were sent."""
    with transaction.atomic():
        lock_dispatcher()
        turns, free = current_turns()
        now = timezone.now()
        chosen = choose(turns, free, now)
        sent = [pk for pk in chosen if isinstance(pk, int)
                and Run.objects.filter(pk=pk, status=Run.Status.QUEUED, dispatched_at__isnull=True)
                .update(dispatched_at=now, queued_at=now)]
        other = [(WORK[kind], pk) for kind, pk in (item for item in chosen if not isinstance(item, int))
                 if WORK[kind].claim(pk, now)]
        transaction.on_commit(lambda: [run_simulation.delay(pk) for pk in sent] + [work.send(pk) for work, pk in other])
    return len(sent) + len(other)


def dispatch_in_worker() -> None:
    """:func:`dispatch` after a run, never failing it (it is over): if the database is busy, the
    periodic dispatch (every few seconds) fills the slot instead."""
    try:
        dispatch()
    except Exception:  # noqa: BLE001
        log.exception("dispatching the next run failed; the periodic dispatch will")


def dispatch_later() -> None:
    """:func:`dispatch` once the current transaction commits (the runs it queued are then visible)."""
    transaction.on_commit(dispatch)


def lock_dispatcher() -> None:
    """Serialise dispatchers inside the current transaction: PostgreSQL's transaction-level advisory
    lock; SQLite transactions here begin IMMEDIATE (settings), which already holds the write lock."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [DISPATCH_LOCK])


DISPATCH_LOCK = 0x5C4ED1AB  # any number no other code of the project locks


@shared_task
def dispatch_runs() -> int:
    """The periodic dispatch (beat on compose, the supervisor under `make run`): catches a slot freed
    by a worker that was lost rather than finishing."""
    return dispatch()


def back_to_waiting(**fields: object) -> dict[str, object]:
    """The fields that put a run back in its owner's turn (no slot, no message), with `fields`; it
    keeps its place among its owner's runs (queued_at)."""
    return {"status": Run.Status.QUEUED, "dispatched_at": None, "task_id": "", **fields}


def prebuild_when_last(run_id: int) -> None:
    """After the experiment's last unfinished run: announce it (experiment_finished), so the dashboards
    build its comparison plots here in the worker and the first person to open the comparison does not
    wait for them. Never fails the run (it is over)."""
    try:
        experiment = Run.objects.select_related("experiment").get(pk=run_id).experiment
        runs = experiment.runs.all()
        if runs.filter(status__in=[Run.Status.QUEUED, Run.Status.RUNNING]).exists():
            return
        if hasattr(experiment, "study") or hasattr(experiment, "replicates_of"):  # plotted from summaries
            return
        if runs.filter(status=Run.Status.DONE).exists():
            experiment_finished.send(sender=Experiment, experiment=experiment)
    except Exception:  # noqa: BLE001 - the plots are then built when the page asks for them
        log.exception("building the comparison plots after run %s failed", run_id)


class PreviewMemoryLimit(MemoryError):
    """A preview's run needed more memory than SCHEDLAB_TASK_MEMORY_BYTES (its bound, as a parse's)."""


def execute(run_id: int, reporter: Reporter) -> None:
    """Load the trace, simulate, write results to MEDIA_ROOT/runs/<id>/ atomically, mark done. A
    preview's run (a queue reconfiguration's or a site's) is bounded in memory as a parse is
    (webapp.core.limits): past SCHEDLAB_TASK_MEMORY_BYTES more than its process held, it fails with
    the limit named; other runs are bounded by their time limit only."""
    run = Run.objects.select_related("experiment__trace", "experiment__preview").get(pk=run_id)
    bound = settings.SCHEDLAB_TASK_MEMORY_BYTES if is_preview(run.experiment) else 0
    try:
        with memory_limit(bound):
            simulate(run, reporter)
    except MemoryError as e:
        if not bound:
            raise
        raise PreviewMemoryLimit() from e


def is_preview(experiment: Experiment) -> bool:
    """Whether the experiment is a preview (webapp.preview's Preview or SitePreview holds it)."""
    return hasattr(experiment, "preview") or hasattr(experiment, "site_preview")


def simulate(run: Run, reporter: Reporter) -> None:
    run_id = run.pk
    experiment = run.experiment
    replicates = replicate_set_of(experiment)
    if replicates is not None:  # one replicate of a replicated comparison: its outcomes are its summary
        summary = execute_replicate(run, replicates, reporter.part, reporter.should_stop)
        _finish(run_id, Run.Status.DONE, progress=1.0, summary=summary)
        return
    site = getattr(experiment, "site_preview", None)
    own = site.site(run.queues, run.sweep_value) if site is not None and run.queues else None
    workload = experiment.trace.workload()
    scenario = Scenario(
        trace=workload, policy=run.policy,
        platform=platform_of(run),
        transforms=Transforms(days=parse_days(experiment.days) if experiment.days else None,
                              load_factor=run.load_factor),
        allocations=allocations_of(experiment),
        exact_estimates=experiment.exact_estimates, seed=experiment.seed,
        slurm_site=own if site is not None and site.kind == "slurm" else None,
        pbs_site=own if site is not None and site.kind == "pbs" else None,
    )
    result = run_scenario(scenario, progress=reporter.progress, should_stop=reporter.should_stop)
    summary = summarize(result, load_factor=run.load_factor, days=experiment.days or None)
    if site is not None:   # what held the jobs, in the site's scheduler's words: the policy's own, else estimated
        # from the schedule (the recorded run: against the current files)
        rows = policy_pending(summary)
        if rows is None:
            held = pending_reasons(result.schedule, workload.jobs, own or site.site(CURRENT), experiment.procs,
                                   workload.metadata.get("user_names", {}),
                                   workload.metadata.get("group_names", {}))
            rows = held_by_reason(held, result.schedule)
        summary["site_pending"] = rows
    per_share = deadlines_per_share(run, scenario, result)
    if per_share:
        summary[AT_SWEEP_VALUES] = per_share
    write_results(run, result, summary)
    _finish(run_id, Run.Status.DONE, progress=1.0, summary=summary)


def deadlines_per_share(run: Run, scenario: Scenario, result: SimResult) -> list[dict]:
    """A run a deadline-share sweep ran once (EASY, conservative: their schedule never reads deadlines):
    its deadline figures at each share of the sweep, derived from its one schedule with that share's
    deadline jobs (engine.api.deadline_summaries_at), as [{"value": share, <deadline figures>}]; [] for
    every other run. The schedule is the same at every share; which jobs have a deadline is not."""
    experiment = run.experiment
    if (experiment.sweep_param != "deadline_fraction" or run.sweep_value is not None or not experiment.sweep_values
            or (run.policy or {}).get("preset") == "recorded" or not len(result.schedule)):
        return []
    values = [float(value) for value in experiment.sweep_values]
    try:
        summaries = deadline_summaries_at(scenario, result.schedule, values)
    except ValueError as e:   # a trace repeating job ids: no per-share figures, the run itself stands
        log.warning("run %s: no per-share deadline figures: %s", run.pk, e)
        return []
    return [{"value": value, **figures} for value, figures in zip(experiment.sweep_values, summaries)]


def platform_of(run: Run) -> Pool | Clusters:
    """A preview's runs are on its clusters under the queue configuration the run names (its
    ``platform``, webapp.preview.models.Preview); every other run on a pool of processors."""
    preview = getattr(run.experiment, "preview", None)
    return preview.platform(run.queues) if preview is not None else Pool(run.experiment.procs,
                                                                           run.experiment.allocation)


def write_results(run: Run, result: SimResult, summary: dict) -> None:
    """schedule.csv, schedule.npz (for the dashboards), summary.json and meta.json, and the jobs rejected
    at submission (rejected.csv and .npz, when any was), all or nothing."""
    target = run.result_dir
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".build-{run.pk}-"))
    try:
        result.to_csv(build / "schedule.csv")
        save_frame(result.schedule, build / "schedule.npz")
        (build / "summary.json").write_text(json.dumps(summary, indent=1))
        (build / "meta.json").write_text(json.dumps(result.meta, indent=1, default=_json_default))
        if result.rejected_jobs is not None and len(result.rejected_jobs):
            inert_text(result.rejected_jobs).to_csv(build / "rejected.csv", index=False)
            save_frame(result.rejected_jobs, build / "rejected.npz")
        replace_dir(build, target)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise


def inert_text(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with each text cell a spreadsheet would run as a formula made inert (engine.api.safe_cells:
    user and queue names come from uploads), for a CSV; the frame itself when it has no text column."""
    text = [column for column in frame.columns if not pd.api.types.is_numeric_dtype(frame[column])]
    if not text:
        return frame
    frame = frame.copy()
    for column in text:
        frame[column] = safe_cells(frame[column].astype(object).tolist())
    return frame


def _finish(run_id: int, status: str, **fields: object) -> bool:
    return bool(Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(
        status=status, finished_at=timezone.now(), **fields
    ))


def _json_default(value: object) -> object:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def is_input_error(error: Exception) -> bool:
    return isinstance(error, INPUT_ERRORS)


def failure_message(error: Exception) -> str:
    """One line a person can act on; the traceback goes to the worker log only."""
    if is_input_error(error) or isinstance(error, SimulationError):
        return error_line(error)[:500]
    text = (str(error).strip().splitlines() or [""])[0][:500]
    return f"internal error ({type(error).__name__}{': ' + text if text else ''}); see the worker log"


# --------------------------------------------------------------------------- reconcile


def reconcile(runs: QuerySet[Run] | None = None, stale_seconds: int | None = None) -> dict[str, int]:
    """Runs marked running whose worker stopped writing heartbeats are lost: re-queue each once,
    then fail it with "worker lost". Safe to call from several places at once."""
    stale = stale_seconds if stale_seconds is not None else settings.SCHEDLAB_RUN_STALE_SECONDS
    cutoff = timezone.now() - timedelta(seconds=stale)
    qs = (runs if runs is not None else Run.objects.all()).filter(status=Run.Status.RUNNING)
    lost = qs.filter(Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff))
    counts = {"requeued": 0, "failed": 0}
    for run in lost.only("pk", "attempts", "heartbeat_at", "cancel_requested"):
        guard = Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, heartbeat_at=run.heartbeat_at)
        if run.attempts < MAX_ATTEMPTS and not run.cancel_requested:
            if guard.update(**back_to_waiting(progress=0.0)):
                counts["requeued"] += 1
        elif guard.update(status=Run.Status.FAILED, finished_at=timezone.now(),
                          error="worker lost: the worker running it stopped (tried twice)"
                          if not run.cancel_requested else "cancelled (worker lost)"):
            counts["failed"] += 1
    if counts["requeued"] or counts["failed"]:
        log.warning("reconcile: %(requeued)d run(s) re-queued, %(failed)d failed as worker lost", counts)
        dispatch()
    return counts


LOST_MESSAGE = ("lost in the queue: its message was lost twice (a worker holding it stopped); "
                "run it again")


def resend_lost() -> dict[str, int]:
    """Queued runs whose message the broker no longer holds (kombu's filesystem broker loses what a
    dying worker had taken) are sent again once, then failed with the reason."""
    return resend_lost_messages(
        Run.objects.filter(status=Run.Status.QUEUED, cancel_requested=False, dispatched_at__isnull=False),
        run_simulation,
        settings.SCHEDLAB_RUN_STALE_SECONDS,
        {"status": Run.Status.FAILED, "finished_at": timezone.now(), "error": LOST_MESSAGE})


def requeue_interrupted() -> int:
    """Runs left running when `make run` stopped its only worker: queued again without counting the
    interrupted attempt (stopping the application is not the run's fault). Returns how many."""
    ids = list(Run.objects.filter(status=Run.Status.RUNNING).values_list("pk", flat=True))
    count = 0
    for pk in ids:
        if Run.objects.filter(pk=pk, status=Run.Status.RUNNING).update(
                **back_to_waiting(progress=0.0, attempts=Greatest(F("attempts") - 1, 0))):
            count += 1
    dispatch()
    return count


@shared_task
def reconcile_runs() -> dict[str, int]:
    """The periodic check (beat on compose, the supervisor under `make run`): "requeued"/"failed" count
    runs whose worker was lost, "resent"/"lost_in_queue" runs whose queued message was."""
    messages = resend_lost()
    return {**reconcile(), "resent": messages["resent"], "lost_in_queue": messages["failed"]}


@worker_ready.connect
def _reconcile_at_start(**_: object) -> None:
    try:
        reconcile()
        resend_lost()
        dispatch()
    except Exception:  # noqa: BLE001 - never keep a worker from starting
        log.exception("reconcile at worker start failed")


def remove_results(run: Run) -> None:
    shutil.rmtree(run.result_dir, ignore_errors=True)
