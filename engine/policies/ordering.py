"""Orderings of the waiting queue: submit order, shortest first, largest first with a skipping limit.

A queue keeps waiting jobs sorted by a key ending in the job number (= arrival rank), so ties are
broken by arrival and the order is deterministic.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np

from engine.policies.base import Param
from engine.policies.registry import Component, register_ordering
from engine.sim.simulator import Simulation

T = TypeVar("T")


class WaitingQueue:
    """Waiting jobs kept sorted by ``key(job)``; the base class has no skipping limit."""

    def __init__(self, sim: Simulation, key: Callable[[int], tuple], rank: np.ndarray | None = None) -> None:
        self.sim = sim
        self.key = key
        self._keys: list[tuple] = []
        #: every job's place in the order of all jobs by ``key``, when the key is fixed data (lets
        #: backfilling index the queue by position, engine.sim.fitindex); None otherwise
        self.rank = rank

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, job: int) -> None:
        insort(self._keys, self.key(job))

    def remove(self, job: int) -> None:
        del self._keys[bisect_left(self._keys, self.key(job))]

    def jobs(self) -> list[int]:
        """Waiting jobs in priority order (a snapshot: safe to start jobs while walking it)."""
        return [k[-1] for k in self._keys]

    def iter_jobs(self) -> Iterator[int]:
        """Waiting jobs in the order :meth:`jobs` gives, without copying the queue: a pass may
        start the job just yielded (and only that one) and go on. A queue whose order can change
        during a pass gives the snapshot (:meth:`jobs`)."""
        if type(self).jobs is not WaitingQueue.jobs:
            return iter(self.jobs())
        return walk(self._keys, lambda key: key[-1])

    def head(self) -> int:
        return self._keys[0][-1]

    def position(self, job: int) -> int:
        """Where the waiting ``job`` stands in the order (0 = the head)."""
        return bisect_left(self._keys, self.key(job))

    def may_start(self, job: int) -> bool:
        """Whether starting ``job`` now keeps every waiting job within its skipping limit."""
        return True

    def started(self, job: int) -> None:
        """Called after the algorithm started ``job`` (already removed from the queue)."""


def walk(items: list[T], job_of: Callable[[T], int]) -> Iterator[int]:
    """The jobs of ``items`` (a list kept up to date by its owner) in order, going on correctly
    when the job just yielded is removed from the list meanwhile."""
    i = 0
    while i < len(items):
        job = job_of(items[i])
        yield job
        if i < len(items) and job_of(items[i]) == job:
            i += 1


class SkipLimitedQueue(WaitingQueue):
    """A sorted queue in which no job is passed by more than ``masc`` later arrivals.

    A job passed ``masc`` times is *pinned*: it moves to the head (pinned jobs in arrival order)
    and no job that arrived after the oldest pinned job may start before it.
    """

    def __init__(self, sim: Simulation, key: Callable[[int], tuple], masc: float) -> None:
        super().__init__(sim, key)
        self.masc = masc
        self.passed: dict[int, int] = {}
        self.pinned: list[int] = []

    def add(self, job: int) -> None:
        super().add(job)
        self.passed[job] = 0
        if self.masc == 0:
            insort(self.pinned, job)

    def remove(self, job: int) -> None:
        super().remove(job)
        del self.passed[job]
        if self.pinned and job in self.pinned:
            self.pinned.remove(job)

    def jobs(self) -> list[int]:
        if not self.pinned:
            return super().jobs()
        pinned = set(self.pinned)
        return self.pinned + [k[-1] for k in self._keys if k[-1] not in pinned]

    def head(self) -> int:
        return self.pinned[0] if self.pinned else super().head()

    def may_start(self, job: int) -> bool:
        return not self.pinned or job <= self.pinned[0]

    def started(self, job: int) -> None:
        masc = self.masc
        for waiting in self.passed:
            if waiting < job:
                count = self.passed[waiting] = self.passed[waiting] + 1
                if count == masc:
                    insort(self.pinned, waiting)


def ranks(primary: list[int]) -> np.ndarray:
    """Each job's place when all jobs are sorted by (primary[job], job)."""
    order = np.lexsort((np.arange(len(primary)), np.asarray(primary, dtype=np.int64)))
    rank = np.empty(len(primary), dtype=np.int64)
    rank[order] = np.arange(len(primary))
    return rank


def submit_order(sim: Simulation, params: dict) -> WaitingQueue:
    return WaitingQueue(sim, lambda j: (j,), np.arange(sim.n, dtype=np.int64))


def shortest_first(sim: Simulation, params: dict) -> WaitingQueue:
    estimate = sim.estimate
    return WaitingQueue(sim, lambda j: (estimate[j], j), ranks(estimate))


def largest_first(sim: Simulation, params: dict) -> WaitingQueue:
    size, masc = sim.size, params.get("masc", math.inf)
    key = lambda j: (-size[j], j)  # noqa: E731
    if not math.isinf(masc):
        return SkipLimitedQueue(sim, key, masc)
    return WaitingQueue(sim, key, ranks([-s for s in size]))


MASC = Param("masc", "int", math.inf,
             "maximum skipping count: no job is passed by more than this many later arrivals (inf = plain sorting)",
             minimum=0, allow_infinity=True, label="maximum skipping count (MASC)", unit="later arrivals")

register_ordering(Component("fcfs", submit_order, (), "submit order"))
register_ordering(Component("sjf", shortest_first, (), "shortest requested time first"))
register_ordering(Component("largest", largest_first, (MASC,), "largest job first, with a maximum skipping count"))
