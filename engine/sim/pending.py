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

The sweep goes over the run's events once and re-checks nothing at every instant (a 500,000-job
grid run has about 3,400 groups waiting at each of its million instants). Jobs whose requests
differ only in what the sweep does not follow (memory, GPUs) share a class here, and a group is
the jobs of one class, queue and (queue, user) pair. Per class it counts on how many clusters the
class fits (with and without its pool) as jobs take and give back nodes and as clusters open and
close: its reason changes only when a count reaches or leaves zero, and the seconds it spent in
each reason are kept. A group follows its class's seconds unless a queue or user limit holds it,
re-checked only when its queue's cores in use cross the group's threshold or its pair's use
changes. A job's time held is the difference of its group's accumulated times between its submit
and its start.
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
    """What the sweep reads: per job its request class and where it ran; per request class its shape
    and clusters; per cluster its nodes; the limits."""

    job_class: np.ndarray         # per job: its request class
    cluster: np.ndarray           # per job (-1: never ran)
    first: np.ndarray             # per job: where its nodes are in pick/take
    count: np.ndarray             # per job: how many nodes
    pick: np.ndarray              # global node indices
    take: np.ndarray              # cores taken on each
    held: np.ndarray              # per job: cores it held on its cluster
    queue: np.ndarray             # per job (0 without limits)
    pair: np.ndarray              # per job (0 without limits)
    cores: np.ndarray             # per job: cores the limits count
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
    info = sweep.cluster_info
    classes, shape, lists = _sweep_classes(sweep)
    group, group_class, group_queue, group_pair, group_cores = _groups(sweep, classes)
    watch = _watchers(shape, lists, info)
    limit_of, limit_start, limit_threshold, limit_owner = _limit_watchers(sweep, group_queue, group_cores)
    node_free = np.zeros(max(int((info[:, 0] + info[:, 1]).max()) if len(info) else 1, 1), dtype=np.int64)
    for offset, count, cores, _, _ in info.tolist():
        node_free[offset:offset + count] = cores
    bounds = np.concatenate([info[:, 3], info[:, 4]])
    bound_order = np.argsort(bounds, kind="stable")
    pair_limited = (sweep.pair_jobs < NO_LIMIT) | (sweep.pair_cores < NO_LIMIT)
    _sweep(times[order], kinds[order], np.tile(jobs, 3)[order], group, sweep.cluster, sweep.first, sweep.count,
           sweep.pick, sweep.take, sweep.held, sweep.queue, sweep.pair, sweep.cores, group_class, group_queue,
           group_pair, group_cores, limit_of, info, node_free, info[:, 1] * info[:, 2], bounds[bound_order],
           bound_order % max(len(info), 1), *watch, max(len(shape), 1), limit_start, limit_threshold, limit_owner,
           sweep.queue_limit, sweep.pair_jobs, sweep.pair_cores, pair_limited, sweep.limited, held)
    return held


# --------------------------------------------------------------------------- the sweep's own classes
# Jobs whose requests differ only in what the sweep does not follow (memory, GPUs) share a class
# here; a group is the jobs of one such class, queue, pair and cores: the same reason at every instant.


