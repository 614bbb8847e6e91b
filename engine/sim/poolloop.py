"""The event loop of a pool of identical processors, compiled: in-order (FCFS) and EASY backfilling.

:meth:`engine.sim.simulator.Simulation.run` with :class:`engine.policies.backfill.InOrder` or
:class:`~engine.policies.backfill.Easy` over a queue order fixed at arrival and count allocation
spends nearly all its time in Python calls per job and per instant. :func:`run_pool` is that same
loop, the same policy and the same tie-breaking, as one numba kernel over arrays:

* instants: the soonest of the next completion and the next arrival; at an instant, every job due
  to end then ends (in the order they started), then every job arriving then joins the queue (in
  trace order), then the policy decides; a job started with runtime 0 ends at the same instant,
  which is then taken again;
* the waiting queue is the segment tree of :mod:`engine.sim.fitindex` over queue positions (a
  job's ``rank``), so the head is the leftmost waiting position and EASY's backfill asks it for
  the next job that can start;
* running jobs by (expected end, job) in sorted arrays (EASY's shadow time, as
  :class:`~engine.sim.fitindex.RunningByEnd`); completions in a binary heap by (end, start order).

The loop runs in chunks (until ``finished`` reaches ``report_at``) so that the caller can report
progress and ask whether to stop between them; all its state lives in the arrays of
:class:`PoolState`, so a chunk goes on where the last one stopped. The same schedule as the
Python path, job by job (tests/engine/sim/test_poolloop.py holds it to that path and to the
naive reference).
"""

from __future__ import annotations

import numpy as np

from engine.sim.fitindex import ABSENT, empty_queue_tree, first_fit, insert_running, remove_running, set_leaf, shadow_time
from engine.sim.jit import njit

#: algorithm codes of run_pool
IN_ORDER = 0
EASY = 1

#: indices of the scalar state (one int64 array, updated by the kernel)
NOW, NEXT_JOB, STARTED, FINISHED, FREE, HEAP_LEN, RUN_LEN, WAITING, WATCH_HEAD, WATCH_PROMISED, \
    RESERVATIONS, BROKEN, STATE_SIZE = range(13)

#: what run_pool returns
DONE, PAUSED, STUCK = 0, 1, 2
#: kinds of broken promises in the watch buffer (ReservationWatch's "moved" and "late")
MOVED, LATE = 0, 1
BROKEN_ROOM = 256


class PoolState:
    """Everything the compiled loop reads and writes, as arrays (see the module docstring)."""

    def __init__(self, submit: np.ndarray, runtime: np.ndarray, estimate: np.ndarray, size: np.ndarray,
                 rank: np.ndarray, capacity: int) -> None:
        n = len(submit)
        self.submit, self.runtime, self.estimate, self.size = submit, runtime, estimate, size
        self.rank, self.job_at, self.leaves, self.min_size, self.min_estimate = empty_queue_tree(rank)
        self.start_time = np.full(n, -1, dtype=np.int64)
        self.end_time = np.full(n, -1, dtype=np.int64)
        self.start_order = np.full(n, -1, dtype=np.int64)
        room = n + 1
        self.heap_end = np.empty(room, dtype=np.int64)
        self.heap_seq = np.empty(room, dtype=np.int64)
        self.heap_job = np.empty(room, dtype=np.int64)
        self.run_end = np.empty(room, dtype=np.int64)
        self.run_job = np.empty(room, dtype=np.int64)
        self.run_size = np.empty(room, dtype=np.int64)
        self.broken = np.empty((BROKEN_ROOM, 5), dtype=np.int64)
        self.state = np.zeros(STATE_SIZE, dtype=np.int64)
        self.state[FREE] = capacity
        self.state[WATCH_HEAD] = -1

    def run(self, algorithm: int, watching: bool, report_at: int) -> int:
        """Run the loop until ``report_at`` jobs have finished (PAUSED), the end (DONE), or jobs
        wait on an idle machine (STUCK)."""
        return int(run_pool(algorithm, watching, report_at, self.state, self.submit, self.runtime, self.estimate,
                            self.size, self.rank, self.job_at, self.min_size, self.min_estimate, self.leaves,
                            self.start_time, self.end_time, self.start_order, self.heap_end, self.heap_seq,
                            self.heap_job, self.run_end, self.run_job, self.run_size, self.broken))

    def take_broken(self) -> list[tuple[str, int, int, int, int]]:
        """The broken promises recorded since the last call, as ReservationWatch.broken rows."""
        count = int(self.state[BROKEN])
        self.state[BROKEN] = 0
        return [("moved" if kind == MOVED else "late", job, promised, instead, now)
                for kind, job, promised, instead, now in self.broken[:count].tolist()]

    def __getitem__(self, index: int) -> int:
        return int(self.state[index])


@njit(cache=True)
def _heap_push(heap_end, heap_seq, heap_job, length, end, seq, job):
    i = length
    while i > 0:
        parent = (i - 1) >> 1
        if heap_end[parent] < end or heap_end[parent] == end and heap_seq[parent] < seq:
            break
        heap_end[i], heap_seq[i], heap_job[i] = heap_end[parent], heap_seq[parent], heap_job[parent]
        i = parent
    heap_end[i], heap_seq[i], heap_job[i] = end, seq, job
    return length + 1


