"""The first k jobs of a scheduling pass's order by a value per job, compiled: a state-dependent order
(engine.policies.ordering.ReorderedQueue with a vectorised key) is walked only as far as the pass goes.

The order is the total order of the pairs (value, job): smaller value first, NaN after every number
(NaN with NaN by job), equal values by job number (= arrival); -0.0 equals 0.0. It is the order of
``numpy.lexsort`` on (job, value with NaN last) (engine.policies.formula.order_of, the naive sort the
tests hold it to), but :func:`first_k` finds only its first k pairs: a heap of the k earliest kept
over one pass through the values (O(n log k), mostly O(n): a value later than the heap's latest is
passed over at one comparison), then that heap sorted. As the order is total, its first k pairs are
one set whatever ties there are, so a longer prefix asked for later begins with the shorter one.
Comparisons only: the values themselves are numpy's, computed before.
"""

from __future__ import annotations

import numpy as np

from engine.sim.jit import njit


@njit(cache=True, inline="always", _nrt=False)
def before(values: np.ndarray, jobs: np.ndarray, a: int, b: int) -> bool:
    """Whether entry ``a`` goes before entry ``b`` (value, then job; NaN last)."""
    x, y = values[a], values[b]
    if x != x:                  # NaN
        return y != y and jobs[a] < jobs[b]
    if y != y or x < y:
        return True
    return x == y and jobs[a] < jobs[b]


@njit(cache=True, inline="always", _nrt=False)
def sift_down(heap: np.ndarray, values: np.ndarray, jobs: np.ndarray, i: int, size: int) -> None:
    """Restore the heap (the latest entry at the top) below ``i``."""
    item = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and before(values, jobs, heap[child], heap[child + 1]):
            child += 1
        if not before(values, jobs, item, heap[child]):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = item


@njit(cache=True, _nrt=False)
def first_k(values: np.ndarray, jobs: np.ndarray, k: int, out: np.ndarray) -> int:
    """Write into ``out`` the jobs of the first min(k, n) pairs (values[i], jobs[i]) in order; return
    how many. ``out`` has room for them."""
    n = values.shape[0]
    m = min(k, n)
    if m <= 0:
        return 0
    for i in range(m):
        out[i] = i
    for i in range(m // 2 - 1, -1, -1):
        sift_down(out, values, jobs, i, m)
    for i in range(m, n):
        if before(values, jobs, i, out[0]):          # earlier than the heap's latest: it takes its place
            out[0] = i
            sift_down(out, values, jobs, 0, m)
    for end in range(m - 1, 0, -1):     # heapsort: the latest to the end, each in turn
        top = out[0]
        out[0] = out[end]
        out[end] = top
        sift_down(out, values, jobs, 0, end)
    for i in range(m):
        out[i] = jobs[out[i]]
    return m
