"""Conservative backfilling: every waiting job holds a reservation in the availability profile.

A job gets its reservation when it arrives (the earliest place it fits behind every earlier
reservation); it starts when its reservation comes. When a job ends before its requested time the
room it leaves is offered to the waiting jobs: reservations are compressed, never moved later.
"""

from __future__ import annotations

from bisect import bisect_left
from heapq import heappop, heappush
from itertools import accumulate

from engine.policies.algorithm import Algorithm
from engine.policies.ordering import WaitingQueue
from engine.sim.profile import Profile
from engine.sim.simulator import Simulation


class Conservative(Algorithm):
    """``conservative``: a reservation for every waiting job."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        self.profile = Profile(sim.capacity, 0)
        self.reserved: dict[int, int] = {}          # job -> reserved start
        self._due: list[tuple[int, int, int]] = []   # (start, seq, job), stale entries skipped
        self._seq = 0
        self._freed: list[tuple[int, int]] = []     # regions freed since the last compression

    # reservations ------------------------------------------------------------------------------
    def _reserve(self, job: int, start: int) -> None:
        sim = self.sim
        self.profile.reserve(start, start + sim.estimate[job], sim.size[job])
        self.reserved[job] = start
        heappush(self._due, (start, self._seq, job))
        self._seq += 1

    def _place(self, job: int) -> None:
        sim = self.sim
        start = self.profile.earliest_start(sim.now, sim.estimate[job], sim.size[job])
        self._reserve(job, start)

    def on_submit(self, job: int) -> None:
        super().on_submit(job)
        self.profile.advance(self.sim.now)
        self._place(job)

    def on_finish(self, job: int) -> None:
        sim = self.sim
        expected = sim.start_time[job] + sim.estimate[job]
        if sim.now < expected:
            self.profile.advance(sim.now)
            self.profile.release(sim.now, expected, sim.size[job])
            self._freed.append((sim.now, expected))

    # the decision ----------------------------------------------------------------------------
    def schedule(self) -> None:
        if self._freed:
            self.compress()
        if not self._start_due() and self._due and self._due[0][0] <= self.sim.now:
            self.rebuild()
            self._start_due()

    def _start_due(self) -> bool:
        """Start every job whose reservation is now; False if one of them does not fit."""
        sim, due, reserved = self.sim, self._due, self.reserved
        now = sim.now
        blocked = []
        while due and due[0][0] <= now:
            entry = heappop(due)
            start, _, job = entry
            if reserved.get(job) != start:
                continue
            if sim.fits(job):
                del reserved[job]
                self.start(job)
            else:
                blocked.append(entry)
        for entry in blocked:
            heappush(due, entry)
        return not blocked

    def compress(self) -> None:
        """Move reservations earlier into the room freed by jobs that ended early.

        A reservation can only move if its new window meets a region freed since it was last
        examined, so each round only looks at jobs whose window could reach one; a job that
        moves frees its old window, which the next round offers to the others, until no job moves.
        """
        sim, profile, reserved = self.sim, self.profile, self.reserved
        now, estimate, size = sim.now, sim.estimate, sim.size
        freed, self._freed = self._freed, []
        times = profile.times
        while freed:
            earliest_freed = min(a for a, _ in freed)
            latest_freed = max(b for _, b in freed)
            moved = []
            most_free = None   # most_free[i]: the most processors free anywhere in steps 0..i
            for job in self.queue.jobs():
                start = reserved[job]
                duration = estimate[job]
                # a new window must meet a freed region: begin before its end, end after its start
                limit = min(start, latest_freed)
                if limit <= now or earliest_freed >= start + duration:
                    continue
                n = size[job]
                if most_free is None:
                    most_free = list(accumulate(profile.free, max))
                if most_free[bisect_left(times, limit) - 1] < n:
                    continue   # never n processors free before that: cannot move
                new = profile.earliest_start(now, duration, n, before=limit,
                                             own=(start, start + duration, n))
                if new is None:
                    continue
                profile.release(start, start + duration, n)
                self._reserve(job, new)
                most_free = None
                moved.append((start, start + duration))
                earliest_freed = min(earliest_freed, start)
                latest_freed = max(latest_freed, start + duration)
            freed = moved

    def rebuild(self) -> None:
        """Rebuild the profile from what really runs, then re-place every waiting job in queue order.

        Needed only when reality left the profile: a job running past its requested time (when
        overruns are allowed) or a buddy request with no aligned free block.
        """
        sim = self.sim
        now = sim.now
        self.profile = Profile(sim.capacity, now)
        for end, job in sim.running_ends:
            self.profile.reserve(now, max(end, now + 1), sim.size[job])
        self.reserved.clear()
        self._due.clear()
        for job in self.queue.jobs():
            self._place(job)
