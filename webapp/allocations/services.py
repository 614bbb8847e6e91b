"""What the rest of the web app asks of allocations: attach a file to an experiment, the context its
runs get, the targets its dashboard draws, and the §9 scenario as a trace plus allocations."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from engine.api import Allocations, check_upload, sfs_scenario
from webapp.allocations.models import AllocationSet, ExperimentAllocations
from webapp.traces.services import create_trace
from webapp.traces.uploads import InspectedUpload, hash_and_measure

if TYPE_CHECKING:  # allocations sit below experiments: type names only, never a runtime import
    from webapp.experiments.models import Experiment


def attach(experiment: Experiment, allocation_set: AllocationSet | None) -> None:
    """Record the allocations the experiment's runs use (a copy of the text as it is now)."""
    if allocation_set is not None:
        ExperimentAllocations.objects.create(experiment=experiment, allocation_set=allocation_set,
                                             text=allocation_set.text, file_name=allocation_set.file_name)


def _used(experiment: Experiment) -> ExperimentAllocations | None:
    try:
        return experiment.allocations_used
    except ExperimentAllocations.DoesNotExist:
        return None


def allocations_of(experiment: Experiment) -> Allocations | None:
    """The allocations the experiment's runs use (targets for fair-share policies), if it has some."""
    used = _used(experiment)
    return used.parsed() if used is not None else None


def target_shares(experiment: Experiment) -> dict[str, float] | None:
    """Allocation name -> target as a share of the machine (finite targets only), for the dashboard."""
    used = _used(experiment)
    if used is None or not experiment.procs:
        return None
    targets = used.parsed().targets()
    return {name: target / experiment.procs for name, target in targets.items() if math.isfinite(target)}


def create_scenario(user: Any, *, seed: int, name: str, shared: bool) -> tuple[Any, AllocationSet]:
    """The SFS paper's §9 workload as a trace (parsed in the background like an upload) and its
    allocations file."""
    scenario = sfs_scenario(seed)
    directory = Path(settings.FILE_UPLOAD_TEMP_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    fd, staged_name = tempfile.mkstemp(dir=directory, prefix=".scenario-", suffix=".swf")
    with os.fdopen(fd, "w") as handle:
        handle.write(scenario.swf_text)
    staged = Path(staged_name)
    sha, _ = hash_and_measure(staged, staged.name)
    header, _, _ = check_upload(str(staged))
    inspected = InspectedUpload(staged, sha, False, staged.stat().st_size, {str(k): str(v) for k, v in header.items()})
    description = f"Generated: the SFS paper's §9 scenario, seed {seed}. {header.get('Note', '')}"
    trace = create_trace(user, {"name": name, "description": description, "shared": shared}, inspected,
                         f"sfs-scenario-seed{seed}.swf")
    allocations = AllocationSet.objects.create(
        owner=user, name=f"{name} allocations", shared=shared, text=scenario.allocations_text,
        description="Targets for the SFS paper's §9 scenario: Alice 500, Bob 400, Chris 750 nodes (2 x ideal).")
    return trace, allocations


def with_allocations(experiment: Experiment, schedules: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float] | None]:
    """Schedules with an ``allocation`` column and the targets as shares of the machine, when the
    experiment has allocations. Runs whose policy did not write the column (EASY, FCFS, ...) get it
    from the same file, so every run of the experiment shows its per-allocation occupancy."""
    used = _used(experiment)
    if used is None:
        return schedules, None
    allocations = used.parsed()
    labelled = {}
    for label, schedule in schedules.items():
        if "allocation" not in schedule.columns:
            schedule = schedule.copy()   # the cached schedule is shared: never change it
            schedule["allocation"] = allocations.assign(schedule).labels()
        labelled[label] = schedule
    return labelled, target_shares(experiment)
