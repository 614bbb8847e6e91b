"""The algorithms ``none``, ``easy`` and ``conservative`` on a heterogeneous machine (clusters of nodes).

The registry picks these instead of the pool-level classes when the simulation's allocator is
node-level (:class:`engine.sim.nodes.NodeAllocator`); any ordering composes with them. Jobs that
queue limits hold back are skipped (they are not eligible, as in PBS), so they never block the
queue nor hold a reservation.

* ``none``: start eligible jobs in queue order while the first eligible one fits.
* ``easy``: the first eligible job that does not fit gets a reservation on one cluster (see
  :meth:`engine.sim.nodes.NodeAllocator.head_reservation`); later jobs start if they do not
  delay it (:meth:`~engine.sim.nodes.NodeAllocator.backfill_fits`). With ``backfill_bound`` K,
  only the first K waiting jobs after the reservation are tested (the exact schedule by default).
* ``conservative`` — approximations, stated: each waiting job holds a reservation in the **core**
  profile of one cluster (``engine.sim.profile.Profile`` per cluster; the cores it holds: nodes ×
  ppn, or whole nodes if exclusive), chosen as the suitable cluster with the earliest start.
  Node-level fit (ppn per node, RAM, GPUs) and queue limits are checked only when the reservation
  comes due; a due job that does not fit then is *blocked*: its reservation is moved once to start
  at that instant on the same cluster, and it is retried at every later event (in queue order,
  before the jobs falling due) until it fits; the profile is not updated while it waits, so
  later reservations may overlap its real run and in turn be blocked when due. When a job ends
  early, one compression pass in queue order moves each waiting job to its earliest start on the
  cluster(s) that gained room, or earlier on its own cluster, if that is earlier (the homogeneous
  engine repeats passes to a fixpoint and also reuses room given up by moved jobs). With
  ``backfill_bound`` K the pass looks at the first K waiting jobs only. One pass can leave a
  reservation where nothing ends or arrives: a pass is held at the earliest reservation, so a
  job starts when its reservation comes, not at the next event.
"""

from __future__ import annotations

from heapq import heappop, heappush
from itertools import islice
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.policies.algorithm import Algorithm
from engine.policies import nodewalk
from engine.policies.backfill import BACKFILL_BOUND, bounded
from engine.policies.fairshare import FairShareQueue
from engine.policies.ordering import ReorderedQueue, WaitingQueue
from engine.policies.registry import Component, register_algorithm
from engine.policies.nodecons import compress_pass
from engine.sim.profile import FOREVER
from engine.sim.profileset import NEVER_FITS, ProfileSet, earliest_over
from engine.sim.jit import bind_direct
from engine.sim.simulator import Simulation
from engine.sim.validate import ReservationWatch

if TYPE_CHECKING:
    from engine.sim.nodes import NodeAllocator, Placement, Reservation


#: queues the compiled pass can walk: they keep their order as groups of jobs in arrays (``link()``,
#: ``ready_links()``): the fair-share groups, or a state-dependent order such as a formula's (each job
#: its own group; it gives the first jobs of the order, and more, ``extend_links()``, when the walk
#: goes past them)
WALKED_QUEUES = (FairShareQueue, ReorderedQueue)


def node_allocator(sim: Simulation) -> NodeAllocator:
    """The simulation's node-level allocator (the registry picks these algorithms only for one)."""
    # Here, not at the top: the registry imports this module for every run, and node placement (with
    # machines, queues, YAML) loads only for runs on clusters (engine/run.py; tests/engine/test_api_imports.py).
    from engine.sim.nodes import NodeAllocator

    allocator = sim.allocator
    if not isinstance(allocator, NodeAllocator):
        raise TypeError(f"a node-level algorithm needs a node-level machine, not {type(allocator).__name__}")
    return allocator


class NodeInOrder(Algorithm):
    """``none``: eligible jobs in queue order while the first eligible one fits."""

    def schedule(self) -> None:
        sim, allocator = self.sim, node_allocator(self.sim)
        for job in self.queue.iter_jobs():
            if not allocator.limits_allow(job):
                continue
            if not self.queue.may_start(job) or not sim.fits(job):
                return
            self.start(job)


