"""The deadlock check's words: which jobs still wait on an idle machine, in which queue, held by
what, and when (a date in the trace's time zone, not an epoch).

Admission (engine.sim.admission) rejects at submission every job no queue could ever start, so the
check should not fire; if a policy or a machine's availability windows ever leave jobs waiting for
good, the run fails with this line instead of a bare count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.metrics.units import date_text
from engine.workload.model import Workload, native_ids
from engine.workload.timebase import epoch_origin

if TYPE_CHECKING:
    from engine.sim.nodes import NodeAllocator
    from engine.sim.simulator import Simulation

#: the waiting jobs named in the line (the rest are counted)
SHOWN = 5


def stuck_line(sim: Simulation, workload: Workload, allocator: NodeAllocator | None, at: float) -> str:
    """``N jobs still wait with the machine idle at 2024-12-22 07:34 (UTC+01:00): the policy never
    starts them: 112461.server (queue workq: ...); ...``"""
    exact = getattr(sim, "exact_start", None)      # time sharing keeps its starts there until the end
    started = [t == t for t in exact] if exact is not None else [t >= 0 for t in sim.start_time]
    waiting = [j for j in range(sim.n) if not started[j] and sim.submit[j] <= at]
    ids = native_ids(workload) or [str(j) for j in workload.jobs["job_id"].tolist()]
    named = "; ".join(f"{ids[j]} ({why_waiting(j, sim, allocator)})" for j in waiting[:SHOWN])
    more = f"; and {len(waiting) - SHOWN:,} more" if len(waiting) > SHOWN else ""
    return (f"{len(waiting):,} job{'s still wait' if len(waiting) != 1 else ' still waits'} with the machine idle at "
            f"{when(at, workload)}: the policy never starts them: {named}{more}")


def when(t: float, workload: Workload) -> str:
    """A time of the trace as a date in its time zone (``2024-12-22 07:34 (UTC+01:00)``), or its
    seconds when the trace has no calendar."""
    submit = workload.jobs["submit"]
    origin = epoch_origin(workload.metadata, int(submit.min()) if len(submit) else None)
    if origin is None:
        return f"t={t:g} s (the trace has no calendar)"
    from engine.platform.infer import time_zone       # (only on this error's path)
    zone = time_zone(workload)[1]
    return f"{date_text(t + origin, zone)} ({zone})"


def why_waiting(job: int, sim: Simulation, allocator: NodeAllocator | None) -> str:
    """What holds ``job`` on the idle machine: its queue's limits, or where it may run."""
    if allocator is None:
        return f"{sim.size[job]:,} of {sim.capacity:,} processors"
    cls = allocator.class_list[job]
    names = [allocator.clusters[c].name for c in allocator.class_clusters[cls]]
    where = f"no room on {', '.join(names)}" if names else "no cluster can run it"
    if allocator.queues is None or allocator.queue_of is None:
        return where + _window_note(job, allocator, allocator.class_clusters[cls], sim.now)
    queue = allocator.queues.queues[allocator.job_queue[job]]
    cores, pair = allocator.job_cores[job], allocator.job_pair[job]
    if cores > allocator.queue_room[allocator.job_queue[job]]:
        held = f"max_cores {queue.core_limit(allocator.capacity):g} reached"
    elif allocator.pair_jobs_room[pair] < 1:
        held = f"user_max_jobs {queue.user_max_jobs} reached"
    elif cores > allocator.pair_cores_room[pair]:
        held = f"user_max_cores {queue.user_max_cores} reached"
    else:
        held = where
    return f"queue {queue.name}: {held}" + _window_note(job, allocator, allocator.class_clusters[cls], sim.now)


def _window_note(job: int, allocator: NodeAllocator, clusters: list[int], now: int) -> str:
    """Which of ``clusters`` a job cannot use now for their availability window."""
    closed = [allocator.clusters[c].name for c in clusters
              if not allocator.avail_from[c] <= now <= allocator.avail_to[c] - allocator.estimate_on(job, c)]
    return f" (it would not end within the availability window of {', '.join(closed)})" if closed else ""
