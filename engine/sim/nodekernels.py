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
