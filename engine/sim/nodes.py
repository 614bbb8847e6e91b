"""Node-level placement on a heterogeneous machine (clusters of nodes), with queue limits.

A job runs inside **one** cluster. What it asks for (columns of the workload, see
:mod:`engine.workload.metacentrum`): ``nodes`` nodes with ``ppn`` free cores, ``mem`` KB and
``gpus`` GPUs each; ``exclusive`` jobs take whole, entirely free nodes; ``clusters`` /
``exclude`` / ``hosts`` restrict the clusters; ``properties`` must be offered by the cluster when
the machine description names that property anywhere (unknown words such as ``brno`` are
ignored). A workload without these columns (plain SWF) asks for ``procs`` cores anywhere in one
cluster (``nodes = 0``: cores taken node by node in index order). Such a request (also PBS's
``-l ncpus=8,mem=4gb`` without a select) is placed by its cores alone: its memory and GPUs are the
job's, not a node's, so they count in its multi-resource price but are not held on the nodes its
cores land on, and ``exclusive`` does not apply to it (the schedule check counts it the same way).

Placement rule (deterministic): clusters are tried in increasing order of the job's
multi-resource price on them (``max(cores/cores_m, ram/ram_m) * cores_m`` per node type; ties in
file order; see :func:`cluster_choices`), nodes first-fit by index. A cluster with an availability window accepts a job only
if ``from <= now`` and ``now + estimate <= to`` (the job must end before the cluster leaves).

Queue limits (engine.platform.queues) are checked with every fit: the queue's running cores plus
the job's requested cores (``nodes * ppn``; an exclusive job is counted by what it asked, not the
whole nodes it holds) within the queue's core limit, and the user's running jobs / cores in that
queue within the per-user limits; a queue's pool restricts its jobs' clusters.

Speed scaling (optional): on cluster m a job runs ``ceil(runtime * max_speed / speed_m)`` and is
believed to take ``ceil(estimate * max_speed / speed_m)`` (trace runtimes are taken to come from
the fastest cluster, as Alea does). Off by default: runtimes are the trace's.

EASY on this machine (:meth:`NodeAllocator.head_reservation`): the blocked head job gets a
reservation on the one suitable cluster where it can start earliest, found by releasing that
cluster's running jobs in order of expected end until the head fits node by node; the nodes it
would take then are *reserved*. A later job may start now if it ends by the reservation, or
runs on another cluster, or avoids the reserved nodes — and, when it ends after the reservation,
still leaves the head within its queue and user limits. This never delays the head's reservation
as long as jobs end by their requested time (overrun=kill). The reservation is recomputed when the
head changes, a job on the reserved cluster ends, or a job starts there without having been checked
against it (ahead of the head, or while another job was the head: it may have taken the reserved
nodes); releases on other clusters do not refresh it (it stays valid, perhaps later than necessary).
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from engine.platform.hosts import host_cluster
from engine.platform.machines import Cluster, Machine
from engine.platform.queues import Assignment, QueueConfig, assign_queues, check_pools
from engine.sim.jit import bind_direct
from engine.sim.nodekernels import earliest_on, mirror_end, mirror_start
from engine.workload.model import Workload

FOREVER = 2 ** 62
#: a class found not to fit is tried again only on the clusters released to since, when there were
#: at most this many releases (else on all its clusters)
RECHECK_RELEASES = 32
#: how many of the largest free cores and RAM on one node the mirror keeps per cluster (nodewalk.TOP)
BOUND_TOP = 8
REJECT_NO_CLUSTER = "no cluster of the machine can ever run it (cores/RAM/GPUs per node, nodes, cluster rules)"


class Request(NamedTuple):
    """What one job asks for; jobs with equal requests share one (a *request class*)."""

    nodes: int            # 0: procs cores anywhere in one cluster
    ppn: int
    procs: int
    mem: int              # KB per node
    gpus: int             # per node
    exclusive: bool
    clusters: tuple[str, ...]
    exclude: tuple[str, ...]
    hosts: tuple[str, ...]
    properties: tuple[str, ...]
    queue: int            # configured queue (-1 without a queue configuration)

    @property
    def cores(self) -> int:
        """Cores asked for (what queue limits count)."""
        return self.nodes * self.ppn if self.nodes else self.procs

    @property
    def ram(self) -> int:
        """RAM asked for in total (KB)."""
        return self.mem * max(self.nodes, 1)


#: where a job goes: (cluster, node indices, cores taken on each node)
Placement = tuple[int, tuple[int, ...], tuple[int, ...]]

_REQUEST_COLUMNS = ("nodes", "ppn", "procs", "mem", "gpus", "exclusive", "clusters", "exclude", "hosts",
                    "properties")


def _split(text: Any) -> tuple[str, ...]:
    return tuple(part for part in str(text).split(";") if part) if isinstance(text, str) and text else ()


def request_classes(jobs: pd.DataFrame, queue: np.ndarray | None = None) -> tuple[np.ndarray, list[Request]]:
    """Each job's request class and one :class:`Request` per class (the one place requests are read)."""
    n = len(jobs)
    frame = pd.DataFrame({
        "nodes": jobs["nodes"].to_numpy(np.int64) if "nodes" in jobs else np.zeros(n, np.int64),
        "ppn": jobs["ppn"].to_numpy(np.int64) if "ppn" in jobs else np.zeros(n, np.int64),
        "procs": jobs["procs"].to_numpy(np.int64),
        "mem": jobs["mem"].to_numpy(np.int64) if "mem" in jobs else np.zeros(n, np.int64),
        "gpus": jobs["gpus"].to_numpy(np.int64) if "gpus" in jobs else np.zeros(n, np.int64),
        "exclusive": jobs["exclusive"].to_numpy(bool) if "exclusive" in jobs else np.zeros(n, bool),
        **{name: (jobs[name].astype(str).to_numpy() if name in jobs else np.full(n, "", dtype=object))
           for name in ("clusters", "exclude", "hosts", "properties")},
        "queue": queue if queue is not None else np.full(n, -1, np.int64),
    })
    if n == 0:
        return np.zeros(0, np.int64), []
    codes, first = rows_by_first_appearance(np.stack([pd.factorize(frame[name])[0] for name in frame.columns], axis=1))
    chosen = frame.iloc[first]
    columns = [chosen[name].tolist() for name in frame.columns]     # Python ints, bools and strings
    reps = [Request(nodes, ppn, procs, mem, gpus, bool(exclusive), _split(clusters), _split(exclude), _split(hosts),
                    _split(properties), queue_)
            for nodes, ppn, procs, mem, gpus, exclusive, clusters, exclude, hosts, properties, queue_ in zip(*columns)]
    return codes, reps


