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

from engine.api import (INPUT_ERRORS, Clusters, Scenario, SimulationError, error_line, parse_machines,
                        parse_queue_config, summarize)
from engine.api import run as run_scenario
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
    workload = preview.trace.workload()
    machine = parse_machines(preview.machine_text, source=preview.machine_name)
    configs = {"current": parse_queue_config(preview.current_text, source=preview.current_name),
               "proposed": parse_queue_config(preview.proposed_text, source=preview.proposed_name)}
    configs["counterpart"] = configs["proposed"]
    build = Path(tempfile.mkdtemp(prefix=f".preview-{preview.pk}-", dir=preview.result_dir.parent))
    summary: dict[str, Any] = {"clusters": {c.name: c.total_cores for c in machine.clusters}, "runs": {}}
    try:
        for run, policy in policies_of(preview).items():
            result = run_scenario(Scenario(trace=workload, policy=policy, platform=Clusters(machine, configs[run])))
            save_frame(result.schedule, build / f"{run}.npz")
            summary["runs"][run] = {**summarize(result), "preset": policy}
        replace_dir(build, preview.result_dir)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return summary


def schedules(preview: Preview) -> dict[str, Any]:
    """The three stored schedules by run name (for the figures)."""
    return {run: load_frame(preview.result_dir / f"{run}.npz") for run in RUNS}


def run(preview_id: int) -> None:
    """The worker's job: queued -> running -> done | failed (one line for the user)."""
    if not Preview.objects.filter(pk=preview_id, status=Preview.Status.QUEUED).update(status=Preview.Status.RUNNING):
        return
    preview = Preview.objects.get(pk=preview_id)
    preview.result_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        summary = compute(preview)
    except (*INPUT_ERRORS, SimulationError) as error:
        _finish(preview_id, Preview.Status.FAILED, error=error_line(error))
        return
    except Exception as error:  # noqa: BLE001 - users get one line, the log gets the traceback
        log.exception("preview %s failed", preview_id)
        _finish(preview_id, Preview.Status.FAILED, error=f"Internal error ({type(error).__name__}); see the worker log.")
        return
    _finish(preview_id, Preview.Status.DONE, summary=summary)


def _finish(preview_id: int, status: str, **fields: Any) -> None:
    Preview.objects.filter(pk=preview_id, status=Preview.Status.RUNNING).update(
        status=status, finished=timezone.now(), **fields)