@njit(cache=True)
def _heap_pop(heap_end, heap_seq, heap_job, length):
    """Remove the smallest (end, seq) entry (the caller read it at index 0); returns the new length."""
    length -= 1
    end, seq, job = heap_end[length], heap_seq[length], heap_job[length]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= length:
            break
        right = child + 1
        if right < length and (heap_end[right] < heap_end[child]
                               or heap_end[right] == heap_end[child] and heap_seq[right] < heap_seq[child]):
            child = right
        if end < heap_end[child] or end == heap_end[child] and seq < heap_seq[child]:
            break
        heap_end[i], heap_seq[i], heap_job[i] = heap_end[child], heap_seq[child], heap_job[child]
        i = child
    heap_end[i], heap_seq[i], heap_job[i] = end, seq, job
    return length


@njit(cache=True)
def _first_waiting(min_size, leaves):
    """The leftmost queue position holding a waiting job (the tree's root says there is one)."""
    i = 1
    while i < leaves:
        i = 2 * i if min_size[2 * i] < ABSENT else 2 * i + 1
    return i - leaves


@njit(cache=True)
def run_pool(algorithm, watching, report_at, state, submit, runtime, estimate, size, rank, job_at,
             min_size, min_estimate, leaves, start_time, end_time, start_order,
             heap_end, heap_seq, heap_job, run_end, run_job, run_size, broken):
    n = len(submit)
    now, next_job, started, finished = state[NOW], state[NEXT_JOB], state[STARTED], state[FINISHED]
    free, heap_len, run_len, waiting = state[FREE], state[HEAP_LEN], state[RUN_LEN], state[WAITING]
    watch_head, promised, reservations, nbroken = (state[WATCH_HEAD], state[WATCH_PROMISED],
                                                   state[RESERVATIONS], state[BROKEN])
    easy = algorithm == EASY
    outcome = DONE
    while next_job < n or heap_len > 0:
        if finished >= report_at or nbroken + 2 > len(broken):
            outcome = PAUSED
            break
        t = heap_end[0] if heap_len > 0 else submit[next_job]
        if next_job < n and submit[next_job] < t:
            t = submit[next_job]
        now = t
        # ends, in the order the jobs started
        while heap_len > 0 and heap_end[0] == t:
            job = heap_job[0]
            heap_len = _heap_pop(heap_end, heap_seq, heap_job, heap_len)
            free += size[job]
            end_time[job] = t
            finished += 1
            if easy:
                run_len = remove_running(run_end, run_job, run_size, run_len, start_time[job] + estimate[job], job)
        # arrivals, in trace order
        while next_job < n and submit[next_job] == t:
            set_leaf(min_size, min_estimate, leaves, rank[next_job], size[next_job], estimate[next_job])
            waiting += 1
            next_job += 1
        # the decision: from the head while it fits
        head = -1
        while waiting > 0:
            head = job_at[_first_waiting(min_size, leaves)]
            if size[head] > free:
                break
            set_leaf(min_size, min_estimate, leaves, rank[head], ABSENT, ABSENT)
            waiting -= 1
            free -= size[head]
            start_time[head], start_order[head] = now, started
            heap_len = _heap_push(heap_end, heap_seq, heap_job, heap_len, now + runtime[head], started, head)
            started += 1
            if easy:
                run_len = insert_running(run_end, run_job, run_size, run_len, now + estimate[head], head, size[head])
                if watching:
                    if head == watch_head and now > promised:
                        broken[nbroken, 0], broken[nbroken, 1], broken[nbroken, 2] = LATE, head, promised
                        broken[nbroken, 3], broken[nbroken, 4] = now, now
                        nbroken += 1
                    watch_head = -1
            head = -1
        if easy and head >= 0 and free > 0:
            # EASY: the blocked head's shadow time and extra processors, then backfill
            shadow, extra = shadow_time(run_end, run_size, run_len, size[head], free, now)
            if watching:
                if head != watch_head:
                    watch_head, promised = head, shadow
                    reservations += 1
                else:
                    if shadow > promised:
                        broken[nbroken, 0], broken[nbroken, 1], broken[nbroken, 2] = MOVED, head, promised
                        broken[nbroken, 3], broken[nbroken, 4] = shadow, now
                        nbroken += 1
                    promised = shadow
            span = shadow - now
            position = rank[head] + 1
            while free > 0:
                found = first_fit(min_size, min_estimate, leaves, position, free, extra, span)
                if found < 0:
                    break
                job = job_at[found]
                if estimate[job] > span:
                    extra -= size[job]
                position = found + 1
                set_leaf(min_size, min_estimate, leaves, found, ABSENT, ABSENT)
                waiting -= 1
                free -= size[job]
                start_time[job], start_order[job] = now, started
                heap_len = _heap_push(heap_end, heap_seq, heap_job, heap_len, now + runtime[job], started, job)
                started += 1
                run_len = insert_running(run_end, run_job, run_size, run_len, now + estimate[job], job, size[job])
        if heap_len == 0 and next_job == n and started < n:
            outcome = STUCK
            break
    state[NOW], state[NEXT_JOB], state[STARTED], state[FINISHED] = now, next_job, started, finished
    state[FREE], state[HEAP_LEN], state[RUN_LEN], state[WAITING] = free, heap_len, run_len, waiting
    state[WATCH_HEAD], state[WATCH_PROMISED], state[RESERVATIONS], state[BROKEN] = (watch_head, promised,
                                                                                     reservations, nbroken)
    return outcome
