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
    """``schedule check failed: jobs: job 3 never started: it waits with the machine idle at t=20 and
    nothing left to happen (submitted at t=6, 2 of 4 processors): the policy never starts it``; for
    several jobs, ``7 jobs never started: they wait ... happen: 112461.server (submitted at 2024-12-21
    17:58, queue workq: ...); ...; and 2 more: the policy never starts them``. Dates in the trace's
    time zone where it has a calendar."""
    exact = getattr(sim, "exact_start", None)      # time sharing keeps its starts there until the end
    started = [t == t for t in exact] if exact is not None else [t >= 0 for t in sim.start_time]
    waiting = [j for j in range(sim.n) if not started[j] and sim.submit[j] <= at]
    native = native_ids(workload)
    ids = native if native is not None else [f"job {j}" for j in workload.jobs["job_id"].tolist()]
    clock = Clock(workload)

    def named(j: int) -> str:
        return f"submitted at {clock.text(sim.submit[j])}, {why_waiting(j, sim, allocator)}"
    idle = f"with the machine idle at {clock.text(at)}{clock.zone_note} and nothing left to happen"
    if len(waiting) == 1:
        job = waiting[0]
        return (f"schedule check failed: jobs: {ids[job]} never started: it waits {idle} ({named(job)}): "
                "the policy never starts it")
    listed = "; ".join(f"{ids[j]} ({named(j)})" for j in waiting[:SHOWN])
    more = f"; and {len(waiting) - SHOWN:,} more" if len(waiting) > SHOWN else ""
    return (f"schedule check failed: jobs: {len(waiting):,} jobs never started: they wait {idle}: {listed}{more}: "
            "the policy never starts them")


class Clock:
    """The trace's times as its admins read them: dates in its time zone, or ``t=`` seconds when the
    trace has no calendar."""

    def __init__(self, workload: Workload) -> None:
        submit = workload.jobs["submit"]
        self.origin = epoch_origin(workload.metadata, int(submit.min()) if len(submit) else None)
        self.zone = "UTC"
        if self.origin is not None:
            from engine.platform.infer import time_zone       # (only on this error's path)
            self.zone = time_zone(workload)[1]

    @property
    def zone_note(self) -> str:
        return f" ({self.zone})" if self.origin is not None else ""

    def text(self, t: float) -> str:
        return f"t={t:g}" if self.origin is None else date_text(t + self.origin, self.zone)


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
