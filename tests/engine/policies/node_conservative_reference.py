"""The node-level conservative backfilling the speed-ups replace (issue 14), kept as the reference.

:class:`ReferenceNodeConservative` is engine.policies.heterogeneous.NodeConservative as it was on
main before the speed-ups, word for word (only renamed), with one later fix made in both: a job
not started at its reservation on a cluster whose availability window has closed on it (started
now, it would not end in the window) is placed again over its clusters instead of waiting there for
ever; :func:`reference_conservative` makes the
registry build it instead for ``conservative`` on clusters of nodes, so a test runs the same
simulation both ways (:func:`both`) and compares the schedules job by job (:func:`assert_same`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from heapq import heappop, heappush
from itertools import islice

import pandas as pd

from engine.policies.algorithm import Algorithm
from engine.policies.backfill import BACKFILL_BOUND, bounded
from engine.policies.heterogeneous import node_allocator
from engine.policies.ordering import WaitingQueue
from engine.policies.registry import MACHINE_ALGORITHMS, Component
from engine.run import simulate
from engine.sim.profile import Profile
from engine.sim.simulator import Simulation


class ReferenceNodeConservative(Algorithm):
    """main's NodeConservative before issue 14's speed-ups (gridcons), unchanged: one Profile object
    per cluster, every profile advanced at every event, every blocked job retried at every event,
    each search one Profile.earliest_start call per cluster."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        self.allocator = node_allocator(sim)
        self.profiles = [Profile(c.total_cores, 0) for c in self.allocator.clusters]
        self.reserved: dict[int, tuple[int, int, int, int]] = {}   # job -> (cluster, start, end, cores)
        self.running: dict[int, tuple[int, int, int]] = {}         # job -> (cluster, expected end, cores)
        self.unplaced: list[int] = []
        self.blocked: dict[int, None] = {}      # blocked due jobs, in the order they blocked (a dict: ordered set)
        self._due: list[tuple[int, int, int]] = []
        self._seq = 0
        self._freed: set[int] = set()
        allocator = self.allocator
        self._held = [[r.nodes * c.cores if r.exclusive else r.cores for c in allocator.clusters]
                      for r in allocator.requests]

    def _cores_on(self, job: int, cluster: int) -> int:
        return self._held[self.allocator.class_of[job]][cluster]

    def _best(self, job: int, not_before: int, *, before: int | None = None,
              own: tuple[int, int, int, int] | None = None, only: set[int] | None = None) -> tuple[int, int] | None:
        """(cluster, earliest start) over the job's suitable clusters (or those in ``only``), or None."""
        allocator = self.allocator
        best = None
        for c in allocator.class_clusters[allocator.class_of[job]]:
            if only is not None and c not in only and (own is None or own[0] != c):
                continue
            duration = allocator.estimate_on(job, c)
            start = max(not_before, allocator.avail_from[c])
            limit = before if best is None else best[1] if before is None else min(before, best[1])
            mine = (own[1], own[2], own[3]) if own is not None and own[0] == c else None
            found = self.profiles[c].earliest_start(start, duration, self._cores_on(job, c), before=limit, own=mine)
            if found is None or found + duration > allocator.avail_to[c]:
                continue
            if best is None or found < best[1]:
                best = (c, found)
        return best

    def _reserve(self, job: int, cluster: int, start: int, *, due: bool = True) -> None:
        end = start + self.allocator.estimate_on(job, cluster)
        cores = self._cores_on(job, cluster)
        self.profiles[cluster].reserve(start, end, cores)
        self.reserved[job] = (cluster, start, end, cores)
        if due:
            heappush(self._due, (start, self._seq, job))
            self._seq += 1

    def _drop(self, job: int) -> None:
        cluster, start, end, cores = self.reserved.pop(job)
        self.profiles[cluster].release(start, end, cores)

    def _place(self, job: int, not_before: int) -> None:
        best = self._best(job, not_before)
        if best is None:
            self.unplaced.append(job)
        else:
            self._reserve(job, *best)

    def _advance(self) -> None:
        now = self.sim.now
        for profile in self.profiles:
            profile.advance(now)

    def on_submit(self, job: int) -> None:
        super().on_submit(job)
        self._advance()
        self._place(job, self.sim.now)

    def on_finish(self, job: int) -> None:
        cluster, end, cores = self.running.pop(job)
        now = self.sim.now
        if now < end:
            self.profiles[cluster].advance(now)
            self.profiles[cluster].release(now, end, cores)
            self._freed.add(cluster)

    def schedule(self) -> None:
        self._advance()
        now = self.sim.now
        if self._freed:
            freed, self._freed = self._freed, set()
            self.compress(freed)
        if self.unplaced:
            waiting, self.unplaced = self.unplaced, []
            for job in waiting:
                self._place(job, now)
        if self.blocked:
            blocked, self.blocked = self.blocked, {}
            for job in blocked:
                if not self._start_or_replan(job):
                    self.blocked[job] = None
        due = self._due
        while due and due[0][0] <= now:
            start, _, job = heappop(due)
            entry = self.reserved.get(job)
            if entry is None or entry[1] != start or job in self.blocked:
                continue                                     # stale: the job moved or started
            if not self._start_or_replan(job):
                cluster = entry[0]
                self._drop(job)
                self._reserve(job, cluster, now, due=False)  # claims its cores from now on
                self.blocked[job] = None
        live = [start for start, _, job in due if self.reserved.get(job, (0, None))[1] == start
                and job not in self.blocked]
        if live:
            self.sim.wake_at(min(live))   # the job starts when its reservation comes

    def _start_or_replan(self, job: int) -> bool:
        """Start the job, or place it again if its cluster's window closed on it: whether either was done."""
        if self._try_start(job):
            return True
        cluster = self.reserved[job][0]
        if self.sim.now + self.allocator.estimate_on(job, cluster) <= self.allocator.avail_to[cluster]:
            return False
        self._drop(job)
        self._place(job, self.sim.now)
        return True

    def _try_start(self, job: int) -> bool:
        cluster, _, _, cores = self.reserved[job]
        if not self.allocator.fits_on(job, cluster):
            return False
        self._drop(job)
        end = self.sim.now + self.allocator.estimate_on(job, cluster)
        self.profiles[cluster].reserve(self.sim.now, end, cores)
        self.running[job] = (cluster, end, cores)
        self.start(job)
        return True

    def compress(self, freed: set[int]) -> None:
        """One pass in queue order: each reserved job moves to its earliest start on the clusters
        that gained room (or earlier on its own) if that is earlier."""
        now = self.sim.now
        for job in islice(self.queue.iter_jobs(), bounded(self.params)):
            entry = self.reserved.get(job)
            if entry is None or entry[1] <= now or job in self.blocked:
                continue
            best = self._best(job, now, before=entry[1], own=entry, only=freed)
            if best is not None and best[1] < entry[1]:
                self._drop(job)
                self._reserve(job, *best)


