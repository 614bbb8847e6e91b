"""Create and compute a reconfiguration preview: three simulations of one trace on one machine, and
what really happened.

* recorded: the schedule as it happened (when the trace records start times), the baseline the
  others are held against (engine.metrics.fidelity);
* current: the current queue configuration under the chosen policy — by default inferred from the
  trace (engine.platform.infer), as is the machine when none is chosen;
* proposed: the proposed configuration under the same policy;
* counterpart: the proposed configuration under the other fair-share (CPU-only <-> multi-resource),
  for the paper's Figs. 8–9.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
from django.conf import settings
from django.db.models import Sum
from django.db.models.functions import Length
from django.utils import timezone

from engine.api import (
    EXEC_HOSTS,
    INPUT_ERRORS,
    Cancelled,
    Clusters,
    InferredConfiguration,
    Scenario,
    SimulationError,
    Workload,
    WorkloadError,
    by_queue,
    error_line,
    fidelity,
    has_recorded_starts,
    infer_configuration,
    parse_machines,
    parse_queue_config,
    summarize,
    trace_time_zone,
    user_changes,
)
from engine.api import run as run_scenario
from webapp.core.limits import LIMIT_ERRORS, limit_message, memory_limit
from webapp.core.queues import QUICK, SIMULATION
from webapp.quotas.services import tree_size
from webapp.core.files import replace_dir
from webapp.core.progress import Reporter
from webapp.experiments.models import load_frame, save_frame
from webapp.preview.models import INFERRED_LABEL, POLICIES, Preview

log = logging.getLogger(__name__)
RUNS = ("current", "proposed", "counterpart")
RECORDED = "recorded"


def create_preview(owner: Any, form: Any) -> Preview:
    """A Preview from a valid PreviewForm (texts copied); webapp.preview.tasks.queue_preview also queues it."""
    data = form.cleaned_data
    current_name, current_text = form.configuration("current")
    proposed_name, proposed_text = form.configuration("proposed")
    machine = data["machine"]
    preview = Preview.objects.create(
        owner=owner, name=data["name"], shared=data["shared"], trace=data["trace"],
        machine_name=machine.name if machine else INFERRED_LABEL, machine_text=machine.text if machine else "",
        current_name=current_name, current_text=current_text,
        proposed_name=proposed_name, proposed_text=proposed_text, policy=data["policy"],
        params=data.get("params", {}))
    return preview


def policies_of(preview: Preview) -> dict[str, str]:
    return {"current": preview.policy, "proposed": preview.policy, "counterpart": POLICIES[preview.policy]}


def policy_spec(preview: Preview, preset: str) -> str | dict[str, Any]:
    """A run's policy: the preset with the preview's parameters (the bare name without any)."""
    return {"preset": preset, "params": dict(preview.params)} if preview.params else preset


def compute(preview: Preview, reporter: Reporter | None = None) -> dict[str, Any]:
    """Run the simulations (and the recorded run), store their schedules in the preview's folder,
    return the summary. An inferred configuration or machine is stored in the preview first.
    `reporter` hears the progress over all the simulations and renews the worker's lease."""
    workload = preview.trace.workload()
    infer_texts(preview, workload)
    machine = parse_machines(preview.machine_text, source=preview.machine_name)
    configs = {"current": parse_queue_config(preview.current_text, source=preview.current_name),
               "proposed": parse_queue_config(preview.proposed_text, source=preview.proposed_name)}
    configs["counterpart"] = configs["proposed"]
    build = Path(tempfile.mkdtemp(prefix=f".preview-{preview.pk}-", dir=preview.result_dir.parent))
    summary: dict[str, Any] = {"clusters": {c.name: c.total_cores for c in machine.clusters}, "runs": {},
                               "time_zone": preview.trace.zone() or trace_time_zone(workload)[1]}
    frames = {}
    recorded = has_recorded_starts(workload)
    parts = len(RUNS) + int(recorded)
    callbacks = {"progress": reporter.progress, "should_stop": reporter.should_stop} if reporter else {}
    try:
        if recorded:
            if reporter:
                reporter.part(0, parts)
            result = run_scenario(Scenario(trace=workload, policy=RECORDED, platform=Clusters(machine)), **callbacks)
            frames[RECORDED] = result.schedule
            save_frame(result.schedule, build / f"{RECORDED}.npz")
            summary[RECORDED] = {**summarize(result), "preset": RECORDED}
        for index, (run, policy) in enumerate(policies_of(preview).items(), start=int(recorded)):
            if reporter:
                reporter.part(index, parts)
            result = run_scenario(Scenario(trace=workload, policy=policy_spec(preview, policy),
                                           platform=Clusters(machine, configs[run])), **callbacks)
            frames[run] = result.schedule
            save_frame(result.schedule, build / f"{run}.npz")
            summary["runs"][run] = {**summarize(result), "preset": policy, "params": dict(preview.params)}
        if reporter:
            reporter.beat()
        if RECORDED in frames:
            summary["fidelity"] = fidelity(frames[RECORDED], frames["current"], capacity=machine.cores)
        compared = {k: frames[k] for k in (RECORDED, "current", "proposed") if k in frames}
        queue_of = trace_queues(workload)
        summary["changes"] = {"by_queue": by_queue(compared, queue_of), "users": user_changes(compared)}
        replace_dir(build, preview.result_dir)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return summary