def rows_by_first_appearance(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the rows of the matrix ``keys`` (non-negative int codes per column): each row's group
    number, groups numbered in order of first appearance (as pandas' ``groupby(sort=False).ngroup()``),
    and each group's first row. The columns are folded into one int64 key while they fit."""
    key = np.zeros(len(keys), dtype=np.int64)
    span = 1
    for column in keys.T:
        size = int(column.max()) + 1 if len(column) else 1
        if span * size >= 2 ** 62:     # would overflow: number the rows folded so far first
            key = pd.factorize(key)[0].astype(np.int64)
            span = int(key.max()) + 1 if len(key) else 1
        key = key * size + column
        span *= size
    codes = pd.factorize(key)[0].astype(np.int64)
    _, first = np.unique(codes, return_index=True)
    return codes, first


def cluster_masks(class_clusters: list[list[int]]) -> list[int]:
    """Each class's clusters as a bit mask (bit c: cluster c); summed in float64, exact below 2**53."""
    if not class_clusters or max((max(c, default=0) for c in class_clusters), default=0) > 52:
        return [sum(1 << c for c in clusters) for clusters in class_clusters]
    lengths = np.fromiter((len(c) for c in class_clusters), np.int64, len(class_clusters))
    flat = np.fromiter((c for clusters in class_clusters for c in clusters), np.int64, int(lengths.sum()))
    owner = np.repeat(np.arange(len(class_clusters)), lengths)
    sums = np.bincount(owner, weights=np.ldexp(1.0, flat), minlength=len(class_clusters))
    return sums.astype(np.int64).tolist()


def _rules_allow(cluster: Cluster, request: Request, known_properties: set[str]) -> bool:
    """The job's cluster rules (cl_X, ^cl_X, hosts) and known properties allow ``cluster``."""
    if request.clusters and cluster.name not in request.clusters:
        return False
    if cluster.name in request.exclude:
        return False
    if request.hosts and any(host_cluster(h) != cluster.name for h in request.hosts):
        return False
    return not any(p in known_properties and p not in cluster.properties for p in request.properties)


def known_properties(machine: Machine) -> set[str]:
    return {p for cluster in machine.clusters for p in cluster.properties}


def cluster_choices(machine: Machine, requests: list[Request],
                    pools: list[tuple[str, ...] | None] | None = None) -> tuple[list[list[int]], np.ndarray]:
    """For each request: the clusters that could ever run it (an empty node fits it, its rules and
    its queue's pool allow the cluster), cheapest first (ties in file order); and its multi-resource
    penalty, the paper's ``min over suitable node types m of max(cpu_j/cpu_m, ram_j/ram_m) * cpu_m``
    (cpu_m, ram_m per node of cluster m; cpu_j, ram_j the job's total cores and RAM; pools ignored).
    Requests no cluster can run get no clusters and a penalty of their cores."""
    clusters = machine.clusters
    if not requests:
        return [], np.zeros(0)
    nodes = np.array([r.nodes for r in requests], dtype=np.int64)[:, None]
    ppn = np.array([r.ppn for r in requests], dtype=np.int64)[:, None]
    procs = np.array([r.procs for r in requests], dtype=np.int64)[:, None]
    mem = np.array([r.mem for r in requests], dtype=np.float64)[:, None]
    gpus = np.array([r.gpus for r in requests], dtype=np.int64)[:, None]
    c_nodes = np.array([c.nodes for c in clusters], dtype=np.int64)
    c_cores = np.array([c.cores for c in clusters], dtype=np.int64)
    c_ram = np.array([c.ram_kb for c in clusters], dtype=np.float64)
    c_gpus = np.array([c.gpus for c in clusters], dtype=np.int64)
    spread = nodes == 0
    fits_empty = np.where(spread, procs <= c_nodes * c_cores,
                          (nodes <= c_nodes) & (ppn <= c_cores) & ((c_ram == 0) | (mem <= c_ram)))
    ok = fits_empty & (gpus <= c_gpus)
    known = known_properties(machine)
    for i, request in enumerate(requests):
        if request.clusters or request.exclude or request.hosts or request.properties:
            ok[i] &= [_rules_allow(c, request, known) for c in clusters]
    cores = np.where(spread, procs, nodes * ppn).astype(np.float64)
    ram = mem * np.maximum(nodes, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ram_share = np.where(c_ram > 0, ram / np.where(c_ram > 0, c_ram, 1), 0.0)
    price = np.maximum(cores / c_cores, ram_share) * c_cores
    cost = np.where(ok, price, np.inf)
    penalty = np.where(ok.any(axis=1), cost.min(axis=1), cores[:, 0])
    if pools is not None:
        names = np.array([c.name for c in clusters])
        for i, pool in enumerate(pools):
            if pool is not None:
                ok[i] &= np.isin(names, pool)
        cost = np.where(ok, price, np.inf)
    order = np.argsort(cost, axis=1, kind="stable")
    counts = ok.sum(axis=1)
    return [row[:count].tolist() for row, count in zip(order, counts.tolist())], penalty


@dataclass
class Reservation:
    """EASY's reservation for a blocked head job: its start at the latest, cluster and nodes."""

    job: int
    shadow: int
    cluster: int
    nodes: frozenset[int]
    stamp: tuple[int, int]   # the reserved cluster's (releases, unplanned starts) when computed


@dataclass(frozen=True)
class RequestClasses:
    """What NodeAllocator works out from the jobs' requests: each job's request class, each class's
    Request, its suitable clusters cheapest first and its multi-resource penalty (cluster_choices)."""

    class_of: np.ndarray
    requests: list[Request]
    class_clusters: list[list[int]]
    class_penalty: np.ndarray

    def kept(self, keep: np.ndarray) -> RequestClasses:
        """The same for the jobs ``keep`` selects, as NodeAllocator would work them out for those jobs
        alone: a job's class is its own request (its queue decided by its own fields), so the kept
        jobs' classes are numbered again in order of first appearance, as request_classes numbers
        them, and each class keeps its request, clusters and penalty (cluster_choices reads a
        request alone)."""
        codes, old = pd.factorize(self.class_of[keep])
        old_classes: list[int] = np.asarray(old, dtype=np.int64).tolist()
        return RequestClasses(np.asarray(codes, dtype=np.int64), [self.requests[k] for k in old_classes],
                              [self.class_clusters[k] for k in old_classes],
                              self.class_penalty[np.asarray(old_classes, dtype=np.int64)])


class NodeAllocator:
    """Clusters of nodes with per-node free cores, RAM and GPUs; job-aware (see the module docstring)."""

    name = "nodes"
    kind = "nodes"

    def __init__(self, machine: Machine, workload: Workload, *, queues: QueueConfig | None = None,
                 speed_scaling: bool = False, classes: RequestClasses | None = None,
                 queue_of: np.ndarray | None = None) -> None:
        """``classes``: the jobs' request classes if already known (:meth:`RequestClasses.kept` of an
        allocator of the same machine and queues for a superset of the jobs, or :func:`prepare`'s),
        else worked out here. ``queue_of``: each job's queue after admission (:func:`prepare`), else
        the queue engine.platform.queues.assign_queues gives it (no admission)."""
        self.machine = machine
        self.clusters = machine.clusters
        self.capacity = machine.cores
        self.free = machine.cores
        self.speed_scaling = speed_scaling
        jobs = workload.jobs
        self.queues = queues
        self.assignment: Assignment | None = None
        #: the run summary's ``admission`` entry (engine.sim.admission.admission_table), set by prepare()
        self.admission: dict[str, Any] | None = None
        #: the jobs admission or the machine rejected (engine.sim.admission.rejected_frame), set by prepare()
        self.rejected_jobs: pd.DataFrame | None = None
        #: per job, the queue that refused it before it was routed to its own (-1: not routed), if any was
        self.routed_from: np.ndarray | None = None
        if queues is not None:
            check_pools(queues, [c.name for c in self.clusters])
            if queue_of is None:
                self.assignment = assign_queues(queues, trace_queue_names(jobs), jobs["requested_time"].to_numpy(),
                                                jobs["nodes"].to_numpy() if "nodes" in jobs
                                                else np.ones(len(jobs), np.int64))
                queue_of = self.assignment.queue
        else:
            queue_of = None
        if classes is None:
            class_of, requests = request_classes(jobs, queue_of)
            pools = [queues.queues[r.queue].pool if queues is not None else None for r in requests]
            classes = RequestClasses(class_of, requests, *cluster_choices(machine, requests, pools))
        self.classes = classes
        self.class_of, self.requests = classes.class_of, classes.requests
        self.class_list: list[int] = self.class_of.tolist()
        #: per request class: suitable clusters cheapest first, and the multi-resource penalty
        self.class_clusters, self.class_penalty = classes.class_clusters, classes.class_penalty
        # per-node state, per cluster (Python lists: updates touch few nodes)
        self.free_cores = [[c.cores] * c.nodes for c in self.clusters]
        self.free_mem = [[c.ram_kb] * c.nodes for c in self.clusters]
        self.free_gpus = [[c.gpus] * c.nodes for c in self.clusters]
        self.cluster_free = [c.total_cores for c in self.clusters]
        self.running_on: list[list[tuple[int, int]]] = [[] for _ in self.clusters]
        self.releases = [0] * len(self.clusters)
        #: per cluster, jobs started there without being checked against the cached reservation
        #: (started ahead of the head, or while another job was the head): such a start may have
        #: taken the reserved nodes, so the reservation must be computed again
        self.unplanned = [0] * len(self.clusters)
        self._respects = -1     # the job backfill_fits last checked against the cached reservation
        self._bound_stamp = [-1] * len(self.clusters)
        self._bound: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)] * len(self.clusters)
        n = len(jobs)
        self.cluster_of = np.full(n, -1, dtype=np.int64)
        self.nodes_of: list[tuple[int, ...]] = [()] * n
        #: cores taken on each of those nodes (what the schedule check counts)
        self.cores_of: list[tuple[int, ...]] = [()] * n
        self.taken: dict[int, tuple[int, tuple[int, ...], tuple[int, ...], int, int, int]] = {}
        top = machine.max_speed
        self.factor = [top / c.speed if speed_scaling else 1.0 for c in self.clusters]
        self.windows = any(c.available_from is not None or c.available_to is not None for c in self.clusters)
        self.avail_from = [c.available_from if c.available_from is not None else -FOREVER for c in self.clusters]
        self.avail_to = [c.available_to if c.available_to is not None else FOREVER for c in self.clusters]
        # queue limits
        self.queue_of = queue_of
        self.job_cores: list[int] = \
            np.array([r.cores for r in self.requests], dtype=np.int64)[self.class_of].tolist() if n else []
        # room left under each limit: per queue, and per (queue, user) pair (empty without queues)
        self.job_queue: list[int] = []
        self.job_pair: list[int] = []
        self.queue_room: list[float] = []
        self.pair_jobs_room: list[float] = []
        self.pair_cores_room: list[float] = []
        if queues is not None and queue_of is not None:
            self.job_queue = queue_of.tolist()
            users = jobs["user"].to_numpy(np.int64) if "user" in jobs else np.full(n, -1, np.int64)
            pairs = pd.DataFrame({"q": queue_of, "u": users}).groupby(["q", "u"], sort=False).ngroup()
            self.job_pair = pairs.to_numpy(np.int64).tolist()
            pair_queue = pd.Series(queue_of).groupby(pairs.to_numpy()).first().to_numpy() if n else []
            self.queue_room = [float(q.core_limit(self.capacity)) for q in queues.queues]
            self.pair_jobs_room = [float(queues.queues[q].user_max_jobs or math.inf) for q in pair_queue]
            self.pair_cores_room = [float(queues.queues[q].user_max_cores or math.inf) for q in pair_queue]
        #: the cluster of every release so far, in order (its length is the release count): what
        #: came back since a request class was last found not to fit anywhere
        self.release_log: list[int] = []
        #: class -> release count when it was last found not to fit on any of its clusters (-1: never)
        self.unfit_at = [-1] * len(self.requests)
        #: class -> its suitable clusters as a bit mask (bit c: cluster c)
        self.class_mask = cluster_masks(self.class_clusters)
        self._cached: tuple[int, int, Placement] | None = None
        self._version = 0
        self.sim: Any = None
        self._reservation: Reservation | None = None
        #: the node state as flat arrays for a compiled pass (engine.policies.nodewalk), once asked for
        self.mirror: NodeMirror | None = None

    def enable_mirror(self) -> NodeMirror:
        """Flat int64/float64 copies of the node state, kept up to date by allocate and release from
        now on; ``unfit_at`` becomes an int64 array shared with the compiled pass."""
        if self.mirror is None:
            self.mirror = NodeMirror(self)
            self.unfit_at = self.mirror.unfit_at    # type: ignore[assignment]
        return self.mirror

    # -- binding to the simulation ---------------------------------------------------------------
    def bind(self, sim: Any) -> None:
        self.sim = sim
        self.user = sim.user
        self.base_runtime = list(sim.runtime)
        self.base_estimate = list(sim.estimate)

    def unsuitable(self) -> np.ndarray:
        """Jobs no cluster can ever run (rejected before the simulation, counted)."""
        bad_class = np.array([not clusters for clusters in self.class_clusters], dtype=bool)
        return bad_class[self.class_of] if len(self.class_of) else np.zeros(0, bool)

    def wakeup_times(self) -> list[int]:
        """Times a cluster becomes available (the simulator wakes the policy then)."""
        return sorted({c.available_from for c in self.clusters if c.available_from is not None})

    def size_for(self, procs: int) -> int:
        return procs

    def fits(self, size: int) -> bool:     # the pool-level question: enough cores somewhere
        return size <= self.free

    # -- queue limits --------------------------------------------------------------------------
    def limits_allow(self, job: int, head: int | None = None) -> bool:
        """Whether queue limits let ``job`` start now (and, given ``head``, still let ``head`` start after it)."""
        if self.queue_of is None:
            return True
        if not self._limits_ok(job):
            return False
        if head is None:
            return True
        cores = self.job_cores[job]
        same_queue = self.job_queue[job] == self.job_queue[head]
        same_pair = self.job_pair[job] == self.job_pair[head]
        return self._limits_ok(head, cores if same_queue else 0, 1 if same_pair else 0, cores if same_pair else 0)

    def _limits_ok(self, job: int, extra_queue: int = 0, extra_jobs: int = 0, extra_cores: int = 0) -> bool:
        cores = self.job_cores[job]
        pair = self.job_pair[job]
        return (cores + extra_queue <= self.queue_room[self.job_queue[job]]
                and self.pair_jobs_room[pair] >= 1 + extra_jobs
                and cores + extra_cores <= self.pair_cores_room[pair])

    def _count_limits(self, job: int, sign: int) -> None:
        cores = sign * self.job_cores[job]
        pair = self.job_pair[job]
        self.queue_room[self.job_queue[job]] -= cores
        self.pair_jobs_room[pair] -= sign
        self.pair_cores_room[pair] -= cores

    # -- placement -------------------------------------------------------------------------------
    def estimate_on(self, job: int, cluster: int) -> int:
        factor = self.factor[cluster]
        return self.base_estimate[job] if factor == 1.0 else math.ceil(self.base_estimate[job] * factor)

    def fits_job(self, job: int) -> bool:
        """Limits allow it and it fits node by node somewhere now (the placement is kept for start)."""
        placement = self._placement_now(job)
        if placement is None:
            return False
        self._cached = (job, self._version, placement)
        return True

    def _placement_now(self, job: int) -> tuple | None:
        """Where ``job`` would go now if limits allow it, else None ("does not fit" is remembered for
        its request class until resources come back, unless clusters have availability windows)."""
        if self.queue_of is not None and not self._limits_ok(job):
            return None
        return self._fit_now(job, self.class_list[job])

    def _fit_now(self, job: int, cls: int) -> Placement | None:
        """Where ``job`` (of class ``cls``) would go now, limits aside. A class found not to fit
        anywhere stays unable to fit on every cluster that has not had a release since (allocations
        only take resources away), so only the clusters released to since are tried again, in the
        class's order: the same answer as trying all of them. Not with availability windows (a
        cluster's window opens and closes with time)."""
        if self.windows:
            return self._place(job, cls)
        log = self.release_log
        count = len(log)
        since = self.unfit_at[cls]
        if since == count:
            return None
        changed = -1
        if 0 <= since and count - since <= RECHECK_RELEASES:
            changed = 0
            for c in log[since:]:
                changed |= 1 << c
            changed &= self.class_mask[cls]
            if not changed:
                self.unfit_at[cls] = count
                return None
        if changed > 0 and not changed & (changed - 1):     # one cluster to try again
            placement = self._place(job, cls, only=changed.bit_length() - 1)
        else:
            placement = self._place(job, cls, among=changed)
        if placement is None:
            self.unfit_at[cls] = count
        return placement

    def fits_on(self, job: int, cluster: int) -> bool:
        """Like :meth:`fits_job`, on one cluster only (conservative's reservations)."""
        if self.queue_of is not None and not self._limits_ok(job):
            return False
        cls = self.class_list[job]
        if not self.class_mask[cls] >> cluster & 1:
            return False
        placement = self._place(job, cls, only=cluster)
        if placement is None:
            return False
        self._cached = (job, self._version, placement)
        return True

    def backfill_fits(self, job: int, reservation: Reservation, *, limits_checked: bool = False) -> bool:
        """EASY's test for a job behind the blocked head (see the module docstring); ``limits_checked``:
        the caller has just seen the queue limits allow ``job`` now."""
        placement = self._fit_now(job, self.class_list[job]) if limits_checked else self._placement_now(job)
        if placement is None:
            return False
        if self.sim.now + self.estimate_on(job, placement[0]) > reservation.shadow:
            if not self.limits_allow(job, reservation.job):
                return False
            if placement[0] == reservation.cluster and not reservation.nodes.isdisjoint(placement[1]):
                placement = self._place(job, self.class_of[job], avoid=reservation)
                if placement is None:
                    return False
        self._cached = (job, self._version, placement)
        self._respects = job if reservation is self._reservation else -1
        return True

    def _place(self, job: int, cls: int, *, only: int | None = None, avoid: Reservation | None = None,
               among: int = -1) -> Placement | None:
        """(cluster, node indices, cores per node) for ``job`` now, or None. ``only``: one of the
        class's clusters, the only one tried; ``among``: a bit mask of the clusters to try (in the
        class's order; -1: all)."""
        request = self.requests[cls]
        now = self.sim.now
        cores, ppn, mem, gpus = request.cores, request.ppn, request.mem, request.gpus
        cluster_free, releases, stamp, bound = self.cluster_free, self.releases, self._bound_stamp, self._bound
        for c in (self.class_clusters[cls] if only is None else (only,)):
            if cluster_free[c] < cores or not among >> c & 1:
                continue
            if stamp[c] != releases[c]:
                self._refresh_bound(c)
            largest = bound[c]     # upper bounds on one node's free cores, RAM, GPUs; whole free nodes
            if request.nodes and (ppn > largest[0] or mem > largest[1] or gpus > largest[2]
                                  or request.exclusive and request.nodes > largest[3]):
                continue
            if self.windows and not (self.avail_from[c] <= now and now + self.estimate_on(job, c) <= self.avail_to[c]):
                continue
            skip = avoid.nodes if avoid is not None and avoid.cluster == c else None
            chosen = select_nodes(self.free_cores[c], self.free_mem[c], self.free_gpus[c], self.cluster_free[c],
                                  self.clusters[c], request, skip)
            if chosen is not None:
                return (c, *chosen)
        return None

    def _refresh_bound(self, c: int) -> None:
        """The largest free cores, RAM and GPUs on one node of cluster c, and its entirely free nodes.
        Valid as upper bounds until a job on c ends (allocations only lower them)."""
        cluster, free_cores = self.clusters[c], self.free_cores[c]
        ram = max(self.free_mem[c]) if cluster.ram_kb > 0 else FOREVER
        self._bound[c] = (max(free_cores), ram, max(self.free_gpus[c]), free_cores.count(cluster.cores))
        self._bound_stamp[c] = self.releases[c]

    def allocate(self, job: int, size: int) -> None:
        cached = self._cached
        placement: Placement | None
        if cached is not None and cached[0] == job and cached[1] == self._version:
            placement = cached[2]
        else:
            placement = self._place(job, self.class_list[job])
        if placement is None:
            raise RuntimeError(f"job {job}: no cluster has room for it now")
        self._cached = None
        self._version += 1
        c, nodes, cores = placement
        mirror = self.mirror
        unplanned = self._respects != job
        if unplanned:
            self.unplanned[c] += 1
        self._respects = -1
        cluster = self.clusters[c]
        request = self.requests[self.class_list[job]]
        if not request.nodes:       # cores anywhere: memory and GPUs are not held on nodes
            mem, gpus = 0, 0
        elif request.exclusive:
            mem, gpus = cluster.ram_kb, cluster.gpus
        else:
            mem, gpus = request.mem, request.gpus
        free_cores, free_mem, free_gpus = self.free_cores[c], self.free_mem[c], self.free_gpus[c]
        for node, take in zip(nodes, cores):
            free_cores[node] -= take
            free_mem[node] -= mem
            free_gpus[node] -= gpus
        held = sum(cores)
        self.cluster_free[c] -= held
        self.free -= held
        self.cluster_of[job] = c
        self.nodes_of[job] = nodes
        self.cores_of[job] = cores
        self.taken[job] = (c, nodes, cores, mem, gpus, held)
        if self.queue_of is not None:
            self._count_limits(job, 1)
        sim = self.sim
        factor = self.factor[c]
        if factor != 1.0:
            sim.runtime[job] = math.ceil(self.base_runtime[job] * factor)
            sim.estimate[job] = math.ceil(self.base_estimate[job] * factor)
        end = sim.now + sim.estimate[job]
        running = self.running_on[c]
        insort(running, (end, job))
        if mirror is not None:
            mirror.started(self, job, c, nodes, cores, mem, gpus, held, end, unplanned, len(running))

    def release(self, job: int, size: int) -> None:
        c, nodes, cores, mem, gpus, held = self.taken.pop(job)
        free_cores, free_mem, free_gpus = self.free_cores[c], self.free_mem[c], self.free_gpus[c]
        for node, take in zip(nodes, cores):
            free_cores[node] += take
            free_mem[node] += mem
            free_gpus[node] += gpus
        self.cluster_free[c] += held
        self.free += held
        entry = (self.sim.expected_end(job), job)
        if self.mirror is not None:
            self.mirror.ended(self, job, c, entry)
        self.release_log.append(c)
        self.releases[c] += 1
        self._version += 1
        running = self.running_on[c]
        del running[bisect_left(running, entry)]
        if self.queue_of is not None:
            self._count_limits(job, -1)

    def on_wakeup(self) -> None:
        """A cluster became available (no "does not fit" answer is kept with availability windows)."""

    # -- EASY ------------------------------------------------------------------------------------
    def head_reservation(self, job: int) -> Reservation | None:
        """The blocked head's reservation (cached; see the module docstring), or None if it can never start."""
        cached = self._reservation
        if cached is not None and cached.job == job and cached.stamp == self._stamp(cached.cluster):
            return cached
        best: Reservation | None = None
        cls = self.class_of[job]
        request = self.requests[cls]
        now = self.sim.now
        earliest = self._earliest_on if self.mirror is None else self._earliest_on_compiled
        for c in self.class_clusters[cls]:
            found = earliest(job, c, request, now, best.shadow if best else FOREVER)
            if found is not None and (best is None or found[0] < best.shadow):
                best = Reservation(job, found[0], c, frozenset(found[1]), self._stamp(c))
        self._reservation = best
        return best

    def _stamp(self, c: int) -> tuple[int, int]:
        return self.releases[c], self.unplanned[c]

    def _earliest_on_compiled(self, job: int, c: int, request: Request, now: int,
                              before: int) -> tuple[int, tuple] | None:
        """:meth:`_earliest_on` in a compiled kernel (engine.sim.nodekernels.earliest_on) over the mirror."""
        m = self.mirror
        assert m is not None
        off, count, whole, ram = m.cluster[c].tolist()[:4]
        start = m.earliest_on(self.class_list[job], self.cluster_free[c], off, count, whole, ram, now, before,
                              self.estimate_on(job, c), self.avail_from[c], self.avail_to[c], m.classes, m.f_cores,
                              m.f_mem, m.f_gpus, m.run_keys[c, :m.run_count[c]], m.base, m.job_first, m.job_k,
                              m.job_mem, m.job_gpus, m.job_held, m.store_pick, m.store_take, m.w_cores, m.w_mem,
                              m.w_gpus, m.was, m.pick, m.take, m.found)
        if start < 0:
            return None
        return int(start), tuple(m.pick[:m.found[0]].tolist())

    def _earliest_on(self, job: int, c: int, request: Request, now: int, before: int) -> tuple[int, tuple] | None:
        """Earliest time (< before) the request fits on cluster c as its running jobs end as
        expected: running jobs are given back in order of expected end, and only the nodes each
        one frees are re-examined (a count of nodes that would fit is kept). Before that, a lower
        bound: the request cannot start before enough cores are free on c at all; when that is not
        before ``before``, the answer is None without looking at nodes."""
        cluster = self.clusters[c]
        total = self.cluster_free[c]
        running, taken = self.running_on[c], self.taken
        whole, ppn, gpus = cluster.cores, request.ppn, request.gpus
        exclusive, wanted = request.exclusive, request.nodes
        start = max(now, self.avail_from[c])
        if start >= before:
            return None
        need = wanted * (whole if exclusive else ppn) if wanted else request.procs
        if total < need:
            enough = total
            for end, other in running:
                enough += taken[other][5]
                if enough >= need:
                    if end >= before:
                        return None
                    break
            else:
                return None
        free_cores, free_mem, free_gpus = list(self.free_cores[c]), list(self.free_mem[c]), list(self.free_gpus[c])
        duration = self.estimate_on(job, c)
        mem = request.mem if cluster.ram_kb > 0 else 0

        def good(i: int) -> bool:
            if exclusive:
                return free_cores[i] == whole
            return free_cores[i] >= ppn and (not mem or free_mem[i] >= mem) and (not gpus or free_gpus[i] >= gpus)

        fitting = sum(1 for i in range(cluster.nodes) if good(i)) if wanted else 0
        i = 0
        overdue = False   # a job given back was expected to end before now: it runs past its estimate
        while True:
            while i < len(running) and running[i][0] <= start:
                overdue = overdue or running[i][0] < now
                entry = taken[running[i][1]]
                was = [good(node) for node in entry[1]] if wanted else ()
                total = _give_back(entry, free_cores, free_mem, free_gpus, total)
                if wanted:
                    fitting += sum(1 for node, before_ in zip(entry[1], was) if not before_ and good(node))
                i += 1
            if start >= before or start + duration > self.avail_to[c]:
                return None
            if (fitting >= wanted if wanted else total >= request.procs):
                chosen = select_nodes(free_cores, free_mem, free_gpus, total, cluster, request, None)
                if chosen is not None:
                    # Fitting now only once jobs end: those expected to end at this very instant
                    # do (a pass between two ends of one second, pass_per_end); one running past
                    # its estimate is expected to end in a second; with nothing to end, not now either.
                    late = start == now and (overdue or i == 0)
                    return (now + 1 if late else start), chosen[0]
            if i == len(running):
                return None
            start = running[i][0]

    # -- results ---------------------------------------------------------------------------------
    def extra_columns(self) -> dict[str, Any]:
        names = [c.name for c in self.clusters]
        cluster_of = self.cluster_of.tolist()
        cluster = [names[c] if c >= 0 else "" for c in cluster_of]
        labels = [[f"{c.name}-{i}" for i in range(c.nodes)] for c in self.clusters]     # each node's name
        nodes = [";".join(map(labels[c].__getitem__, idx)) if c >= 0 else "" for c, idx in zip(cluster_of, self.nodes_of)]
        columns: dict[str, Any] = {"cluster": cluster, "nodes": nodes}
        if self.queues is not None and self.queue_of is not None:
            queue_names = [q.name for q in self.queues.queues]
            columns["queue"] = [queue_names[q] for q in self.queue_of.tolist()]
            if self.routed_from is not None:
                columns["routed_from"] = [queue_names[q] if q >= 0 else "" for q in self.routed_from.tolist()]
        if self.speed_scaling:
            columns["runtime"] = np.asarray(self.sim.runtime, dtype=np.int64)
            columns["requested_time"] = np.asarray(self.sim.estimate, dtype=np.int64)
        return columns

    def summary(self) -> dict[str, Any]:
        """The machine, the queue configuration and how it moved jobs (per-queue and per-cluster
        figures are metrics: engine.run adds them from the schedule)."""
        info: dict[str, Any] = {"machine": {"clusters": len(self.clusters), "nodes": self.machine.nodes,
                                            "cores": self.machine.cores, "gpus": self.machine.gpus,
                                            "source": self.machine.source},
                                "speed_scaling": self.speed_scaling}
        if self.queues is not None and self.assignment is not None:
            info["queues"] = {"name": self.queues.name, "mode": self.queues.mode, "source": self.queues.source,
                              "moved_to_another_queue": self.assignment.moved,
                              "moved_total": self.assignment.moved_total,
                              "request_over_queue_walltime": self.assignment.over_walltime}
        if self.admission is not None:
            info["admission"] = self.admission
        return info


class NodeMirror:
    """The allocator's node state as flat arrays (engine.policies.nodewalk reads them): per node
    (cluster c's nodes from ``cluster[c, 0]``) free cores, RAM, GPUs; per cluster free cores and
    (offset, nodes, cores, RAM, GPUs per node); per request class (nodes, ppn, procs, mem, gpus,
    exclusive, cores, cluster mask) and its clusters in order (``cc_list[cc_start[k]:cc_start[k+1]]``);
    the rooms under queue limits; the release log."""

    # the kernels called at every start, end and reservation (set in __init__ by bind_direct)
    start_kernel: Callable[..., Any]
    end_kernel: Callable[..., Any]
    earliest_on: Callable[..., Any]

    def __init__(self, allocator: NodeAllocator) -> None:
        clusters = allocator.clusters
        counts = [c.nodes for c in clusters]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.cluster = np.array([[offsets[i], c.nodes, c.cores, c.ram_kb, c.gpus] for i, c in enumerate(clusters)],
                                dtype=np.int64).reshape(len(clusters), 5)
        self.offset: list[int] = offsets[:-1].tolist()
        self.f_cores = np.array([x for row in allocator.free_cores for x in row], dtype=np.int64)
        self.f_mem = np.array([x for row in allocator.free_mem for x in row], dtype=np.int64)
        self.f_gpus = np.array([x for row in allocator.free_gpus for x in row], dtype=np.int64)
        self.cluster_free = np.array(allocator.cluster_free, dtype=np.int64)
        self.reserved = np.zeros(int(offsets[-1]), dtype=np.uint8)
        #: per cluster (valid?, largest free cores, RAM, GPUs on one node, entirely free nodes, the
        #: BOUND_TOP largest free cores, then RAM, on one node): the compiled placement's upper bounds
        #: (engine.policies.nodewalk.place), made invalid here when a job ends on the cluster
        self.bound = np.zeros((len(clusters), 5 + 2 * BOUND_TOP), dtype=np.int64)
        #: per cluster (releases, unplanned starts): NodeAllocator._stamp, what a cached reservation is checked by
        self.stamp = np.array([allocator._stamp(c) for c in range(len(clusters))], dtype=np.int64).reshape(-1, 2)
        self.classes = np.array([[r.nodes, r.ppn, r.procs, r.mem, r.gpus, r.exclusive, r.cores, mask]
                                 for r, mask in zip(allocator.requests, allocator.class_mask)],
                                dtype=np.int64).reshape(len(allocator.requests), 8)
        lengths = [len(c) for c in allocator.class_clusters]
        self.cc_start = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self.cc_list = np.array([c for cs in allocator.class_clusters for c in cs], dtype=np.int64)
        self.factor = np.array(allocator.factor, dtype=np.float64)
        self.queue_room = np.array(allocator.queue_room or [0.0], dtype=np.float64)
        self.pair_jobs = np.array(allocator.pair_jobs_room or [0.0], dtype=np.float64)
        self.pair_cores = np.array(allocator.pair_cores_room or [0.0], dtype=np.float64)
        n = len(allocator.class_of)
        # every started job's placement (nodes and cores taken in store_pick/store_take from job_first)
        self.job_first = np.zeros(max(n, 1), dtype=np.int64)
        self.job_k = np.zeros(max(n, 1), dtype=np.int64)
        self.job_mem = np.zeros(max(n, 1), dtype=np.int64)
        self.job_gpus = np.zeros(max(n, 1), dtype=np.int64)
        self.job_held = np.zeros(max(n, 1), dtype=np.int64)
        self.store_pick = np.zeros(max(n, 16), dtype=np.int64)
        self.store_take = np.zeros(max(n, 16), dtype=np.int64)
        self.stored = 0
        for job, (_, nodes, cores, mem, gpus, held) in allocator.taken.items():
            self.keep(job, nodes, cores, mem, gpus, held)
        most = max((c.nodes for c in clusters), default=1)
        self.w_cores = np.zeros(most, dtype=np.int64)
        self.w_mem = np.zeros(most, dtype=np.int64)
        self.w_gpus = np.zeros(most, dtype=np.int64)
        self.was = np.zeros(most, dtype=np.uint8)
        self.pick = np.zeros(most, dtype=np.int64)
        self.take = np.zeros(most, dtype=np.int64)
        self.found = np.zeros(1, dtype=np.int64)
        #: a starting job's nodes and the cores it takes on each (what mirror_start reads)
        self.s_pick = np.zeros(most, dtype=np.int64)
        self.s_take = np.zeros(most, dtype=np.int64)
        # the kernels called at every start, end and reservation, called directly (engine.jit.bind_direct:
        # no engine.jit.Kernel frame, no numba dispatch; their arguments are these arrays and Python ints)
        bind_direct(self, "start_kernel", mirror_start)
        bind_direct(self, "end_kernel", mirror_end)
        bind_direct(self, "earliest_on", earliest_on)
        #: per cluster c, its running jobs as sorted keys ``expected end * base + job`` (the order of
        #: NodeAllocator.running_on) in ``run_keys[c, :run_count[c]]`` (rows grown as needed)
        self.base = n + 1
        running_on = allocator.running_on
        self.run_count = np.array([len(running) for running in running_on], dtype=np.int64)
        self.run_keys = np.zeros((len(clusters), max(64, 2 * max(self.run_count.tolist(), default=0))), dtype=np.int64)
        for c, running in enumerate(running_on):
            self.run_keys[c, :len(running)] = [end * self.base + job for end, job in running]
        self.limited = allocator.queue_of is not None
        #: each release: (cluster, where the released job's nodes are in store_pick, how many; -1: unknown)
        self.log = np.zeros((n + 1, 3), dtype=np.int64)
        self.log[:len(allocator.release_log), 0] = allocator.release_log
        self.log[:len(allocator.release_log), 2] = -1
        self.unfit_at = np.array(allocator.unfit_at, dtype=np.int64)

    def keep(self, job: int, nodes: tuple[int, ...], cores: tuple[int, ...], mem: int, gpus: int, held: int) -> None:
        """Remember where ``job`` started (what _earliest_on gives back as it ends)."""
        k, at = len(nodes), self.stored
        if at + k > len(self.store_pick):
            self.store_pick = np.resize(self.store_pick, 2 * (at + k))
            self.store_take = np.resize(self.store_take, 2 * (at + k))
        self.store_pick[at:at + k] = nodes
        self.store_take[at:at + k] = cores
        self.job_first[job], self.job_k[job], self.job_mem[job], self.job_gpus[job], self.job_held[job] = \
            at, k, mem, gpus, held
        self.stored = at + k

    def started(self, allocator: NodeAllocator, job: int, c: int, nodes: tuple[int, ...], cores: tuple[int, ...],
                mem: int, gpus: int, held: int, end: int, unplanned: bool, running: int) -> None:
        """``job`` took ``nodes`` of cluster c (``cores`` on each), expected to end at ``end``, as a start
        the cached reservation did not plan for if ``unplanned``; c now runs ``running`` jobs
        (engine.sim.nodekernels.mirror_start does the writes)."""
        k, at = len(nodes), self.stored
        if at + k > len(self.store_pick):
            self.store_pick = np.resize(self.store_pick, 2 * (at + k))
            self.store_take = np.resize(self.store_take, 2 * (at + k))
        if running > self.run_keys.shape[1]:
            self.run_keys = np.concatenate((self.run_keys, np.zeros_like(self.run_keys)), axis=1)
        pick, take = self.s_pick, self.s_take
        if k == 1:
            pick[0], take[0] = nodes[0], cores[0]
        else:
            pick[:k], take[:k] = nodes, cores
        self.stored = at + k
        limited = self.limited
        queue, pair, job_cores = (allocator.job_queue[job], allocator.job_pair[job], allocator.job_cores[job]) \
            if limited else (0, 0, 0)
        self.start_kernel(job, c, k, pick, take, mem, gpus, held, at, end * self.base + job, unplanned, limited,
                          queue, pair, job_cores, self.cluster, self.f_cores, self.f_mem, self.f_gpus,
                          self.cluster_free, self.store_pick, self.store_take, self.job_first, self.job_k,
                          self.job_mem, self.job_gpus, self.job_held, self.run_keys, self.run_count, self.stamp,
                          self.queue_room, self.pair_jobs, self.pair_cores)

    def ended(self, allocator: NodeAllocator, job: int, c: int, entry: tuple[int, int]) -> None:
        """``job`` ended on cluster c, as the next release (``entry``: its expected end and the job, as
        in NodeAllocator.running_on): engine.sim.nodekernels.mirror_end does the writes."""
        limited = self.limited
        queue, pair, job_cores = (allocator.job_queue[job], allocator.job_pair[job], allocator.job_cores[job]) \
            if limited else (0, 0, 0)
        self.end_kernel(job, c, len(allocator.release_log), entry[0] * self.base + job, limited, queue, pair,
                        job_cores, self.cluster, self.f_cores, self.f_mem, self.f_gpus, self.cluster_free,
                        self.store_pick, self.store_take, self.job_first, self.job_k, self.job_mem, self.job_gpus,
                        self.job_held, self.run_keys, self.run_count, self.stamp, self.bound, self.log,
                        self.queue_room, self.pair_jobs, self.pair_cores)


def _give_back(taken: tuple, free_cores: list[int], free_mem: list[int], free_gpus: list[int], total: int) -> int:
    _, nodes, cores, mem, gpus, held = taken
    for node, take in zip(nodes, cores):
        free_cores[node] += take
        free_mem[node] += mem
        free_gpus[node] += gpus
    return total + held


def select_nodes(free_cores: list[int], free_mem: list[int], free_gpus: list[int], cluster_free: int,
                 cluster: Cluster, request: Request, skip: frozenset[int] | None) -> tuple[tuple, tuple] | None:
    """First-fit nodes for ``request`` in one cluster's state: (node indices, cores taken on each) or None."""
    nodes = request.nodes
    if nodes == 0:                                   # procs cores anywhere in the cluster
        need = request.procs
        if cluster_free < need:
            return None
        chosen, taken = [], []
        for i, free in enumerate(free_cores):
            if free and (skip is None or i not in skip):
                take = free if free < need else need
                chosen.append(i)
                taken.append(take)
                need -= take
                if not need:
                    return tuple(chosen), tuple(taken)
        return None
    if request.exclusive:
        whole = cluster.cores
        if cluster_free < nodes * whole:
            return None
        chosen = [i for i, free in enumerate(free_cores) if free == whole and (skip is None or i not in skip)]
        if len(chosen) < nodes:
            return None
        return tuple(chosen[:nodes]), (whole,) * nodes
    ppn = request.ppn
    if cluster_free < nodes * ppn:
        return None
    mem = request.mem if cluster.ram_kb > 0 else 0
    gpus = request.gpus
    chosen = []
    for i, free in enumerate(free_cores):
        if free >= ppn and (not mem or free_mem[i] >= mem) and (not gpus or free_gpus[i] >= gpus) \
                and (skip is None or i not in skip):
            chosen.append(i)
            if len(chosen) == nodes:
                return tuple(chosen), (ppn,) * nodes
    return None


#: algorithms that run on a node-level machine (the others reason about one pool of processors)
NODE_ALGORITHMS = ("none", "firstfit", "easy", "conservative")


def trace_queue_names(jobs: pd.DataFrame) -> np.ndarray:
    """Each job's queue as the trace names it (its number as text where the trace names none)."""
    return jobs["queue_name"].to_numpy() if "queue_name" in jobs else jobs["queue"].astype(str).to_numpy()


def prepare(workload: Workload, machine: Machine, *, queues: QueueConfig | None = None,
            speed_scaling: bool = False) -> tuple[Workload, NodeAllocator, dict[str, int]]:
    """The workload without the jobs no cluster can run and, with queues, without those admission
    rejects (engine.sim.admission: each queue's limits checked at submission, refused jobs routed
    or rejected), counted by reason; and the allocator for the rest, with each job in the queue
    admission gave it. The allocator keeps the admission summary and the rejected jobs
    (``admission``, ``rejected_jobs``)."""
    from engine.sim.admission import (JobRequests, admission_table, admit, rejected_frame,
                                      rejection_reasons)
    jobs = workload.jobs
    n = len(jobs)
    base_of, base_requests = request_classes(jobs, None)
    base = RequestClasses(base_of, base_requests, *cluster_choices(machine, base_requests))
    nowhere = (np.array([not c for c in base.class_clusters], dtype=bool)[base_of] if n
               else np.zeros(0, dtype=bool))
    rejected: dict[str, int] = {}
    if nowhere.any():
        rejected[REJECT_NO_CLUSTER] = int(nowhere.sum())
    if queues is None:
        keep = ~nowhere
        classes = base if keep.all() else base.kept(keep)
        kept = workload if keep.all() else _kept(workload, keep)
        allocator = NodeAllocator(machine, kept, speed_scaling=speed_scaling, classes=classes)
        allocator.rejected_jobs = rejected_frame(jobs, np.flatnonzero(nowhere), workload.metadata)
        return kept, allocator, rejected
    names = [c.name for c in machine.clusters]
    check_pools(queues, names)
    assignment = assign_queues(queues, trace_queue_names(jobs), jobs["requested_time"].to_numpy(),
                               jobs["nodes"].to_numpy() if "nodes" in jobs else np.ones(n, np.int64))
    cores = np.array([r.cores for r in base_requests], dtype=np.int64)[base_of] if n else np.zeros(0, np.int64)
    ram = np.array([r.ram for r in base_requests], dtype=np.int64)[base_of] if n else np.zeros(0, np.int64)
    nodes = np.array([r.nodes for r in base_requests], dtype=np.int64)[base_of] if n else np.zeros(0, np.int64)
    requests = JobRequests(jobs["requested_time"].to_numpy(np.int64), cores, ram, nodes, base_of,
                           base.class_clusters)
    admission = admit(queues, assignment.queue, requests, names, machine.cores)
    for array in (admission.queue, admission.refused_by, admission.reason):
        array[nowhere] = -1                   # rejected by the machine, not by a queue
    rejected.update(rejection_reasons(admission, queues))
    keep = admission.queue >= 0
    users = jobs["user"].to_numpy(np.int64) if "user" in jobs else np.full(n, -1, np.int64)
    from engine.workload.names import names_of
    table = admission_table(admission, queues, users, names_of(workload.metadata, "user"), machine.cores)
    dropped = np.flatnonzero(~keep)
    kept = workload if keep.all() else _kept(workload, keep)
    classes = _queued_classes(base, admission.queue, keep, queues, names)
    allocator = NodeAllocator(machine, kept, queues=queues, speed_scaling=speed_scaling, classes=classes,
                              queue_of=admission.queue[keep])
    allocator.assignment = assignment
    allocator.admission = table
    allocator.rejected_jobs = rejected_frame(jobs, dropped, workload.metadata, admission=admission, config=queues,
                                             machine_cores=machine.cores)
    if admission.routed.any():
        allocator.routed_from = np.where(admission.routed, admission.refused_by, -1)[keep]
    return kept, allocator, rejected


def _kept(workload: Workload, keep: np.ndarray) -> Workload:
    return Workload(workload.jobs.loc[keep].reset_index(drop=True), workload.metadata, workload.report,
                    workload.source)


def _queued_classes(base: RequestClasses, queue_of: np.ndarray, keep: np.ndarray, config: QueueConfig,
                    cluster_names: list[str]) -> RequestClasses:
    """The request classes of the kept jobs in their admitted queues, from their classes without a
    queue: the same numbering (first appearance), requests, clusters (the queue's pool kept, in the
    same cheapest-first order) and penalties as request_classes and cluster_choices give for the
    kept jobs with ``queue_of`` (tests/engine/sim/test_nodes.py checks it)."""
    base_of, queue = base.class_of[keep], queue_of[keep]
    if not len(base_of):
        return RequestClasses(np.zeros(0, np.int64), [], [], np.zeros(0))
    codes, first = rows_by_first_appearance(np.stack([base_of, queue], axis=1))
    requests, clusters, penalty = [], [], []
    for b, q in zip(base_of[first].tolist(), queue[first].tolist()):
        requests.append(base.requests[b]._replace(queue=q))
        pool = config.queues[q].pool
        clusters.append(base.class_clusters[b] if pool is None
                        else [c for c in base.class_clusters[b] if cluster_names[c] in pool])
        penalty.append(base.class_penalty[b])
    return RequestClasses(codes, requests, clusters, np.asarray(penalty, dtype=np.float64))
