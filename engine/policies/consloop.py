"""The event loop of conservative backfilling on a pool of processors, compiled.

:meth:`engine.sim.simulator.Simulation.run` with a plain :class:`~engine.policies.conservative.Conservative`
(its queue's columns, an order fixed at arrival, count allocation) spends some 10 s of RICC-2010
in Python calls per event: the arrival's placement, the due jobs' starts, the compression's
rounds, the loop itself. :func:`run_conservative` is that same loop and that same policy as one
numba kernel over arrays, calling the policy's own kernels (the profile's ``advance``, ``add`` and
``earliest_start``; the columns' ``open_slot``, ``close_slot``, ``summarize``, ``due_in_columns``,
``earliest_in_columns``; ``compress_columns_round``) in the order the Python methods do:

* instants and their tie-breaking as :func:`engine.sim.poolloop.run_pool` (ends in the order the
  jobs started, then arrivals in trace order, then the decision; its completion heap);
* an end before the requested time releases the rest of the job's reservation
  (``Conservative.on_finish``); an arrival is placed at its earliest fit and joins the columns at
  its queue position (found by its rank: the columns are in queue order);
* the decision (``Conservative.schedule``): compression if room was freed, then the due jobs
  start; if one does not fit, the profile is rebuilt from the running jobs (those in the
  completion heap) and every waiting job is placed again in queue order.

The profile's arrays and the moves' buffer grow inside the kernel (as ``Profile.make_room`` and
``Conservative.compress`` grow them) and come back with each chunk. The loop runs in chunks, as
run_pool does, so the caller can report progress and ask whether to stop; all its state lives in
arrays, so a chunk goes on where the last one stopped. tests/engine/policies/test_consloop.py holds
it to the Python path job by job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.policies.backfill import bounded
from engine.policies.conservative import (
    SPAN,
    close_slot,
    compress_columns_round,
    due_in_columns,
    earliest_in_columns,
    open_slot,
    summarize,
)
from engine.sim.jit import njit
from engine.sim.poolloop import DONE, PAUSED, STUCK, _heap_pop, _heap_push
from engine.sim.profile import _NEVER_FITS, FOREVER, NEVER, add, advance, earliest_start

if TYPE_CHECKING:
    from engine.policies.conservative import Conservative
    from engine.sim.simulator import Pacer

#: indices of the scalar state (one int64 array, updated by the kernel)
NOW, NEXT_JOB, STARTED, FINISHED, FREE, HEAP_LEN, PROFILE_LEN, WAITING, DIRTY, NEXT_DUE, FREED_UNTIL, \
    NEVER_FITS_JOB, STATE_SIZE = range(13)

#: what run_conservative returns besides run_pool's DONE, PAUSED, STUCK: a job never fits the profile
NO_FIT = 3


def run(conservative: Conservative, pacer: Pacer) -> None:
    """Run ``conservative``'s simulation with the compiled loop; the simulation and the policy end in
    the state the Python loop leaves them in (times, starts, the profile, the reservations)."""
    from engine.sim.simulator import SimulationError   # (the simulator imports no policy)
    sim, columns, profile = conservative.sim, conservative.columns, conservative.profile
    assert columns is not None and conservative.queue.rank is not None
    int64 = np.int64
    n = sim.n
    submit, runtime = np.asarray(sim.submit, int64), np.asarray(sim.runtime, int64)
    start_time, end_time, start_order = (np.full(n, -1, int64) for _ in range(3))
    heap_end, heap_seq, heap_job = (np.empty(n + 1, int64) for _ in range(3))
    state = np.zeros(STATE_SIZE, int64)
    state[NOW], state[FREE], state[PROFILE_LEN] = sim.now, sim.free, profile.length
    state[WAITING], state[DIRTY] = columns.length, columns.dirty
    state[NEXT_DUE], state[FREED_UNTIL] = conservative._next_due, conservative._freed_until
    bound = bounded(conservative.params)
    rank = np.asarray(conservative.queue.rank, int64)
    times, free, moves = profile.times, profile.free, conservative._moves
    while True:
        outcome, times, free, moves = run_conservative(
            pacer.next_report, FOREVER if bound is None else bound, sim.capacity, state, submit, runtime,
            conservative.estimate, conservative.size, rank, start_time, end_time, start_order, heap_end, heap_seq,
            heap_job, times, free, columns.job, columns.start, columns.duration, columns.size, columns.summary,
            conservative.reserved, conservative.seq, conservative._clock, moves, conservative._failed)
        if outcome != PAUSED:
            break
        pacer.chunk_done(int(state[FINISHED]), int(state[NOW]))
    profile.times, profile.free, profile.length = times, free, int(state[PROFILE_LEN])
    conservative._moves = moves
    columns.length, columns.dirty = int(state[WAITING]), int(state[DIRTY])
    conservative._next_due, conservative._freed_until = int(state[NEXT_DUE]), int(state[FREED_UNTIL])
    sim.now, sim.started, sim.finished = int(state[NOW]), int(state[STARTED]), int(state[FINISHED])
    sim.allocator.free = int(state[FREE])
    sim.start_time, sim.end_time, sim.start_order = start_time.tolist(), end_time.tolist(), start_order.tolist()
    if outcome == NO_FIT:
        job = int(state[NEVER_FITS_JOB])
        raise RuntimeError(f"{sim.size[job]} processors never fit: {free[int(state[PROFILE_LEN]) - 1]} free for ever "
                           f"after t={times[int(state[PROFILE_LEN]) - 1]}")
    if outcome == STUCK:
        raise SimulationError(f"{n - sim.started} jobs still wait with the machine idle at t={sim.now}: "
                              "the policy never starts them")
    pacer.done()


@njit(cache=True)
def _with_room(times, free, length, steps):
    """Profile.make_room: the profile's arrays, grown if ``steps`` more steps would not fit."""
    if length + steps <= len(times):
        return times, free
    size = 2 * (length + steps)
    grown_times = np.empty(size, dtype=np.int64)
    grown_free = np.empty(size, dtype=np.int64)
    grown_times[:length] = times[:length]
    grown_free[:length] = free[:length]
    return grown_times, grown_free


