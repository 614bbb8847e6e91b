"""Compiled node placement (issue 14): first-fit node selection and the earliest start of a blocked
head on one cluster, over the flat node state of :class:`engine.sim.nodes.NodeMirror`. Each repeats
the Python function it names (engine.sim.nodes.select_nodes, NodeAllocator._earliest_on) decision by
decision; the Python ones stay the reference (tests/engine/policies/test_node_walk.py compares them).
A request class is a row of ``NodeMirror.classes``: (nodes, ppn, procs, mem, gpus, exclusive, cores, mask).
"""

from __future__ import annotations

import numpy as np

from engine.sim.jit import njit


@njit(cache=True, inline="always", _nrt=False)
def select(cls: int, cfree: int, off: int, count: int, whole: int, ram: int, avoid: bool, reserved: np.ndarray,
           cl: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray, pick: np.ndarray,
           take: np.ndarray) -> int:
    """engine.sim.nodes.select_nodes for request class ``cls`` (row of ``cl``) on one cluster of ``count``
    nodes of ``whole`` cores and ``ram`` KB, whose state is ``f_*[off:off + count]`` with ``cfree`` cores
    free in all (``avoid``: not the nodes marked in ``reserved``): how many nodes were picked (in
    ``pick``/``take``), or -1."""
    nodes = cl[cls, 0]
    k = 0
    if nodes == 0:
        need = cl[cls, 2]
        if cfree < need:
            return -1
        for i in range(count):
            free = f_cores[off + i]
            if free != 0 and not (avoid and reserved[off + i]):
                got = free if free < need else need
                pick[k] = i
                take[k] = got
                k += 1
                need -= got
                if need == 0:
                    return k
        return -1
    if cl[cls, 5]:
        if cfree < nodes * whole:
            return -1
        for i in range(count):
            if f_cores[off + i] == whole and not (avoid and reserved[off + i]):
                pick[k] = i
                take[k] = whole
                k += 1
                if k == nodes:
                    return k
        return -1
    ppn = cl[cls, 1]
    if cfree < nodes * ppn:
        return -1
    mem = cl[cls, 3] if ram > 0 else 0
    gpus = cl[cls, 4]
    for i in range(count):
        if f_cores[off + i] >= ppn and (mem == 0 or f_mem[off + i] >= mem) \
                and (gpus == 0 or f_gpus[off + i] >= gpus) and not (avoid and reserved[off + i]):
            pick[k] = i
            take[k] = ppn
            k += 1
            if k == nodes:
                return k
    return -1


@njit(cache=True, inline="always", _nrt=False)
def good(i: int, exclusive: bool, whole: int, ppn: int, mem: int, gpus: int, w_cores: np.ndarray,
         w_mem: np.ndarray, w_gpus: np.ndarray) -> bool:
    if exclusive:
        return w_cores[i] == whole
    return w_cores[i] >= ppn and (mem == 0 or w_mem[i] >= mem) and (gpus == 0 or w_gpus[i] >= gpus)


@njit(cache=True, _nrt=False)
def earliest_on(cls: int, cfree: int, off: int, count: int, whole: int, ram: int, now: int, before: int,
                duration: int, avail_from: int, avail_to: int, cl: np.ndarray, f_cores: np.ndarray,
                f_mem: np.ndarray, f_gpus: np.ndarray, run_keys: np.ndarray, base: int,
                job_first: np.ndarray, job_k: np.ndarray, job_mem: np.ndarray, job_gpus: np.ndarray,
                job_held: np.ndarray, store_pick: np.ndarray, store_take: np.ndarray, w_cores: np.ndarray,
                w_mem: np.ndarray, w_gpus: np.ndarray, was: np.ndarray, pick: np.ndarray, take: np.ndarray,
                found: np.ndarray) -> int:
    """NodeAllocator._earliest_on on one cluster: the earliest start (< before; nodes in pick, their count
    in found[0]) as the running jobs (run_keys: expected end * base + job, sorted) end, or -1."""
    total = cfree
    wanted, ppn, gpus, exclusive = cl[cls, 0], cl[cls, 1], cl[cls, 4], cl[cls, 5] != 0
    start = max(now, avail_from)
    if start >= before:
        return -1
    need = wanted * (whole if exclusive else ppn) if wanted else cl[cls, 2]
    running = run_keys.shape[0]
    if total < need:
        enough = total
        enough_found = False
        for r in range(running):
            enough += job_held[run_keys[r] % base]
            if enough >= need:
                if run_keys[r] // base >= before:
                    return -1
                enough_found = True
                break
        if not enough_found:
            return -1
    for i in range(count):
        w_cores[i] = f_cores[off + i]
        w_mem[i] = f_mem[off + i]
        w_gpus[i] = f_gpus[off + i]
    mem = cl[cls, 3] if ram > 0 else 0
    fitting = 0
    if wanted:
        for i in range(count):
            if good(i, exclusive, whole, ppn, mem, gpus, w_cores, w_mem, w_gpus):
                fitting += 1
    i = 0
    overdue = False
    while True:
        while i < running and run_keys[i] // base <= start:
            overdue = overdue or run_keys[i] // base < now
            other = run_keys[i] % base
            first, k = job_first[other], job_k[other]
            if wanted:
                for e in range(k):
                    was[e] = good(store_pick[first + e], exclusive, whole, ppn, mem, gpus, w_cores, w_mem, w_gpus)
            for e in range(k):
                node = store_pick[first + e]
                w_cores[node] += store_take[first + e]
                w_mem[node] += job_mem[other]
                w_gpus[node] += job_gpus[other]
            total += job_held[other]
            if wanted:
                for e in range(k):
                    if not was[e] and good(store_pick[first + e], exclusive, whole, ppn, mem, gpus, w_cores, w_mem,
                                           w_gpus):
                        fitting += 1
            i += 1
        if start >= before or start + duration > avail_to:
            return -1
        if (fitting >= wanted) if wanted else (total >= cl[cls, 2]):
            k = select(cls, total, 0, count, whole, ram, False, was, cl, w_cores, w_mem, w_gpus, pick, take)
            if k >= 0:
                found[0] = k
                late = start == now and (overdue or i == 0)
                return now + 1 if late else start
        if i == running:
            return -1
        start = run_keys[i] // base


