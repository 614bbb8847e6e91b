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
"""

from __future__ import annotations

import numpy as np

from engine.sim.jit import njit
from engine.sim.nodekernels import select

# the walk's state (an int64 array kept between the calls of one pass)
FREE, COUNT, NOW, POS, HSIZE, HAS_RES, RES_JOB, RES_SHADOW, RES_CLUSTER, TESTED, BOUND, COUNTING, LIMITED, \
    AHEAD, TOTAL, DEAD, DEAD_AT, PASS, STARTS, NODES_OUT, HEAD_JOB = range(21)
STATE_SIZE = 21
# what a call ends with
DONE, NEED_RESERVATION, FULL = 0, 1, 2
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
def place(cls: int, only: int, among: int, avoid: bool, reserved: np.ndarray, cl: np.ndarray,
          cc_start: np.ndarray, cc_list: np.ndarray, cluster: np.ndarray, cluster_free: np.ndarray,
          f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray, pick: np.ndarray, take: np.ndarray,
          found: np.ndarray, bound: np.ndarray) -> int:
    """NodeAllocator._place (no windows): the cluster chosen (nodes in pick/take, their count in found[0]) or -1.
    ``bound[c]``: (valid?, largest free cores, RAM, GPUs on one node, entirely free nodes) of cluster c,
    upper bounds while valid (allocations only lower them; the allocator marks a cluster's row invalid
    when a job ends there, the walk when it gives back what it took)."""
    cores = cl[cls, 6]
    nodes = cl[cls, 0]
    first, last = (cc_start[cls], cc_start[cls + 1]) if only < 0 else (0, 1)
    for i in range(first, last):
        c = cc_list[i] if only < 0 else only
        if cluster_free[c] < cores or not (among >> c) & 1:
            continue
        if nodes:
            if not bound[c, 0]:
                off, count, whole = cluster[c, 0], cluster[c, 1], cluster[c, 2]
                most_cores = most_mem = most_gpus = entire = 0
                for i in range(off, off + count):
                    most_cores = max(most_cores, f_cores[i])
                    most_mem = max(most_mem, f_mem[i])
                    most_gpus = max(most_gpus, f_gpus[i])
                    if f_cores[i] == whole:
                        entire += 1
                bound[c, 0], bound[c, 1], bound[c, 2], bound[c, 3], bound[c, 4] = \
                    1, most_cores, most_mem, most_gpus, entire
            if cl[cls, 1] > bound[c, 1] or (cluster[c, 3] > 0 and cl[cls, 3] > bound[c, 2]) \
                    or cl[cls, 4] > bound[c, 3] or (cl[cls, 5] and nodes > bound[c, 4]):
                continue
        k = select(cls, cluster_free[c], cluster[c, 0], cluster[c, 1], cluster[c, 2], cluster[c, 3], avoid, reserved,
                   cl, f_cores, f_mem, f_gpus, pick, take)
        if k >= 0:
            found[0] = k
            return c
    return -1


@njit(cache=True, inline="always", _nrt=False)
def fit_now(cls: int, st: np.ndarray, unfit_at: np.ndarray, waiting: np.ndarray, log: np.ndarray,
            cl: np.ndarray, cc_start: np.ndarray, cc_list: np.ndarray, cluster: np.ndarray,
            cluster_free: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray,
            pick: np.ndarray, take: np.ndarray, found: np.ndarray, reserved: np.ndarray, bound: np.ndarray) -> int:
    """NodeAllocator._fit_now (no windows): the cluster (placement in pick/take) or -1, the class then
    remembered as not fitting (and its waiting jobs counted as such)."""
    count = st[COUNT]
    since = unfit_at[cls]
    if since == count:
        return -1
    changed = -1
    if 0 <= since and count - since <= RECHECK:
        changed = 0
        for i in range(since, count):
            changed |= 1 << log[i]
        changed &= cl[cls, 7]
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
    if cl[cls, 5]:
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
         largest: np.ndarray, found: np.ndarray) -> int:
    """NodeEasy's pass from where the last call of this pass stopped (see the module docstring). Jobs
    started: ``out[i] = (job, cluster, head?, first node entry, node count)``, nodes in out_pick/out_take."""
    count, now, free = st[COUNT], st[NOW], st[FREE]
    limited, counting, bound = st[LIMITED] != 0, st[COUNTING] != 0, st[BOUND]
    starts = 0
    used = 0
    result = DONE
    biggest = pick.shape[0]
    while True:
        if st[HSIZE] == 0:
            pos = st[POS]
            if pos >= order.shape[0]:
                break
            end = pos
            while end < order.shape[0] and order[end, 0] == order[pos, 0] and order[end, 1] == order[pos, 1]:
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
                    f_mem, f_gpus, pick, take, found, reserved, largest)
        start = False
        if not has_res:
            if c >= 0:
                start = True
            else:
                st[HEAD_JOB] = job
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
    st[STARTS] = starts
    return result