@njit(cache=True)
def _position(rank, job, count, key):
    """Where a job of rank ``key`` stands among the first ``count`` jobs of the columns (in queue
    order): the number of them ranked before it."""
    lo, hi = 0, count
    while lo < hi:
        mid = (lo + hi) >> 1
        if rank[job[mid]] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _running_profile(times, free, now, capacity, heap_job, heap_len, start_time, estimate, size):
    """running_jobs_profile over the running jobs (those in the completion heap): free processors
    from ``now`` on if each ends when expected (one past its expected end: in one second). Returns
    the profile's length (the arrays must hold heap_len + 1 steps)."""
    ends = np.empty(heap_len, dtype=np.int64)
    sizes = np.empty(heap_len, dtype=np.int64)
    for i in range(heap_len):
        job = heap_job[i]
        ends[i] = max(start_time[job] + estimate[job], now + 1)
        sizes[i] = size[job]
    order = np.argsort(ends)
    released = 0
    for i in range(heap_len):
        released += sizes[i]
    level = capacity - released
    times[0], free[0] = now, level
    length = 1
    for i in range(heap_len):
        level += sizes[order[i]]
        end = ends[order[i]]
        if i + 1 == heap_len or ends[order[i + 1]] != end:
            times[length], free[length] = end, level
            length += 1
    return length


