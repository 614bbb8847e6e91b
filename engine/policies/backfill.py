"""Algorithms that decide what starts now, over any ordering of the waiting queue.

- ``none``: start jobs in queue order while the head fits (the Paragon paper's SSS).
- ``firstfit``: start any job that fits, in queue order, with no reservation.
- ``easy``: a reservation for the head job only; a later job may start now if it fits and does not
  delay that reservation (it ends before the shadow time, or uses only the extra processors).
  ``backfill_bound`` K (like Slurm's bf_max_job_test, PBS's backfill depth): only the first K
  waiting jobs behind the head are tested; by default every one (the exact schedule).
- ``conservative``: every waiting job holds a reservation in the availability profile, made when
  it arrives; a job starts early only if no reservation moves later. When a job ends before its
  requested time, reservations are compressed: each waiting job (in queue order) moves to the
  earliest place it now fits, repeated until no job can move (see :meth:`Conservative.compress`).
"""

from __future__ import annotations

import math
from itertools import islice
from typing import Any

from engine.policies.algorithm import Algorithm
from engine.policies.base import Param
from engine.policies.ordering import WaitingQueue
from engine.policies.registry import Component, register_algorithm
from engine.sim.allocation import CountAllocator
from engine.sim.fitindex import FitIndex, RunningByEnd
from engine.sim.poolloop import EASY, IN_ORDER
from engine.sim.simulator import Simulation
from engine.sim.validate import ReservationWatch

BACKFILL_BOUND = Param(
    "backfill_bound", "int", math.inf,
    "most waiting jobs one backfill pass tests behind the reserved one (like Slurm's bf_max_job_test or PBS's "
    "backfill depth; conservative: jobs its compression moves); inf = every one, the exact schedule",
    minimum=1, allow_infinity=True, label="backfill bound", unit="jobs")


def bounded(params: dict[str, Any]) -> int | None:
    """A policy's backfill bound: None = every waiting job (the exact schedule)."""
    bound = params.get("backfill_bound", math.inf)
    return None if math.isinf(bound) else int(bound)


def order_fixed_at_arrival(queue: WaitingQueue) -> bool:
    """A plain queue whose order is a rank per job (what the compiled loop and FitIndex need)."""
    return type(queue) is WaitingQueue and queue.rank is not None


class InOrder(Algorithm):
    """``none``: start jobs in queue order while the head fits."""

    def compiled_algorithm(self) -> int | None:
        """The compiled loop runs it (engine.sim.poolloop) when its queue order is fixed at arrival."""
        return IN_ORDER if type(self) is InOrder and order_fixed_at_arrival(self.queue) else None

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
    """``easy``: EASY backfilling (a reservation for the head job only).

    On a pool of processors (count allocation) with a queue order fixed at arrival and no bound,
    the backfill pass asks a :class:`FitIndex` for the next job that can start instead of testing
    every waiting job (the same jobs start, in the same order).

    ``watch``: when set (the run's schedule check sets it), told of every reservation and of
    every start from the head, so that a head started after its reservation is caught."""

    watch: ReservationWatch | None = None

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        indexed = (order_fixed_at_arrival(queue) and bounded(params) is None
                   and isinstance(sim.allocator, CountAllocator) and type(sim).fits is Simulation.fits)
        self.index: FitIndex | None = None
        #: running jobs by expected end in arrays (with the index): the shadow time, compiled
        self.running: RunningByEnd | None = None
        if indexed and queue.rank is not None:
            self.index, self.running = FitIndex(queue.rank, sim.size, sim.estimate), RunningByEnd(sim.capacity)

    def compiled_algorithm(self) -> int | None:
        """The compiled loop runs it (engine.sim.poolloop) where the index would (the same passes)."""
        return EASY if type(self) is Easy and self.index is not None else None

    def on_submit(self, job: int) -> None:
        super().on_submit(job)
        if self.index is not None:
            self.index.add(job)

    def start(self, job: int) -> None:
        super().start(job)
        if self.index is not None and self.running is not None:
            self.index.remove(job)
            self.running.add(self.sim.expected_end(job), job, self.sim.size[job])

    def on_finish(self, job: int) -> None:
        if self.running is not None:
            self.running.remove(self.sim.expected_end(job), job)

    def schedule(self) -> None:
        sim, queue, watch = self.sim, self.queue, self.watch
        while len(queue):
            head = queue.head()
            if not sim.fits(head):
                break
            self.start(head)
            if watch is not None:
                watch.started(head, sim.now)
        else:
            return
        if sim.free == 0:
            return
        index, running = self.index, self.running
        if running is not None:
            shadow, extra = running.shadow(sim.size[head], sim.free, sim.now)
        else:
            shadow, extra = self.shadow(head)
        if watch is not None:
            watch.blocked(head, sim.now, shadow)
        if index is not None:
            self.backfill_indexed(index, head, shadow, extra)
            return
        now, size, estimate = sim.now, sim.size, sim.estimate
        behind = queue.iter_jobs()
        next(behind)                                 # the head
        for job in islice(behind, bounded(self.params)):
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

    def backfill_indexed(self, index: FitIndex, head: int, shadow: int, extra: int) -> None:
        """The backfill pass with the index: each next job (in queue order) that fits the free
        processors and ends by the shadow time or fits the extra processors starts."""
        sim = self.sim
        span = shadow - sim.now
        position = int(index.rank[head]) + 1
        while sim.free:
            job = index.first_fit(position, sim.free, extra, span)
            if job < 0:
                return
            if sim.estimate[job] > span:
                extra -= sim.size[job]
            position = int(index.rank[job]) + 1
            self.start(job)

    def shadow(self, head: int) -> tuple[int, int]:
        """When the head job can start at the latest (running jobs end as requested), and how
        many processors will be left over then (the *extra* processors backfill may use).

        The extra processors count every running job that has ended by the shadow time, also
        those expected to end at the very instant the head first fits (textbook EASY); stopping at
        the first job that makes the head fit would leave processors idle that backfill may use.
        A job running past its expected end (overruns allowed) is expected to end in one second.
        """
        sim = self.sim
        need, available, now = sim.size[head], sim.free, sim.now
        size = sim.size
        shadow = -1
        for end, job in sim.running_ends:
            if shadow >= 0 and end > shadow:
                break
            available += size[job]
            if shadow < 0 and available >= need:
                shadow = max(end, now + 1)
        if shadow < 0:
            return now + 1, 0   # unreachable for jobs that fit the machine
        return shadow, available - need


register_algorithm(Component("none", InOrder, (), "start jobs in queue order while the head fits"))
register_algorithm(Component("firstfit", FirstFit, (), "any waiting job that fits, no reservation"))
register_algorithm(Component("easy", Easy, (BACKFILL_BOUND,), "EASY backfilling"))
