"""Which waiting job, in queue order, is the first that can start now? An index for backfilling.

EASY's backfill pass walks the waiting queue behind the blocked head and starts each job that
fits the free processors and either ends by the shadow time or fits the extra processors. With a
long queue most jobs fail that test at every event; walking them all made long queues quadratic.
:class:`FitIndex` answers "the first job at queue position >= p with size <= free and (estimate
<= span or size <= extra)" without visiting the others: a segment tree over queue positions
keeps, for every range, the smallest size and the smallest estimate of its waiting jobs, and
ranges that cannot hold such a job are skipped whole.

It needs a queue order fixed when a job arrives (a rank per job: submit order, shortest or
largest first), which is what plain :class:`engine.policies.ordering.WaitingQueue` orders are.
"""

from __future__ import annotations

import numpy as np

from engine.sim.jit import njit

ABSENT = 2 ** 62   # size and estimate of a position with no waiting job



def empty_queue_tree(rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]:
    """The waiting queue's tree with no job in it: ranks, the job at each rank, the number of leaves
    (a power of two), and per node the least size and least estimate below it (ABSENT: none)."""
    n = len(rank)
    ranks = np.asarray(rank, dtype=np.int64)
    job_at = np.empty(max(n, 1), dtype=np.int64)
    job_at[ranks] = np.arange(n)
    leaves = 1 << max(n - 1, 0).bit_length()
    return (ranks, job_at, leaves, np.full(2 * leaves, ABSENT, dtype=np.int64),
            np.full(2 * leaves, ABSENT, dtype=np.int64))

class FitIndex:
    """Waiting jobs at their queue positions (``rank[job]``), with range minima of size and estimate."""

    def __init__(self, rank: np.ndarray, size: list[int], estimate: list[int]) -> None:
        self.rank, self.job_at, self.leaves, self.min_size, self.min_estimate = empty_queue_tree(rank)
        self.size, self.estimate = size, estimate

    def add(self, job: int) -> None:
        set_leaf(self.min_size, self.min_estimate, self.leaves, self.rank[job], self.size[job], self.estimate[job])

    def remove(self, job: int) -> None:
        set_leaf(self.min_size, self.min_estimate, self.leaves, self.rank[job], ABSENT, ABSENT)

    def first_fit(self, position: int, free: int, extra: int, span: int) -> int:
        """The first waiting job at a queue position >= ``position`` with size <= ``free`` and
        (estimate <= ``span`` or size <= ``extra``); -1 if there is none."""
        found = first_fit(self.min_size, self.min_estimate, self.leaves, position, free, extra, span)
        return -1 if found < 0 else int(self.job_at[found])


@njit(cache=True)
def set_leaf(min_size, min_estimate, leaves, position, size, estimate):
    i = position + leaves
    min_size[i] = size
    min_estimate[i] = estimate
    i >>= 1
    while i >= 1:
        min_size[i] = min(min_size[2 * i], min_size[2 * i + 1])
        min_estimate[i] = min(min_estimate[2 * i], min_estimate[2 * i + 1])
        i >>= 1


@njit(cache=True)
def first_fit(min_size, min_estimate, leaves, position, free, extra, span):
    """Leftmost leaf >= position passing the test (see FitIndex.first_fit); a node is entered only
    if its minima could pass it (for a leaf the test is exact). -1 if none."""
    if position >= leaves:
        return -1
    i = position + leaves
    while True:
        size = min_size[i]
        if size <= free and (min_estimate[i] <= span or size <= extra):
            if i >= leaves:
                return i - leaves
            i = 2 * i                 # descend: the left child first
            continue
        while i & 1:                  # the next range to the right: climb while a right child
            i >>= 1
        if i == 0:
            return -1
        i += 1


class RunningByEnd:
    """Running jobs sorted by (expected end, job) with their sizes, in arrays: EASY's shadow time
    is one compiled walk instead of a Python loop over thousands of running jobs at every event.
    Mirrors ``Simulation.running_ends`` (the caller adds each start and removes each end)."""

    def __init__(self, capacity: int) -> None:
        room = min(max(capacity, 1), 1 << 12) + 1     # grows in add(): a 2^40-processor pool needs no 8 TiB up front
        self.end = np.empty(room, dtype=np.int64)
        self.job = np.empty(room, dtype=np.int64)
        self.size = np.empty(room, dtype=np.int64)
        self.length = 0

    def add(self, end: int, job: int, size: int) -> None:
        if self.length == len(self.end):
            for name in ("end", "job", "size"):
                setattr(self, name, np.resize(getattr(self, name), 2 * self.length))
        self.length = insert_running(self.end, self.job, self.size, self.length, end, job, size)

    def remove(self, end: int, job: int) -> None:
        self.length = remove_running(self.end, self.job, self.size, self.length, end, job)

    def shadow(self, need: int, free: int, now: int) -> tuple[int, int]:
        """Easy.shadow over these arrays (the same walk, compiled)."""
        shadow, extra = shadow_time(self.end, self.size, self.length, need, free, now)
        return int(shadow), int(extra)


@njit(cache=True)
def _position(end, job, length, e, j):
    """Index of the first entry >= (e, j)."""
    lo, hi = 0, length
    while lo < hi:
        mid = (lo + hi) // 2
        if end[mid] < e or end[mid] == e and job[mid] < j:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def insert_running(end, job, size, length, e, j, s):
    i = _position(end, job, length, e, j)
    for k in range(length, i, -1):
        end[k], job[k], size[k] = end[k - 1], job[k - 1], size[k - 1]
    end[i], job[i], size[i] = e, j, s
    return length + 1


@njit(cache=True)
def remove_running(end, job, size, length, e, j):
    i = _position(end, job, length, e, j)
    for k in range(i, length - 1):
        end[k], job[k], size[k] = end[k + 1], job[k + 1], size[k + 1]
    return length - 1


@njit(cache=True)
def shadow_time(end, size, length, need, free, now):
    available, shadow = free, -1
    for k in range(length):
        if shadow >= 0 and end[k] > shadow:
            break
        available += size[k]
        if shadow < 0 and available >= need:
            shadow = max(end[k], now + 1)
    if shadow < 0:
        return now + 1, 0
    return shadow, available - need