@njit(cache=True, inline="always", _nrt=False)
def first_not_below(keys: np.ndarray, row: int, count: int, key: int) -> int:
    """The first position in ``keys[row, :count]`` (sorted) whose key is not below ``key`` (numpy's
    searchsorted, side left)."""
    low, high = 0, count
    while low < high:
        middle = (low + high) >> 1
        if keys[row, middle] < key:
            low = middle + 1
        else:
            high = middle
    return low


@njit(cache=True, _nrt=False)
def mirror_start(job: int, c: int, k: int, pick: np.ndarray, take: np.ndarray, mem: int, gpus: int, held: int,
                 at: int, key: int, unplanned: bool, limited: bool, queue: int, pair: int, cores: int,
                 cluster: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray,
                 cluster_free: np.ndarray, store_pick: np.ndarray, store_take: np.ndarray, job_first: np.ndarray,
                 job_k: np.ndarray, job_mem: np.ndarray, job_gpus: np.ndarray, job_held: np.ndarray,
                 run_keys: np.ndarray, run_count: np.ndarray, stamp: np.ndarray, queue_room: np.ndarray,
                 pair_jobs: np.ndarray, pair_cores: np.ndarray) -> None:
    """What NodeAllocator.allocate changes in the mirror when ``job`` starts on cluster ``c`` (its
    ``k`` nodes and the cores taken on each in ``pick``/``take``; kept in the store from ``at``;
    ``key``: expected end * base + job, inserted in the cluster's sorted running keys, which have
    room for it): one call instead of a dozen numpy item writes and an array copy from Python."""
    off = cluster[c, 0]
    for i in range(k):
        node = off + pick[i]
        f_cores[node] -= take[i]
        f_mem[node] -= mem
        f_gpus[node] -= gpus
        store_pick[at + i] = pick[i]
        store_take[at + i] = take[i]
    cluster_free[c] -= held
    job_first[job], job_k[job], job_mem[job], job_gpus[job], job_held[job] = at, k, mem, gpus, held
    if unplanned:
        stamp[c, 1] += 1
    if limited:
        queue_room[queue] -= cores
        pair_jobs[pair] -= 1
        pair_cores[pair] -= cores
    count = run_count[c]
    i = first_not_below(run_keys, c, count, key)
    for j in range(count, i, -1):
        run_keys[c, j] = run_keys[c, j - 1]
    run_keys[c, i] = key
    run_count[c] = count + 1


@njit(cache=True, _nrt=False)
def mirror_end(job: int, c: int, released: int, key: int, limited: bool, queue: int, pair: int, cores: int,
               cluster: np.ndarray, f_cores: np.ndarray, f_mem: np.ndarray, f_gpus: np.ndarray,
               cluster_free: np.ndarray, store_pick: np.ndarray, store_take: np.ndarray, job_first: np.ndarray,
               job_k: np.ndarray, job_mem: np.ndarray, job_gpus: np.ndarray, job_held: np.ndarray,
               run_keys: np.ndarray, run_count: np.ndarray, stamp: np.ndarray, bound: np.ndarray, log: np.ndarray,
               queue_room: np.ndarray, pair_jobs: np.ndarray, pair_cores: np.ndarray) -> None:
    """What NodeAllocator.release changes in the mirror when ``job`` ends on cluster ``c`` (the
    ``released``-th release; ``key`` as in :func:`mirror_start`, present in the running keys)."""
    off, first, k = cluster[c, 0], job_first[job], job_k[job]
    mem, gpus = job_mem[job], job_gpus[job]
    for e in range(k):
        node = off + store_pick[first + e]
        f_cores[node] += store_take[first + e]
        f_mem[node] += mem
        f_gpus[node] += gpus
    cluster_free[c] += job_held[job]
    bound[c, 0] = 0
    log[released, 0], log[released, 1], log[released, 2] = c, first, k
    stamp[c, 0] += 1
    count = run_count[c] - 1
    i = first_not_below(run_keys, c, count + 1, key)
    for j in range(i, count):
        run_keys[c, j] = run_keys[c, j + 1]
    run_count[c] = count
    if limited:
        queue_room[queue] += cores
        pair_jobs[pair] += 1
        pair_cores[pair] += cores