def _numbered(columns: list[np.ndarray]) -> np.ndarray:
    """Rows numbered by their values in ``columns`` (equal rows, equal numbers; from 0, dense)."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column in columns:
        codes, uniques = pd.factorize(column)
        key = pd.factorize(key * len(uniques) + codes)[0].astype(np.int64)
    return key


def _masks(start: np.ndarray, flat: np.ndarray, clusters: int) -> list[np.ndarray]:
    """Each class's clusters as bit masks, 62 clusters a word (a column per word)."""
    masks = np.zeros((len(start) - 1, max(clusters + 61, 62) // 62), dtype=np.int64)
    _fill_masks(start, flat, masks)
    return list(masks.T)


@njit(cache=True)
def _fill_masks(start: np.ndarray, flat: np.ndarray, masks: np.ndarray) -> None:
    for k in range(len(start) - 1):
        for i in range(start[k], start[k + 1]):
            masks[k, flat[i] // 62] |= np.int64(1) << np.int64(flat[i] % 62)


def _sweep_classes(sweep: Sweep) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """Each request class's sweep class (same shape and same clusters, with and without its pool),
    and per sweep class its shape and clusters (start, list, open start, open list)."""
    k = len(sweep.class_start) - 1
    clusters = len(sweep.cluster_info)
    shape = sweep.class_shape[:k]
    columns = [shape[:, i] for i in range(4)] + _masks(sweep.class_start, sweep.class_list, clusters)
    if sweep.open_start is not sweep.class_start or sweep.open_list is not sweep.class_list:
        columns += _masks(sweep.open_start, sweep.open_list, clusters)
    classes = _numbered(columns)
    first = np.unique(classes, return_index=True)[1]

    def sub(start: np.ndarray, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lengths = np.diff(start)[first]
        chosen = np.zeros(len(first) + 1, dtype=np.int64)
        chosen[1:] = np.cumsum(lengths)
        at = np.repeat(start[first] - chosen[:-1], lengths) + np.arange(int(chosen[-1]))
        return chosen, flat[at]
    return classes, shape[first], (*sub(sweep.class_start, sweep.class_list), *sub(sweep.open_start, sweep.open_list))


def _groups(sweep: Sweep, classes: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each job's group of equal jobs for the sweep (same sweep class, and with limits same pair:
    a pair is of one queue, and the cores the limits count follow from the class's shape), and per
    group its sweep class, queue, pair, cores."""
    job_class = classes[sweep.job_class]
    group = _numbered([job_class, sweep.pair] if sweep.limited else [job_class])
    first = np.flatnonzero(np.diff(np.maximum.accumulate(group), prepend=-1) > 0)   # numbered as first seen
    return group, job_class[first], sweep.queue[first], sweep.pair[first], sweep.cores[first]


def _watchers(shape: np.ndarray, lists: tuple[np.ndarray, ...], info: np.ndarray) -> tuple[np.ndarray, ...]:
    """What the sweep follows per cluster: quantities (free nodes with at least v cores for each v a
    class asks per node, and free cores), each watched by (class, which list) pairs at a threshold
    (the class fits on that cluster while the quantity is at least the threshold).

    Returned: per cluster its quantities' range, per quantity its v (-1: free cores) and value at
    the start (the machine empty), its watchers' range; per watcher its threshold, class and list
    (0: the clusters the class may use, 1: those it could use but for its queue's pool)."""
    owner, which, cluster = [], [], []
    for w, (start, flat) in enumerate((lists[:2], lists[2:])):
        lengths = np.diff(start)
        owner.append(np.repeat(np.arange(len(lengths)), lengths))
        cluster.append(flat[:int(start[-1])])
        which.append(np.full(int(start[-1]), w, dtype=np.int64))
    owner_, which_, cluster_ = (np.concatenate(x).astype(np.int64) for x in (owner, which, cluster))
    nodes, ppn, procs, exclusive = (shape[owner_, i] for i in range(4))
    spread = nodes == 0
    kind = spread.astype(np.int64)                                   # 0: nodes with >= v free, 1: free cores
    level = np.where(spread, -1, np.where(exclusive != 0, info[cluster_, 2], np.maximum(ppn, 0)))
    threshold = np.where(spread, procs, nodes)
    keys = np.stack([cluster_, kind, level], axis=1)
    quantities, quantity_of = np.unique(keys, axis=0, return_inverse=True) if len(keys) else \
        (np.zeros((0, 3), np.int64), np.zeros(0, np.int64))
    quantity_of = np.asarray(quantity_of, dtype=np.int64).reshape(-1)
    order = np.lexsort((threshold, quantity_of))
    count = len(quantities)
    watch_start = np.zeros(count + 1, dtype=np.int64)
    watch_start[1:] = np.cumsum(np.bincount(quantity_of, minlength=count))
    quantity_start = np.zeros(len(info) + 1, dtype=np.int64)
    quantity_start[1:] = np.cumsum(np.bincount(quantities[:, 0], minlength=len(info)))
    q_cluster, q_level = quantities[:, 0], quantities[:, 2]
    value = np.where(q_level < 0, info[q_cluster, 1] * info[q_cluster, 2],
                     np.where(q_level <= info[q_cluster, 2], info[q_cluster, 1], 0))
    return (quantity_start, q_level.astype(np.int64), value.astype(np.int64), watch_start,
            threshold[order].astype(np.int64), owner_[order], which_[order])


def _limit_watchers(sweep: Sweep, group_queue: np.ndarray, group_cores: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per group its limit class (queue and cores); per queue its limit classes sorted by the cores
    in use from which the queue's core limit holds them (start, threshold, limit class)."""
    if not sweep.limited or not len(group_queue):
        return np.zeros(max(len(group_queue), 1), np.int64), np.zeros(2, np.int64), np.zeros(1, np.int64), \
            np.zeros(1, np.int64)
    limit_of = _numbered([group_queue, group_cores])
    first = np.unique(limit_of, return_index=True)[1]
    queue, cores = group_queue[first], group_cores[first]
    threshold = sweep.queue_limit[queue] - cores + 1          # held while the queue's cores in use >= this
    order = np.lexsort((threshold, queue))
    start = np.zeros(len(sweep.queue_limit) + 1, dtype=np.int64)
    start[1:] = np.cumsum(np.bincount(queue, minlength=len(sweep.queue_limit)))
    return limit_of, start, threshold[order].astype(np.int64), order.astype(np.int64)


# --------------------------------------------------------------------------- the kernel


@njit(cache=True)
def _class_reason(fit: np.ndarray, k: int) -> int:
    if fit[k, 0] > 0:
        return 4
    return 2 if fit[k, 1] > 0 else 3


@njit(cache=True)
def _count(k: int, which: int, sign: int, t: int, fit: np.ndarray, state: np.ndarray, since: np.ndarray,
           spent: np.ndarray) -> None:
    """One cluster more (+1) or fewer (-1) where class k fits: its reason from ``t`` (the seconds in
    the reason it leaves added to ``spent``)."""
    fit[k, which] += sign
    now = _class_reason(fit, k)
    if now != state[k]:
        spent[k, state[k] - 2] += t - since[k]
        since[k] = t
        state[k] = now


@njit(cache=True)
def _moved(q: int, before: int, after: int, t: int, watch_start: np.ndarray, threshold: np.ndarray,
           owner: np.ndarray, which: np.ndarray, fit: np.ndarray, state: np.ndarray, since: np.ndarray,
           spent: np.ndarray) -> None:
    """Quantity q went from ``before`` to ``after`` (its cluster open): the watchers whose threshold
    it crossed count one cluster more or fewer."""
    low, high = min(before, after), max(before, after)
    sign = 1 if after > before else -1
    a, b = watch_start[q], watch_start[q + 1]
    while a < b:                                   # the first threshold above low
        middle = (a + b) // 2
        if threshold[middle] > low:
            b = middle
        else:
            a = middle + 1
    w = a
    while w < watch_start[q + 1] and threshold[w] <= high:
        _count(owner[w], which[w], sign, t, fit, state, since, spent)
        w += 1


@njit(cache=True)
def _class_seconds(k: int, r: int, t: int, state: np.ndarray, since: np.ndarray, spent: np.ndarray) -> int:
    """Class k's seconds in reason r + 2 (pool, resources, priority) up to ``t``."""
    return spent[k, r] + (t - since[k] if state[k] == r + 2 else 0)


@njit(cache=True)
def _flush(g: int, t: int, phase: np.ndarray, entered: np.ndarray, seen: np.ndarray, acc: np.ndarray,
           group_class: np.ndarray, state: np.ndarray, since: np.ndarray, spent: np.ndarray) -> None:
    """Group g's seconds held up to ``t`` into ``acc``: in a limit (phase 0, 1) since it entered it;
    free of limits (2) its class's seconds per reason since last seen."""
    p = phase[g]
    if p == 0 or p == 1:
        acc[g, p] += t - entered[g]
        entered[g] = t
    elif p == 2:
        k = group_class[g]
        for r in range(3):
            now = _class_seconds(k, r, t, state, since, spent)
            acc[g, r + 2] += now - seen[g, r]
            seen[g, r] = now


@njit(cache=True)
def _hold(j: int, sign: int, t: int, cluster: np.ndarray, first: np.ndarray, count: np.ndarray, pick: np.ndarray,
          take: np.ndarray, held: np.ndarray, node_free: np.ndarray, cluster_free: np.ndarray, is_open: np.ndarray,
          quantity_start: np.ndarray, level: np.ndarray, quantity: np.ndarray, watch_start: np.ndarray,
          threshold: np.ndarray, owner: np.ndarray, which: np.ndarray, fit: np.ndarray, state: np.ndarray,
          since: np.ndarray, spent: np.ndarray) -> None:
    """Job j takes (sign -1) or gives back (+1) its cores and nodes; the quantities of its cluster follow."""
    c = cluster[j]
    if c < 0:
        return
    before = cluster_free[c]
    cluster_free[c] += sign * held[j]
    a, b = quantity_start[c], quantity_start[c + 1]
    if b > a and level[b - 1] < 0:                     # free cores (the cluster's last quantity)
        quantity[b - 1] = cluster_free[c]
        if is_open[c]:
            _moved(b - 1, before, cluster_free[c], t, watch_start, threshold, owner, which, fit, state, since, spent)
    for i in range(first[j], first[j] + count[j]):
        node = pick[i]
        old = node_free[node]
        new = old + sign * take[i]
        node_free[node] = new
        low, high = min(old, new), max(old, new)
        step = 1 if new > old else -1
        for q in range(a, b):
            v = level[q]
            if v < 0 or v > high:
                break
            if v > low:
                quantity[q] += step
                if is_open[c]:
                    _moved(q, quantity[q] - step, quantity[q], t, watch_start, threshold, owner, which, fit, state,
                           since, spent)


@njit(cache=True)
def _link(g: int, key: int, head: np.ndarray, after: np.ndarray, before: np.ndarray) -> None:
    after[g] = head[key]
    before[g] = -1
    if head[key] >= 0:
        before[head[key]] = g
    head[key] = g


@njit(cache=True)
def _unlink(g: int, key: int, head: np.ndarray, after: np.ndarray, before: np.ndarray) -> None:
    if before[g] >= 0:
        after[before[g]] = after[g]
    else:
        head[key] = after[g]
    if after[g] >= 0:
        before[after[g]] = before[g]


@njit(cache=True)
def _sweep(ev_time, ev_kind, ev_job, group, cluster, first, count, pick, take, held_cores, queue, pair, cores,
           group_class, group_queue, group_pair, group_cores, group_limit, info, node_free, cluster_free,
           bound_time, bound_cluster, quantity_start, level, quantity, watch_start, threshold, owner, which,
           classes, limit_start, limit_threshold, limit_owner, q_limit, p_jobs_limit, p_cores_limit,
           pair_limited, limited, out):
    """The sweep of :func:`held_times` (``out`` filled with each job's seconds held per reason).

    Nothing is re-checked at every instant. Per sweep class: on how many clusters (of its own, of
    all it could use) it fits, counted as jobs take and give back nodes and as clusters open and
    close, hence its reason and the seconds it spent in each so far. Per group: whether a queue or
    user limit holds it (re-checked only when its queue's cores in use cross its threshold or its
    pair's use changes), else it follows its class's seconds. A job's seconds held are its group's
    between its submit and its start."""
    events = len(ev_time)
    groups = len(group_class)
    reasons = out.shape[1]
    fit = np.zeros((classes, 2), np.int64)
    state = np.full(classes, 3, np.int64)
    since = np.full(classes, ev_time[0], np.int64)
    spent = np.zeros((classes, 3), np.int64)
    is_open = np.zeros(len(info), np.bool_)
    waiting = np.zeros(groups, np.int64)
    phase = np.full(groups, -1, np.int64)                  # -1: not waiting; 0/1: held by a limit; 2: free
    entered = np.zeros(groups, np.int64)
    seen = np.zeros((groups, 3), np.int64)
    acc = np.zeros((groups, reasons), np.int64)
    snap = np.zeros((len(group), reasons), np.int64)
    limits = len(limit_owner)
    pairs = len(p_jobs_limit)
    q_used = np.zeros(len(q_limit), np.int64)
    p_jobs = np.zeros(pairs, np.int64)
    p_cores = np.zeros(pairs, np.int64)
    limit_head = np.full(limits, -1, np.int64)
    limit_after = np.full(groups, -1, np.int64)
    limit_before = np.full(groups, -1, np.int64)
    pair_head = np.full(pairs, -1, np.int64)
    pair_after = np.full(groups, -1, np.int64)
    pair_before = np.full(groups, -1, np.int64)
    dirty_limits = np.zeros(limits, np.int64)
    limit_stamp = np.zeros(limits, np.int64)
    dirty_pairs = np.zeros(pairs, np.int64)
    pair_stamp = np.zeros(pairs, np.int64)
    fresh = np.zeros(groups, np.int64)
    i = 0
    b = 0
    instant = 0
    while i < events:
        t = ev_time[i]
        instant += 1
        n_limits = n_pairs = n_fresh = 0
        while b < len(bound_time) and bound_time[b] <= t:           # clusters opening or closing
            c = bound_cluster[b]
            b += 1
            now_open = info[c, 3] <= t < info[c, 4]
            if now_open != is_open[c]:
                is_open[c] = now_open
                sign = 1 if now_open else -1
                for q in range(quantity_start[c], quantity_start[c + 1]):
                    for w in range(watch_start[q], watch_start[q + 1]):
                        if quantity[q] >= threshold[w]:
                            _count(owner[w], which[w], sign, t, fit, state, since, spent)
        while i < events and ev_time[i] == t:
            kind, j = ev_kind[i], ev_job[i]
            g = group[j]
            if kind == SUBMIT:
                if waiting[g] > 0:
                    _flush(g, t, phase, entered, seen, acc, group_class, state, since, spent)
                for r in range(reasons):
                    snap[j, r] = acc[g, r]
                if waiting[g] == 0:
                    fresh[n_fresh] = g
                    n_fresh += 1
                    if limited:
                        _link(g, group_limit[g], limit_head, limit_after, limit_before)
                        _link(g, group_pair[g], pair_head, pair_after, pair_before)
                waiting[g] += 1
            else:
                if kind == START:
                    _flush(g, t, phase, entered, seen, acc, group_class, state, since, spent)
                    for r in range(reasons):
                        out[j, r] = acc[g, r] - snap[j, r]
                    waiting[g] -= 1
                    if waiting[g] == 0:
                        phase[g] = -1
                        if limited:
                            _unlink(g, group_limit[g], limit_head, limit_after, limit_before)
                            _unlink(g, group_pair[g], pair_head, pair_after, pair_before)
                sign = 1 if kind == END else -1
                _hold(j, sign, t, cluster, first, count, pick, take, held_cores, node_free, cluster_free, is_open,
                      quantity_start, level, quantity, watch_start, threshold, owner, which, fit, state, since, spent)
                if limited:
                    q, p = queue[j], pair[j]
                    before = q_used[q]
                    q_used[q] -= sign * cores[j]
                    p_jobs[p] -= sign
                    p_cores[p] -= sign * cores[j]
                    low, high = min(before, q_used[q]), max(before, q_used[q])
                    for x in range(limit_start[q], limit_start[q + 1]):
                        if limit_threshold[x] > high:
                            break
                        if limit_threshold[x] > low and limit_stamp[limit_owner[x]] != instant:
                            limit_stamp[limit_owner[x]] = instant
                            dirty_limits[n_limits] = limit_owner[x]
                            n_limits += 1
                    if pair_limited[p] and pair_stamp[p] != instant:
                        pair_stamp[p] = instant
                        dirty_pairs[n_pairs] = p
                        n_pairs += 1
            i += 1
        # the groups whose limits may hold them otherwise from now, and those that began waiting
        for x in range(n_limits + n_pairs + n_fresh):
            if x < n_limits:
                g = limit_head[dirty_limits[x]]
            elif x < n_limits + n_pairs:
                g = pair_head[dirty_pairs[x - n_limits]]
            else:
                g = fresh[x - n_limits - n_pairs]
            while g >= 0:
                if waiting[g] > 0:
                    now = 2
                    if limited:
                        q, p, c = group_queue[g], group_pair[g], group_cores[g]
                        if q_used[q] + c > q_limit[q]:
                            now = 0
                        elif p_jobs[p] + 1 > p_jobs_limit[p] or p_cores[p] + c > p_cores_limit[p]:
                            now = 1
                    if now != phase[g]:
                        _flush(g, t, phase, entered, seen, acc, group_class, state, since, spent)
                        phase[g] = now
                        entered[g] = t
                        if now == 2:
                            k = group_class[g]
                            for r in range(3):
                                seen[g, r] = _class_seconds(k, r, t, state, since, spent)
                if x < n_limits:
                    g = limit_after[g]
                elif x < n_limits + n_pairs:
                    g = pair_after[g]
                else:
                    g = -1


# --------------------------------------------------------------------------- inputs


def _flat_lists(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(len(lists) + 1, dtype=np.int64)
    start[1:] = np.cumsum([len(x) for x in lists])
    flat = np.fromiter((c for x in lists for c in x), dtype=np.int64, count=int(start[-1]))
    return start, flat


def pool_sweep(size: np.ndarray, capacity: int) -> Sweep:
    """One pool of ``capacity`` processors: each job a request of ``size`` processors anywhere."""
    sizes, size_of = np.unique(np.asarray(size, dtype=np.int64), return_inverse=True)
    n, k = len(size), len(sizes)
    zeros = np.zeros(n, dtype=np.int64)
    shape = np.zeros((max(k, 1), 4), dtype=np.int64)
    shape[:k, 2] = sizes
    class_start = np.arange(k + 1, dtype=np.int64) if k else np.zeros(2, np.int64)
    return Sweep(np.asarray(size_of, np.int64).reshape(-1), zeros, zeros, zeros, np.zeros(1, np.int64),
                 np.zeros(1, np.int64), np.asarray(size, np.int64), zeros, zeros, zeros, shape, class_start,
                 np.zeros(max(k, 1), np.int64), class_start, np.zeros(max(k, 1), np.int64),
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
    else:
        queue = pair = cores = np.zeros(n, dtype=np.int64)
        queue_limit = pair_jobs = pair_cores = np.zeros(1, dtype=np.int64)
    return Sweep(class_of, cluster_of, first, count, pick if total else np.zeros(1, np.int64),
                 take if total else np.zeros(1, np.int64), held, queue, pair, cores,
                 shape if len(shape) else np.zeros((1, 4), np.int64),
                 class_start, class_list if len(class_list) else np.zeros(1, np.int64), open_start,
                 open_list if len(open_list) else np.zeros(1, np.int64), info, queue_limit, pair_jobs, pair_cores,
                 limited)


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