@contextmanager
def reference_conservative() -> Iterator[None]:
    """``conservative`` on clusters of nodes runs :class:`ReferenceNodeConservative` inside."""
    key = ("nodes", "conservative")
    saved = MACHINE_ALGORITHMS[key]
    MACHINE_ALGORITHMS[key] = Component("conservative", ReferenceNodeConservative, (BACKFILL_BOUND,),
                                        "conservative backfilling (reference)")
    try:
        yield
    finally:
        MACHINE_ALGORITHMS[key] = saved


def outcome(workload, policy, **options) -> pd.DataFrame | str:
    """The schedule, or the error the run ended with (main's code may leave a job waiting on an idle
    machine; the fast path must then fail the same way)."""
    try:
        return simulate(workload, None, policy, **options).schedule
    except Exception as error:    # noqa: BLE001 - compared, not hidden: both paths must agree
        return f"{type(error).__name__}: {error}"


def both(workload, policy, **options) -> tuple[pd.DataFrame | str, pd.DataFrame | str]:
    """The run's outcome with the fast NodeConservative and with the reference (:func:`outcome`)."""
    fast = outcome(workload, policy, **options)
    with reference_conservative():
        plain = outcome(workload, policy, **options)
    return fast, plain


def assert_same(fast: pd.DataFrame | str, plain: pd.DataFrame | str) -> None:
    """The same schedule job by job, or the same error."""
    if isinstance(fast, str) or isinstance(plain, str):
        assert fast == plain
    else:
        pd.testing.assert_frame_equal(fast, plain)
