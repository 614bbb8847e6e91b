"""The event loop for time sharing: admitted jobs share the machine and progress at a rate.

Space-sharing policies run on :class:`engine.sim.simulator.Simulation`, where a started job runs at
full speed on its own processors until ``start + runtime``. Under time sharing (the Paragon paper's
TSS, §5.3) the machine may be over-committed, so a job's end depends on everything admitted after
it; this loop therefore advances jobs by *rate* instead of by fixed end times.

The model (the policy description in :mod:`engine.policies.timesharing` states it for users):

- Demand ``D`` = the processors held by all admitted (started, unfinished) jobs (``alloc``:
  buddy-rounded under buddy allocation). The machine has ``N`` processors.
- Fluid gang scheduling: while ``D <= N`` every job runs at full speed; while ``D > N`` the machine
  is time-sliced so that every admitted job progresses at the same rate ``N / D`` (its gang gets
  ``N / D`` of the wall-clock time). All ``N`` processors are then busy all the time: the
  time-slicing is assumed to pack gangs perfectly, context switches cost nothing, and memory is
  sufficient for every admitted job. Which processors a job occupies is not modelled.
- Because all admitted jobs share one rate, progress is kept in a single *virtual clock*
  ``V`` (seconds of full-speed work since the beginning, ``dV/dt = rate``): a job admitted at ``V0``
  finishes when ``V`` reaches ``V0 + runtime``. Each event is then O(log n).
- Time is continuous (floating point) inside the loop: a job may end, and the next one may be
  admitted, between two whole seconds. The schedule reports start and end rounded to the nearest
  second (halves up), so ``wait``/``end`` stay integers as in every other schedule.
- At one instant: jobs finishing then end first, then arrivals are queued, then the policy admits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from heapq import heappop, heappush
from typing import Any

from engine.sim.simulator import JobsStuck, Pacer, Scheduler, Simulation
from engine.workload.model import Workload

#: Work (seconds) below which a job counts as finished; absorbs floating-point rounding.
EPSILON = 1e-6


class TimeSharingSimulation(Simulation):
    """Rate-based progress: every admitted job advances at ``min(1, N / D)`` (see module docstring)."""

    def __init__(self, workload: Workload, capacity: int, *, allocation: str = "count",
                 exact_estimates: bool = False, context: Mapping[str, Any] | None = None) -> None:
        super().__init__(workload, capacity, allocation=allocation, exact_estimates=exact_estimates,
                         context=context)
        self.now: float = 0.0  # type: ignore[assignment]  # exact (fractional) times inside time sharing
        #: processors held by admitted jobs (may exceed the capacity: that is time sharing)
        self.demand = 0
        self.peak_demand = 0
        #: virtual clock: full-speed seconds of work every admitted job has received since t=0
        self.virtual = 0.0
        self._due: list[tuple[float, int, int]] = []   # (virtual finish, start order, job)
        self.exact_start: list[float] = [math.nan] * self.n
        self.exact_end: list[float] = [math.nan] * self.n

    # -- what the policy calls ---------------------------------------------------------------
    @property
    def rate(self) -> float:
        """The speed of every admitted job: 1 while the machine is not over-committed."""
        return 1.0 if self.demand <= self.capacity else self.capacity / self.demand

    def utilization(self, demand: int | None = None) -> float:
        """Fraction of the machine busy at this instant with ``demand`` processors admitted."""
        held = self.demand if demand is None else demand
        return min(held, self.capacity) / self.capacity

    def raises_utilization(self, job: int) -> bool:
        """The paper's admission test: would admitting ``job`` now make the machine busier?
        (True exactly when the admitted jobs hold fewer than N processors.)"""
        return self.utilization(self.demand + self.size[job]) > self.utilization()

    def fits(self, job: int) -> bool:
        return self.raises_utilization(job)

    @property
    def free(self) -> int:
        return max(self.capacity - self.demand, 0)

    def start(self, job: int) -> None:
        """Admit ``job`` now (time-shared with the jobs already admitted)."""
        self.exact_start[job] = self.now
        self.start_order[job] = self.started
        heappush(self._due, (self.virtual + self.runtime[job], self.started, job))
        self.started += 1
        self.demand += self.size[job]
        self.peak_demand = max(self.peak_demand, self.demand)

    # -- the loop ------------------------------------------------------------------------------
    def run(self, scheduler: Scheduler, *, progress: Callable[[float], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> None:
        submit, n, due = self.submit, self.n, self._due
        next_job = 0
        pacer = Pacer(n, progress, should_stop)
        while next_job < n or due:
            rate = self.rate
            finish_at = self.now + (due[0][0] - self.virtual) / rate if due else math.inf
            arrive_at = submit[next_job] if next_job < n else math.inf
            t = max(min(finish_at, arrive_at), self.now)
            self.virtual += (t - self.now) * rate
            self.now = t
            while due and due[0][0] <= self.virtual + EPSILON:
                job = heappop(due)[2]
                self._finish(job)
                scheduler.on_finish(job)
            while next_job < n and submit[next_job] <= t + EPSILON:
                scheduler.on_submit(next_job)
                next_job += 1
            scheduler.schedule()
            if not due and next_job == n and self.started < n:
                raise JobsStuck(n - self.started, t)
            pacer.tick(self.finished, t)
        self.start_time = [_round_half_up(t) for t in self.exact_start]
        self.end_time = [_round_half_up(t) for t in self.exact_end]
        pacer.done()

    def _finish(self, job: int) -> None:
        self.exact_end[job] = self.now
        self.demand -= self.size[job]
        self.finished += 1

    def slowed_jobs(self) -> int:
        """Jobs that took longer than their runtime because they shared processors."""
        return sum(1 for job in range(self.n)
                   if self.exact_end[job] - self.exact_start[job] > self.runtime[job] + EPSILON)


def _round_half_up(t: float) -> int:
    return int(math.floor(t + 0.5))
