"""Node-level EASY's pass over a fair-share queue, compiled (issue 14): Python sees only the jobs that start.

:class:`engine.policies.heterogeneous.NodeEasy` walks the waiting queue at every event; with tens of
thousands of waiting jobs, nearly each its own request class, that walk in Python dominated. The
kernel :func:`walk` makes the same decisions, job by job, as the Python pass it replaces (kept as
``NodeEasy._schedule_python``, the reference): queue limits, the head's first-fit placement
(``NodeAllocator._fit_now`` with the memory of classes that do not fit), and behind the reservation
the size test, the shadow test, ``limits_allow(job, head)`` and the re-placement avoiding the reserved
nodes. It stops when the pass would (no free core, the bound reached, no job left whose class may
fit) or when a head needs a reservation (Python computes it: ``NodeAllocator.head_reservation``).

What it reads: the fair-share groups as linked lists of job numbers (``FairShareQueue.links``) and
the groups in priority order, tie runs merged by job number as ``iter_jobs`` does (a heap); per-node
free cores, RAM and GPUs mirrored as flat arrays by the allocator (:class:`NodeMirror`). Jobs it
starts are applied to those arrays while it walks, then taken back before it returns: Python starts
them (``NodeAllocator.allocate`` with the placement found), which updates the allocator and mirrors.
Not with availability windows, a queue that may refuse starts (``may_start``) or more than 62 clusters
(class masks are int64): those runs take the Python pass.

Speed (the decisions are those above): in exact mode (no bound) each pass starts by testing every
waiting class class by class (:func:`scan`), so the walk knows how many jobs may still fit and stops
after the last; a class that did not fit is tried again only on clusters where a node released since
now meets its request (:func:`released_may_fit`); per cluster the TOP largest free cores and RAM on a
node bound what a k-node request can find. The helpers are inlined and every kernel is compiled
without numba's reference counting (``_nrt=False``; they allocate nothing): the atomic increments of
their ~20 array arguments at each call were a quarter of a large run.
"""

from __future__ import annotations

import numpy as np

from engine.sim.jit import njit
from engine.sim.nodekernels import good, select

# the walk's state (an int64 array kept between the calls of one pass)
FREE, COUNT, NOW, POS, HSIZE, HAS_RES, RES_JOB, RES_SHADOW, RES_CLUSTER, TESTED, BOUND, COUNTING, LIMITED, \
    AHEAD, TOTAL, DEAD, DEAD_AT, PASS, STARTS, NODES_OUT, HEAD_JOB, SCANNED, SCAN_AT, LISTED, PENDING, \
    LIVE, GROUPS, CACHE_JOB, CACHE_SHADOW, CACHE_CLUSTER, CACHE_RELEASES, CACHE_UNPLANNED, REUSED = range(33)
STATE_SIZE = 33
# NodeWalker.reserve writes HAS_RES..RES_CLUSTER and CACHE_JOB..CACHE_UNPLANNED as two slices
assert (RES_JOB, RES_SHADOW, RES_CLUSTER) == (HAS_RES + 1, HAS_RES + 2, HAS_RES + 3)
assert (CACHE_SHADOW, CACHE_CLUSTER, CACHE_RELEASES, CACHE_UNPLANNED) == tuple(CACHE_JOB + i for i in range(1, 5))
# columns of the per-class flags of the scan (NodeWalker.flags)
LISTED_FLAG, PENDING_FLAG, SEEN, FITTED = range(4)
# what a call ends with
DONE, NEED_RESERVATION, FULL = 0, 1, 2
#: the largest free cores and RAM kept per cluster (engine.sim.nodes.NodeMirror.bound: 5 + 2 * TOP columns)
TOP = 8
TOP_CORES, TOP_MEM = 5, 5 + TOP
#: as engine.sim.nodes.RECHECK_RELEASES (a class found not to fit is retried on the clusters released to since)
RECHECK = 32


@njit(cache=True, inline="always", _nrt=False)
def heap_push(heap: np.ndarray, st: np.ndarray, job: int) -> None:
    i = st[HSIZE]
    st[HSIZE] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= job:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = job