class NodeEasy(Algorithm):
    """``easy`` with a per-cluster, node-level reservation for the first eligible blocked job
    (``watch`` as in :class:`engine.policies.backfill.Easy`). Over a fair-share queue the pass is
    compiled (engine.policies.nodewalk); the Python pass (:meth:`_schedule_python`) is the reference
    and runs the other cases."""

    watch: ReservationWatch | None = None
    #: compile the pass where it can be (tests set False to run the Python reference)
    compiled = True

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        #: waiting jobs per request class (lets an exact pass stop once every job left behind the
        #: reservation is of a class known not to fit now)
        self.waiting: dict[int, int] = {}
        allocator = node_allocator(sim)
        self.class_of = allocator.class_list
        self.walker: NodeWalker | None = None
        if (self.compiled and type(queue) in WALKED_QUEUES and not allocator.windows and len(queue) == 0
                and len(allocator.clusters) <= 62 and not sim.started):
            self.walker = NodeWalker(sim, queue, allocator, bounded(params))

    def on_submit(self, job: int) -> None:
        super().on_submit(job)
        cls = self.class_of[job]
        if self.walker is not None:         # (which counts its waiting jobs per class itself)
            self.walker.submitted(job, cls)
        else:
            self.waiting[cls] = self.waiting.get(cls, 0) + 1

    def start(self, job: int) -> None:
        super().start(job)
        if self.walker is None:
            cls = self.class_of[job]
            left = self.waiting[cls] - 1
            if left:
                self.waiting[cls] = left
            else:
                del self.waiting[cls]

    def schedule(self) -> None:
        if self.walker is not None:
            # an empty queue: nothing to walk (the fair-share order is brought up to date at the next pass:
            # usage decays in order whenever it is asked, and a periodic cycle is asked for only while jobs wait)
            if self.queue.count:            # type: ignore[attr-defined]
                self._schedule_compiled(self.walker)
        else:
            self._schedule_python()

    def _schedule_compiled(self, walker: NodeWalker) -> None:
        """The pass of :meth:`_schedule_python`, its walk compiled: Python starts the jobs the kernel
        picks (in its order) and computes the reservations it asks for."""
        sim, allocator = self.sim, walker.allocator
        self.queue.ready_links()          # type: ignore[attr-defined]  # (its order now, in links.rows)
        walker.begin()
        while True:
            code = walker.walk(allocator.free, sim.now)
            for job, placement, head in walker.started():
                allocator._cached = (job, allocator._version, placement)
                allocator._respects = -1 if head else job
                self.start(job)
                if head and self.watch is not None:
                    self.watch.started(job, sim.now)
            reused = walker.reused()
            if reused is not None and self.watch is not None:
                self.watch.blocked(reused[0], sim.now, reused[1])
            if code == nodewalk.DONE:
                if not walker.ran_out() or not walker.extend():
                    return
            elif code == nodewalk.NEED_RESERVATION:
                job = walker.head_job()
                reservation = allocator.head_reservation(job)   # None: it can never start
                if reservation is not None:
                    if self.watch is not None:
                        self.watch.blocked(job, sim.now, reservation.shadow)
                    walker.reserve(reservation)
                else:
                    walker.forget_reservation()

    def _schedule_python(self) -> None:
        """One pass in queue order. The cheap tests come first, inline (this loop walks the whole
        waiting queue at every event): a job behind the reservation whose request class is known
        not to fit anywhere now (``NodeAllocator.unfit_at``) is passed over without asking the
        allocator; queue limits are read from the allocator's room counters directly. Without a
        bound, the pass counts the jobs not yet walked whose class may fit (``ahead``) and stops
        behind the reservation when none is left: every later job would be passed over."""
        sim, queue, allocator = self.sim, self.queue, node_allocator(self.sim)
        size = sim.size
        limited = allocator.queue_of is not None
        job_cores, job_queue, job_pair = allocator.job_cores, allocator.job_queue, allocator.job_pair
        queue_room, pair_jobs, pair_cores = allocator.queue_room, allocator.pair_jobs_room, allocator.pair_cores_room
        unfit_at, class_of, log = allocator.unfit_at, allocator.class_list, allocator.release_log
        remember = not allocator.windows
        skipping = type(queue).may_start is not WaitingQueue.may_start
        bound = bounded(self.params)
        counting = remember and bound is None
        if counting:
            now_count = len(log)
            live = {cls: n for cls, n in self.waiting.items() if unfit_at[cls] != now_count}
            ahead = sum(live.values())
        tested = 0
        reservation = None
        for job in queue.iter_jobs():
            free = allocator.free
            if free == 0:
                return
            cls = class_of[job]
            if counting:
                if reservation is not None and not ahead:
                    return
                left = live.get(cls)
                if left is not None:
                    live[cls] = left - 1
                    ahead -= 1
            if reservation is not None:
                if tested == bound:
                    return
                tested += 1
                if size[job] > free or remember and unfit_at[cls] == len(log):
                    continue
            if skipping and not queue.may_start(job):
                continue
            if limited:
                cores, pair = job_cores[job], job_pair[job]
                if cores > queue_room[job_queue[job]] or pair_jobs[pair] < 1 or cores > pair_cores[pair]:
                    continue
            if reservation is None:
                if sim.fits(job):
                    self.start(job)
                    if self.watch is not None:
                        self.watch.started(job, sim.now)
                    continue
                reservation = allocator.head_reservation(job)   # None: it can never start
                if reservation is not None and self.watch is not None:
                    self.watch.blocked(job, sim.now, reservation.shadow)
            elif allocator.backfill_fits(job, reservation, limits_checked=True):
                self.start(job)
                continue
            if counting and unfit_at[cls] == len(log):      # its class does not fit now
                ahead -= live.pop(cls, 0)