def infer_texts(preview: Preview, workload: Workload) -> None:
    """Fill in an inferred current configuration and machine (empty texts) and store them."""
    if preview.current_text and preview.machine_text:
        return
    given = parse_machines(preview.machine_text, source=preview.machine_name) if preview.machine_text else None
    found = infer_configuration(workload, given)
    found.source = preview.trace.name             # the name the admin gave it, not the stored file's
    if not found.queues:
        raise WorkloadError("the trace records no start times: no configuration can be inferred from it")
    if not preview.machine_text:
        if found.machine is None:
            raise WorkloadError("the trace records no hosts its jobs ran on: choose a machine description")
        preview.machine_text = found.machine_yaml()
    if not preview.current_text:
        preview.current_text = found.queues_yaml()
    Preview.objects.filter(pk=preview.pk).update(machine_text=preview.machine_text, current_text=preview.current_text)


def trace_queues(workload: Workload) -> pd.Series:
    """job_id -> the queue the trace gives the job (its name where the trace names queues)."""
    jobs = workload.jobs
    names = jobs["queue_name"] if "queue_name" in jobs else jobs["queue"].astype(str)
    return pd.Series(names.astype(str).to_numpy(), index=jobs["job_id"].to_numpy())


def inferred_from(trace: Any) -> InferredConfiguration:
    """What ``trace``'s recorded schedule shows (engine.platform.infer), named after the trace."""
    found = infer_configuration(trace.workload())
    found.source = trace.name
    return found


def inference_problem(trace: Any, *, queues: bool, machine: bool) -> str | None:
    """Why a configuration / machine cannot be inferred from ``trace`` (None when it can)."""
    try:
        workload = trace.workload()
    except (WorkloadError, OSError) as error:
        return f"cannot read the trace: {error}"
    if not has_recorded_starts(workload):
        return "this trace records no start times (SWF wait field -1): nothing to infer; choose a configuration"
    if queues and "queue_name" not in workload.jobs:
        return "this trace names no queues: choose a configuration"
    if machine and (EXEC_HOSTS not in workload.jobs or not (workload.jobs[EXEC_HOSTS].astype(str) != "").any()):
        return "this trace records no hosts its jobs ran on: choose a machine description"
    return None


def schedules(preview: Preview) -> dict[str, Any]:
    """The stored schedules by run name (for the figures); ``recorded`` when the trace had one."""
    frames = {run: load_frame(preview.result_dir / f"{run}.npz") for run in RUNS}
    if (preview.result_dir / f"{RECORDED}.npz").exists():
        frames[RECORDED] = load_frame(preview.result_dir / f"{RECORDED}.npz")
    return frames


def run(preview_id: int) -> None:
    """The worker's job: queued -> running -> done | failed (one line for the user). While it runs
    its heartbeat is renewed (webapp.core.progress); it stops if the row is no longer its own."""
    now = timezone.now()
    if not Preview.objects.filter(pk=preview_id, status=Preview.Status.QUEUED).update(
            status=Preview.Status.RUNNING, started=now, heartbeat_at=now, progress=0.0):
        return
    preview = Preview.objects.get(pk=preview_id)
    preview.result_dir.parent.mkdir(parents=True, exist_ok=True)
    reporter = Reporter(Preview.objects.filter(pk=preview_id, status=Preview.Status.RUNNING))
    try:
        with reporter.lease(), memory_limit(settings.SCHEDLAB_TASK_MEMORY_BYTES):
            summary = compute(preview, reporter)
    except Cancelled:
        return  # reconciled away from this worker meanwhile (taken for lost): another computes it
    except (*INPUT_ERRORS, SimulationError) as error:
        _finish(preview_id, Preview.Status.FAILED, error=error_line(error))
        return
    except LIMIT_ERRORS as error:
        _finish(preview_id, Preview.Status.FAILED, error=limit_message(
            error, "the preview", settings.SCHEDLAB_PREVIEW_TIME_LIMIT, settings.SCHEDLAB_TASK_MEMORY_BYTES))
        return
    except Exception as error:  # noqa: BLE001 - users get one line, the log gets the traceback
        log.exception("preview %s failed", preview_id)
        _finish(preview_id, Preview.Status.FAILED, error=f"Internal error ({type(error).__name__}); see the worker log.")
        return
    _finish(preview_id, Preview.Status.DONE, summary=summary, progress=1.0)


def _finish(preview_id: int, status: str, **fields: Any) -> None:
    Preview.objects.filter(pk=preview_id, status=Preview.Status.RUNNING).update(
        status=status, finished=timezone.now(), **fields)


def disk_bytes_of(user: Any) -> int:
    """The user's previews: their texts and results, in bytes (webapp.quotas meter)."""
    previews = Preview.objects.filter(owner=user)
    texts = previews.aggregate(n=Sum(Length("machine_text")) + Sum(Length("current_text")) +
                               Sum(Length("proposed_text")))["n"] or 0
    return texts + sum(tree_size(p.result_dir) for p in previews.only("pk"))


def preview_kind(args: tuple) -> str:
    """A preview of a trace of at most SCHEDLAB_QUICK_PREVIEW_JOBS jobs is quick work; a larger one
    simulates for minutes and goes with the simulations (webapp.core.queues)."""
    jobs = (Preview.objects.filter(pk=args[0]).values_list("trace__summary", flat=True).first() or {}).get("jobs") \
        if args else None
    return QUICK if jobs is not None and jobs <= settings.SCHEDLAB_QUICK_PREVIEW_JOBS else SIMULATION