@njit(cache=True, inline="always", _nrt=False)
def heap_pop(heap: np.ndarray, st: np.ndarray) -> int:
    top = heap[0]
    size = st[HSIZE] - 1
    st[HSIZE] = size
    last = heap[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if last <= heap[child]:
            break
        heap[i] = heap[child]
        i = child
    if size > 0:
        heap[i] = last
    return top


@njit(cache=True, inline="always", _nrt=False)
def keep_largest(bound: np.ndarray, c: int, first: int, value: int) -> None:
    """``value`` into the TOP largest values kept in ``bound[c, first:first + TOP]`` (largest first)."""
    last = first + TOP - 1
    if value <= bound[c, last]:
        return
    t = last
    while t > first and bound[c, t - 1] < value:
        bound[c, t] = bound[c, t - 1]
        t -= 1
    bound[c, t] = value


@njit(cache=True, inline="always", _nrt=False)
def refresh_bound(c: int, cluster: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray,
                  bound: np.ndarray) -> None:
    """Row c of ``bound`` (see :func:`place`) from the nodes' state now."""
    off, count, whole = cluster[c, 0], cluster[c, 1], cluster[c, 2]
    most_gpus = entire = 0
    for t in range(TOP_CORES, TOP_MEM + TOP):
        bound[c, t] = -1
    for i in range(off, off + count):
        most_gpus = max(most_gpus, f_gpus[i])
        if f_cores[i] == whole:
            entire += 1
        keep_largest(bound, c, TOP_CORES, f_cores[i])
        keep_largest(bound, c, TOP_MEM, f_mem[i])
    bound[c, 0], bound[c, 1], bound[c, 2], bound[c, 3], bound[c, 4] = \
        1, bound[c, TOP_CORES], bound[c, TOP_MEM], most_gpus, entire


@njit(cache=True, inline="always", _nrt=False)
def place(cls: int, only: int, among: int, avoid: bool, reserved: np.ndarray, cl: np.ndarray,
          cc_start: np.ndarray, cc_list: np.ndarray, cluster: np.ndarray, cluster_free: np.ndarray,
          f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray, pick: np.ndarray, take: np.ndarray,
          found: np.ndarray, bound: np.ndarray) -> int:
    """NodeAllocator._place (no windows): the cluster chosen (nodes in pick/take, their count in found[0]) or -1.
    ``bound[c]``: (valid?, largest free cores, RAM, GPUs on one node, entirely free nodes, then the TOP
    largest free cores on one node, largest first, then the TOP largest free RAM) of cluster c, upper
    bounds while valid (allocations only lower them; the allocator marks a cluster's row invalid when a
    job ends there, the walk when it gives back what it took): a request for k nodes needs the k-th
    largest free cores and RAM (the TOP-th for more) to be enough (k distinct nodes must each meet it)."""
    cores = cl[cls, 6]
    nodes = cl[cls, 0]
    first, last = (cc_start[cls], cc_start[cls + 1]) if only < 0 else (0, 1)
    for i in range(first, last):
        c = cc_list[i] if only < 0 else only
        if cluster_free[c] < cores or not (among >> c) & 1:
            continue
        if nodes:
            if not bound[c, 0]:
                refresh_bound(c, cluster, f_cores, f_mem, f_gpus, bound)
            # the nodes-th largest free cores and RAM (exclusive requests, which select whole nodes
            # whatever their RAM, keep the largest, as NodeAllocator._place does)
            j = 0 if cl[cls, 5] else (nodes if nodes < TOP else TOP) - 1
            if cl[cls, 1] > bound[c, TOP_CORES + j] or (cluster[c, 3] > 0 and cl[cls, 3] > bound[c, TOP_MEM + j]) \
                    or cl[cls, 4] > bound[c, 3] or (cl[cls, 5] and nodes > bound[c, 4]):
                continue
        k = select(cls, cluster_free[c], cluster[c, 0], cluster[c, 1], cluster[c, 2], cluster[c, 3], avoid, reserved,
                   cl, f_cores, f_mem, f_gpus, pick, take)
        if k >= 0:
            found[0] = k
            return c
    return -1


@njit(cache=True, inline="always", _nrt=False)
def released_may_fit(cls: int, c: int, first: int, k: int, cl: np.ndarray, cluster: np.ndarray,
                     cluster_free: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray,
                     store_pick: np.ndarray) -> bool:
    """Whether class ``cls``, which did not fit on cluster c before a release there of the nodes
    ``store_pick[first:first + k]`` (k < 0: unknown), may fit on c now: one of those nodes must now
    meet its per-node request (whole and free if exclusive), as the other nodes of c have only lost
    resources since, and fewer than the nodes it asks for met it then; a request for cores anywhere
    needs enough free cores on c."""
    nodes = cl[cls, 0]
    if nodes == 0:
        return cluster_free[c] >= cl[cls, 2]
    if k < 0:
        return True
    off, whole = cluster[c, 0], cluster[c, 2]
    ppn, gpus = cl[cls, 1], cl[cls, 4]
    mem = cl[cls, 3] if cluster[c, 3] > 0 else 0
    exclusive = cl[cls, 5] != 0
    for e in range(first, first + k):
        if good(off + store_pick[e], exclusive, whole, ppn, mem, gpus, f_cores, f_mem, f_gpus):
            return True
    return False


@njit(cache=True, inline="always", _nrt=False)
def fit_now(cls: int, st: np.ndarray, unfit_at: np.ndarray, waiting: np.ndarray, log: np.ndarray,
            cl: np.ndarray, cc_start: np.ndarray, cc_list: np.ndarray, cluster: np.ndarray,
            cluster_free: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray,
            pick: np.ndarray, take: np.ndarray, found: np.ndarray, reserved: np.ndarray, bound: np.ndarray,
            store_pick: np.ndarray) -> int:
    """NodeAllocator._fit_now (no windows): the cluster (placement in pick/take) or -1, the class then
    remembered as not fitting (and its waiting jobs counted as such). Of the clusters released to
    since the class last did not fit, only those where a released node now meets its request
    (:func:`released_may_fit`) are tried: the same answer, as placement takes the first cluster in the
    class's order that fits and the others cannot."""
    count = st[COUNT]
    since = unfit_at[cls]
    if since == count:
        return -1
    changed = -1
    if 0 <= since and count - since <= RECHECK:
        changed = 0
        mask = cl[cls, 7]
        for i in range(since, count):
            c = log[i, 0]
            if (mask >> c) & 1 and not (changed >> c) & 1 and \
                    released_may_fit(cls, c, log[i, 1], log[i, 2], cl, cluster, cluster_free, f_cores, f_mem,
                                     f_gpus, store_pick):
                changed |= 1 << c
        if changed == 0:
            unfit_at[cls] = count
            st[DEAD] += waiting[cls]
            return -1
    only = -1
    if changed > 0 and (changed & (changed - 1)) == 0:
        only = 0
        while not (changed >> only) & 1:
            only += 1
    c = place(cls, only, changed, False, reserved, cl, cc_start, cc_list, cluster, cluster_free,
              f_cores, f_mem, f_gpus, pick, take, found, bound)
    if c < 0:
        unfit_at[cls] = count
        st[DEAD] += waiting[cls]
    return c


@njit(cache=True, inline="always", _nrt=False)
def test_class(cls: int, st: np.ndarray, flags: np.ndarray, live: np.ndarray, unfit_at: np.ndarray,
               waiting: np.ndarray, log: np.ndarray, cl: np.ndarray, cc_start: np.ndarray, cc_list: np.ndarray,
               cluster: np.ndarray, cluster_free: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray,
               f_gpus: np.ndarray, pick: np.ndarray, take: np.ndarray, found: np.ndarray, reserved: np.ndarray,
               bound: np.ndarray, store_pick: np.ndarray) -> None:
    """:func:`fit_now` for a waiting class not yet known not to fit at this release count (once per
    scan); a class that fits is kept in ``live`` (tested again at the next scan of this count). A class
    that fitted when last tested and has not been found not to fit for more than RECHECK releases (its
    jobs wait for queue limits, say) is left for the walk to test (it would be tested on every cluster)."""
    count = st[COUNT]
    since = unfit_at[cls]
    if waiting[cls] == 0 or since == count or flags[cls, SEEN] == st[PASS]:
        return
    flags[cls, SEEN] = st[PASS]
    if not (flags[cls, FITTED] and (since < 0 or count - since > RECHECK)):
        if fit_now(cls, st, unfit_at, waiting, log, cl, cc_start, cc_list, cluster, cluster_free, f_cores, f_mem,
                   f_gpus, pick, take, found, reserved, bound, store_pick) < 0:
            flags[cls, FITTED] = 0
            return
        flags[cls, FITTED] = 1
    live[st[LIVE]] = cls
    st[LIVE] += 1


@njit(cache=True, inline="always", _nrt=False)
def scan(st: np.ndarray, lists: np.ndarray, flags: np.ndarray, unfit_at: np.ndarray, waiting: np.ndarray,
         log: np.ndarray, cl: np.ndarray, cc_start: np.ndarray, cc_list: np.ndarray, cluster: np.ndarray,
         cluster_free: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray, pick: np.ndarray,
         take: np.ndarray, found: np.ndarray, reserved: np.ndarray, bound: np.ndarray,
         store_pick: np.ndarray) -> None:
    """Exact mode, at the start of a pass: every waiting class not known not to fit is tested now
    (:func:`fit_now`), class by class, so that the walk's count of jobs that may fit (AHEAD) is exact
    and the walk stops right after the last of them, instead of finding each class dead at its first
    job. The same schedule: allocations only take resources, so a class that does not fit at the
    start of a pass would not fit when the walk reaches it either (what fit_now remembers is a fact,
    whenever it is learnt). After a release, every listed class (``lists[0]``: classes that have had
    waiting jobs; those without any leave it here); else the classes of jobs submitted since
    (``lists[1]``, flagged PENDING) and those that fitted at the last scan (``lists[2]``)."""
    st[SCANNED] = st[PASS]
    count = st[COUNT]
    classes, pending, live = lists[0], lists[1], lists[2]
    previous = st[LIVE]
    st[LIVE] = 0
    if st[SCAN_AT] != count:
        st[SCAN_AT] = count
        for i in range(st[PENDING]):
            flags[pending[i], PENDING_FLAG] = 0
        n = st[LISTED]
        i = 0
        while i < n:
            cls = classes[i]
            if waiting[cls] == 0:
                n -= 1
                classes[i] = classes[n]
                flags[cls, LISTED_FLAG] = 0
                continue
            test_class(cls, st, flags, live, unfit_at, waiting, log, cl, cc_start, cc_list, cluster, cluster_free,
                       f_cores, f_mem, f_gpus, pick, take, found, reserved, bound, store_pick)
            i += 1
        st[LISTED] = n
    else:
        more = st[PENDING]
        for i in range(previous):
            pending[more + i] = live[i]
        for i in range(more + previous):
            cls = pending[i]
            if i < more:
                flags[cls, PENDING_FLAG] = 0
            test_class(cls, st, flags, live, unfit_at, waiting, log, cl, cc_start, cc_list, cluster, cluster_free,
                       f_cores, f_mem, f_gpus, pick, take, found, reserved, bound, store_pick)
    st[PENDING] = 0
    st[AHEAD] = st[TOTAL] - st[DEAD]


@njit(cache=True, inline="always", _nrt=False)
def limits_ok(job: int, extra_queue: int, extra_jobs: int, extra_cores: int, job_cores: np.ndarray,
              job_queue: np.ndarray, job_pair: np.ndarray, queue_room: np.ndarray, pair_jobs: np.ndarray,
              pair_cores: np.ndarray) -> bool:
    cores = job_cores[job]
    pair = job_pair[job]
    return (cores + extra_queue <= queue_room[job_queue[job]] and pair_jobs[pair] >= 1 + extra_jobs
            and cores + extra_cores <= pair_cores[pair])


@njit(cache=True, inline="always", _nrt=False)
def apply(job: int, cls: int, c: int, k: int, sign: int, pick: np.ndarray, take: np.ndarray, cl: np.ndarray,
          cluster: np.ndarray, cluster_free: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray,
          f_gpus: np.ndarray, limited: bool, job_cores: np.ndarray, job_queue: np.ndarray,
          job_pair: np.ndarray, queue_room: np.ndarray, pair_jobs: np.ndarray, pair_cores: np.ndarray) -> int:
    """Take (sign -1) or give back (+1) what NodeAllocator.allocate takes for ``job``: the cores held."""
    off = cluster[c, 0]
    if cl[cls, 0] == 0:     # cores anywhere: memory and GPUs not held on nodes (engine.sim.nodes)
        mem, gpus = 0, 0
    elif cl[cls, 5]:
        mem, gpus = cluster[c, 3], cluster[c, 4]
    else:
        mem, gpus = cl[cls, 3], cl[cls, 4]
    held = 0
    for i in range(k):
        node = off + pick[i]
        f_cores[node] += sign * take[i]
        f_mem[node] += sign * mem
        f_gpus[node] += sign * gpus
        held += take[i]
    cluster_free[c] += sign * held
    if limited:
        cores = job_cores[job]
        pair = job_pair[job]
        queue_room[job_queue[job]] += sign * cores
        pair_jobs[pair] += sign
        pair_cores[pair] += sign * cores
    return held


@njit(cache=True, _nrt=False)
def walk(st: np.ndarray, heap: np.ndarray, order: np.ndarray, nxt: np.ndarray,
         gfirst: np.ndarray, class_of: np.ndarray, size: np.ndarray, base_estimate: np.ndarray,
         job_cores: np.ndarray, job_queue: np.ndarray, job_pair: np.ndarray, queue_room: np.ndarray,
         pair_jobs: np.ndarray, pair_cores: np.ndarray, cl: np.ndarray, cc_start: np.ndarray,
         cc_list: np.ndarray, cluster: np.ndarray, factor: np.ndarray, cluster_free: np.ndarray,
         f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray, log: np.ndarray, unfit_at: np.ndarray,
         reserved: np.ndarray, waiting: np.ndarray, rem: np.ndarray, rem_pass: np.ndarray,
         out: np.ndarray, out_pick: np.ndarray, out_take: np.ndarray, pick: np.ndarray, take: np.ndarray,
         largest: np.ndarray, lists: np.ndarray, flags: np.ndarray, store_pick: np.ndarray,
         found: np.ndarray, stamp: np.ndarray) -> int:
    """NodeEasy's pass from where the last call of this pass stopped (see the module docstring). Jobs
    started: ``out[i] = (job, cluster, head?, first node entry, node count)``, nodes in out_pick/out_take.
    ``order[:st[GROUPS]]``: the groups in the queue's order. A blocked head whose reservation the
    allocator has cached, still valid (``stamp``: NodeMirror.stamp, each cluster's releases and unplanned
    starts, as NodeAllocator._stamp), takes it here (REUSED: Python tells the watch) instead of asking."""
    count, now, free, groups = st[COUNT], st[NOW], st[FREE], st[GROUPS]
    limited, counting, bound = st[LIMITED] != 0, st[COUNTING] != 0, st[BOUND]
    starts = 0
    used = 0
    result = DONE
    biggest = pick.shape[0]
    if counting and st[SCANNED] != st[PASS]:
        scan(st, lists, flags, unfit_at, waiting, log, cl, cc_start, cc_list, cluster, cluster_free, f_cores, f_mem,
             f_gpus, pick, take, found, reserved, largest, store_pick)
    while True:
        if st[HSIZE] == 0:
            pos = st[POS]
            if pos >= groups:
                break
            end = pos
            while end < groups and order[end, 0] == order[pos, 0] and order[end, 1] == order[pos, 1]:
                first = gfirst[np.int64(order[end, 2])]
                if first >= 0:
                    heap_push(heap, st, first)
                end += 1
            st[POS] = end
            continue
        if starts == out.shape[0] or used + biggest > out_pick.shape[0]:
            result = FULL
            break
        job = heap_pop(heap, st)
        after = nxt[job]
        if after >= 0:
            heap_push(heap, st, after)
        if free == 0:
            break
        cls = class_of[job]
        has_res = st[HAS_RES] != 0
        live = False
        if counting:
            if has_res and st[AHEAD] == 0:
                break
            if unfit_at[cls] != count:
                if rem_pass[cls] != st[PASS]:
                    rem_pass[cls] = st[PASS]
                    rem[cls] = waiting[cls]
                rem[cls] -= 1
                st[AHEAD] -= 1
                live = True
        if has_res:
            if st[TESTED] == bound:
                break
            st[TESTED] += 1
            if size[job] > free or unfit_at[cls] == count:
                continue
        if limited and not limits_ok(job, 0, 0, 0, job_cores, job_queue, job_pair, queue_room, pair_jobs,
                                     pair_cores):
            continue
        c = fit_now(cls, st, unfit_at, waiting, log, cl, cc_start, cc_list, cluster, cluster_free, f_cores,
                    f_mem, f_gpus, pick, take, found, reserved, largest, store_pick)
        start = False
        if not has_res:
            if c >= 0:
                start = True
            else:
                st[HEAD_JOB] = job
                cached = st[CACHE_CLUSTER]
                if st[CACHE_JOB] == job and stamp[cached, 0] == st[CACHE_RELEASES] \
                        and stamp[cached, 1] == st[CACHE_UNPLANNED]:
                    # NodeAllocator.head_reservation would return its cached reservation (the one marked)
                    st[HAS_RES], st[RES_JOB], st[RES_SHADOW], st[RES_CLUSTER] = 1, job, st[CACHE_SHADOW], cached
                    st[REUSED] = 1
                else:
                    result = NEED_RESERVATION
        elif c >= 0:
            start = True
            f = factor[c]
            estimate = base_estimate[job] if f == 1.0 else np.int64(np.ceil(base_estimate[job] * f))
            if now + estimate > st[RES_SHADOW]:
                head = st[RES_JOB]
                if limited:
                    cores = job_cores[job]
                    same_queue = job_queue[job] == job_queue[head]
                    same_pair = job_pair[job] == job_pair[head]
                    start = limits_ok(job, 0, 0, 0, job_cores, job_queue, job_pair, queue_room, pair_jobs,
                                      pair_cores) and \
                        limits_ok(head, cores if same_queue else 0, 1 if same_pair else 0,
                                  cores if same_pair else 0, job_cores, job_queue, job_pair, queue_room,
                                  pair_jobs, pair_cores)
                if start and c == st[RES_CLUSTER]:
                    off = cluster[c, 0]
                    overlap = False
                    for i in range(found[0]):
                        if reserved[off + pick[i]]:
                            overlap = True
                    if overlap:
                        c = place(cls, -1, -1, True, reserved, cl, cc_start, cc_list, cluster, cluster_free,
                                  f_cores, f_mem, f_gpus, pick, take, found, largest)
                        start = c >= 0
        if start:
            k = found[0]
            out[starts, 0] = job
            out[starts, 1] = c
            out[starts, 2] = 0 if has_res else 1
            if not has_res:
                stamp[c, 1] += 1                # an unplanned start (as allocate counts it), until given back
            out[starts, 3] = used
            out[starts, 4] = k
            for i in range(k):
                out_pick[used + i] = pick[i]
                out_take[used + i] = take[i]
            used += k
            starts += 1
            free -= apply(job, cls, c, k, -1, pick, take, cl, cluster, cluster_free, f_cores, f_mem, f_gpus,
                          limited, job_cores, job_queue, job_pair, queue_room, pair_jobs, pair_cores)
            waiting[cls] -= 1
            st[TOTAL] -= 1
            continue
        if counting and live and unfit_at[cls] == count:
            st[AHEAD] -= rem[cls]
        if result == NEED_RESERVATION:
            break
    for s in range(starts - 1, -1, -1):         # Python starts them (allocate updates every mirror)
        job, c, first, k = out[s, 0], out[s, 1], out[s, 3], out[s, 4]
        for i in range(k):
            pick[i] = out_pick[first + i]
            take[i] = out_take[first + i]
        apply(job, class_of[job], c, k, 1, pick, take, cl, cluster, cluster_free, f_cores, f_mem, f_gpus,
              limited, job_cores, job_queue, job_pair, queue_room, pair_jobs, pair_cores)
        largest[c, 0] = 0                       # its nodes have more free than while the bound was taken
        if out[s, 2]:
            stamp[c, 1] -= 1
    st[STARTS] = starts
    return result
