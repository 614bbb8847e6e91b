"""Conservative backfilling: every waiting job holds a reservation in the availability profile.

What it does (tests check it against a plain implementation of exactly this):

* **Reservation at submission.** An arriving job is given the earliest start at which its
  processors are free for its requested time, in the profile of the running jobs (each until its
  requested end) and every reservation made before it.
* **Start.** A job starts when its reservation comes (jobs due at one instant in the order their
  reservations were made). No job starts anywhere else, so a later job never delays an earlier
  reservation, even where EASY would let it jump ahead.
* **Compression.** When a job ends before its requested time, the waiting jobs, in queue order,
  each move to their earliest fit from now (their own reservation counted as free) if that is
  earlier than their reservation; never later. Rounds repeat until a round moves no job, so after
  a compression no waiting job could start earlier (the *fixpoint*). Jobs whose reservation has
  come (due, perhaps waiting to fit) are left where they are. The fixpoint also keeps the
  simulation going: the simulator has no timer, but every future reservation then begins where a
  running job or another reservation is expected to end, and that end is an event (or, if the
  job ends earlier, that earlier end is, and compresses again).

Pruning, exact because of the fixpoint: between two compressions the profile only loses room
(new reservations), drops its past, or keeps its shape (a job starting in its reservation), so a
window that fits a job now but did not when the job was last examined must, before the job's own
start, meet a region freed since then (by a job ending early, or given up by a job that moved).
Each round therefore asks only the jobs reserved to start after the beginning of the room freed
since the previous round, and only about starts before its end. The room a move frees is the part
of its old window [s, s + d) its new one [s', s' + d) leaves, [max(s' + d, s), s + d) (usually
the old window's last s - s' seconds), so the queue columns' rounds (``columns_round``) begin the
next round's room there, not at s. A window [t, min(t + d, s)) of a job that may still use room
beginning at lo (s > lo) reaches past lo only if t > lo - d: its search starts there. The round
itself is one compiled loop (numba) over the profile's arrays.

Failed searches, exact because the profile does not change between two moves: a job of n
processors for d seconds reserved at s fits at t < s exactly when at least n are free (its own
reservation not counted) on [t, min(t + d, s)) (the rest lies in its own reservation). So if a
job (n, d, s) found no fit before L, a later job of the same round with n' >= n, d' >= d and
s' >= s finds none before L either, as long as no job moved in between: its search starts at the
step holding L (see ``compress_round``). Most searches fail, and most of their steps are skipped.

**Speed** (issue 14: RICC-2010's queue holds thousands of jobs). With a queue order fixed at arrival
the waiting jobs are kept in place in queue order, each with its reserved start, requested time
and size beside it (:class:`QueueColumns`), so a round reads its queue in one contiguous sweep
instead of looking each job up; a search is one pass with no hard-to-predict branch
(:func:`earlier_fit_at`); the failed searches are columns checked without branches; and the profile's
arrays shift by memmove. The same moves as ``compress_round`` on the job numbers, which stays the
path of other queue orders and subclasses (``Conservative.reference`` forces it, for the tests).

**The event loop, compiled.** A plain Conservative over the columns runs the simulation's whole
event loop as one numba kernel (``run_conservative``, at the end of this module; the simulator
calls :meth:`Conservative.compiled_loop`): the same calls in the same order, no Python per event.

**Bound.** With ``backfill_bound`` K, compression looks at the first K waiting jobs only (an
approximation: no fixpoint for the others; by default every job, the exact schedule). The queue
columns' rounds then keep the reference's room per round (see ``columns_round``): their finer
pruning needs the fixpoint.

**Wake-ups.** A pass is held at the earliest reservation even if nothing ends or arrives then.
With the exact fixpoint some job is expected to end there anyway (above); a bounded compression
(or a subclass's own moves) can leave a reservation where nothing happens, and its job must still
start at its reservation, not at whatever event comes next.

**Rebuild.** If a due job does not fit (a job ran past its request with overruns allowed, or no
aligned buddy block), the profile is rebuilt from what really runs and every waiting job is
placed again in queue order.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from engine.policies.algorithm import Algorithm
from engine.policies.backfill import BACKFILL_BOUND, bounded, order_fixed_at_arrival
from engine.policies.ordering import WaitingQueue
from engine.sim.jit import borrowed, move
from engine.sim.profile import (
    _NEVER_FITS,
    FOREVER,
    NEVER,
    Profile,
    _step_at,
    add,
    earliest_start,
    move_earlier_headed,
    njit,
    running_jobs_profile,
)
from engine.sim.poolloop import DONE, PAUSED, STUCK, _heap_pop, _heap_push
from engine.sim.simulator import Pacer, Simulation

#: failed searches remembered in a compression round (see the module docstring)
FAILURES_KEPT = 16


#: queue positions a block of QueueColumns summarises (RICC-2010 conservative, A/B pairs: 32 slower
#: by 0.3 s, 128 about as fast, 16 slower by 0.8 s before the block check was branch-free; each
#: block check is a pass over the failed searches)
SPAN = 64


class QueueColumns:
    """The waiting jobs in queue order, kept in place, with each one's reserved start, requested
    time and size beside it (contiguous columns a compression round sweeps).

    Each block of :data:`SPAN` positions is summarised (``summary``: least size, least
    requested time, least and largest reserved start, largest requested time), so a round skips
    a whole block that a failed search spares (or whose reservations are all due). Summaries from
    ``dirty`` on are stale (jobs added or removed there) until :meth:`summarize`; a move only
    lowers a start, which the round writes into its block's least start (the largest start may
    then be too large: a block is skipped less often, never wrongly)."""

    def __init__(self, n: int) -> None:
        self.job = np.empty(n, dtype=np.int64)
        self.start = np.empty(n, dtype=np.int64)
        self.duration = np.empty(n, dtype=np.int64)
        self.size = np.empty(n, dtype=np.int64)
        self.summary = np.empty((5, n // SPAN + 1), dtype=np.int64)
        self.length = 0
        self.dirty = 0

    def insert(self, position: int, job: int, start: int, duration: int, size: int) -> None:
        open_slot(self.job, self.start, self.duration, self.size, self.length, position)
        self.job[position], self.start[position] = job, start
        self.duration[position], self.size[position] = duration, size
        self.length += 1
        self.dirty = min(self.dirty, position)

    def remove(self, position: int) -> None:
        close_slot(self.job, self.start, self.duration, self.size, self.length, position)
        self.length -= 1
        self.dirty = min(self.dirty, position)

    def summarize(self) -> None:
        """Bring the blocks' summaries up to date."""
        summarize(self.start, self.duration, self.size, self.length, self.summary, self.dirty // SPAN)
        self.dirty = self.length


class Conservative(Algorithm):
    """``conservative``: a reservation for every waiting job."""

    #: run the reference compression (compress_round over job numbers) even where the queue's
    #: columns could be kept (tests hold the fast path to it)
    reference = False

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        self.profile = Profile(sim.capacity, 0)
        self.estimate = np.asarray(sim.estimate, dtype=np.int64)
        self.size = np.asarray(sim.size, dtype=np.int64)
        self.reserved = np.full(sim.n, NEVER, dtype=np.int64)   # job -> reserved start
        #: job -> when its reservation was made (jobs due at one instant start in that order)
        self.seq = np.zeros(sim.n, dtype=np.int64)
        self._clock = np.zeros(1, dtype=np.int64)    # the next seq (kept in an array the kernels update)
        self._next_due = FOREVER     # no waiting job is reserved before this
        self._freed_until = NEVER    # end of the room freed (from now on) since the last compression
        #: the waiting jobs in queue order, kept in place (no copy per event) when the queue's
        #: order is fixed at arrival (a plain WaitingQueue); other queues are read at each use
        self._kept = type(queue) is WaitingQueue
        self._order = np.empty(sim.n if self._kept else 0, dtype=np.int64)
        self._waiting = 0
        self._moves = np.empty((0, 2), dtype=np.int64)
        #: the queue in columns (the fast compression) for a plain Conservative with a kept order
        self.columns = QueueColumns(sim.n) if self._kept and type(self) is Conservative and not self.reference else None
        self._failed = np.empty((5, FAILURES_KEPT), dtype=np.int64)
        self._scratch = np.empty((2, 0), dtype=np.int64)    # move_earlier_headed's, as long as the profile's arrays

    def compiled_loop(self) -> Callable[[Pacer], None] | None:
        """The compiled event loop (run_conservative, below) where it makes the same schedule: the
        queue's columns over an order fixed at arrival (the simulator checks the rest: a pool of
        processors counted, nothing started yet)."""
        if self.columns is None or not order_fixed_at_arrival(self.queue) or self.sim.pass_per_end:
            return None
        return partial(run_compiled_loop, self)

    # reservations ------------------------------------------------------------------------------
    def _reserve(self, job: int, start: int) -> None:
        sim = self.sim
        self.profile.reserve(start, start + sim.estimate[job], sim.size[job])
        self._note(job, start)

    def _note(self, job: int, start: int) -> None:
        """Record ``job``'s reservation (already in the profile) and when it falls due."""
        self.reserved[job] = start
        self.seq[job] = self._clock[0]
        self._clock[0] += 1
        if start < self._next_due:
            self._next_due = start

    def _place(self, job: int) -> None:
        sim = self.sim
        start = self.profile.earliest_start(sim.now, sim.estimate[job], sim.size[job])
        assert start is not None   # every job fits the empty machine eventually
        self._reserve(job, start)

    def enqueue(self, job: int) -> None:
        """Add an arriving job to the waiting queue (in the columns with its reservation, so placed first)."""
        self.queue.add(job)
        if self.columns is not None:
            self.columns.insert(self.queue.position(job), job, int(self.reserved[job]), self.sim.estimate[job],
                                self.sim.size[job])
        elif self._kept:
            self._waiting = insert(self._order, self._waiting, self.queue.position(job), job)

    def on_submit(self, job: int) -> None:
        self.profile.advance(self.sim.now)
        self._place(job)     # (where it goes does not depend on the queue)
        self.enqueue(job)

    def start(self, job: int) -> None:
        position = self.queue.position(job) if self.columns is not None else -1
        super().start(job)
        if self.columns is not None:
            self.columns.remove(position)
        elif self._kept:
            self._waiting = remove(self._order, self._waiting, job)

    def waiting(self) -> np.ndarray:
        """The waiting jobs in queue order (a view while the order is kept in place)."""
        if self.columns is not None:
            return self.columns.job[:self.columns.length]
        if self._kept:
            return self._order[:self._waiting]
        return np.array(self.queue.jobs(), dtype=np.int64)

    def on_finish(self, job: int) -> None:
        sim = self.sim
        expected = sim.expected_end(job)
        if sim.now < expected:
            self.profile.advance(sim.now)
            self.profile.release(sim.now, expected, sim.size[job])
            self._freed_until = max(self._freed_until, expected)

    # the decision ----------------------------------------------------------------------------
    def schedule(self) -> None:
        if self._freed_until > self.sim.now:
            self.compress()
        if not self._start_due():
            self.rebuild()
            self._start_due()
        if self._next_due < FOREVER:
            self.sim.wake_at(self._next_due)   # see "Wake-ups" in the module docstring

    def _start_due(self) -> bool:
        """Start every job whose reservation is now (in the order the reservations were made);
        False if one of them does not fit."""
        sim, reserved = self.sim, self.reserved
        now = sim.now
        if self._next_due > now:
            return True
        columns = self.columns
        if columns is not None:
            due = due_in_columns(columns.job, columns.start, columns.length, self.seq, now)
        else:
            due = due_jobs(self.waiting(), reserved, self.seq, now)
        blocked = False
        for job in due.tolist():
            if sim.fits(job):
                reserved[job] = NEVER
                self.start(job)
            else:
                blocked = True
        if columns is not None:
            self._next_due = earliest_in_columns(columns.start, columns.length)
        else:
            self._next_due = earliest_reservation(self.waiting(), reserved)
        return not blocked

    def compress(self) -> None:
        """Move reservations earlier into the room freed by jobs that ended early, to the fixpoint.

        The first round offers the room the ended jobs freed, [now, freed_until); each next round
        the windows given up by the jobs that moved in the previous one.
        """
        profile = self.profile
        profile.advance(self.sim.now)
        queue = self.waiting()[:bounded(self.params)]
        if len(self._moves) < len(queue):
            self._moves = np.empty((max(len(queue), 2 * len(self._moves)), 2), dtype=np.int64)
        lo, hi = self.sim.now, self._freed_until
        self._freed_until = NEVER
        if self.columns is not None:
            self._compress_columns(self.columns, len(queue), lo, hi, bounded(self.params) is None)
            return
        while True:
            profile.make_room(4 * len(queue))   # a move changes at most four steps
            profile.length, count, lo, hi, first = compress_round(
                profile.times, profile.free, profile.length, queue, self.reserved, self.seq, self._clock,
                self.estimate, self.size, lo, hi, self._moves)
            if not count:
                return
            self._next_due = min(self._next_due, first)
            self.moved(self._moves[:count])

    def _compress_columns(self, columns: QueueColumns, count: int, lo: int, hi: int, exact: bool) -> None:
        """compress() over the queue's columns (the first ``count`` waiting jobs): the same rounds."""
        profile = self.profile
        columns.summarize()
        done = False
        while not done:
            profile.make_room(4 * count)
            if len(self._scratch[0]) < len(profile.times):
                self._scratch = np.empty((2, len(profile.times)), dtype=np.int64)
            _, profile.length, lo, hi, first, done = compress_columns(
                profile.times, profile.free, 0, profile.length, columns.job, columns.start, columns.duration,
                columns.size, columns.summary, count, self.reserved, self.seq, self._clock, lo, hi, self._moves,
                self._failed, self._scratch[0], self._scratch[1], exact, False)
            self._next_due = min(self._next_due, first)

    def moved(self, moves: np.ndarray) -> None:
        """Called with the (job, new start) rows of each compression round (already recorded)."""

    def rebuild(self) -> None:
        """Rebuild the profile from what really runs, then re-place every waiting job in queue order.

        Needed only when reality left the profile: a job running past its requested time (when
        overruns are allowed) or a buddy request with no aligned free block.
        """
        self.profile = running_jobs_profile(self.sim)
        self._next_due = FOREVER
        for job in self.queue.jobs():
            self._place(job)
        if self.columns is not None:
            columns = self.columns
            columns.start[:columns.length] = self.reserved[columns.job[:columns.length]]
            columns.dirty = 0


@njit(cache=True)
def compress_round(times, free, length, queue, reserved, seq, clock, estimate, size, lo, hi, moves):
    """One compression round over ``queue`` (job numbers in queue order); the room freed since the
    previous round lies in [lo, hi).

    Each job that now fits earlier moves there at once (the next jobs see the change), and
    ``reserved`` and ``seq`` (from ``clock[0]``, advanced) are updated. Writes (job, new start) of
    each move to ``moves`` and returns (profile length, number of moves, lo, hi, earliest new
    start) where [lo, hi) now bounds the windows given up.
    """
    now = times[0]
    count = 0
    given_lo, given_hi = FOREVER, NEVER
    first = FOREVER
    # (size, duration, start, limit) of the last FAILURES_KEPT failed searches since the last move
    failed = np.empty((FAILURES_KEPT, 4), dtype=np.int64)
    kept = 0
    for q in range(len(queue)):
        job = queue[q]
        start = reserved[job]
        if start <= lo:
            continue    # the freed room begins at or after its start: it cannot use it
        duration, n = estimate[job], size[job]
        end = start + duration
        limit = min(start, hi)
        since = no_fit_before(failed, min(kept, FAILURES_KEPT), n, duration, start, now)
        if since >= limit:
            continue
        if since > now:   # from the beginning of the step holding it: the scan's own start points
            since = times[_step_at(times, length, since)]
        new = earliest_start(times, free, length, since, duration, n, limit, start, end, n)
        if new == NEVER:
            row = kept % FAILURES_KEPT
            failed[row, 0], failed[row, 1], failed[row, 2], failed[row, 3] = n, duration, start, limit
            kept += 1
            continue
        kept = 0
        # move: only the parts of the old and new windows that do not overlap change
        length = add(times, free, length, new, min(new + duration, start), -n)
        length = add(times, free, length, max(new + duration, start), end, n)
        reserved[job] = new
        seq[job] = clock[0]
        clock[0] += 1
        first = min(first, new)
        moves[count, 0] = job
        moves[count, 1] = new
        count += 1
        hi = max(hi, end)
        given_lo, given_hi = min(given_lo, start), max(given_hi, end)
    return length, count, given_lo, given_hi, first


@njit(cache=True)
def compress_columns(times, free, head, length, job, reserved_start, duration, size, summary, count, reserved, seq,
                     clock, lo, hi, moves, failed, scratch_times, scratch_free, exact, front):
    """Compression rounds over the first ``count`` jobs of the queue's columns (columns_round) until
    one moves no job, or until the profile's arrays (or the scratch arrays, as long) may lack room
    for another round (four steps per job). The profile is ``times[head:head + length]``; ``front``:
    moves may shift the steps before them instead (profile.move_earlier_headed). Returns (head,
    length, lo, hi, earliest new start, done): when not done, make room and call again with that
    lo and hi (the rounds go on where they stopped). ``exact``: no backfill bound (see
    columns_round)."""
    # the room each move of the previous round and of this one gave up, by queue position: (position,
    # released, end); the first round's: the room the compression was given, for every position
    given = np.empty((2, count + 1, 3), dtype=np.int64)
    given[0, 0, 0], given[0, 0, 1], given[0, 0, 2] = count, lo, hi
    # the caller holds every array it passed for the length of the call, and none is replaced here
    # (the rounds stop when the room runs out): unowned, numba counts no references to them, their
    # views and the arguments made from them (engine.jit.borrowed)
    times, free, job, reserved_start = borrowed(times), borrowed(free), borrowed(job), borrowed(reserved_start)
    duration, size, summary, reserved = borrowed(duration), borrowed(size), borrowed(summary), borrowed(reserved)
    seq, clock, moves, failed = borrowed(seq), borrowed(clock), borrowed(moves), borrowed(failed)
    scratch_times, scratch_free = borrowed(scratch_times), borrowed(scratch_free)
    previous, side = 1, 0
    first = FOREVER
    while head + length + 4 * count <= len(times) and length + 4 * count <= len(scratch_times):
        head, length, moved, lo, hi, earliest = columns_round(
            times, free, head, length, job, reserved_start, duration, size, summary, count, reserved, seq, clock, lo, hi,
            moves, failed, scratch_times, scratch_free, given[side], previous, given[1 - side], exact, front)
        first = min(first, earliest)
        if not moved:
            return head, length, lo, hi, first, True
        previous, side = moved, 1 - side
    return head, length, lo, hi, first, False


@njit(cache=True)
def columns_round(all_times, all_free, head, length, job, reserved_start, duration, size, summary, count, reserved,
                  seq, clock, lo, hi, moves, failed, scratch_times, scratch_free, given, previous, giving, exact,
                  front):
    """compress_round over the first ``count`` jobs of the queue's columns (QueueColumns: job,
    reserved start, requested time, size in queue order): the same moves, also written to the
    start column. ``failed``: room for the failed searches as columns (size, duration, start,
    limit, released); a row of size FOREVER is no failure. ``scratch_*``: room for move_earlier_headed.

    A move does not forget the failed searches (compress_round does): it frees room only from
    ``released`` on (where the part of its old window it gives up begins), so a window ending by
    then that did not fit before the move does not fit after it; each row keeps the earliest
    such point since it failed (see no_fit_in_columns).

    A search starts no earlier than lo - d + 1: a window that fits now but did not when the job
    was last asked meets room freed since (module docstring), all of which lies in [lo, hi) (the
    room the round was given, and the parts of their old windows the jobs moved in it gave up,
    each reserved after lo); its window [t, min(t + d, start)) reaches past lo only if t > lo - d
    (start > lo). The lo returned for the next round is where the earliest such part begins,
    ``released`` = max(new + d, start) (on [start, new + d) the moved job still holds its n).

    Each job is held to the room freed since it was itself last asked, tighter than [lo, hi): what
    the moves after it in the previous round (``given[:previous]``: position, released, end, by
    position; in the first round one row holding the room given, at position ``count``) and the
    moves before it in this round gave up. Its own move is no such room: right after a move, no
    earlier window fits it (a window ending in its new window that did not fit before the move
    lacked room before it, where nothing changed). So a job asks only if reserved after that
    room's beginning ``lo_q``, from lo_q - d + 1, for starts before its end ``hi_q``; a block of
    jobs is spared (``spared``) with the lo_q and hi_q of its first job: while no job moves, lo_q
    only grows and hi_q only shrinks along the positions. This round's moves are written to
    ``giving`` (the next round's ``given``).

    These three (the search from lo - d + 1, the room from ``released``, each job's own room) hold
    only at the fixpoint: with a backfill bound (not ``exact``) a job beyond it was not asked at the
    last compression, and the rounds keep compress_round's room, [lo, hi) from the moved jobs' old
    starts, searched from now.

    The profile is ``all_times[head:head + length]`` (see compress_columns); returns (head, length,
    number of moves, lo, hi, earliest new start)."""
    times, free = all_times[head:], all_free[head:]
    now = times[0]
    moved = 0
    given_lo, given_hi = FOREVER, NEVER
    first = FOREVER
    failed[0, :] = FOREVER
    row = 0
    # the step holding the last search's start, while no move shifted the steps
    held_since, held_step = NEVER, 0
    # given[:previous] as suffix bounds: the room given up at or after each row's position
    for g in range(previous - 2, -1, -1):
        given[g, 1] = min(given[g, 1], given[g + 1, 1])
        given[g, 2] = max(given[g, 2], given[g + 1, 2])
    later = 0                           # the first row of given after position q
    own_lo, own_hi = FOREVER, NEVER     # the room this round's moves gave up
    q = -1
    while q + 1 < count:
        q += 1
        lo_q, hi_q = lo, hi
        if exact:       # the room freed since job q was last asked lies in [lo_q, hi_q)
            while later < previous and given[later, 0] <= q:
                later += 1
            lo_q, hi_q = own_lo, own_hi
            if later < previous:
                lo_q, hi_q = min(lo_q, given[later, 1]), max(hi_q, given[later, 2])
        if q % SPAN == 0 and q + SPAN <= count and spared(summary, q // SPAN, failed, lo_q, hi_q):
            q += SPAN - 1
            continue
        start = reserved_start[q]
        if start <= lo_q:
            continue    # the freed room begins at or after its start: it cannot use it
        d, n = duration[q], size[q]
        limit = min(start, hi_q)
        # the latest failure spares most jobs it can: asked alone first, it saves asking all
        f = (row - 1) % FAILURES_KEPT
        if failed[0, f] <= n and failed[1, f] <= d and failed[2, f] <= start:
            released = failed[4, f]
            if (failed[3, f] if start <= released else min(failed[3, f], released - d + 1)) >= limit:
                continue
        since = max(no_fit_in_columns(failed, n, d, start, now), lo_q - d + 1 if exact else now)
        if since >= limit:
            continue
        step = 0
        if since > now:   # from the beginning of the step holding it: the scan's own start points
            if since != held_since:
                held_since, held_step = since, _step_at(times, length, since)
            step = held_step
            since = times[step]
        new, at = earlier_fit_at(times, free, length, step, since, d, n, limit, start)
        if new == NEVER:
            failed[0, row], failed[1, row], failed[2, row], failed[3, row] = n, d, start, limit
            failed[4, row] = FOREVER
            row = (row + 1) % FAILURES_KEPT
            continue
        released = max(new + d, start)
        for f in range(FAILURES_KEPT):
            failed[4, f] = min(failed[4, f], released)
        end = start + d
        # move: only the parts of the old and new windows that do not overlap change
        moved_head, length = move_earlier_headed(all_times, all_free, head, length, at, new, start, d, n,
                                                 scratch_times, scratch_free, front)
        if moved_head != head:  # new views only then: each view costs two atomic reference counts
            head = moved_head
            times, free = all_times[head:], all_free[head:]
        held_since = NEVER
        moving = job[q]
        reserved[moving] = new
        reserved_start[q] = new
        summary[2, q // SPAN] = min(summary[2, q // SPAN], new)
        seq[moving] = clock[0]
        clock[0] += 1
        first = min(first, new)
        moves[moved, 0] = moving
        moves[moved, 1] = new
        moved += 1
        giving[moved - 1, 0], giving[moved - 1, 1], giving[moved - 1, 2] = q, released, end
        own_lo, own_hi = min(own_lo, released), max(own_hi, end)
        hi = max(hi, end)
        given_lo, given_hi = min(given_lo, released if exact else start), max(given_hi, end)
    return head, length, moved, given_lo, given_hi, first


@njit(cache=True, inline="always")
def spared(summary, block, failed, lo, hi):
    """Whether no job of a block of the queue's columns can move (each would be skipped): all
    reserved by ``lo``, or one failed search spares them all, the least size, requested time and
    start of the block being no smaller than its, for every limit (at most ``hi``)."""
    least_size, least_duration, least_start = summary[0, block], summary[1, block], summary[2, block]
    most_start, most_duration = summary[3, block], summary[4, block]
    if most_start <= lo:
        return True
    hit = False     # every row checked without a branch (numba vectorises it)
    for f in range(FAILURES_KEPT):
        released = failed[4, f]
        hit |= ((failed[0, f] <= least_size) & (failed[1, f] <= least_duration) & (failed[2, f] <= least_start)
                & (failed[3, f] >= hi) & ((most_start <= released) | (released - most_duration + 1 >= hi)))
    return hit


@njit(cache=True)
def summarize(start, duration, size, length, summary, first_block):
    """QueueColumns.summary of the blocks from ``first_block`` on: least size, least requested
    time, least start, largest start, largest requested time."""
    for block in range(first_block, (length + SPAN - 1) // SPAN):
        lo, hi = block * SPAN, min(length, (block + 1) * SPAN)
        least_size, least_duration, least_start = FOREVER, FOREVER, FOREVER
        most_start, most_duration = NEVER, NEVER
        for q in range(lo, hi):
            least_size = min(least_size, size[q])
            least_duration = min(least_duration, duration[q])
            least_start = min(least_start, start[q])
            most_start = max(most_start, start[q])
            most_duration = max(most_duration, duration[q])
        summary[0, block], summary[1, block], summary[2, block] = least_size, least_duration, least_start
        summary[3, block], summary[4, block] = most_start, most_duration


@njit(cache=True)
def no_fit_in_columns(failed, n, duration, start, now):
    """no_fit_before over failed searches kept as columns (size, duration, start, limit,
    released), every row checked without a branch (numba vectorises it).

    A row counts as in no_fit_before, but only for the windows that end by its ``released`` (the
    earliest room freed since it failed, FOREVER if none): the job's window [t, min(t + duration,
    start)) ends by then for every t if start <= released, else for t <= released - duration."""
    since = now
    for f in range(FAILURES_KEPT):
        dominated = (failed[0, f] <= n) & (failed[1, f] <= duration) & (failed[2, f] <= start)
        released = failed[4, f]
        bound = failed[3, f] if start <= released else min(failed[3, f], released - duration + 1)
        since = max(since, bound if dominated else now)
    return since


@njit(cache=True)
def earlier_fit_at(times, free, length, step, since, duration, n, limit, start):
    """Where a job of ``n`` processors for ``duration`` reserved at ``start`` (in the profile) fits
    earliest at or after ``since`` (in step ``step``) and before ``limit`` <= start: the earliest
    t with n free on [t, min(t + duration, start)) (from its start on, the window lies in its own
    reservation), NEVER if none (the same answer as earliest_start(..., since, duration, n, limit,
    start, start + duration, n)); and the step holding it (for the move that follows). One pass
    whose only branches are rarely taken: the run of steps with n free is carried as its first
    time, ``candidate``, and its step, moved on at each step without a branch."""
    last = np.uint64(length - 1)
    i = np.uint64(step)     # unsigned: no wraparound of negative indices to compute at each step
    one = np.uint64(1)
    candidate, held = since, i
    while i < last:
        if candidate >= limit:
            return NEVER, 0
        following = times[i + one]
        room = free[i] >= n
        if room and (following - candidate >= duration or following >= start):
            return candidate, np.int64(held)
        candidate = candidate if room else following
        held = held if room else i + one
        i += one
    if candidate >= limit:
        return NEVER, 0
    return (candidate if free[last] >= n else _NEVER_FITS), np.int64(held)


@njit(cache=True)
def due_in_columns(job, reserved_start, count, seq, now):
    """due_jobs over the queue's columns."""
    due = 0
    for q in range(count):
        if reserved_start[q] <= now:
            due += 1
    jobs = np.empty(due, dtype=np.int64)
    starts = np.empty(due, dtype=np.int64)
    due = 0
    for q in range(count):
        start = reserved_start[q]
        if start <= now:
            i = due       # insertion sort by (reserved start, seq): few jobs fall due at once
            while i > 0 and (starts[i - 1] > start or starts[i - 1] == start and seq[jobs[i - 1]] > seq[job[q]]):
                jobs[i], starts[i] = jobs[i - 1], starts[i - 1]
                i -= 1
            jobs[i], starts[i] = job[q], start
            due += 1
    return jobs


@njit(cache=True)
def earliest_in_columns(reserved_start, count):
    """The earliest reserved start in the queue's columns (FOREVER if none)."""
    first = FOREVER
    for q in range(count):
        first = min(first, reserved_start[q])
    return first


@njit(cache=True)
def open_slot(job, start, duration, size, length, position):
    """Shift the columns' rows from ``position`` on one down (room for a row there)."""
    tail = length - position
    move(job, position + 1, position, tail)
    move(start, position + 1, position, tail)
    move(duration, position + 1, position, tail)
    move(size, position + 1, position, tail)


@njit(cache=True)
def close_slot(job, start, duration, size, length, position):
    """Shift the columns' rows after ``position`` one up (the row there goes)."""
    tail = length - position - 1
    move(job, position, position + 1, tail)
    move(start, position, position + 1, tail)
    move(duration, position, position + 1, tail)
    move(size, position, position + 1, tail)


@njit(cache=True)
def no_fit_before(failed, kept, n, duration, start, now):
    """The latest limit of a failed search in ``failed[:kept]`` (size, duration, start, limit) whose
    job was no larger, no longer and reserved no later: nothing fits before it (``now`` if none)."""
    since = now
    for f in range(kept):
        if (failed[f, 0] <= n and failed[f, 1] <= duration and failed[f, 2] <= start
                and failed[f, 3] > since):
            since = failed[f, 3]
    return since


@njit(cache=True)
def due_jobs(queue, reserved, seq, now):
    """The jobs of ``queue`` reserved to start by ``now``, by (reserved start, seq)."""
    count = 0
    for q in range(len(queue)):
        if reserved[queue[q]] <= now:
            count += 1
    due = np.empty(count, dtype=np.int64)
    count = 0
    for q in range(len(queue)):
        job = queue[q]
        if reserved[job] <= now:
            i = count       # insertion sort: few jobs fall due at once
            while i > 0 and (reserved[due[i - 1]] > reserved[job]
                             or reserved[due[i - 1]] == reserved[job] and seq[due[i - 1]] > seq[job]):
                due[i] = due[i - 1]
                i -= 1
            due[i] = job
            count += 1
    return due


@njit(cache=True)
def earliest_reservation(queue, reserved):
    """The earliest reserved start among ``queue`` (FOREVER if it is empty)."""
    first = FOREVER
    for q in range(len(queue)):
        first = min(first, reserved[queue[q]])
    return first


@njit(cache=True)
def insert(order, length, position, job):
    """Insert ``job`` at ``position`` of ``order[:length]`` in place; returns the new length."""
    for i in range(length, position, -1):
        order[i] = order[i - 1]
    order[position] = job
    return length + 1


@njit(cache=True)
def remove(order, length, job):
    """Remove ``job`` from ``order[:length]`` in place; returns the new length."""
    i = 0
    while order[i] != job:
        i += 1
    for k in range(i, length - 1):
        order[k] = order[k + 1]
    return length - 1


# -- the compiled event loop ----------------------------------------------------------------------
#
# Simulation.run with a plain Conservative (the queue's columns, an order fixed at arrival, count
# allocation) spent some 10 s of RICC-2010 in Python calls per event: the arrival's placement, the
# due jobs' starts, the compression's rounds, the loop itself. run_conservative is that same loop
# and that same policy as one numba kernel over arrays, calling the policy's own kernels (the profile's ``advance``, ``add`` and
# ``earliest_start``; the columns' ``open_slot``, ``close_slot``, ``summarize``, ``due_in_columns``,
# ``earliest_in_columns``; ``compress_columns``) in the order the Python methods do:
#
# * instants and their tie-breaking as engine.sim.poolloop.run_pool (ends in the order the
#   jobs started, then arrivals in trace order, then the decision; its completion heap);
# * an end before the requested time releases the rest of the job's reservation
#   (``Conservative.on_finish``); an arrival is placed at its earliest fit and joins the columns at
#   its queue position (found by its rank: the columns are in queue order);
# * the decision (``Conservative.schedule``): compression if room was freed, then the due jobs
#   start; if one does not fit, the profile is rebuilt from the running jobs (those in the
#   completion heap) and every waiting job is placed again in queue order.
#
# The profile's arrays and the moves' buffer grow inside the kernel (as ``Profile.make_room`` and
# ``Conservative.compress`` grow them) and come back with each chunk. The loop runs in chunks, as
# run_pool does, so the caller can report progress and ask whether to stop; all its state lives in
# arrays, so a chunk goes on where the last one stopped. tests/engine/policies/test_consloop.py
# holds it to the Python path job by job. (It lives here, not in a module of its own, because it
# calls this module's kernels and this module's Conservative runs it: no import cycle.)

#: indices of the scalar state (one int64 array, updated by the kernel)
NOW, NEXT_JOB, STARTED, FINISHED, FREE, HEAP_LEN, PROFILE_LEN, WAITING, DIRTY, NEXT_DUE, FREED_UNTIL, \
    NEVER_FITS_JOB, STATE_SIZE = range(13)

#: what run_conservative returns besides run_pool's DONE, PAUSED, STUCK: a job never fits the profile
NO_FIT = 3


def run_compiled_loop(conservative: Conservative, pacer: Pacer) -> None:
    """Run ``conservative``'s simulation with the compiled loop; the simulation and the policy end in
    the state the Python loop leaves them in (times, starts, the profile, the reservations)."""
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
        raise sim.stuck()
    pacer.done()


@njit(cache=True)
def _advance_from(times, head, length, now):
    """profile.advance on the profile ``times[head:head + length]``, lazily: the head moves past the
    steps before ``now`` (none shifts). Returns (head, length)."""
    i = _step_at(times[head:], length, now)
    head += i
    times[head] = now
    return head, length - i


@njit(cache=True)
def _with_room_from(times, free, head, length, steps):
    """Profile.make_room on the profile ``times[head:head + length]``: the arrays and head, the steps
    moved (to new arrays if they would be more than half full) so that about as much room is left
    before them as after the ``steps`` more, if those would not fit after them. Returns (times,
    free, head)."""
    if head + length + steps <= len(times):
        return times, free, head
    size = len(times) if 2 * (length + steps) <= len(times) else 4 * (length + steps)
    moved_head = (size - length - steps) // 2
    if size == len(times):
        move(times, moved_head, head, length)
        move(free, moved_head, head, length)
        return times, free, moved_head
    grown_times = np.empty(size, dtype=np.int64)
    grown_free = np.empty(size, dtype=np.int64)
    grown_times[moved_head:moved_head + length] = times[head:head + length]
    grown_free[moved_head:moved_head + length] = free[head:head + length]
    return grown_times, grown_free, moved_head


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
def _reserve_earliest(times, free, head, length, now, job, estimate, size, reserved, seq, clock):
    """Conservative._place in the compiled loop: ``job`` reserved at its earliest fit from ``now`` in
    the profile ``times[head:head + length]`` (its reservation numbered from ``clock[0]``). Returns
    (times, free, head, length, start): the arrays may have moved; start is _NEVER_FITS if the job
    never fits (nothing reserved then)."""
    start = earliest_start(times[head:], free[head:], length, now, estimate[job], size[job], FOREVER, 0, 0, 0)
    if start == _NEVER_FITS:
        return times, free, head, length, start
    times, free, head = _with_room_from(times, free, head, length, 2)
    length = add(times[head:], free[head:], length, start, start + estimate[job], -size[job])
    reserved[job] = start
    seq[job] = clock[0]
    clock[0] += 1
    return times, free, head, length, start


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
    # the compression's scratch arrays (profile.move_earlier_headed), as long as the profile's
    scratch_times, scratch_free = np.empty(len(times), dtype=np.int64), np.empty(len(times), dtype=np.int64)
    # the profile is times[head:head + length] (room before it: compressions may shift the steps
    # before a move instead of those after it); at index 0 again when the loop returns
    head = 0
    while next_job < n or heap_len > 0 or now < next_due < FOREVER:
        if finished >= report_at:
            outcome = PAUSED
            break
        t = heap_end[0] if heap_len > 0 else submit[next_job] if next_job < n else next_due
        if next_job < n and submit[next_job] < t:
            t = submit[next_job]
        if now < next_due < t:
            t = next_due     # a wake-up at the earliest reservation (Conservative.schedule)
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
                head, length = _advance_from(times, head, length, t)
                times, free, head = _with_room_from(times, free, head, length, 2)
                length = add(times[head:], free[head:], length, t, expected, size[ended])
                freed_until = max(freed_until, expected)
        # arrivals, in trace order (on_submit: placed at the earliest fit, then queued)
        while next_job < n and submit[next_job] == t:
            arriving = next_job
            head, length = _advance_from(times, head, length, t)
            times, free, head, length, start = _reserve_earliest(times, free, head, length, t, arriving, estimate,
                                                                 size, reserved, seq, clock)
            if start == _NEVER_FITS:
                state[NEVER_FITS_JOB] = arriving
                outcome = NO_FIT
                break
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
            head, length = _advance_from(times, head, length, now)
            count = min(waiting, bound)
            if len(moves) < count:
                moves = np.empty((max(count, 2 * len(moves)), 2), dtype=np.int64)
            lo, hi = now, freed_until
            freed_until = NEVER
            summarize(reserved_start, duration, job_size, waiting, summary, dirty // SPAN)
            dirty = waiting
            done = False
            while not done:
                times, free, head = _with_room_from(times, free, head, length, 4 * count)
                if len(scratch_times) < len(times):
                    scratch_times, scratch_free = np.empty(len(times), dtype=np.int64), np.empty(len(times),
                                                                                              dtype=np.int64)
                head, length, lo, hi, first, done = compress_columns(
                    times, free, head, length, job, reserved_start, duration, job_size, summary, count, reserved, seq,
                    clock, lo, hi, moves, failed, scratch_times, scratch_free, bound == FOREVER, True)
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
            times, free, _ = _with_room_from(times, free, 0, 0, heap_len + 1)    # nothing kept: written from 0
            head = 0
            length = _running_profile(times, free, now, capacity, heap_job, heap_len, start_time, estimate, size)
            next_due = FOREVER
            for q in range(waiting):
                placed = job[q]
                times, free, head, length, start = _reserve_earliest(times, free, head, length, now, placed, estimate,
                                                                     size, reserved, seq, clock)
                if start == _NEVER_FITS:
                    state[NEVER_FITS_JOB] = placed
                    outcome = NO_FIT
                    break
                next_due = min(next_due, start)
                reserved_start[q] = start
            dirty = 0
            if outcome == NO_FIT:
                break
        if outcome == NO_FIT:
            break
        if heap_len == 0 and next_job == n and started < n and not now < next_due < FOREVER:
            outcome = STUCK
            break
    move(times, 0, head, length)
    move(free, 0, head, length)
    state[NOW], state[NEXT_JOB], state[STARTED], state[FINISHED] = now, next_job, started, finished
    state[FREE], state[HEAP_LEN], state[PROFILE_LEN], state[WAITING] = idle, heap_len, length, waiting
    state[DIRTY], state[NEXT_DUE], state[FREED_UNTIL] = dirty, next_due, freed_until
    return outcome, times, free, moves


from engine.policies.registry import Component, register_algorithm  # noqa: E402

register_algorithm(Component("conservative", Conservative, (BACKFILL_BOUND,), "conservative backfilling"))
