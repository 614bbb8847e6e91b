"""The worker's side of a replicated comparison (issue 26): run one replicate's policies, and settle
the set when its last replicate run ends (combine into the report, or fail the set with one line).

Imported by webapp.experiments.tasks (so it imports nothing from the services above it).
"""

from __future__ import annotations

import logging
from typing import Any
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from engine import api
from webapp.experiments.models import Experiment, ReplicateSet, Run
from webapp.experiments.stopping import stop_running
from webapp.traces.models import Trace

log = logging.getLogger(__name__)

#: the parsed trace this worker process read last: (trace id, content hash) -> Workload. One trace
#: is kept: a worker takes the replicate runs of one set one after the other, and run_replicate keeps
#: its prepared copy between calls recognised by the identity of this object.
_WORKLOAD: dict[tuple[int, str], api.Workload] = {}


def workload_of(trace: Trace) -> api.Workload:
    """The trace's parsed workload, read once per worker process (the same object every call)."""
    key = (trace.pk, trace.sha256)
    if key not in _WORKLOAD:
        _WORKLOAD.clear()
        _WORKLOAD[key] = trace.workload()
    return _WORKLOAD[key]


def replicate_set_of(experiment: Experiment) -> ReplicateSet | None:
    """The set whose replicate runs ``experiment`` holds, or None for an ordinary experiment."""
    return ReplicateSet.objects.filter(runs_experiment=experiment).first()


def execute_replicate(run: Run, replicates: ReplicateSet, part: Callable[[int, int], None],
                      should_stop: Callable[[], bool]) -> dict[str, Any]:
    """Run the plan's run specs this row holds (one replicate, every policy); the outcomes as the
    row's summary. Raises Cancelled when asked to stop between policies."""
    specs = [replicates.plan["runs"][index] for index in run.policy["replicate_runs"]]
    workload = workload_of(replicates.experiment.trace)
    outcomes = []
    for number, spec in enumerate(specs):
        part(number, len(specs))
        if should_stop():
            raise api.Cancelled()
        outcomes.append(api.run_replicate(workload, spec))
    return {"outcomes": outcomes}


def settle(experiment_id: int) -> None:
    """After a replicate run ends: a failed one fails the set with one line (the runs still waiting
    are cancelled); when all are done, combine them into the report (stored once)."""
    replicates = ReplicateSet.objects.filter(runs_experiment_id=experiment_id).first()
    if replicates is None or replicates.report is not None:
        return
    runs = Run.objects.filter(experiment_id=experiment_id)
    failed = runs.filter(status=Run.Status.FAILED).order_by("finished_at", "pk").first()
    if failed is not None:
        line = f"replicate {failed.label} failed: {failed.error}"[:1000]
        if ReplicateSet.objects.filter(pk=replicates.pk, error="").update(error=line):
            stop_waiting(runs)
        return
    if runs.exclude(status=Run.Status.DONE).exists():
        return
    outcomes = [outcome for summary in runs.values_list("summary", flat=True) for outcome in summary["outcomes"]]
    try:
        report = api.combine_replicates(replicates.plan, outcomes)
    except api.INPUT_ERRORS as e:
        ReplicateSet.objects.filter(pk=replicates.pk, report__isnull=True).update(
            error=f"the replicates could not be combined: {api.error_line(e)}"[:1000])
        return
    ReplicateSet.objects.filter(pk=replicates.pk, report__isnull=True).update(report=report, error="")


def stop_waiting(runs: Any) -> None:
    """Cancel a failed set's runs that have not ended (queued ones at once, running ones revoked: stop_running)."""
    with transaction.atomic():
        runs.filter(status=Run.Status.QUEUED).update(status=Run.Status.CANCELLED, cancel_requested=True,
                                                     finished_at=timezone.now(), error="cancelled: the set failed")
        stop_running(runs)
