"""The availability profile in blocks: the same step function as :mod:`engine.sim.profile`, for long ones.

:class:`~engine.sim.profile.Profile` keeps its steps in one pair of arrays, so every step it adds
or merges away shifts all the later ones, and a search walks every step between its start and
its answer. Both cost the profile's length, and under conservative backfilling the profile is as
long as the waiting queue (two steps a reservation, less what they share): on RICC-2010, a few
hundred steps on average and thousands at peak, with some 180 million searches and 48 million
moves in a run.

Here the steps, in time order, are cut into blocks of at most :data:`BLOCK` steps (rows of two 2-D
arrays, in any physical order; ``order`` lists them in time order). A step added or removed
shifts only its own block (a full block is split in two halves, an emptied one dropped, two small
neighbours joined), and each block keeps the least and the largest number of processors free on
its steps, so a search skips whole blocks: those where none has ``n`` free while it looks for a
start, and those where all have while it looks for the end of a run of steps with ``n`` free.

The steps are exactly those of the flat profile (the same splits and merges: no two neighbouring
steps hold the same number), and :func:`search` answers exactly as
:func:`engine.sim.profile.earliest_start` (tests/engine/sim/test_blockprofile.py holds both to
it). Kernels that may add blocks need spare ones (:meth:`BlockProfile.make_room`).
"""

from __future__ import annotations

import numpy as np

from engine.sim.jit import njit
from engine.sim.profile import _NEVER_FITS, FOREVER, NEVER, Profile

#: steps a block holds at most
BLOCK = 32
#: indices of the scalar state (``meta``): blocks in use, spare blocks on the stack
BLOCKS, SPARE = 0, 1
#: most blocks one add() may take (each of its two splits may split a block)
BLOCKS_PER_ADD = 2


