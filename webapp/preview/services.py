"""Create and compute a reconfiguration preview: three simulations of one trace on one machine.

* current: the current queue configuration under the chosen policy;
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

from django.utils import timezone

from webapp.core.files import replace_dir
from webapp.core.tasks import enqueue
from webapp.experiments.models import load_frame, save_frame
from webapp.preview.models import Preview

log = logging.getLogger(__name__)
RUNS = ("current", "proposed", "counterpart")


def create_preview(owner: Any, form: Any) -> Preview:
    """A Preview from a valid PreviewForm (texts copied), queued for a worker."""
    from webapp.preview.tasks import run_preview

    data = form.cleaned_data
    current_name, current_text = form.configuration("current")
    proposed_name, proposed_text = form.configuration("proposed")
    preview = Preview.objects.create(
        owner=owner, name=data["name"], shared=data["shared"], trace=data["trace"],
        machine_name=data["machine"].name, machine_text=data["machine"].text,
        current_name=current_name, current_text=current_text,
        proposed_name=proposed_name, proposed_text=proposed_text, policy=data["policy"])
    enqueue(run_preview, preview.pk)
    return preview


def policies_of(preview: Preview) -> dict[str, str]:
    from webapp.preview.forms import POLICIES

    return {"current": preview.policy, "proposed": preview.policy, "counterpart": POLICIES[preview.policy]}


def compute(preview: Preview) -> dict[str, Any]:
    """Run the three simulations, store their schedules in the preview's folder, return the summary."""
    from engine.metrics.fidelity import fidelity
    from engine.metrics.summary import summarize_result
    from engine.platform.machines import parse_machines
    from engine.platform.queues import parse_queue_config
    from engine.sim import simulate
    from engine.workload.recorded import has_recorded_starts

    workload = trace_workload(preview)
    machine = parse_machines(preview.machine_text, source=preview.machine_name)
    configs = {"current": parse_queue_config(preview.current_text, source=preview.current_name),
               "proposed": parse_queue_config(preview.proposed_text, source=preview.proposed_name)}
    configs["counterpart"] = configs["proposed"]
    build = Path(tempfile.mkdtemp(prefix=f".preview-{preview.pk}-", dir=preview.result_dir.parent))
    summary: dict[str, Any] = {"clusters": {c.name: c.total_cores for c in machine.clusters}, "runs": {}}
    try:
        for run, policy in policies_of(preview).items():
            result = simulate(workload, None, policy, machine=machine, queues=configs[run])
            save_frame(result.schedule, build / f"{run}.npz")
            summary["runs"][run] = {**summarize_result(result), "preset": policy}
        if has_recorded_starts(workload):   # what really happened, beside the simulations
            recorded = simulate(workload, None, "recorded", machine=machine)
            save_frame(recorded.schedule, build / "recorded.npz")
            summary["runs"]["recorded"] = {**summarize_result(recorded), "preset": "recorded"}
            summary["fidelity"] = {run: fidelity(recorded.schedule, load_frame(build / f"{run}.npz"),
                                                 capacity=machine.cores) for run in RUNS}
        replace_dir(build, preview.result_dir)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return summary


def trace_workload(preview: Preview):  # noqa: ANN201 - engine.workload.Workload
    return preview.trace.workload()


def schedules(preview: Preview) -> dict[str, Any]:
    """The stored schedules by run name (for the figures): the three simulations, and ``recorded``
    where the trace records start times."""
    frames = {run: load_frame(preview.result_dir / f"{run}.npz") for run in RUNS}
    if (preview.result_dir / "recorded.npz").exists():
        frames["recorded"] = load_frame(preview.result_dir / "recorded.npz")
    return frames


def run(preview_id: int) -> None:
    """The worker's job: queued -> running -> done | failed (one line for the user)."""
    from engine.policies import PolicyError
    from engine.sim import SimulationError
    from engine.workload import WorkloadError

    if not Preview.objects.filter(pk=preview_id, status=Preview.Status.QUEUED).update(status=Preview.Status.RUNNING):
        return
    preview = Preview.objects.get(pk=preview_id)
    preview.result_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        summary = compute(preview)
    except (WorkloadError, PolicyError, SimulationError) as error:
        _finish(preview_id, Preview.Status.FAILED, error=" ".join(str(error).split()))
        return
    except Exception as error:  # noqa: BLE001 - users get one line, the log gets the traceback
        log.exception("preview %s failed", preview_id)
        _finish(preview_id, Preview.Status.FAILED, error=f"Internal error ({type(error).__name__}); see the worker log.")
        return
    _finish(preview_id, Preview.Status.DONE, summary=summary)


def _finish(preview_id: int, status: str, **fields: Any) -> None:
    Preview.objects.filter(pk=preview_id, status=Preview.Status.RUNNING).update(
        status=status, finished=timezone.now(), **fields)
