"""Assembling a run: one :class:`Scenario` (trace, platform, policy, workload transforms, extra
inputs) in, one :class:`~engine.sim.simulator.SimResult` out.

This is the layer above the policies: it resolves the policy spec through the registry, applies
the workload transforms in one fixed order (cleaning at read, time window, load factor, then the
policy's workload options such as deadlines), prepares node-level placement on clusters, builds
the scheduler and drives the event loop. The simulator below knows none of this.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from engine.policies.base import PolicyError, PolicySpec
from engine.policies.plugins import SOURCES, failure_in_plugin, provenance
from engine.policies.registry import apply_workload_options, build_scheduler, replays, resolve, simulation_class
from engine.sim.pending import (held_columns, held_times, node_sweep, pending_summary, pool_held_plainly, pool_sweep,
                                use_kernel)
from engine.sim.simulator import Cancelled, JobsStuck, SimResult, Simulation, SimulationError, schedule_frame
from engine.sim.timesharing import TimeSharingSimulation
from engine.sim.validate import Placement, ReservationWatch, reservation_caveat, validate
from engine.version import __version__
from engine.workload.load import scale_load
from engine.workload.loading import load_workload
from engine.workload.model import Workload
from engine.workload.names import names_of
from engine.workload.recorded import with_recorded_starts
from engine.workload.transforms import Overrun, Oversize
from engine.workload.window import select_days

if TYPE_CHECKING:
    # Node-level placement (machines, queues, engine.sim.nodes) is imported only by a run on clusters:
    # with YAML and the per-group metrics it took 0.15 s of CPU of every command's start-up
    # (python -X importtime, 2026-11-23) that a run on one pool of processors does not use.
    from engine.platform.allocations import Allocations
    from engine.platform.machines import Machine
    from engine.platform.queues import QueueConfig
    from engine.sim.nodes import NodeAllocator

#: what a policy may be given as: a preset name, a JSON string, a dict or a resolved spec
PolicyLike = str | Mapping[str, object] | PolicySpec
#: inputs particular policies need, by name (e.g. ``allocations``); each policy checks the value it reads
Context = Mapping[str, object]
Progress = Callable[[float], None]
ShouldStop = Callable[[], bool]


@dataclass(frozen=True)
class Pool:
    """One pool of identical processors. ``procs`` None: the size the trace was read with (its
    header's MaxProcs, else MaxNodes)."""

    procs: int | None = None
    allocation: Literal["count", "buddy"] = "count"


@dataclass(frozen=True)
class Clusters:
    """Clusters of nodes with node-level placement, optional queue limits and speed scaling."""

    machine: Machine
    queues: QueueConfig | None = None
    speed_scaling: bool = False


@dataclass(frozen=True)
class Cleaning:
    """How a trace file is read and cleaned (ignored when the scenario is given a Workload)."""

    oversize: Oversize = "reject"
    overrun: Overrun = "kill"
    skip_bad_lines: bool = False
    memory_unit: str | None = None


@dataclass(frozen=True)
class Transforms:
    """What is done to the workload before the run, in this order: only jobs submitted in ``days``
    (days from the first submit), inter-arrival times divided by ``load_factor``, then the deadline
    scenario (``deadlines``: a share of the jobs, drawn with the seed) and the DBF paper's
    preprocessing. The last two are workload options of the policy spec (``deadline_fraction``,
    ``drop_interactive``), so they are recorded with the policy; None/False leave the spec's value."""

    days: tuple[float, float] | None = None
    load_factor: float = 1.0
    deadlines: float | None = None
    paper_preprocessing: bool = False


@dataclass(frozen=True)
class Scenario:
    """Everything that determines a schedule. Same scenario -> same schedule."""

    trace: str | Path | Workload
    policy: PolicyLike = "fcfs"
    platform: Pool | Clusters = field(default_factory=Pool)
    transforms: Transforms = field(default_factory=Transforms)
    cleaning: Cleaning = field(default_factory=Cleaning)
    #: targets for policies that use allocations (Simultaneous Fair-Share)
    allocations: Allocations | None = None
    exact_estimates: bool = False
    seed: int = 0
    #: a Slurm site as configured (slurm.conf + sacctmgr dumps), for the ``slurm`` policy (issue 24)
    slurm_site: Any = None
    #: a PBS site as configured (print server, sched_config, resource_group), for the ``pbs`` policy
    pbs_site: Any = None


def run(scenario: Scenario, *, progress: Progress | None = None,
        should_stop: ShouldStop | None = None) -> SimResult:
    """Simulate ``scenario``: read (or take) the workload, transform it, and run the policy."""
    workload = scenario_workload(scenario)
    platform = scenario.platform
    context: dict[str, Any] = {}
    if scenario.allocations is not None:
        context["allocations"] = scenario.allocations
    if scenario.slurm_site is not None:
        context["slurm_site"] = scenario.slurm_site
    if scenario.pbs_site is not None:
        context["pbs_site"] = scenario.pbs_site
    run_it = partial(simulate, exact_estimates=scenario.exact_estimates, seed=scenario.seed, progress=progress,
                     should_stop=should_stop, context=context or None)
    policy = scenario_policy(scenario)
    if isinstance(platform, Clusters):
        return run_it(workload, None, policy, machine=platform.machine, queues=platform.queues,
                      speed_scaling=platform.speed_scaling)
    capacity = platform.procs if platform.procs is not None else int(workload.metadata["procs"])
    return run_it(workload, capacity, policy, allocation=platform.allocation)


def scenario_workload(scenario: Scenario) -> Workload:
    """The scenario's workload after cleaning, time window and load factor (not yet the policy's
    workload options, which :func:`simulate` applies with the run's seed)."""
    workload = scenario.trace
    if not isinstance(workload, Workload):
        cleaning = scenario.cleaning
        procs = scenario.platform.procs if isinstance(scenario.platform, Pool) else None
        workload = load_workload(workload, procs=procs, oversize=cleaning.oversize, overrun=cleaning.overrun,
                                 skip_bad_lines=cleaning.skip_bad_lines, memory_unit=cleaning.memory_unit)
    transforms = scenario.transforms
    if transforms.days is not None:
        workload = select_days(workload, *transforms.days)
    if transforms.load_factor != 1.0:
        workload = scale_load(workload, transforms.load_factor)
    return workload


def scenario_policy(scenario: Scenario) -> PolicySpec:
    """The scenario's policy spec with its transforms' workload options set."""
    spec = resolve(scenario.policy)
    options: dict[str, float | bool] = {}
    if scenario.transforms.deadlines is not None:
        options["deadline_fraction"] = scenario.transforms.deadlines
    if scenario.transforms.paper_preprocessing:
        options["drop_interactive"] = True
    if not options:
        return spec
    return resolve({**spec.to_dict(), "params": {**spec.to_dict()["params"], **options}})


def deadline_summaries_at(scenario: Scenario, schedule: pd.DataFrame, fractions: Sequence[float]) -> list[dict[str, Any]]:
    """The deadline figures (engine.metrics.deadlines.deadline_summary) of ``schedule``, the result of
    ``scenario`` under a policy that does not read deadlines (EASY, conservative), at each share of
    deadline jobs in ``fractions``: its schedule is the same at every share, but which jobs have a
    deadline, and so which are regular and which miss, depends on the share. At each share the jobs are
    marked as a run of the scenario at that share marks them (the same workload options, the same
    seed: the deadline jobs DBF gets at that share)."""
    from engine.metrics.deadlines import deadline_summary, with_deadlines_of

    spec = scenario_policy(scenario)
    base = scenario_workload(scenario)
    summaries = []
    for fraction in fractions:
        workload = apply_workload_options(base, {**spec.params, "deadline_fraction": float(fraction)},
                                          seed=scenario.seed)
        summaries.append(deadline_summary(with_deadlines_of(schedule, workload.jobs)))
    return summaries


def simulate(workload: Workload, capacity: int | None, policy: PolicyLike = "fcfs", *,
             allocation: str = "count", exact_estimates: bool = False, seed: int = 0,
             progress: Progress | None = None, should_stop: ShouldStop | None = None,
             context: Context | None = None, machine: Machine | None = None,
             queues: QueueConfig | None = None, speed_scaling: bool = False) -> SimResult:
    """Simulate ``workload`` on a homogeneous machine of ``capacity`` processors under ``policy``.

    ``policy`` is a preset name, a JSON string, a dict or a PolicySpec (see
    :func:`engine.policies.registry.resolve`). ``context`` carries inputs particular policies need
    (e.g. ``{"allocations": ...}``). Jobs larger than the machine are not simulated; they are
    counted in ``meta["rejected"]``.

    ``machine``: simulate on its clusters of nodes instead, with node-level placement
    (engine.sim.nodes); ``capacity`` is then ignored (None is fine), ``queues`` adds queue limits,
    ``speed_scaling`` scales runtimes by cluster speed. Jobs no cluster can run are counted in
    ``meta["rejected"]``. (:func:`run` takes the same as one :class:`Scenario`.)
    """
    spec = resolve(policy)
    given, rejected_before = len(workload.jobs), workload.report.total_rejected
    workload = apply_workload_options(workload, spec.params, seed=seed)
    allocator: NodeAllocator | None = None
    if replays(spec):   # the recorded run: jobs with a recorded start, where they really ran
        workload = with_recorded_starts(workload)
        if not len(workload):
            raise SimulationError("the trace records no start times (SWF wait field -1 everywhere): "
                                  "there is no recorded run to show")
        if machine is not None:
            capacity, machine = machine.cores, None
    if machine is not None:
        from engine.sim.nodes import prepare    # only on clusters (see the imports at the top)
        check_node_algorithm(spec)
        workload, allocator, too_big = prepare(workload, machine, queues=queues, speed_scaling=speed_scaling)
        capacity, allocation = machine.cores, allocator.name
        rejected = {**workload.report.rejected, **too_big}
        rejected_jobs = allocator.rejected_jobs
    else:
        if capacity is None:
            raise ValueError("simulate() needs a capacity (processors) or a machine")
        workload, rejected, rejected_jobs = _fit_to_machine(workload, int(capacity))
    started = time.perf_counter()
    if allocator is None:
        sim = simulation_class(spec)(workload, capacity, allocation=allocation, exact_estimates=exact_estimates,
                                     context=context)
    else:
        sim = Simulation(workload, capacity, exact_estimates=exact_estimates, context=context, allocator=allocator)
    try:
        scheduler = build_scheduler(spec, sim, seed=seed)
        watch = ReservationWatch() if hasattr(scheduler, "watch") else None
        if watch is not None:
            scheduler.watch = watch
        sim.run(scheduler, progress=progress, should_stop=should_stop)
    except JobsStuck as stuck:      # the last resort: say which jobs, where, held by what, when
        from engine.stuck import stuck_line
        raise SimulationError(stuck_line(sim, workload, allocator, stuck.at)) from None
    except Exception as error:   # a plugin's bug is one line naming its file and line, not a traceback
        failure = None if isinstance(error, (SimulationError, Cancelled)) else failure_in_plugin(error)
        if failure is None:
            raise
        raise failure from None
    wall = time.perf_counter() - started
    schedule = schedule_frame(sim, workload)
    held = None if isinstance(sim, TimeSharingSimulation) or replays(spec) else \
        held_columns(held_times_of(sim, allocator, schedule))
    if "deadline" in workload.jobs:   # the deadline scenario: NaN for regular jobs
        schedule["deadline"] = workload.jobs["deadline"].to_numpy(dtype=np.float64)
    for source in (scheduler, getattr(scheduler, "queue", None), sim.allocator):
        for name, values in getattr(source, "extra_columns", dict)().items():
            schedule[name] = values
    pending: dict[str, Any] | None = None
    if held is not None:     # (before the deadline, the last column of a pool run's schedule)
        at = schedule.columns.get_loc("deadline") if "deadline" in schedule.columns else len(schedule.columns)
        for offset, (name, values) in enumerate(held.items()):
            schedule.insert(at + offset, name, values)
    if sim.refused:          # jobs the policy refused at submission (a Slurm site's limits)
        schedule, workload, rejected, rejected_jobs = without_refused(sim, schedule, workload, rejected, rejected_jobs)
    if held is not None:
        pending = pending_summary(schedule, names_of(workload.metadata, "user"),
                                  by_queue=allocator is not None and allocator.queues is not None)
    meta: dict[str, Any] = {
        "policy": spec.to_dict(), "label": spec.label, "allocation": allocation,
        "exact_estimates": exact_estimates, "seed": seed, "capacity": int(capacity),
        "engine_version": __version__, "wall_seconds": wall, "rejected": rejected,
        "source": workload.source,
        "summary": {**getattr(scheduler, "summary", dict)(),
                    **(node_summary(allocator, schedule) if allocator is not None else {}),
                    **({"pending": pending} if pending is not None else {})},
    }
    plugins = provenance(spec.ordering, spec.algorithm)
    if plugins:   # a Python plugin's code is part of what produced the schedule
        meta["plugins"] = plugins
    meta["summary"]["validation"] = validate(
        schedule, workload, int(capacity), given=given, rejected_before=rejected_before,
        rejected_after=sum(rejected.values()), shares_processors=isinstance(sim, TimeSharingSimulation),
        replayed=replays(spec), watch=watch,
        placement=Placement(machine, speed_scaling, allocator.cores_of) if allocator is not None else None,
        reservations_promised=reservation_caveat(allocation, sim.runtime, sim.estimate),
        limit_check=sim.limit_check.without(sim.refused) if sim.limit_check is not None else None)
    return SimResult(schedule, int(capacity), meta, rejected_jobs)


def without_refused(sim: Simulation, schedule: pd.DataFrame, workload: Workload, rejected: dict[str, int],
                    rejected_jobs: pd.DataFrame | None) -> tuple[pd.DataFrame, Workload, dict[str, int], pd.DataFrame]:
    """The schedule and workload without the jobs the policy refused at submission, which are
    counted and listed as rejected with their reason (e.g. Slurm's ``QOSMaxSubmitJobPerUserLimit``)."""
    from engine.sim.admission import rejected_frame
    rows = np.array(sorted(sim.refused), dtype=np.int64)
    keep = np.ones(len(schedule), dtype=bool)
    keep[rows] = False
    listed = rejected_frame(workload.jobs, rows, workload.metadata)
    reasons = [sim.refused[row][0] for row in rows.tolist()]
    listed["queue"] = [str(q) for q in workload.jobs["queue_name"].to_numpy()[rows]] if "queue_name" in workload.jobs \
        else ""
    listed["reason"] = reasons
    listed["limit"] = [sim.refused[row][1] for row in rows.tolist()]
    rejected = dict(rejected)
    for reason in reasons:
        rejected[reason] = rejected.get(reason, 0) + 1
    if rejected_jobs is not None and len(rejected_jobs):
        listed = pd.concat([rejected_jobs, listed], ignore_index=True)
    jobs = workload.jobs.iloc[np.flatnonzero(keep)].reset_index(drop=True)
    return schedule.iloc[np.flatnonzero(keep)].reset_index(drop=True), replace(workload, jobs=jobs), rejected, listed


def held_times_of(sim: Simulation, allocator: NodeAllocator | None, schedule: pd.DataFrame) -> np.ndarray:
    """Each job's seconds held per pending reason (engine.sim.pending), on clusters or on one pool."""
    submit, start, end = (schedule[name].to_numpy(np.int64) for name in ("submit", "start", "end"))
    if allocator is not None:
        return held_times(submit, start, end, node_sweep(allocator))
    size = np.asarray(sim.size, dtype=np.int64)
    if use_kernel(submit, start, size):
        return held_times(submit, start, end, pool_sweep(size, sim.capacity))
    return pool_held_plainly(submit, start, end, size, sim.capacity)


def check_node_algorithm(spec: PolicySpec) -> None:
    """Refuse, with a clear message, an algorithm that has no node-level form. A plugin's algorithm
    runs: it asks ``sim.fits(job)`` and starts through the simulation, which the node allocator answers."""
    from engine.sim.nodes import NODE_ALGORITHMS    # only on clusters (see the imports at the top)
    if spec.algorithm not in NODE_ALGORITHMS and spec.algorithm not in SOURCES:
        raise PolicyError(f"algorithm {spec.algorithm!r} does not run on a machine of clusters of nodes "
                          f"(--machines); choose one of: {', '.join(NODE_ALGORITHMS)}")


def node_summary(allocator: NodeAllocator, schedule: pd.DataFrame) -> dict[str, Any]:
    """The node allocator's summary (machine, queues) with per-cluster and per-queue figures, in
    the order machine, speed_scaling, per_cluster, per_queue, queues."""
    from engine.metrics.groups import per_group     # only on clusters (see the imports at the top)
    info = allocator.summary()
    queues = info.pop("queues", None)
    info["per_cluster"] = per_group(schedule, "cluster")
    if allocator.queues is not None:
        info["per_queue"] = per_group(schedule, "queue")
    if queues is not None:
        info["queues"] = queues
    return info


def _fit_to_machine(workload: Workload, capacity: int) -> tuple[Workload, dict[str, int], pd.DataFrame]:
    from engine.sim.admission import rejected_frame
    rejected = dict(workload.report.rejected)
    too_big = workload.jobs["procs"].to_numpy() > capacity
    listed = rejected_frame(workload.jobs, np.flatnonzero(too_big), workload.metadata,
                            machine_limit=f"more processors than the machine's {capacity:,}")
    if too_big.any():
        reason = "larger than the simulated machine"
        rejected[reason] = rejected.get(reason, 0) + int(too_big.sum())
        jobs = workload.jobs.loc[~too_big].reset_index(drop=True)
        workload = replace(workload, jobs=jobs)
    return workload, rejected, listed
