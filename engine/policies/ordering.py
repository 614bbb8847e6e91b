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
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from engine.policies.base import Param
from engine.policies.passorder import first_k
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


class PassKey(Protocol):
    """A vectorised key of a :class:`ReorderedQueue`: every waiting job's value at once, at each pass."""

    def bind(self, queue: ReorderedQueue) -> None:
        """Called once, before any job waits: ask the queue to keep the job columns the key reads
        (:meth:`ReorderedQueue.slotted`)."""

    def __call__(self, queue: ReorderedQueue) -> np.ndarray:
        """The value of each waiting job, in the queue's slot order (``queue.members[:queue.count]``),
        float64: smaller first, NaN last, ties by arrival."""


#: how many jobs of a pass's order a keyed queue sorts first (it sorts more when the pass walks further)
FIRST_SORTED = 128


class ReorderedQueue(WaitingQueue):
    """Waiting jobs put in order anew at each scheduling pass: for an order that reads the simulation's
    state (waiting time, free processors, usage). The order is made when the pass first asks for it
    and kept while the pass starts jobs (they leave it); a new instant, a job end or an arrival makes
    the next request make it again.

    The order is said in one of two ways: ``order(jobs in arrival order) -> jobs in order`` (any
    Python: a plugin's key or comparison), or ``key``, a :class:`PassKey` giving every waiting job's
    value at once with numpy (the priority formulas, engine.policies.formula): smaller first, NaN
    last, ties by arrival. A keyed queue sorts only as far as the pass walks
    (engine.policies.passorder.first_k: the first jobs of the order, more when the pass goes on) and
    keeps the waiting jobs, and the job columns its key reads, in arrays by slot (a leaving job's
    slot takes the last one's), so a pass copies no column.

    The order can also be kept as :class:`OrderLinks` (``link()``, ``ready_links()``,
    ``extend_links()``), the arrays the compiled node-level EASY pass walks (engine.policies.nodewalk)."""

    def __init__(self, sim: Simulation, order: Callable[[list[int]], list[int]] | None = None,
                 key: PassKey | None = None) -> None:
        super().__init__(sim, lambda j: (j,))
        if (order is None) == (key is None):
            raise ValueError("a ReorderedQueue takes an order or a key")
        self.order, self.pass_key = order, key
        n = sim.n
        #: the waiting jobs by slot (unordered; the first ``count``), each job's slot, whether it waits
        self.members = np.empty(max(n, 1), dtype=np.int64)
        self.slot = [0] * n
        self.count = 0
        self.present = bytearray(n)
        self.adds = 0
        #: (every job's value, the waiting jobs' values by slot) of each column the key reads
        self.columns: list[tuple[np.ndarray, np.ndarray]] = []
        self._stamp: tuple[int, int, int] | None = None
        self._jobs = self._values = self._prefix = np.empty(0, dtype=np.int64)
        self._list: list[int] = []
        self._first = 0
        #: how far the last passes' walks went in the order (where the next pass's sort starts)
        self._reach = FIRST_SORTED
        self.links: OrderLinks | None = None
        if key is not None:
            key.bind(self)

    # -- the waiting jobs
    def __len__(self) -> int:
        return self.count

    def slotted(self, column: np.ndarray) -> np.ndarray:
        """Keep ``column`` (a value per job) also by slot, for the waiting jobs; the array by slot
        (its first ``count`` entries are the waiting jobs', in the order of ``members``)."""
        by_slot = np.empty(max(self.sim.n, 1), dtype=column.dtype)
        self.columns.append((column, by_slot))
        return by_slot

    def add(self, job: int) -> None:
        at = self.count
        self.members[at] = job
        self.slot[job] = at
        for column, by_slot in self.columns:
            by_slot[at] = column[job]
        self.count = at + 1
        self.present[job] = 1
        self.adds += 1

    def remove(self, job: int) -> None:
        if not self.present[job]:
            raise SimulationError(f"{self.sim.job_name(job)} is not in the waiting queue: an algorithm that "
                                  "keeps its own list of waiting jobs starts them with sim.start(job)")
        at, last = self.slot[job], self.count - 1
        moved = int(self.members[last])
        self.members[at] = moved
        self.slot[moved] = at
        for _, by_slot in self.columns:
            by_slot[at] = by_slot[last]
        self.count = last
        self.present[job] = 0

    # -- the order of this pass
    def _pass(self) -> None:
        """Begin a pass if this is a new one: the waiting jobs and their values now."""
        sim = self.sim
        stamp = (sim.now, sim.finished, self.adds)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        self._jobs = self.members[:self.count].copy()
        self._prefix = self._jobs[:0]
        self._list = []
        self._first = 0
        if self.pass_key is not None:
            self._values = np.asarray(self.pass_key(self), dtype=np.float64) if self.count else self._values[:0]
            self._reach = max(FIRST_SORTED, self._reach // 2)

    def prefix(self, k: int) -> np.ndarray:
        """At least the first min(k, waiting at the pass's start) jobs of this pass's order (jobs the
        pass started since are in it: see ``present``)."""
        self._pass()
        total = len(self._jobs)
        if len(self._prefix) >= min(k, total):
            return self._prefix
        if self.order is not None:
            self._prefix = np.asarray(self.order(sorted(self._jobs.tolist())), dtype=np.int64)
        else:
            k = min(max(k, 2 * len(self._prefix), self._reach), total)
            out = np.empty(k, dtype=np.int64)
            self._prefix = out[:first_k(self._values, self._jobs, k, out)]
            self._reach = max(self._reach, len(self._prefix))
        self._list = self._prefix.tolist()
        return self._prefix

    def ordered(self) -> np.ndarray:
        """This pass's whole order (jobs the pass started since are in it)."""
        return self.prefix(self.sim.n)

    def jobs(self) -> list[int]:
        present = self.present
        return [j for j in self.ordered().tolist() if present[j]]

    def iter_jobs(self) -> Iterator[int]:
        """The waiting jobs in this pass's order, sorted as far as the walk goes."""
        self._pass()
        return self._walk(self._stamp)

    def _walk(self, stamp: tuple[int, int, int] | None) -> Iterator[int]:
        present, i = self.present, 0
        while True:
            order = self._list
            if i == len(order):
                if stamp != self._stamp or len(order) == len(self._jobs):
                    return
                self.prefix(i + 1)
                continue
            job = order[i]
            i += 1
            if present[job]:
                yield job

    def head(self) -> int:
        """The first waiting job in the pass's order. A keyed queue on a machine with no free
        processor does not order (nothing can start: every job needs one, and the algorithms that
        ask, ``none`` and ``easy``, stop at a head that does not fit): the head is then any waiting job."""
        sim = self.sim
        if self.pass_key is not None and sim.free <= 0 and self._stamp != (sim.now, sim.finished, self.adds):
            return int(self.members[0])
        self._pass()
        present, first = self.present, self._first
        while True:
            order = self._list
            while first < len(order) and not present[order[first]]:
                first += 1
            if first < len(order):
                self._first = first
                return order[first]
            if len(order) == len(self._jobs):
                raise IndexError("the head of an empty queue")
            self.prefix(first + 1)

    def position(self, job: int) -> int:
        return self.jobs().index(job)

    # -- the order as arrays, for the compiled node-level walk
    def link(self) -> OrderLinks:
        """Keep the order also as :class:`OrderLinks` (the compiled node-level EASY pass reads them)."""
        if self.links is None:
            self.links = OrderLinks(self.sim.n)
        return self.links

    def ready_links(self) -> None:
        """Bring :attr:`links` to the first jobs of this pass's order."""
        if self.links is not None:
            self.links.fill(self.prefix(self._reach))

    def extend_links(self) -> bool:
        """Put more of this pass's order in :attr:`links` (the walk went past its end); False if
        it holds the whole order already."""
        if self.links is None or len(self._prefix) == len(self._jobs):
            return False
        self.links.fill(self.prefix(2 * len(self._prefix)))
        return True


class OrderLinks:
    """A reordered queue's order in the arrays the compiled node-level walk reads of fair-share groups
    (engine.policies.fairshare.GroupLinks, engine.policies.nodewalk.walk): each waiting job is a group
    of its own, group i the i-th job of the order (``first[i]``), rows (0, i, i) all distinct, so the
    walk takes them in that order; no job follows another in a group (``nxt`` is -1)."""

    def __init__(self, jobs: int) -> None:
        room = max(jobs, 1)
        self.rows = np.zeros((room + 1, 3), dtype=np.float64)
        self.rows[:, 1] = self.rows[:, 2] = np.arange(room + 1, dtype=np.float64)
        self.nxt = np.full(room, -1, dtype=np.int64)
        self.first = np.full(room, -1, dtype=np.int64)
        self.size = 0

    def fill(self, ordered: np.ndarray) -> None:
        self.first[:len(ordered)] = ordered
        self.size = len(ordered)


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