class NodeWalker:
    """The arrays and state of the compiled pass (engine.policies.nodewalk) for one simulation."""

    #: node entries the started jobs of one walk may fill before it hands them back (FULL)
    room = 1 << 16
    _walk: Callable[..., Any]    # the compiled walk (set in __init__ by bind_direct)

    def __init__(self, sim: Simulation, queue: Any, allocator: NodeAllocator, bound: int | None) -> None:
        self.allocator = allocator
        self.links = queue.link()
        #: a queue that puts its order in the links a part at a time gives more through this
        self.extend_links: Callable[[], bool] | None = getattr(queue, "extend_links", None)
        self.mirror = allocator.enable_mirror()
        # the compiled walk, called directly at every pass (engine.jit.bind_direct; its arguments are arrays)
        bind_direct(self, "_walk", nodewalk.walk)
        n = sim.n
        classes = len(allocator.requests)
        self.st = np.zeros(nodewalk.STATE_SIZE, dtype=np.int64)
        self.st[nodewalk.BOUND] = -1 if bound is None else bound
        self.st[nodewalk.COUNTING] = bound is None
        self.st[nodewalk.LIMITED] = allocator.queue_of is not None
        self.st[nodewalk.DEAD_AT] = -1
        self.heap = np.zeros(max(n, 1), dtype=np.int64)
        self.class_of = np.asarray(allocator.class_of, dtype=np.int64)
        self.size = np.asarray(sim.size, dtype=np.int64)
        self.base_estimate = np.asarray(allocator.base_estimate, dtype=np.int64)
        self.job_cores = np.asarray(allocator.job_cores or [0], dtype=np.int64)
        self.job_queue = np.asarray(allocator.job_queue or [0], dtype=np.int64)
        self.job_pair = np.asarray(allocator.job_pair or [0], dtype=np.int64)
        self.waiting = np.zeros(max(classes, 1), dtype=np.int64)
        self.rem = np.zeros(max(classes, 1), dtype=np.int64)
        self.rem_pass = np.full(max(classes, 1), -1, dtype=np.int64)
        #: exact mode's scan of the classes (nodewalk.scan): the classes listed, pending, found to fit
        self.lists = np.zeros((3, 2 * max(classes, 1)), dtype=np.int64)
        self.flags = np.zeros((max(classes, 1), 4), dtype=np.int64)
        self.flags[:, nodewalk.SEEN] = -1
        self.st[nodewalk.SCAN_AT] = -1
        self.out = np.zeros((max(n, 1), 5), dtype=np.int64)
        most = max((c.nodes for c in allocator.clusters), default=1)
        self.pick = np.zeros(most, dtype=np.int64)
        self.take = np.zeros(most, dtype=np.int64)
        self.found = np.zeros(1, dtype=np.int64)
        # the walk hands back what it started when these fill (FULL), so they need not hold a whole
        # machine's cores (a machine file may declare absurd ones: tests/engine/test_cli_fuzz.py)
        room = min(max(allocator.capacity, 1), self.room) + most     # a job takes at most `most` nodes
        self.out_pick = np.zeros(room, dtype=np.int64)
        self.out_take = np.zeros(room, dtype=np.int64)
        self.st[nodewalk.CACHE_JOB] = -1
        #: the walk's arguments (built once: the arrays are kept; rebuilt when the mirror's store grows)
        self.args: tuple = ()
        #: the nodes marked reserved in the mirror, and the reservation they are (stale marks are
        #: not read: the walk reads them only behind a reservation, after :meth:`reserve`)
        self.reserved: list[int] = []
        self.marked: Reservation | None = None

    def submitted(self, job: int, cls: int) -> None:
        st = self.st
        self.waiting[cls] += 1
        st[nodewalk.TOTAL] += 1
        count = len(self.allocator.release_log)
        dead = self.mirror.unfit_at[cls] == count
        if st[nodewalk.DEAD_AT] == count and dead:
            st[nodewalk.DEAD] += 1
        if st[nodewalk.COUNTING]:
            flags = self.flags[cls]
            if not flags[nodewalk.LISTED_FLAG]:
                flags[nodewalk.LISTED_FLAG] = 1
                self.lists[0, st[nodewalk.LISTED]] = cls
                st[nodewalk.LISTED] += 1
            if not dead and not flags[nodewalk.PENDING_FLAG]:
                flags[nodewalk.PENDING_FLAG] = 1
                self.lists[1, st[nodewalk.PENDING]] = cls
                st[nodewalk.PENDING] += 1

    def begin(self) -> None:
        """A new pass over the queue's groups in their order now (after the queue's ready_links)."""
        st = self.st
        st[nodewalk.GROUPS] = self.links.size
        count = len(self.allocator.release_log)
        if st[nodewalk.DEAD_AT] != count:
            st[nodewalk.DEAD_AT], st[nodewalk.DEAD] = count, 0
        st[nodewalk.COUNT] = count
        st[nodewalk.POS] = st[nodewalk.HSIZE] = st[nodewalk.HAS_RES] = st[nodewalk.TESTED] = 0
        st[nodewalk.AHEAD] = st[nodewalk.TOTAL] - st[nodewalk.DEAD]
        st[nodewalk.PASS] += 1

    def ran_out(self) -> bool:
        """Whether the last walk stopped at the end of the groups it was given, and only there (it
        would have gone on; a queue that gave only the first jobs of its order gives more)."""
        st = self.st
        return bool(st[nodewalk.POS] >= st[nodewalk.GROUPS] and not st[nodewalk.HSIZE]
                    and self.allocator.free > 0
                    and not (st[nodewalk.HAS_RES] and st[nodewalk.TESTED] == st[nodewalk.BOUND])
                    and not (st[nodewalk.COUNTING] and st[nodewalk.HAS_RES] and not st[nodewalk.AHEAD]))

    def extend(self) -> bool:
        """Ask the queue for more of its order (a reordered queue gives its first jobs, then more);
        False if it has no more (the walk is over)."""
        if self.extend_links is None or not self.extend_links():
            return False
        self.st[nodewalk.GROUPS] = self.links.size
        return True

    def reserve(self, reservation: Reservation) -> None:
        """The walk goes on behind ``reservation`` (its nodes marked in the mirror, unless they are already)."""
        st, mirror = self.st, self.mirror
        if reservation is not self.marked:
            marks = mirror.reserved
            for node in self.reserved:
                marks[node] = 0
            off = mirror.offset[reservation.cluster]
            self.reserved = [off + node for node in reservation.nodes]
            for node in self.reserved:
                marks[node] = 1
            self.marked = reservation
        job, shadow, cluster = reservation.job, reservation.shadow, reservation.cluster
        # (two slices of the state: HAS_RES to RES_CLUSTER, CACHE_JOB to CACHE_UNPLANNED)
        st[nodewalk.HAS_RES:nodewalk.RES_CLUSTER + 1] = (1, job, shadow, cluster)
        st[nodewalk.CACHE_JOB:nodewalk.CACHE_UNPLANNED + 1] = (job, shadow, cluster, *reservation.stamp)

    def forget_reservation(self) -> None:
        """The allocator holds no reservation now (the head can never start): none to take again."""
        self.st[nodewalk.CACHE_JOB] = -1

    def reused(self) -> tuple[int, int] | None:
        """(job, shadow) if the last walk took the cached reservation for its blocked head, else None."""
        st = self.st
        if not st[nodewalk.REUSED]:
            return None
        st[nodewalk.REUSED] = 0
        return int(st[nodewalk.RES_JOB]), int(st[nodewalk.RES_SHADOW])

    def head_job(self) -> int:
        return int(self.st[nodewalk.HEAD_JOB])

    def walk(self, free: int, now: int) -> int:
        st, m = self.st, self.mirror
        st[nodewalk.FREE], st[nodewalk.NOW] = free, now
        args = self.args
        if not args or args[-3] is not m.store_pick:
            args = self.args = self._arguments()
        return int(self._walk(*args))

    def _arguments(self) -> tuple:
        m = self.mirror
        return (self.st, self.heap, self.links.rows, self.links.nxt, self.links.first, self.class_of, self.size,
                self.base_estimate, self.job_cores, self.job_queue, self.job_pair, m.queue_room, m.pair_jobs,
                m.pair_cores, m.classes, m.cc_start, m.cc_list, m.cluster, m.factor, m.cluster_free, m.f_cores,
                m.f_mem, m.f_gpus, m.log, m.unfit_at, m.reserved, self.waiting, self.rem, self.rem_pass, self.out,
                self.out_pick, self.out_take, self.pick, self.take, m.bound, self.lists, self.flags, m.store_pick,
                self.found, m.stamp)

    def started(self) -> list[tuple[int, Placement, bool]]:
        """The jobs the last walk started, in order: (job, placement, whether it started as the head)."""
        count = int(self.st[nodewalk.STARTS])
        if not count:
            return []
        rows = self.out[:count].tolist()
        used = rows[-1][3] + rows[-1][4]
        picks, takes = self.out_pick[:used].tolist(), self.out_take[:used].tolist()
        return [(job, (c, tuple(picks[first:first + k]), tuple(takes[first:first + k])), bool(head))
                for job, c, head, first, k in rows]


