"""Pending reasons: for every job that waited, what held it, as time held by each reason.

Worked out after the run from the schedule (each job's submit, start, end and where it ran), so it
costs the event loop nothing and says the same for every algorithm. Between two events the state is
fixed; for each waiting job it is the first of these that holds (PBS's "Not Running: ..." comments,
Slurm's pending reasons, checked in this order):

* ``queue_limit``: its queue's running jobs hold so many cores that it would exceed the queue's
  core limit (``max_cores``/``max_share``);
* ``user_limit``: its user already runs ``user_max_jobs`` jobs in that queue, or would exceed
  ``user_max_cores`` there;
* ``pool``: no cluster its queue's pool allows has room for it now, but another cluster has;
* ``resources``: no cluster it may use has room for it now;
* ``priority``: there was room, and it did not start: other jobs came first (its place in the
  queue order, a reservation it must not delay) or the room was not of its shape in memory or GPUs.

"Room" is counted node by node in cores (a job of N nodes with ppn cores needs N nodes with ppn free
cores each, an exclusive one N entirely free nodes, cores anywhere that many free cores in one
cluster), as the jobs really held them; memory and GPUs per node are not followed (a job those held
back is counted under ``priority``), nor the EASY reservation's nodes. A cluster outside its
availability window has no room. On one pool of processors only ``resources`` (fewer free
processors than the job asks for) and ``priority`` apply.

The sweep goes over the run's events once; at each interval it decides once per group of waiting
jobs that share a request class and a (queue, user) pair (not once per job), and a job's time held
is the difference of its group's accumulated times between its submit and its start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from engine.sim.jit import njit

if TYPE_CHECKING:
    from engine.sim.nodes import NodeAllocator

#: the reasons, in the order they are checked; the schedule's columns are ``held_<reason>`` (seconds)
HELD_REASONS = ("queue_limit", "user_limit", "pool", "resources", "priority")
HELD_COLUMNS = tuple(f"held_{reason}" for reason in HELD_REASONS)
#: the schedule's column naming the reason that held a job longest ("" if it never waited)
HELD_BY = "held_by"
NO_LIMIT = 2 ** 62
END, SUBMIT, START = 0, 1, 2


@dataclass
class Sweep:
    """What the sweep reads: per job its group and where it ran; per group its class, queue, pair and
    cores; per class its shape and clusters; per cluster its nodes; the limits."""

    group: np.ndarray             # per job
    cluster: np.ndarray           # per job (-1: never ran)
    first: np.ndarray             # per job: where its nodes are in pick/take
    count: np.ndarray             # per job: how many nodes
    pick: np.ndarray              # global node indices
    take: np.ndarray              # cores taken on each
    held: np.ndarray              # per job: cores it held on its cluster
    queue: np.ndarray             # per job (0 without limits)
    pair: np.ndarray              # per job (0 without limits)
    cores: np.ndarray             # per job: cores the limits count
    group_class: np.ndarray
    group_queue: np.ndarray
    group_pair: np.ndarray
    group_cores: np.ndarray
    class_shape: np.ndarray       # per class: nodes, ppn, procs, exclusive
    class_start: np.ndarray       # clusters it may use: class_list[class_start[k]:class_start[k + 1]]
    class_list: np.ndarray
    open_start: np.ndarray        # clusters it could use but for its queue's pool
    open_list: np.ndarray
    cluster_info: np.ndarray      # per cluster: first node, nodes, cores per node, available from, to
    queue_limit: np.ndarray       # per queue
    pair_jobs: np.ndarray         # per pair
    pair_cores: np.ndarray        # per pair
    limited: bool


def held_times(submit: np.ndarray, start: np.ndarray, end: np.ndarray, sweep: Sweep) -> np.ndarray:
    """Seconds each job was held by each of :data:`HELD_REASONS` (an n x 5 int64 array)."""
    n = len(submit)
    held = np.zeros((n, len(HELD_REASONS)), dtype=np.int64)
    ran = start >= 0
    if not (ran & (start > submit)).any():
        return held
    jobs = np.flatnonzero(ran)
    times = np.concatenate([end[jobs], submit[jobs], start[jobs]])
    kinds = np.repeat(np.array([END, SUBMIT, START], dtype=np.int64), len(jobs))
    low = int(times.min())
    order = np.argsort((times - low) * 3 + kinds, kind="stable")      # by time, then ends, submits, starts
    events_job = np.tile(jobs, 3)[order]
    info = sweep.cluster_info
    nodes_total = int(info[:, 0].max() + info[:, 1].max()) if len(info) else 0
    node_free = np.zeros(max(nodes_total, 1), dtype=np.int64)
    hist = np.zeros((max(len(info), 1), int(info[:, 2].max()) + 1 if len(info) else 1), dtype=np.int64)
    cluster_free = np.zeros(max(len(info), 1), dtype=np.int64)
    for c, (offset, count, cores, _, _) in enumerate(info.tolist()):
        node_free[offset:offset + count] = cores
        hist[c, cores] = count
        cluster_free[c] = count * cores
    groups = int(sweep.group_class.shape[0])
    classes = int(sweep.class_shape.shape[0])
    _sweep(times[order], kinds[order], events_job, sweep.group, sweep.cluster, sweep.first, sweep.count, sweep.pick,
           sweep.take, sweep.held, sweep.queue, sweep.pair, sweep.cores, sweep.group_class, sweep.group_queue,
           sweep.group_pair, sweep.group_cores, sweep.class_shape, sweep.class_start, sweep.class_list,
           sweep.open_start, sweep.open_list, info, node_free, hist, cluster_free,
           np.zeros(max(len(sweep.queue_limit), 1), np.int64), sweep.queue_limit,
           np.zeros(max(len(sweep.pair_jobs), 1), np.int64), sweep.pair_jobs,
           np.zeros(max(len(sweep.pair_cores), 1), np.int64), sweep.pair_cores, sweep.limited,
           np.zeros((max(groups, 1), len(HELD_REASONS)), np.int64), np.zeros((n, len(HELD_REASONS)), np.int64), held,
           np.zeros(max(groups, 1), np.int64), np.zeros(max(groups, 1), np.int64), np.zeros(max(groups, 1), np.int64),
           np.full(max(classes, 1), -1, np.int64), np.zeros(max(classes, 1), np.int64))
    return held


@njit(cache=True)
def _fits(k: int, t: int, clusters: np.ndarray, a: int, b: int, shape: np.ndarray, info: np.ndarray,
          hist: np.ndarray, cluster_free: np.ndarray) -> bool:
    """Whether class k has room now on one of ``clusters[a:b]`` (see the module docstring)."""
    nodes, ppn, procs, exclusive = shape[k, 0], shape[k, 1], shape[k, 2], shape[k, 3]
    for i in range(a, b):
        c = clusters[i]
        if t < info[c, 3] or t >= info[c, 4]:
            continue
        whole = info[c, 2]
        if nodes == 0:
            if cluster_free[c] >= procs:
                return True
        elif exclusive:
            if hist[c, whole] >= nodes:
                return True
        elif cluster_free[c] >= nodes * ppn:
            found = 0
            for v in range(whole, ppn - 1, -1):
                found += hist[c, v]
                if found >= nodes:
                    return True
    return False


@njit(cache=True)
def _hold(j: int, sign: int, cluster: np.ndarray, first: np.ndarray, count: np.ndarray, pick: np.ndarray,
          take: np.ndarray, held: np.ndarray, info: np.ndarray, node_free: np.ndarray, hist: np.ndarray,
          cluster_free: np.ndarray) -> None:
    """Job j takes (sign -1) or gives back (+1) its cores and nodes."""
    c = cluster[j]
    if c < 0:
        return
    cluster_free[c] += sign * held[j]
    for i in range(first[j], first[j] + count[j]):
        node = pick[i]
        hist[c, node_free[node]] -= 1
        node_free[node] += sign * take[i]
        hist[c, node_free[node]] += 1


@njit(cache=True)
def _sweep(ev_time, ev_kind, ev_job, group, cluster, first, count, pick, take, held_cores, queue, pair, cores,
           group_class, group_queue, group_pair, group_cores, shape, class_start, class_list, open_start, open_list,
           info, node_free, hist, cluster_free, q_used, q_limit, p_jobs, p_jobs_limit, p_cores, p_cores_limit,
           limited, acc, snap, out, active, where, waiting, fit_stamp, fit_reason):
    """The sweep of :func:`held_times` (``out`` filled with each job's seconds held per reason)."""
    events = len(ev_time)
    i = 0
    n_active = 0
    interval = 0
    reasons = acc.shape[1]
    while i < events:
        t = ev_time[i]
        while i < events and ev_time[i] == t:
            kind, j = ev_kind[i], ev_job[i]
            g = group[j]
            if kind == END:
                _hold(j, 1, cluster, first, count, pick, take, held_cores, info, node_free, hist, cluster_free)
                if limited:
                    q_used[queue[j]] -= cores[j]
                    p_jobs[pair[j]] -= 1
                    p_cores[pair[j]] -= cores[j]
            elif kind == SUBMIT:
                for r in range(reasons):
                    snap[j, r] = acc[g, r]
                if waiting[g] == 0:
                    where[g] = n_active
                    active[n_active] = g
                    n_active += 1
                waiting[g] += 1
            else:
                for r in range(reasons):
                    out[j, r] = acc[g, r] - snap[j, r]
                waiting[g] -= 1
                if waiting[g] == 0:
                    n_active -= 1
                    last = active[n_active]
                    active[where[g]] = last
                    where[last] = where[g]
                _hold(j, -1, cluster, first, count, pick, take, held_cores, info, node_free, hist, cluster_free)
                if limited:
                    q_used[queue[j]] += cores[j]
                    p_jobs[pair[j]] += 1
                    p_cores[pair[j]] += cores[j]
            i += 1
        if i == events:
            break
        dt = ev_time[i] - t
        interval += 1
        for a in range(n_active):
            g = active[a]
            reason = -1
            if limited:
                q, p, c = group_queue[g], group_pair[g], group_cores[g]
                if q_used[q] + c > q_limit[q]:
                    reason = 0
                elif p_jobs[p] + 1 > p_jobs_limit[p] or p_cores[p] + c > p_cores_limit[p]:
                    reason = 1
            if reason < 0:
                k = group_class[g]
                if fit_stamp[k] == interval:
                    reason = fit_reason[k]
                else:
                    if _fits(k, t, class_list, class_start[k], class_start[k + 1], shape, info, hist, cluster_free):
                        reason = 4
                    elif _fits(k, t, open_list, open_start[k], open_start[k + 1], shape, info, hist, cluster_free):
                        reason = 2
                    else:
                        reason = 3
                    fit_stamp[k] = interval
                    fit_reason[k] = reason
            acc[g, reason] += dt


# --------------------------------------------------------------------------- inputs


def _flat_lists(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(len(lists) + 1, dtype=np.int64)
    start[1:] = np.cumsum([len(x) for x in lists])
    flat = np.fromiter((c for x in lists for c in x), dtype=np.int64, count=int(start[-1]))
    return start, flat


def pool_sweep(size: np.ndarray, capacity: int) -> Sweep:
    """One pool of ``capacity`` processors: each job a request of ``size`` processors anywhere."""
    sizes, group = np.unique(np.asarray(size, dtype=np.int64), return_inverse=True)
    n, k = len(size), len(sizes)
    zeros = np.zeros(n, dtype=np.int64)
    shape = np.zeros((max(k, 1), 4), dtype=np.int64)
    shape[:k, 2] = sizes
    class_start = np.arange(k + 1, dtype=np.int64) if k else np.zeros(2, np.int64)
    return Sweep(np.asarray(group, np.int64).reshape(-1), zeros, zeros, zeros, np.zeros(1, np.int64),
                 np.zeros(1, np.int64), np.asarray(size, np.int64), zeros, zeros, zeros,
                 np.arange(k, dtype=np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64),
                 shape, class_start, np.zeros(max(k, 1), np.int64), class_start, np.zeros(max(k, 1), np.int64),
                 np.array([[0, 1, capacity, -NO_LIMIT, NO_LIMIT]], dtype=np.int64), np.zeros(1, np.int64),
                 np.zeros(1, np.int64), np.zeros(1, np.int64), False)


def node_sweep(allocator: NodeAllocator) -> Sweep:
    """The inputs of the sweep from a node-level run's allocator (its request classes, the nodes and
    cores each job took, its queue limits)."""
    from engine.sim.nodes import cluster_choices      # (node placement: only runs on clusters import it)
    clusters = allocator.clusters
    n = len(allocator.class_of)
    offsets = np.concatenate([[0], np.cumsum([c.nodes for c in clusters])]).astype(np.int64)
    cluster_of = np.asarray(allocator.cluster_of, dtype=np.int64)
    count = np.fromiter(map(len, allocator.nodes_of), dtype=np.int64, count=n)
    first = np.zeros(n, dtype=np.int64)
    if n:
        first[1:] = np.cumsum(count)[:-1]
    total = int(count.sum())
    local = np.fromiter((x for nodes in allocator.nodes_of for x in nodes), dtype=np.int64, count=total)
    take = np.fromiter((x for cores in allocator.cores_of for x in cores), dtype=np.int64, count=total)
    pick = local + np.repeat(offsets[np.maximum(cluster_of, 0)], count)
    held = np.zeros(n, dtype=np.int64)
    if total:
        np.add.at(held, np.repeat(np.arange(n), count), take)
    requests = allocator.requests
    class_of = np.asarray(allocator.class_of, dtype=np.int64)
    shape = np.array([[r.nodes, r.ppn, r.procs, r.exclusive] for r in requests], dtype=np.int64).reshape(-1, 4)
    class_start, class_list = _flat_lists(allocator.class_clusters)
    limited = allocator.queue_of is not None and allocator.queues is not None
    if limited and any(q.pool is not None for q in allocator.queues.queues):     # type: ignore[union-attr]
        open_lists, _ = cluster_choices(allocator.machine, [r._replace(queue=-1) for r in requests])
        open_start, open_list = _flat_lists(open_lists)
    else:
        open_start, open_list = class_start, class_list
    info = np.array([[offsets[i], c.nodes, c.cores,
                      c.available_from if c.available_from is not None else -NO_LIMIT,
                      c.available_to if c.available_to is not None else NO_LIMIT] for i, c in enumerate(clusters)],
                    dtype=np.int64).reshape(-1, 5)
    if limited:
        queue = np.asarray(allocator.job_queue, dtype=np.int64)
        pair = np.asarray(allocator.job_pair, dtype=np.int64)
        cores = np.asarray(allocator.job_cores, dtype=np.int64)
        config = allocator.queues.queues                                          # type: ignore[union-attr]
        queue_limit = np.array([_limit(q.core_limit(allocator.capacity)) for q in config], dtype=np.int64)
        pair_queue = np.zeros(int(pair.max()) + 1 if n else 0, dtype=np.int64)
        pair_queue[pair] = queue
        pair_jobs = np.array([_limit(config[q].user_max_jobs) for q in pair_queue.tolist()], dtype=np.int64)
        pair_cores = np.array([_limit(config[q].user_max_cores) for q in pair_queue.tolist()], dtype=np.int64)
        group, first_of = _groups(class_of, pair)
    else:
        queue = pair = cores = np.zeros(n, dtype=np.int64)
        queue_limit = pair_jobs = pair_cores = np.zeros(1, dtype=np.int64)
        group, first_of = _groups(class_of, np.zeros(n, dtype=np.int64))
    return Sweep(group, cluster_of, first, count, pick if total else np.zeros(1, np.int64),
                 take if total else np.zeros(1, np.int64), held, queue, pair, cores,
                 class_of[first_of], queue[first_of], pair[first_of], cores[first_of] if limited else
                 np.zeros(len(first_of), np.int64), shape if len(shape) else np.zeros((1, 4), np.int64),
                 class_start, class_list if len(class_list) else np.zeros(1, np.int64), open_start,
                 open_list if len(open_list) else np.zeros(1, np.int64), info, queue_limit, pair_jobs, pair_cores,
                 limited)


def _groups(class_of: np.ndarray, pair: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each job's group (same class and pair) and each group's first job."""
    if not len(class_of):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    key = class_of * (int(pair.max()) + 1) + pair
    _, first, codes = np.unique(key, return_index=True, return_inverse=True)
    return np.asarray(codes, dtype=np.int64).reshape(-1), np.asarray(first, dtype=np.int64)


def _limit(value: float | None) -> int:
    return NO_LIMIT if value is None or value == float("inf") else int(value)


def pool_held_plainly(submit: np.ndarray, start: np.ndarray, end: np.ndarray, size: np.ndarray,
                      capacity: int) -> np.ndarray:
    """:func:`held_times` of a pool run with numpy alone (for runs where that is cheaper than loading
    the kernel, :func:`use_kernel`): per distinct size of the jobs that waited, the time fewer
    processors than that were free while each waited.

    A size's jobs read the machine only between their submits and starts: the run's intervals are
    summed over the union of those waits (a few times the run's events in all, where every interval
    for every size was 46 x 301,449 on HPC2N-2002 under EASY), each merged stretch of waits summed
    on its own, so a job's two ends always fall in the same stretch."""
    held = np.zeros((len(submit), len(HELD_REASONS)), dtype=np.int64)
    waited = np.flatnonzero((start >= 0) & (start > submit))
    if not len(waited):
        return held
    ran = start >= 0
    times, at = np.unique(np.concatenate([start[ran], end[ran]]), return_inverse=True)
    deltas = np.concatenate([-size[ran], size[ran]])
    free = capacity + np.cumsum(np.bincount(at, weights=deltas, minlength=len(times))).astype(np.int64)
    length = np.append(np.diff(times), 0)
    w_submit, w_start, w_size = submit[waited], start[waited], size[waited]
    # each wait as the intervals it spans: [first, last] into times (a submit before the first event: 0)
    first = np.searchsorted(times, w_submit, side="right") - 1
    w_submit = np.where(first >= 0, w_submit, times[0])
    first = np.maximum(first, 0)
    last = np.searchsorted(times, w_start, side="right") - 1
    resources = np.zeros(len(waited), dtype=np.int64)
    order = np.lexsort((first, w_size))                 # by size, then by first interval
    bounds = np.flatnonzero(np.diff(w_size[order])) + 1
    for jobs in np.split(order, bounds):
        lo, hi = first[jobs], last[jobs]
        reach = np.maximum.accumulate(hi)
        opens = np.flatnonzero(np.concatenate([[True], lo[1:] > reach[:-1]]))   # a new stretch of waits
        stretch_from, stretch_to = lo[opens], np.maximum.reduceat(hi, opens)
        spans = stretch_to - stretch_from + 1
        offset = np.concatenate([[0], np.cumsum(spans)[:-1]])
        covered = np.repeat(stretch_from - offset, spans) + np.arange(int(spans.sum()))
        short = free[covered] < w_size[jobs[0]]
        before = np.concatenate([[0], np.cumsum(length[covered] * short)])   # short seconds before each
        stretch = np.repeat(np.arange(len(opens)), np.diff(np.append(opens, len(jobs))))
        here = offset[stretch] - stretch_from[stretch]             # covered position = interval + here
        to, since = hi + here, lo + here                           # (short seconds before each end)
        resources[jobs] = (before[to] + (w_start[jobs] - times[hi]) * short[to]
                           - before[since] - (w_submit[jobs] - times[lo]) * short[since])
    held[waited, HELD_REASONS.index("resources")] = resources
    held[waited, HELD_REASONS.index("priority")] = (start - submit)[waited] - resources
    return held


def held_columns(held: np.ndarray) -> dict[str, Any]:
    """The schedule's columns: ``held_<reason>`` seconds and ``held_by`` (the longest, a tie to the
    reason checked first; "" if the job never waited)."""
    columns: dict[str, Any] = {name: held[:, i] for i, name in enumerate(HELD_COLUMNS)}
    names = np.array([""] + list(HELD_REASONS), dtype=object)
    longest = np.where(held.max(axis=1) > 0, held.argmax(axis=1) + 1, 0) if len(held) else np.zeros(0, np.int64)
    columns[HELD_BY] = names[longest]
    return columns


def pending_summary(schedule: pd.DataFrame, user_names: dict[int, str], *, by_queue: bool) -> dict[str, Any]:
    """The run summary's ``pending`` entry (see engine.api's docstring) from the schedule's columns;
    ``by_queue``: the schedule's ``queue`` names configured queues (a run with a queue configuration)."""
    if not len(schedule) or HELD_COLUMNS[0] not in schedule:
        return {"reasons": list(HELD_REASONS), "hours": dict.fromkeys(HELD_REASONS, 0.0),
                "jobs": dict.fromkeys(HELD_REASONS, 0), "per_queue": {}, "per_user": {}}
    held = schedule[list(HELD_COLUMNS)].to_numpy(np.int64)

    def by(keys: np.ndarray, label: Any) -> dict[str, dict[str, float]]:
        """Hours per reason of each key that was held at all, the keys named by ``label``, sorted."""
        waited = held.sum(axis=1) > 0
        uniques, codes = np.unique(keys[waited], return_inverse=True)
        sums = np.zeros((len(uniques), held.shape[1]), dtype=np.int64)
        np.add.at(sums, np.asarray(codes).reshape(-1), held[waited])
        rows = {str(label(key)): {reason: round(float(v) / 3600.0, 3) for reason, v in zip(HELD_REASONS, row)}
                for key, row in zip(uniques.tolist(), sums.tolist())}
        return dict(sorted(rows.items()))
    return {"reasons": list(HELD_REASONS),
            "hours": {reason: round(float(held[:, i].sum()) / 3600.0, 3) for i, reason in enumerate(HELD_REASONS)},
            "jobs": {reason: int((held[:, i] > 0).sum()) for i, reason in enumerate(HELD_REASONS)},
            "per_queue": by(schedule["queue"].astype(str).to_numpy(), str) if by_queue else {},
            "per_user": by(schedule["user"].to_numpy(np.int64), lambda u: user_names.get(u, str(u)))}


#: a pool run's sweep is done with numpy (:func:`pool_held_plainly`) while distinct sizes of the jobs
#: that waited times the run's events stays below this: cheaper than loading the kernel (HPC2N-2002
#: under EASY: 0.06 s CPU with numpy over each size's waits, 0.05 s to load the kernel and 0.055 s to
#: run it; the numpy path's work is the waits', the bound keeps its per-size steps few)
PLAIN_WORK = 50_000_000


def use_kernel(submit: np.ndarray, start: np.ndarray, size: np.ndarray) -> bool:
    """Whether a pool run's sweep runs compiled (see :data:`PLAIN_WORK`)."""
    waited = start > submit
    if not waited.any():
        return False
    return len(np.unique(size[waited])) * 2 * len(size) > PLAIN_WORK
