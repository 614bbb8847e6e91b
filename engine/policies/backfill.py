"""Algorithms that decide what starts now, over any ordering of the waiting queue.

- ``none``: start jobs in queue order while the head fits (the Paragon paper's SSS).
- ``firstfit``: start any job that fits, in queue order, with no reservation.
- ``easy``: a reservation for the head job only; a later job may start now if it fits and does not
  delay that reservation (it ends before the shadow time, or uses only the extra processors).
- ``conservative``: every waiting job holds a reservation in the availability profile, made when
  it arrives; a job starts early only if no reservation moves later. When a job ends before its
  requested time, reservations are compressed: each waiting job (in queue order) moves to the
  earliest place it now fits, repeated until no job can move (see :meth:`Conservative.compress`).
"""

from __future__ import annotations

from bisect import bisect_left
from heapq import heappop, heappush

from engine.policies.ordering import WaitingQueue
from engine.sim.profile import Profile
from engine.sim.simulator import Simulation


class Algorithm:
    """Base: keeps the queue up to date; subclasses implement :meth:`schedule`."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        self.sim = sim
        self.queue = queue
        self.params = params

    def on_submit(self, job: int) -> None:
        self.queue.add(job)

    def on_finish(self, job: int) -> None:
        pass

    def start(self, job: int) -> None:
        self.queue.remove(job)
        self.sim.start(job)
        self.queue.started(job)

    def schedule(self) -> None:
        raise NotImplementedError


class InOrder(Algorithm):
    """``none``: start jobs in queue order while the head fits."""

    def schedule(self) -> None:
        queue, sim = self.queue, self.sim
        while len(queue):
            head = queue.head()
            if not sim.fits(head):
                return
            self.start(head)


class FirstFit(Algorithm):
    """``firstfit``: any waiting job that fits starts, in queue order; no reservation."""

    def schedule(self) -> None:
        sim, queue = self.sim, self.queue
        size = sim.size
        for job in queue.jobs():
            free = sim.free
            if free == 0:
                return
            if size[job] <= free and queue.may_start(job) and sim.fits(job):
                self.start(job)


class Easy(Algorithm):
    """``easy``: EASY backfilling (a reservation for the head job only)."""

    def schedule(self) -> None:
        sim, queue = self.sim, self.queue
        while len(queue):
            head = queue.head()
            if not sim.fits(head):
                break
            self.start(head)
        else:
            return
        if sim.free == 0:
            return
        shadow, extra = self.shadow(head)
        now, size, estimate = sim.now, sim.size, sim.estimate
        for job in queue.jobs()[1:]:
            free = sim.free
            if free == 0:
                return
            need = size[job]
            if need > free or not queue.may_start(job):
                continue
            if now + estimate[job] <= shadow:
                if sim.fits(job):
                    self.start(job)
            elif need <= extra and sim.fits(job):
                self.start(job)
                extra -= need

    def shadow(self, head: int) -> tuple[int, int]:
        """When the head job can start at the latest (running jobs end as requested), and how
        many processors will be left over then (the *extra* processors backfill may use)."""
        sim = self.sim
        need, available, now = sim.size[head], sim.free, sim.now
        for end, job in sim.running_ends:
            available += sim.size[job]
            if available >= need:
                return max(end, now + 1), available - need
        return now + 1, 0   # unreachable for jobs that fit the machine


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
        while freed:
            earliest_freed = min(a for a, _ in freed)
            moved = []
            for job in self.queue.jobs():
                start = reserved[job]
                duration = estimate[job]
                if start <= now or earliest_freed >= start + duration:
                    continue
                n = size[job]
                new = profile.earliest_start(now, duration, n, before=start,
                                             own=(start, start + duration, n))
                if new is None:
                    continue
                profile.release(start, start + duration, n)
                self._reserve(job, new)
                moved.append((start, start + duration))
                earliest_freed = min(earliest_freed, start)
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


ALGORITHMS = {"none": InOrder, "firstfit": FirstFit, "easy": Easy, "conservative": Conservative}
