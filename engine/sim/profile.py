"""The availability profile: free processors over time as a step function.

``free[i]`` processors are free on ``[times[i], times[i+1])``; the last step lasts for ever. It is
the one structure behind reservations (conservative backfilling, later planning): "when is the
earliest time a request of n processors for d seconds fits?". Steps before *now* are dropped as
time advances, and equal neighbouring steps are merged, so its length stays near the number of
distinct reservation edges ahead.

The steps live in two int64 arrays with spare room at the end (``length`` of them are in use) and
every operation is a small function compiled by numba (at its first call, see engine.sim.jit), so
that policies can run their own compiled loops over the profile (see conservative compression).
Without numba the same functions run as plain Python: correct, only slower.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.sim.jit import move, njit

if TYPE_CHECKING:   # the simulator's state, read by running_jobs_profile (a type name only: no import at run time)
    from engine.sim.simulator import Simulation

#: "no such time" for the kernels (earliest_* found nothing; no ``before`` limit).
NEVER = -1
FOREVER = 2 ** 62
#: returned by earliest_start when n processors never become free
_NEVER_FITS = -2


class Profile:
    def __init__(self, capacity: int, now: int = 0) -> None:
        self.capacity = capacity
        self.times = np.zeros(64, dtype=np.int64)
        self.free = np.zeros(64, dtype=np.int64)
        self.times[0], self.free[0] = now, capacity
        self.length = 1

    def __len__(self) -> int:
        return self.length

    def steps(self) -> list[tuple[int, int]]:
        """(time, free) of every step, for tests and debugging."""
        return list(zip(self.times[:self.length].tolist(), self.free[:self.length].tolist()))

    def free_at(self, t: int) -> int:
        return int(self.free[_step_at(self.times, self.length, t)])

    def make_room(self, steps: int) -> None:
        """Make sure ``steps`` more steps fit in the arrays (each change adds at most two)."""
        if self.length + steps > len(self.times):
            size = 2 * (self.length + steps)
            self.times = np.resize(self.times, size)
            self.free = np.resize(self.free, size)

    def advance(self, now: int) -> None:
        """Forget the past: the first step begins at ``now``."""
        self.length = advance(self.times, self.free, self.length, now)

    def reserve(self, start: int, end: int, n: int) -> None:
        self.make_room(2)
        self.length = add(self.times, self.free, self.length, start, end, -n)

    def release(self, start: int, end: int, n: int) -> None:
        self.make_room(2)
        self.length = add(self.times, self.free, self.length, start, end, n)

    def earliest_start(self, now: int, duration: int, n: int, *, before: int | None = None,
                       own: tuple[int, int, int] | None = None) -> int | None:
        """Earliest t >= now with at least ``n`` free on [t, t + duration).

        ``before``: only starts strictly earlier than this count (None otherwise).
        ``own``: (start, end, n) of the caller's current reservation, counted as free, so a
        reserved job can ask where it could move without first giving its place up.
        """
        own_start, own_end, own_n = own if own else (0, 0, 0)
        t = earliest_start(self.times, self.free, self.length, now, duration, n,
                           FOREVER if before is None else before, own_start, own_end, own_n)
        if t == _NEVER_FITS:
            raise RuntimeError(f"{n} processors never fit: {self.free[self.length - 1]} free for ever "
                               f"after t={self.times[self.length - 1]}")
        return None if t == NEVER else int(t)


def running_jobs_profile(sim: Simulation) -> Profile:
    """Free processors from now on if running jobs end when expected (one still running past its
    expected end: in one second). One sweep over ``running_ends`` (sorted by expected end); the
    same as reserving each running job from now in an empty profile."""
    now = sim.now
    profile = Profile(sim.capacity, now)
    running = sim.running_ends
    if not running:
        return profile
    size = sim.size
    ends = np.maximum(np.fromiter((end for end, _ in running), np.int64, len(running)), now + 1)
    sizes = np.fromiter((size[job] for _, job in running), np.int64, len(running))
    released = np.cumsum(sizes)
    last_of_each_end = np.append(ends[1:] != ends[:-1], True)
    free_now = sim.capacity - int(released[-1])
    steps = 1 + int(last_of_each_end.sum())
    profile.make_room(steps)
    profile.times[:steps] = np.concatenate(([now], ends[last_of_each_end]))
    profile.free[:steps] = np.concatenate(([free_now], free_now + released[last_of_each_end]))
    profile.length = steps
    return profile


# The kernels: (times, free, length) is the profile; those that change it return the new length.

@njit(cache=True)
def _step_at(times, length, t):
    """Index of the step holding ``t`` (t >= the first step; 0 if before it). A binary search
    whose halving is a select, not a branch: its direction is a coin toss the processor would
    mispredict at every level (the profile's moves and searches call it millions of times)."""
    base, size = 0, length
    while size > 1:
        half = size // 2
        base += half & -np.int64(times[base + half] <= t)   # (a mask: the compiler turned a select into a branch)
        size -= half
    return base


@njit(cache=True)
def advance(times, free, length, now):
    i = _step_at(times, length, now)
    if i > 0:
        length -= i
        move(times, 0, i, length)
        move(free, 0, i, length)
    times[0] = now
    return length


@njit(cache=True)
def _split(times, free, length, t):
    """Make a step begin at ``t``; returns (its index, new length). Needs room for one more step."""
    i = _step_at(times, length, t)
    if times[i] == t:
        return i, length
    move(times, i + 2, i + 1, length - i - 1)
    move(free, i + 2, i + 1, length - i - 1)
    times[i + 1] = t
    free[i + 1] = free[i]
    return i + 1, length + 1


@njit(cache=True)
def _merge_at(times, free, length, i):
    """Merge step ``i`` into step i - 1 if they hold the same number; returns the new length."""
    if 0 < i < length and free[i] == free[i - 1]:
        move(times, i, i + 1, length - 1 - i)
        move(free, i, i + 1, length - 1 - i)
        return length - 1
    return length


@njit(cache=True)
def add_by_steps(times, free, length, start, end, delta):
    """:func:`add` as two splits, the change and two merges, each split or merge shifting every
    later step (the reference add is held to)."""
    start = max(start, times[0])
    if end <= start:
        return length
    i, length = _split(times, free, length, start)
    k, length = _split(times, free, length, end)
    for x in range(i, k):
        free[x] += delta
    length = _merge_at(times, free, length, k)
    return _merge_at(times, free, length, i)


@njit(cache=True)
def add(times, free, length, start, end, delta):
    """Add ``delta`` free processors on [start, end) (the part before the first step is gone).
    Needs room for two more steps.

    The same steps as :func:`add_by_steps`, but the later steps shift once, by what the two ends
    add or merge away together (often nothing: a moved reservation merges a step at one end and
    splits one at the other), and the steps between the ends by what the start adds or removes."""
    start = max(start, times[0])
    if end <= start:
        return length
    if delta == 0:
        return add_by_steps(times, free, length, start, end, delta)
    i = _step_at(times, length, start)
    k = _step_at(times, length, end)
    time_i, free_i, time_k, free_k = times[i], free[i], times[k], free[k]
    if k == i:      # both ends in one step: it becomes (start,) its part in range, the rest
        if time_i != start:
            after = i + 3
        elif i > 0 and free_i + delta == free[i - 1]:
            after = i + 1
        else:
            after = i + 2
        move(times, after, i + 1, length - i - 1)
        move(free, after, i + 1, length - i - 1)
        if after == i + 3:
            times[i + 1], free[i + 1] = start, free_i + delta
        elif after == i + 2:
            free[i] = free_i + delta
        times[after - 1], free[after - 1] = end, free_i
        return length + after - i - 1
    # the start's step becomes 2 steps (split), 1 or none (merged into the one before)
    split_start = time_i != start
    at_start = 2 if split_start else 0 if i > 0 and free_i + delta == free[i - 1] else 1
    # the end's step: 2 (split: its part in range, then the rest), 1 or none (merged)
    at_end = 2 if time_k != end else 0 if free_k == free[k - 1] + delta else 1
    inner = k - i - 1                       # the steps strictly between, shifted by at_start - 1
    middle = i + at_start                   # where they go
    tail = middle + inner + at_end          # where step k + 1 goes
    if at_start > 1:     # the middle moves right: the later steps first, out of its way
        move(times, tail, k + 1, length - k - 1)
        move(free, tail, k + 1, length - k - 1)
        move(times, middle, i + 1, inner)
        move(free, middle, i + 1, inner)
    else:
        move(times, middle, i + 1, inner)
        move(free, middle, i + 1, inner)
        move(times, tail, k + 1, length - k - 1)
        move(free, tail, k + 1, length - k - 1)
    if split_start:
        times[i], free[i] = time_i, free_i
        times[i + 1], free[i + 1] = start, free_i + delta
    elif at_start == 1:
        times[i], free[i] = start, free_i + delta
    for x in range(middle, middle + inner):
        free[x] += delta
    if at_end == 2:
        times[tail - 2], free[tail - 2] = time_k, free_k + delta
        times[tail - 1], free[tail - 1] = end, free_k
    elif at_end == 1:
        times[tail - 1], free[tail - 1] = end, free_k
    return tail + length - k - 1


@njit(cache=True)
def earliest_start(times, free, length, now, duration, n, before, own_start, own_end, own_n):
    """Earliest t >= now, t < before, with ``n`` free on [t, t + duration), counting the own
    reservation (own_n processors on [own_start, own_end)) as free; NEVER if none."""
    last = length - 1
    i = _step_at(times, length, now)
    start = now
    while True:
        if start >= before:
            return NEVER
        level = free[i]
        if own_start <= times[i] < own_end:
            level += own_n
        if level >= n:
            if i == last or times[i + 1] - start >= duration:
                return start
            i += 1
        else:
            if i == last:
                return _NEVER_FITS
            i += 1
            start = times[i]


@njit(cache=True)
def move_earlier_headed(all_times, all_free, head, length, i, new, start, duration, n, scratch_times, scratch_free,
                        front):
    """Move a reservation of ``n`` processors for ``duration`` from ``start`` to ``new`` < start in
    the profile ``times[head:head + length]`` (the job's own reservation is in it; step ``i``,
    counted from head, holds ``new``): the steps ``add(new, min(new + duration, start), -n)`` then
    ``add(max(new + duration, start), start + duration, n)`` leave, in one pass with the later steps
    shifted once, by what the move adds or removes in all (usually nothing: a step split at one end,
    one merged away at the other). Returns (head, length).

    The steps holding each of the two changed ranges are rewritten into the scratch arrays (room
    for the profile's length and four) with equal neighbours merged; the steps between the two
    ranges (inside the job's windows: many for a long job) only shift, as does the tail. Needs room
    for four more steps after the profile. ``front``: when the move adds or removes steps in all,
    the steps before it may shift instead of those after it (the head moves; the steps keep their
    indices from it), if fewer of them shift that way and the head has room (``head`` steps before
    it)."""
    times, free = all_times[head:], all_free[head:]
    lose = min(new + duration, start)           # -n on [new, lose)
    gain = max(new + duration, start)           # +n on [gain, end)
    end = start + duration
    last = length - 1
    lost = i                                    # the step holding lose
    while lost < last and times[lost + 1] <= lose:
        lost += 1
    gained = lost                               # the step holding gain
    if gained < last and times[gained + 1] <= gain:
        gained = _step_at(times, length, gain)
    ended = gained                              # the step holding end
    while ended < last and times[ended + 1] <= end:
        ended += 1
    if gained <= lost:      # one step holds both: rewrite the steps from i to ended at once
        count = _rewrite(times, free, i, ended, new, lose, -n, gain, end, n, scratch_times, scratch_free, 0)
        net = count - (ended - i + 1)
        if front and net != 0 and head >= net and i < length - ended - 1:
            return _place_front(all_times, all_free, head, i, net, count, scratch_times, scratch_free), length + net
        return head, _place(times, free, length, i, ended, count, scratch_times, scratch_free, 0)
    count = _rewrite(times, free, i, lost, new, lose, -n, FOREVER, FOREVER, 0, scratch_times, scratch_free, 0)
    total = _rewrite(times, free, gained, ended, gain, end, n, FOREVER, FOREVER, 0, scratch_times, scratch_free,
                     count)
    shift = count - (lost - i + 1)              # of the steps between the two ranges
    between = gained - lost - 1
    tail = length - ended - 1
    moved_tail = gained + shift + total - count  # where step ended + 1 goes
    net = moved_tail - ended - 1                # the steps added in all
    if front and net != 0 and head >= net:
        second = total - count - (ended - gained + 1)   # the steps the second range adds
        if i + (between if second != 0 else 0) < tail + (between if shift != 0 else 0):
            return _move_front(all_times, all_free, head, i, lost, gained, ended, net, count, total, scratch_times,
                               scratch_free), length + net
    if shift > 0:   # the steps between move right: the tail first, out of their way
        move(times, moved_tail, ended + 1, tail)
        move(free, moved_tail, ended + 1, tail)
        move(times, lost + 1 + shift, lost + 1, between)
        move(free, lost + 1 + shift, lost + 1, between)
    else:
        move(times, lost + 1 + shift, lost + 1, between)
        move(free, lost + 1 + shift, lost + 1, between)
        move(times, moved_tail, ended + 1, tail)
        move(free, moved_tail, ended + 1, tail)
    for x in range(count):
        times[i + x], free[i + x] = scratch_times[x], scratch_free[x]
    for x in range(count, total):
        times[gained + shift + x - count], free[gained + shift + x - count] = scratch_times[x], scratch_free[x]
    return head, moved_tail + tail


@njit(cache=True)
def _place_front(times, free, head, i, net, count, out_times, out_free):
    """_place with the steps before ``i`` shifted (by ``net`` to the left) instead of the later ones:
    the ``count`` steps of ``out_*`` end where the replaced ones did. Returns the new head."""
    moved_head = head - net
    move(times, moved_head, head, i)
    move(free, moved_head, head, i)
    for x in range(count):
        times[moved_head + i + x], free[moved_head + i + x] = out_times[x], out_free[x]
    return moved_head


@njit(cache=True)
def _move_front(times, free, head, i, lost, gained, ended, net, count, total, out_times, out_free):
    """move_earlier_headed's last part with the steps after ``ended`` in place: the steps before ``i`` shift
    by ``net`` to the left, those between the two ranges by what the second range adds. Returns the
    new head."""
    between = gained - lost - 1
    moved_head = head - net
    after = head + ended + 1 - (total - count)      # where the second range's steps go
    between_at = after - between
    if net > 0:     # the steps before move left: first, out of the others' way
        move(times, moved_head, head, i)
        move(free, moved_head, head, i)
        move(times, between_at, head + lost + 1, between)
        move(free, between_at, head + lost + 1, between)
    else:
        move(times, between_at, head + lost + 1, between)
        move(free, between_at, head + lost + 1, between)
        move(times, moved_head, head, i)
        move(free, moved_head, head, i)
    for x in range(count):
        times[moved_head + i + x], free[moved_head + i + x] = out_times[x], out_free[x]
    for x in range(count, total):
        times[after + x - count], free[after + x - count] = out_times[x], out_free[x]
    return moved_head


@njit(cache=True)
def _rewrite(times, free, first, last, lose_from, lose_to, lose, gain_from, gain_to, gain, out_times, out_free, count):
    """Write the steps ``first`` to ``last`` with ``lose`` added on [lose_from, lose_to) and ``gain``
    on [gain_from, gain_to) (FOREVER, FOREVER: none) to ``out_*`` from ``count`` on, equal
    neighbours merged (also into step first - 1); step first holds lose_from, step last the
    larger end, and the last step written holds what step last did. Returns the count written to."""
    previous = free[first - 1] if first > 0 else FOREVER
    edges = 4 if gain_from != FOREVER else 2
    j = first                # the next original step to read
    edge = 0                 # the next edge to read: lose_from, lose_to, gain_from, gain_to
    held = free[first]       # the original number free at the current point
    while j <= last or edge < edges:
        next_step = times[j] if j <= last else FOREVER
        next_edge = (lose_from if edge == 0 else lose_to if edge == 1 else gain_from if edge == 2
                     else gain_to if edge == 3 else FOREVER)
        point = min(next_step, next_edge) if edge < edges else next_step
        if next_step == point:
            held = free[j]
            j += 1
        while edge < edges and (lose_from if edge == 0 else lose_to if edge == 1 else gain_from if edge == 2
                                else gain_to) == point:
            edge += 1
        level = held + (lose if lose_from <= point < lose_to else 0) + (gain if gain_from <= point < gain_to else 0)
        if level != previous:
            out_times[count], out_free[count] = point, level
            count += 1
            previous = level
    return count


@njit(cache=True)
def _place(times, free, length, first, last, count, out_times, out_free, offset):
    """Replace steps ``first`` to ``last`` by ``count`` steps of ``out_*`` (from ``offset``), the
    later steps shifted once; returns the new length."""
    tail = length - last - 1
    move(times, first + count, last + 1, tail)
    move(free, first + count, last + 1, tail)
    for x in range(count):
        times[first + x], free[first + x] = out_times[offset + x], out_free[offset + x]
    return first + count + tail