class BlockProfile:
    """Free processors over time, in blocks of steps (see the module docstring); the interface of
    :class:`~engine.sim.profile.Profile` that conservative backfilling uses."""

    def __init__(self, capacity: int, now: int = 0, blocks: int = 16) -> None:
        self.capacity = capacity
        self.times = np.zeros((blocks, BLOCK), dtype=np.int64)
        self.free = np.zeros((blocks, BLOCK), dtype=np.int64)
        self.count = np.zeros(blocks, dtype=np.int64)      # steps in each (physical) block
        #: in time order, the k-th block: its row, first time, least and largest free
        self.order = np.zeros(blocks, dtype=np.int64)
        self.first = np.zeros(blocks, dtype=np.int64)
        self.low = np.zeros(blocks, dtype=np.int64)
        self.high = np.zeros(blocks, dtype=np.int64)
        self.spare = np.arange(blocks - 1, 0, -1, dtype=np.int64)   # rows not in use (a stack)
        self.spare = np.concatenate((self.spare, np.zeros(1, dtype=np.int64)))
        self.meta = np.zeros(2, dtype=np.int64)
        self.meta[BLOCKS], self.meta[SPARE] = 1, blocks - 1
        self.times[0, 0], self.free[0, 0], self.count[0] = now, capacity, 1
        self.first[0], self.low[0], self.high[0] = now, capacity, capacity

    @classmethod
    def from_steps(cls, capacity: int, times: np.ndarray, free: np.ndarray) -> BlockProfile:
        """The profile of these steps (a flat profile's ``times[:length]``, ``free[:length]``)."""
        steps = len(times)
        per = BLOCK // 2
        blocks = -(-steps // per)
        profile = cls(capacity, int(times[0]), max(16, 2 * blocks))
        profile.meta[SPARE] = len(profile.count) - blocks
        profile.spare[:profile.meta[SPARE]] = np.arange(len(profile.count) - 1, blocks - 1, -1)
        for k in range(blocks):
            part = slice(k * per, min(steps, (k + 1) * per))
            size = part.stop - part.start
            profile.times[k, :size], profile.free[k, :size] = times[part], free[part]
            profile.count[k] = size
            profile.order[k], profile.first[k] = k, times[part.start]
            profile.low[k], profile.high[k] = free[part].min(), free[part].max()
        profile.meta[BLOCKS] = blocks
        return profile

    def arrays(self) -> tuple[np.ndarray, ...]:
        """What the kernels take, in their order."""
        return (self.times, self.free, self.count, self.order, self.first, self.low, self.high,
                self.spare, self.meta)

    def __len__(self) -> int:
        return int(self.count[self.order[:self.meta[BLOCKS]]].sum())

    def steps(self) -> list[tuple[int, int]]:
        """(time, free) of every step, for tests and debugging."""
        rows = self.order[:self.meta[BLOCKS]].tolist()
        return [(int(self.times[b, p]), int(self.free[b, p])) for b in rows for p in range(int(self.count[b]))]

    def free_at(self, t: int) -> int:
        k, p = locate(self.times, self.count, self.order, self.first, self.meta[BLOCKS], t)
        return int(self.free[self.order[k], p])

    def make_room(self, adds: int) -> None:
        """Make sure ``adds`` more add() calls find the blocks they may need."""
        needed = BLOCKS_PER_ADD * adds
        if self.meta[SPARE] >= needed:
            return
        old = len(self.count)
        size = max(2 * old, old + needed)
        grown = size - old
        self.times = np.concatenate((self.times, np.zeros((grown, BLOCK), dtype=np.int64)))
        self.free = np.concatenate((self.free, np.zeros((grown, BLOCK), dtype=np.int64)))
        self.count = np.concatenate((self.count, np.zeros(grown, dtype=np.int64)))
        for name in ("order", "first", "low", "high"):
            setattr(self, name, np.concatenate((getattr(self, name), np.zeros(grown, dtype=np.int64))))
        spare = int(self.meta[SPARE])
        self.spare = np.concatenate((np.arange(size - 1, old - 1, -1, dtype=np.int64), self.spare[:spare],
                                     np.zeros(old - spare, dtype=np.int64)))
        self.meta[SPARE] = spare + grown

    def advance(self, now: int) -> None:
        """Forget the past: the first step begins at ``now``."""
        advance(*self.arrays(), now)

    def reserve(self, start: int, end: int, n: int) -> None:
        self.make_room(1)
        add(*self.arrays(), start, end, -n)

    def release(self, start: int, end: int, n: int) -> None:
        self.make_room(1)
        add(*self.arrays(), start, end, n)

    def earliest_start(self, now: int, duration: int, n: int) -> int:
        """Earliest t >= now with at least ``n`` free on [t, t + duration)."""
        t = search(self.times, self.free, self.count, self.order, self.first, self.low, self.high,
                   self.meta[BLOCKS], now, duration, n, FOREVER, FOREVER)
        if t == _NEVER_FITS:
            raise RuntimeError(f"{n} processors never fit: {self.steps()[-1][1]} free for ever "
                               f"after t={self.steps()[-1][0]}")
        return int(t)

    def flat(self) -> Profile:
        """The same steps as a flat :class:`~engine.sim.profile.Profile` (tests, debugging)."""
        steps = self.steps()
        profile = Profile(self.capacity, steps[0][0])
        profile.make_room(len(steps))
        profile.times[:len(steps)] = [t for t, _ in steps]
        profile.free[:len(steps)] = [f for _, f in steps]
        profile.length = len(steps)
        return profile


# The kernels. A profile is (times, free, count, order, first, low, high, spare, meta): see
# BlockProfile. A step's place is (k, p): the k-th block in time order, p-th step in it.

@njit(cache=True)
def locate(times, count, order, first, blocks, t):
    """(k, p) of the step holding ``t`` (the first step if t is before it)."""
    lo, hi = 0, blocks
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if first[mid] <= t:
            lo = mid
        else:
            hi = mid
    b = order[lo]
    left, right = 0, count[b]
    while right - left > 1:
        mid = (left + right) // 2
        if times[b, mid] <= t:
            left = mid
        else:
            right = mid
    return lo, left


@njit(cache=True)
def _summarize(times, free, count, order, first, low, high, k):
    """Recompute the k-th block's first time, least and largest free."""
    b = order[k]
    least, most = free[b, 0], free[b, 0]
    for p in range(1, count[b]):
        f = free[b, p]
        if f < least:
            least = f
        if f > most:
            most = f
    first[k], low[k], high[k] = times[b, 0], least, most


@njit(cache=True)
def _open_block(count, order, first, low, high, spare, meta, k):
    """Insert an empty block at position k of the time order (from the spare ones); its row."""
    blocks = meta[BLOCKS]
    meta[SPARE] -= 1
    row = spare[meta[SPARE]]
    for x in range(blocks, k, -1):
        order[x], first[x], low[x], high[x] = order[x - 1], first[x - 1], low[x - 1], high[x - 1]
    order[k] = row
    count[row] = 0
    meta[BLOCKS] = blocks + 1
    return row


@njit(cache=True)
def _close_block(count, order, first, low, high, spare, meta, k):
    """Drop the k-th block of the time order (its row goes back to the spare ones)."""
    blocks = meta[BLOCKS]
    spare[meta[SPARE]] = order[k]
    meta[SPARE] += 1
    for x in range(k, blocks - 1):
        order[x], first[x], low[x], high[x] = order[x + 1], first[x + 1], low[x + 1], high[x + 1]
    meta[BLOCKS] = blocks - 1


@njit(cache=True)
def _insert(times, free, count, order, first, low, high, spare, meta, k, p, t, f):
    """Insert step (t, f) at place (k, p) (p <= the block's count), splitting a full block."""
    b = order[k]
    if count[b] == BLOCK:
        half = BLOCK // 2
        row = _open_block(count, order, first, low, high, spare, meta, k + 1)
        for x in range(half, BLOCK):
            times[row, x - half] = times[b, x]
            free[row, x - half] = free[b, x]
        count[row] = BLOCK - half
        count[b] = half
        _summarize(times, free, count, order, first, low, high, k)
        _summarize(times, free, count, order, first, low, high, k + 1)
        if p > half:
            k, p, b = k + 1, p - half, row
    for x in range(count[b], p, -1):
        times[b, x] = times[b, x - 1]
        free[b, x] = free[b, x - 1]
    times[b, p] = t
    free[b, p] = f
    count[b] += 1
    if p == 0:
        first[k] = t
    if f < low[k]:
        low[k] = f
    if f > high[k]:
        high[k] = f


@njit(cache=True)
def _remove(times, free, count, order, first, low, high, spare, meta, k, p):
    """Remove the step at (k, p); an emptied block is dropped, a small one joined to its neighbour."""
    b = order[k]
    for x in range(p, count[b] - 1):
        times[b, x] = times[b, x + 1]
        free[b, x] = free[b, x + 1]
    count[b] -= 1
    if count[b] == 0:
        _close_block(count, order, first, low, high, spare, meta, k)
        return
    if k + 1 < meta[BLOCKS] and count[b] + count[order[k + 1]] <= BLOCK // 2:
        _join(times, free, count, order, first, low, high, spare, meta, k)
    elif k > 0 and count[b] + count[order[k - 1]] <= BLOCK // 2:
        _join(times, free, count, order, first, low, high, spare, meta, k - 1)
    else:
        _summarize(times, free, count, order, first, low, high, k)


@njit(cache=True)
def _join(times, free, count, order, first, low, high, spare, meta, k):
    """Move the steps of block k + 1 to the end of block k and drop k + 1."""
    b, c = order[k], order[k + 1]
    base = count[b]
    for x in range(count[c]):
        times[b, base + x] = times[c, x]
        free[b, base + x] = free[c, x]
    count[b] = base + count[c]
    _close_block(count, order, first, low, high, spare, meta, k + 1)
    _summarize(times, free, count, order, first, low, high, k)


@njit(cache=True)
def _split(times, free, count, order, first, low, high, spare, meta, t):
    """Make a step begin at ``t`` (t >= the first step)."""
    k, p = locate(times, count, order, first, meta[BLOCKS], t)
    b = order[k]
    if times[b, p] != t:
        _insert(times, free, count, order, first, low, high, spare, meta, k, p + 1, t, free[b, p])


@njit(cache=True)
def _merge_at(times, free, count, order, first, low, high, spare, meta, t):
    """Merge the step beginning at ``t`` into the one before if they hold the same number."""
    k, p = locate(times, count, order, first, meta[BLOCKS], t)
    b = order[k]
    if p > 0:
        before = free[b, p - 1]
    elif k > 0:
        a = order[k - 1]
        before = free[a, count[a] - 1]
    else:
        return
    if free[b, p] == before:
        _remove(times, free, count, order, first, low, high, spare, meta, k, p)


@njit(cache=True)
def add(times, free, count, order, first, low, high, spare, meta, start, end, delta):
    """Add ``delta`` free processors on [start, end) (the part before the first step is gone), as
    engine.sim.profile.add. Needs BLOCKS_PER_ADD spare blocks."""
    start = max(start, first[0])
    if end <= start:
        return
    _split(times, free, count, order, first, low, high, spare, meta, start)
    _split(times, free, count, order, first, low, high, spare, meta, end)
    blocks = meta[BLOCKS]
    k, p = locate(times, count, order, first, blocks, start)
    while k < blocks:
        b = order[k]
        whole = p == 0
        while p < count[b] and times[b, p] < end:
            free[b, p] += delta
            p += 1
        if whole and p == count[b]:
            low[k] += delta
            high[k] += delta
        else:
            _summarize(times, free, count, order, first, low, high, k)
        if p < count[b]:
            break
        k += 1
        p = 0
    _merge_at(times, free, count, order, first, low, high, spare, meta, end)
    _merge_at(times, free, count, order, first, low, high, spare, meta, start)


@njit(cache=True)
def advance(times, free, count, order, first, low, high, spare, meta, now):
    """Forget the past: drop the steps before the one holding ``now``, which then begins at now."""
    k, p = locate(times, count, order, first, meta[BLOCKS], now)
    if k > 0:
        blocks = meta[BLOCKS]
        for x in range(k):
            spare[meta[SPARE]] = order[x]
            meta[SPARE] += 1
        for x in range(blocks - k):
            order[x], first[x], low[x], high[x] = order[x + k], first[x + k], low[x + k], high[x + k]
        meta[BLOCKS] = blocks - k
    b = order[0]
    if p > 0:
        for x in range(count[b] - p):
            times[b, x] = times[b, x + p]
            free[b, x] = free[b, x + p]
        count[b] -= p
        times[b, 0] = now
        _summarize(times, free, count, order, first, low, high, 0)
    else:
        times[b, 0] = now
        first[0] = now


@njit(cache=True)
def search(times, free, count, order, first, low, high, blocks, since, duration, n, limit, own_start):
    """Earliest t >= since, t < limit, with ``n`` free on [t, min(t + duration, own_start)): NEVER
    if none, _NEVER_FITS if n are never free.

    The same answer as engine.sim.profile.earliest_start(since, duration, n, limit, own_start,
    own_start + duration, n) when the own reservation (n processors on [own_start, own_start +
    duration)) is in the profile and limit <= own_start: from own_start on, the window lies in the
    job's own reservation. With own_start = limit = FOREVER, a plain search."""
    k, p = locate(times, count, order, first, blocks, since)
    b = order[k]
    candidate = since
    if candidate >= limit:
        return NEVER
    last = blocks - 1
    while True:
        # look for a step with n free; (k, p) is the first one to look at, candidate its start
        while free[b, p] < n:
            if p + 1 < count[b]:
                p += 1
            else:
                if k == last:
                    return _NEVER_FITS
                k += 1
                p = 0
                while high[k] < n and k < last:    # no step of block k has n free
                    if first[k] >= limit:
                        return NEVER
                    k += 1
                b = order[k]
            candidate = times[b, p]
            if candidate >= limit:
                return NEVER
        # a run of steps with n free from candidate: does it last until the goal?
        goal = min(candidate + duration, own_start)
        while True:
            if p + 1 < count[b]:
                p += 1
            else:
                if k == last:
                    return candidate    # the last step lasts for ever
                k += 1
                p = 0
                while low[k] >= n:      # every step of block k has n free
                    if first[k] >= goal or k == last:
                        return candidate
                    k += 1
                b = order[k]
            if times[b, p] >= goal:
                return candidate
            if free[b, p] < n:
                break