class NodeConservative(Algorithm):
    """``conservative`` on per-cluster core profiles (approximations in the module docstring).

    How it stays fast on a national grid (issue 14; the same schedule as the plain code kept in
    tests/engine/policies/node_conservative_reference.py):

    * the profiles are the rows of one :class:`engine.sim.profileset.ProfileSet`, advanced lazily
      (a row only when something touches it), and a job's search over its clusters is one compiled
      call (:func:`engine.sim.profileset.earliest_over`); a compression pass is one compiled call
      too (:func:`engine.policies.nodecons.compress_pass`), with the reservations in arrays by job;
    * a blocked job is tried again only when it may fit now: nodes come back only when a job ends
      on its cluster, and queue room only when a job of its queue ends, so a job that did not fit
      waits (filed by what it lacked) until such an end (not with availability windows: a cluster's
      window opens with time).
    """

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        self.allocator = allocator = node_allocator(sim)
        clusters = allocator.clusters
        self.profiles = ProfileSet([c.total_cores for c in clusters], 0)
        n = sim.n
        #: each job's reservation: cluster (-1: none), start, end, cores
        self.res_cluster = np.full(n, -1, dtype=np.int64)
        self.res_start = np.zeros(n, dtype=np.int64)
        self.res_end = np.zeros(n, dtype=np.int64)
        self.res_cores = np.zeros(n, dtype=np.int64)
        self.is_blocked = np.zeros(n, dtype=bool)
        #: the version of its cluster's row when the job's own cluster last gave no earlier start (-1: unknown)
        self.own_none = np.full(n, -1, dtype=np.int64)
        self.running: dict[int, tuple[int, int, int]] = {}         # job -> (cluster, expected end, cores)
        self.unplaced: list[int] = []
        #: blocked due jobs -> a number giving the order they blocked in (the order they are tried again)
        self.blocked: dict[int, int] = {}
        self._due: list[tuple[int, int, int]] = []
        self._seq = 0
        self._freed: set[int] = set()
        # what a search needs, per request class and per cluster (as arrays for the kernels)
        requests = allocator.requests
        self.class_of = np.asarray(allocator.class_of, dtype=np.int64)
        self._class_list: list[int] = self.class_of.tolist()
        self._cores = np.array([r.cores for r in requests], dtype=np.int64)
        self._nodes = np.array([r.nodes for r in requests], dtype=np.int64)
        self._exclusive = np.array([r.exclusive for r in requests], dtype=bool)
        self._list_of, self._offsets, self._flat = _cluster_lists(allocator.class_clusters)
        self._lists = [self._flat[a:b] for a, b in zip(self._offsets[:-1].tolist(), self._offsets[1:].tolist())]
        self._list_of_class: list[int] = self._list_of.tolist()
        self._node_cores = np.array([c.cores for c in clusters], dtype=np.int64)
        self._factor = np.array(allocator.factor, dtype=np.float64)             # what estimate_on scales by
        self._estimate = np.array(sim.estimate, dtype=np.int64)     # no job has started: the trace's
        self._avail_from = np.array(allocator.avail_from, dtype=np.int64)
        self._avail_to = np.array(allocator.avail_to, dtype=np.int64)
        self._everywhere = np.ones(len(clusters), dtype=bool)
        # blocked jobs wait for what they lacked when they last failed: an end on their cluster (nodes)
        # or in their queue (queue limits); the clusters and queues where jobs ended since the last pass
        self._windows = any(c.available_from is not None or c.available_to is not None for c in clusters)
        self._queue_of: list[int] = [requests[cls].queue + 1 for cls in range(len(requests))]
        self._on_cluster: list[list[int]] = [[] for _ in clusters]
        self._on_queue: list[list[int]] = [[] for _ in range(max(self._queue_of, default=0) + 1)]
        self._ended_clusters: set[int] = set()
        self._ended_queues: set[int] = set()
        self._blocks = 0

    def _class_args(self, job: int) -> tuple:
        cls = self._class_list[job]
        return (self._lists[self._list_of_class[cls]], self._cores[cls], self._nodes[cls], self._exclusive[cls],
                self._node_cores, self._estimate[job], self._factor, self._avail_from, self._avail_to)

    def _place(self, job: int, now: int) -> None:
        """A reservation at the job's earliest start over its clusters (or unplaced if none)."""
        profiles = self.profiles
        cluster, start, _ = earliest_over(profiles.times, profiles.free, profiles.length, now,
                                          *self._class_args(job), FOREVER, self._everywhere, -1, 0, 0, 0, False)
        if cluster == NEVER_FITS:
            raise RuntimeError(f"job {job} never fits on cluster {start}")
        if cluster < 0:
            self.unplaced.append(job)
        else:
            self._reserve(job, int(cluster), int(start))

    def _reserve(self, job: int, cluster: int, start: int, *, due: bool = True) -> None:
        end = start + self.allocator.estimate_on(job, cluster)
        cls = self._class_list[job]
        cores = int(self._nodes[cls] * self._node_cores[cluster] if self._exclusive[cls] else self._cores[cls])
        self.profiles.change(cluster, self.sim.now, start, end, -cores)
        self.res_cluster[job], self.res_start[job], self.res_end[job], self.res_cores[job] = cluster, start, end, cores
        self.own_none[job] = -1
        if due:
            heappush(self._due, (start, self._seq, job))
            self._seq += 1

    def _drop(self, job: int) -> None:
        cluster = int(self.res_cluster[job])
        self.profiles.change(cluster, self.sim.now, int(self.res_start[job]), int(self.res_end[job]),
                             int(self.res_cores[job]))
        self.res_cluster[job] = -1

    def on_submit(self, job: int) -> None:
        super().on_submit(job)
        self._place(job, self.sim.now)

    def on_finish(self, job: int) -> None:
        cluster, end, cores = self.running.pop(job)
        self._ended_clusters.add(cluster)
        self._ended_queues.add(self._queue_of[self._class_list[job]])
        now = self.sim.now
        if now < end:
            self.profiles.change(cluster, now, now, end, cores)
            self._freed.add(cluster)

    def schedule(self) -> None:
        now = self.sim.now
        if self._freed:
            freed, self._freed = self._freed, set()
            self.compress(freed)
        if self.unplaced:
            waiting, self.unplaced = self.unplaced, []
            for job in waiting:
                self._place(job, now)
        if self.blocked:
            for job in self._may_fit_now():
                if self._start_or_replan(job):
                    del self.blocked[job]
                    self.is_blocked[job] = False
                else:
                    self._wait(job)
        due = self._due
        res_cluster, is_blocked = self.res_cluster, self.is_blocked
        while due and due[0][0] <= now:
            start, _, job = heappop(due)
            if self._stale(start, job):
                continue
            if self._start_or_replan(job):                   # (re-planned, it may fall due now: popped below)
                continue
            cluster = int(res_cluster[job])
            self._drop(job)
            self._reserve(job, cluster, now, due=False)  # claims its cores from now on
            self.blocked[job] = self._blocks
            self._blocks += 1
            is_blocked[job] = True
            self._wait(job)
        self._ended_clusters.clear()
        self._ended_queues.clear()
        self._wake_at_next_due()

    def _stale(self, start: int, job: int) -> bool:
        """Whether a due entry is stale: its job moved, started or is blocked since."""
        return bool(self.res_cluster[job] < 0 or self.res_start[job] != start or self.is_blocked[job])

    def _wake_at_next_due(self) -> None:
        """Hold a pass at the earliest reservation: one compression pass (not a fixpoint) can leave
        a reservation where nothing ends or arrives, and its job must start there, not at the next event."""
        due = self._due
        while due and self._stale(due[0][0], due[0][2]):
            heappop(due)
        if due:
            self.sim.wake_at(due[0][0])

    def _window_closed_on(self, job: int) -> bool:
        """Whether the job, not started at its reservation, can no longer start on its reserved cluster:
        started now it would not end within the cluster's availability window. Held there, it would
        wait for ever (the window does not open again) while other clusters may have room."""
        cluster = int(self.res_cluster[job])
        return self.sim.now + self.allocator.estimate_on(job, cluster) > self._avail_to[cluster]

    def _start_or_replan(self, job: int) -> bool:
        """Start the job at its reservation, or, if its cluster's window closed on it, make the
        reservation again at its earliest start from now over its clusters (as if placed now, or
        unplaced): whether either was done (else it is still held where it was)."""
        if self._try_start(job):
            return True
        if not self._window_closed_on(job):
            return False
        self._drop(job)
        self._place(job, self.sim.now)
        return True

    def _wait(self, job: int) -> None:
        """File a blocked job that does not fit now under what it lacks: queue room (its queue's
        limits refuse it) or else nodes on its cluster (with availability windows, every blocked job is
        tried at every pass: nothing to file)."""
        if self._windows:
            return
        if self.allocator.limits_allow(job):
            self._on_cluster[int(self.res_cluster[job])].append(job)
        else:
            self._on_queue[self._queue_of[self._class_list[job]]].append(job)

    def _may_fit_now(self) -> list[int]:
        """The blocked jobs to try again, in the order they blocked: those waiting for an end on a
        cluster or in a queue where a job ended since the last pass. The others cannot fit: a job
        ending is the only thing that gives nodes or queue room back (allocations only take them).
        With availability windows, every blocked job (a cluster's window opens with time)."""
        if self._windows:
            return list(self.blocked)
        again: list[int] = []
        for c in self._ended_clusters:
            again += self._on_cluster[c]
            self._on_cluster[c] = []
        for q in self._ended_queues:
            again += self._on_queue[q]
            self._on_queue[q] = []
        again.sort(key=self.blocked.__getitem__)
        return again

    def _try_start(self, job: int) -> bool:
        cluster, cores = int(self.res_cluster[job]), int(self.res_cores[job])
        if not self.allocator.fits_on(job, cluster):
            return False
        self._drop(job)
        now = self.sim.now
        end = now + self.allocator.estimate_on(job, cluster)
        self.profiles.change(cluster, now, now, end, -cores)
        self.running[job] = (cluster, end, cores)
        self.start(job)
        return True

    def compress(self, freed: set[int]) -> None:
        """One pass in queue order: each reserved job moves to its earliest start on the clusters
        that gained room (or earlier on its own) if that is earlier (one compiled call; the moved
        jobs fall due in the order they moved)."""
        order = np.fromiter(islice(self.queue.iter_jobs(), bounded(self.params)), dtype=np.int64)
        only = np.zeros(len(self._node_cores), dtype=bool)
        only[list(freed)] = True
        moved = np.empty(len(order), dtype=np.int64)
        profiles, now, res_start = self.profiles, self.sim.now, self.res_start
        first = 0
        while first < len(order):
            profiles.make_room(4)
            first, count = compress_pass(order, first, profiles.times, profiles.free, profiles.length,
                                         profiles.version, now, self.res_cluster, res_start, self.res_end,
                                         self.res_cores, self.own_none, self.is_blocked,
                                         self.class_of, self._list_of, self._offsets, self._flat, self._cores,
                                         self._nodes, self._exclusive, self._node_cores, self._estimate,
                                         self._factor, self._avail_from, self._avail_to, only, moved)
            if first < 0:
                raise RuntimeError(f"job {order[-1 - first]} never fits on one of its clusters")
            for job in moved[:count].tolist():
                heappush(self._due, (int(res_start[job]), self._seq, job))
                self._seq += 1


def _cluster_lists(class_clusters: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The classes' cluster lists, each distinct list once (many classes share one): each class's
    list number, and the lists as offsets into one flat array."""
    number: dict[tuple[int, ...], int] = {}
    list_of = np.fromiter((number.setdefault(tuple(clusters), len(number)) for clusters in class_clusters),
                          dtype=np.int64, count=len(class_clusters))
    lists = list(number)
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(x) for x in lists])
    flat = np.fromiter((c for x in lists for c in x), dtype=np.int64, count=int(offsets[-1]))
    return list_of, offsets, flat


register_algorithm(Component("none", NodeInOrder, (), "start jobs in queue order while the head fits"),
                   machine="nodes")
register_algorithm(Component("easy", NodeEasy, (BACKFILL_BOUND,), "EASY backfilling"), machine="nodes")
register_algorithm(Component("conservative", NodeConservative, (BACKFILL_BOUND,), "conservative backfilling"),
                   machine="nodes")
