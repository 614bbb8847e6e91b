"""Orderings of the waiting queue: the interface (:class:`Ordering`) and the textbook ones, submit
order, shortest first, largest first with a skipping limit.

A queue keeps waiting jobs sorted by a key ending in the job number (= arrival rank), so ties are
broken by arrival and the order is deterministic.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Callable, Iterator, Sequence
from functools import cmp_to_key
from typing import Any, ClassVar, TypeVar

import numpy as np

from engine.policies.base import Param
from engine.policies.registry import Component, register_ordering
from engine.sim.simulator import Simulation, SimulationError

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
        keys, key = self._keys, self.key(job)
        at = bisect_left(keys, key)
        if at == len(keys) or keys[at] != key:     # (else another job's place would go)
            raise SimulationError(f"{self.sim.job_name(job)} is not in the waiting queue: an algorithm that "
                                  "keeps its own list of waiting jobs starts them with sim.start(job)")
        del keys[at]

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


class ReorderedQueue(WaitingQueue):
    """Waiting jobs put in order anew at each scheduling pass, by ``order(jobs in arrival order)``:
    for an order that reads the simulation's state (waiting time, free processors, usage). The order
    is made when the pass first asks for it and kept while the pass starts jobs (they leave it); a
    new instant, a job end or an arrival makes the next request make it again (as the formula
    orderings' queue, engine.policies.formula)."""

    def __init__(self, sim: Simulation, order: Callable[[list[int]], list[int]]) -> None:
        super().__init__(sim, lambda j: (j,))
        self.order = order
        self._ordered: list[int] | None = None
        self._at = (-1, -1)

    def add(self, job: int) -> None:
        super().add(job)
        self._ordered = None

    def remove(self, job: int) -> None:
        super().remove(job)
        if self._ordered is not None:
            self._ordered.remove(job)

    def current(self) -> list[int]:
        """The order now (the queue's own list: do not change it)."""
        at = (self.sim.now, self.sim.finished)
        if self._ordered is None or self._at != at:
            self._ordered, self._at = list(self.order(super().jobs())), at
        return self._ordered

    def jobs(self) -> list[int]:
        return list(self.current())

    def head(self) -> int:
        return self.current()[0]

    def position(self, job: int) -> int:
        return self.current().index(job)


class Ordering:
    """The order of the waiting queue: the interface of every ordering, built in or a plugin.

    Define :meth:`key` (smaller first) or :meth:`compare` (negative: ``a`` before ``b``); ties go
    by arrival. ``self.sim`` is the simulation (its state: :class:`Simulation`), ``self.params`` the
    parameters' values.

    ``by_state`` False (the default): the order uses only the jobs' own data (submit time, requested
    time, size, user); it is made once for every job, the queue stays sorted as jobs come and go and
    the compiled loops can run it. True: it reads the simulation's state (``sim.now``: waiting
    time, ``sim.free``, ...), and the waiting jobs are put in order anew at each scheduling pass.

    A plugin also says, as class attributes, its preset's ``name`` (default: the class name in lower
    case), its ``parameters`` (:class:`Param` schemas) and the ``algorithm`` of its preset; its
    docstring is the preset's description.
    """

    name: ClassVar[str] = ""
    parameters: ClassVar[tuple[Param, ...]] = ()
    algorithm: ClassVar[str] = "easy"
    by_state: ClassVar[bool] = False

    def __init__(self, sim: Simulation, params: dict[str, Any]) -> None:
        self.sim = sim
        self.params = params

    def key(self, job: int) -> Any:
        """The job's place in the order: smaller first."""
        raise NotImplementedError

    def compare(self, a: int, b: int) -> int:
        """Negative if job ``a`` goes before job ``b``, positive if after, 0 if the order does not
        care (then the earlier arrival goes first)."""
        raise NotImplementedError

    def keys(self) -> Sequence[Any] | np.ndarray:
        """Every job's key at once, for an order by the jobs' data (an array: numpy sorts it)."""
        key = self.key
        return [key(job) for job in range(self.sim.n)]

    def queue(self) -> WaitingQueue:
        """The waiting queue the algorithm walks, in this order."""
        compares = type(self).compare is not Ordering.compare
        if self.by_state:
            return ReorderedQueue(self.sim, self.sorted_by_comparison if compares else self.sorted_by_key)
        if compares:
            order = sorted(range(self.sim.n), key=cmp_to_key(self.compare_or_arrival))
            rank = np.empty(self.sim.n, dtype=np.int64)
            rank[order] = np.arange(self.sim.n)
        else:
            rank = ranks(self.keys())
        place = rank.tolist()
        return WaitingQueue(self.sim, lambda j: (place[j], j), rank)

    def compare_or_arrival(self, a: int, b: int) -> int:
        return self.compare(a, b) or (a > b) - (a < b)

    def sorted_by_key(self, jobs: list[int]) -> list[int]:
        key = self.key
        return sorted(jobs, key=lambda job: (key(job), job))

    def sorted_by_comparison(self, jobs: list[int]) -> list[int]:
        return sorted(jobs, key=cmp_to_key(self.compare_or_arrival))


def ranks(keys: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Each job's place when all jobs are sorted by (keys[job], job)."""
    n = len(keys)
    if isinstance(keys, np.ndarray) and keys.ndim == 1:
        order = np.lexsort((np.arange(n), keys))
    else:
        order = np.array(sorted(range(n), key=lambda j: (keys[j], j)), dtype=np.int64)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    return rank


class SubmitOrder(Ordering):
    """submit order"""

    def key(self, job: int) -> int:
        return job

    def keys(self) -> np.ndarray:
        return np.arange(self.sim.n, dtype=np.int64)


class ShortestFirst(Ordering):
    """shortest requested time first"""

    def key(self, job: int) -> int:
        return self.sim.estimate[job]

    def keys(self) -> np.ndarray:
        return np.asarray(self.sim.estimate, dtype=np.int64)


MASC = Param("masc", "int", math.inf,
             "maximum skipping count: no job is passed by more than this many later arrivals (inf = plain sorting)",
             minimum=0, allow_infinity=True, label="maximum skipping count (MASC)", unit="later arrivals")


class LargestFirst(Ordering):
    """largest job first, with a maximum skipping count"""

    parameters = (MASC,)

    def key(self, job: int) -> int:
        return -self.sim.size[job]

    def keys(self) -> np.ndarray:
        return -np.asarray(self.sim.size, dtype=np.int64)

    def queue(self) -> WaitingQueue:
        masc = self.params.get("masc", math.inf)
        if math.isinf(masc):
            return super().queue()
        size = self.sim.size
        return SkipLimitedQueue(self.sim, lambda j: (-size[j], j), masc)


def ordering_component(ordering: type[Ordering], name: str, description: str) -> Component:
    """The registry's entry for an :class:`Ordering` class: its queue, built for each run."""
    def factory(sim: Simulation, params: dict[str, Any]) -> WaitingQueue:
        return ordering(sim, params).queue()
    return Component(name, factory, ordering.parameters, description)


def submit_order(sim: Simulation, params: dict) -> WaitingQueue:
    """The submit-order queue (for tests and policies that need one of their own)."""
    return SubmitOrder(sim, params).queue()


for _name, _ordering in (("fcfs", SubmitOrder), ("sjf", ShortestFirst), ("largest", LargestFirst)):
    register_ordering(ordering_component(_ordering, _name, _ordering.__doc__ or ""))