@njit(cache=True)
def run_conservative(report_at, bound, capacity, state, submit, runtime, estimate, size, rank, start_time, end_time,
                     start_order, heap_end, heap_seq, heap_job, times, free, job, reserved_start, duration, job_size,
                     summary, reserved, seq, clock, moves, failed):
    """Simulation.run with Conservative (the queue's columns), compiled (see the module docstring).
    Returns (outcome, the profile's times and free, the moves' buffer): the arrays may have grown."""
    n = len(submit)
    now, next_job, started, finished = state[NOW], state[NEXT_JOB], state[STARTED], state[FINISHED]
    idle, heap_len, length, waiting = state[FREE], state[HEAP_LEN], state[PROFILE_LEN], state[WAITING]
    dirty, next_due, freed_until = state[DIRTY], state[NEXT_DUE], state[FREED_UNTIL]
    outcome = DONE
    while next_job < n or heap_len > 0:
        if finished >= report_at:
            outcome = PAUSED
            break
        t = heap_end[0] if heap_len > 0 else submit[next_job]
        if next_job < n and submit[next_job] < t:
            t = submit[next_job]
        now = t
        # ends, in the order the jobs started (on_finish: the rest of an early end's reservation is freed)
        while heap_len > 0 and heap_end[0] == t:
            ended = heap_job[0]
            heap_len = _heap_pop(heap_end, heap_seq, heap_job, heap_len)
            idle += size[ended]
            end_time[ended] = t
            finished += 1
            expected = start_time[ended] + estimate[ended]
            if t < expected:
                length = advance(times, free, length, t)
                times, free = _with_room(times, free, length, 2)
                length = add(times, free, length, t, expected, size[ended])
                freed_until = max(freed_until, expected)
        # arrivals, in trace order (on_submit: placed at the earliest fit, then queued)
        while next_job < n and submit[next_job] == t:
            arriving = next_job
            length = advance(times, free, length, t)
            start = earliest_start(times, free, length, t, estimate[arriving], size[arriving], FOREVER, 0, 0, 0)
            if start == _NEVER_FITS:
                state[NEVER_FITS_JOB] = arriving
                outcome = NO_FIT
                break
            times, free = _with_room(times, free, length, 2)
            length = add(times, free, length, start, start + estimate[arriving], -size[arriving])
            reserved[arriving] = start
            seq[arriving] = clock[0]
            clock[0] += 1
            next_due = min(next_due, start)
            position = _position(rank, job, waiting, rank[arriving])
            open_slot(job, reserved_start, duration, job_size, waiting, position)
            job[position], reserved_start[position] = arriving, start
            duration[position], job_size[position] = estimate[arriving], size[arriving]
            waiting += 1
            dirty = min(dirty, position)
            next_job += 1
        if outcome == NO_FIT:
            break
        # the decision (schedule): compress into the room freed, then start the due jobs
        if freed_until > now:
            length = advance(times, free, length, now)
            count = min(waiting, bound)
            if len(moves) < count:
                moves = np.empty((max(count, 2 * len(moves)), 2), dtype=np.int64)
            lo, hi = now, freed_until
            freed_until = NEVER
            summarize(reserved_start, duration, job_size, waiting, summary, dirty // SPAN)
            dirty = waiting
            while True:
                times, free = _with_room(times, free, length, 4 * count)
                length, moved, lo, hi, first = compress_columns_round(
                    times, free, length, job, reserved_start, duration, job_size, summary, count, reserved, seq,
                    clock, lo, hi, moves, failed)
                if not moved:
                    break
                next_due = min(next_due, first)
        for attempt in range(2):
            if next_due > now:
                break
            due = due_in_columns(job, reserved_start, waiting, seq, now)
            blocked = False
            for starting in due:
                if size[starting] > idle:
                    blocked = True
                    continue
                reserved[starting] = NEVER
                position = _position(rank, job, waiting, rank[starting])
                idle -= size[starting]
                start_time[starting], start_order[starting] = now, started
                heap_len = _heap_push(heap_end, heap_seq, heap_job, heap_len, now + runtime[starting], started,
                                      starting)
                started += 1
                close_slot(job, reserved_start, duration, job_size, waiting, position)
                waiting -= 1
                dirty = min(dirty, position)
            next_due = earliest_in_columns(reserved_start, waiting)
            if not blocked or attempt == 1:
                break
            # rebuild: the profile from what really runs, every waiting job placed again in queue order
            times, free = _with_room(times, free, 0, heap_len + 1)
            length = _running_profile(times, free, now, capacity, heap_job, heap_len, start_time, estimate, size)
            next_due = FOREVER
            for q in range(waiting):
                placed = job[q]
                start = earliest_start(times, free, length, now, estimate[placed], size[placed], FOREVER, 0, 0, 0)
                if start == _NEVER_FITS:
                    state[NEVER_FITS_JOB] = placed
                    outcome = NO_FIT
                    break
                times, free = _with_room(times, free, length, 2)
                length = add(times, free, length, start, start + estimate[placed], -size[placed])
                reserved[placed] = start
                seq[placed] = clock[0]
                clock[0] += 1
                next_due = min(next_due, start)
                reserved_start[q] = start
            dirty = 0
            if outcome == NO_FIT:
                break
        if outcome == NO_FIT:
            break
        if heap_len == 0 and next_job == n and started < n:
            outcome = STUCK
            break
    state[NOW], state[NEXT_JOB], state[STARTED], state[FINISHED] = now, next_job, started, finished
    state[FREE], state[HEAP_LEN], state[PROFILE_LEN], state[WAITING] = idle, heap_len, length, waiting
    state[DIRTY], state[NEXT_DUE], state[FREED_UNTIL] = dirty, next_due, freed_until
    return outcome, times, free, moves
