"""The availability profile: free processors over time as a step function.

``free[i]`` processors are free on ``[times[i], times[i+1])``; the last step lasts for ever. It is
the one structure behind reservations (conservative backfilling, later planning): "when is the
earliest time a request of n processors for d seconds fits?". Steps before *now* are dropped as
time advances, and equal neighbouring steps are merged, so its length stays near the number of
distinct reservation edges ahead.
"""

from __future__ import annotations

from bisect import bisect_right


class Profile:
    def __init__(self, capacity: int, now: int = 0) -> None:
        self.capacity = capacity
        self.times: list[int] = [now]
        self.free: list[int] = [capacity]

    def __len__(self) -> int:
        return len(self.times)

    def free_at(self, t: int) -> int:
        return self.free[bisect_right(self.times, t) - 1]

    def advance(self, now: int) -> None:
        """Forget the past: the first step begins at ``now``."""
        i = bisect_right(self.times, now) - 1
        if i > 0:
            del self.times[:i]
            del self.free[:i]
        self.times[0] = now

    def reserve(self, start: int, end: int, n: int) -> None:
        self._add(start, end, -n)

    def release(self, start: int, end: int, n: int) -> None:
        self._add(start, end, n)

    def earliest_start(self, now: int, duration: int, n: int, *, before: int | None = None,
                       own: tuple[int, int, int] | None = None) -> int | None:
        """Earliest t >= now with at least ``n`` free on [t, t + duration).

        ``before``: only starts strictly earlier than this count (None otherwise).
        ``own``: (start, end, n) of the caller's current reservation, counted as free, so a
        reserved job can ask where it could move without first giving its place up.
        """
        times, free = self.times, self.free
        last = len(times) - 1
        i = bisect_right(times, now) - 1
        start = now
        own_start, own_end, own_n = own if own else (0, 0, 0)
        while True:
            if before is not None and start >= before:
                return None
            level = free[i]
            if own_n and own_start <= times[i] < own_end:
                level += own_n
            if level >= n:
                if i == last or times[i + 1] - start >= duration:
                    return start
                i += 1
            else:
                if i == last:
                    raise RuntimeError(f"{n} processors never fit: {level} free for ever after t={times[i]}")
                i += 1
                start = times[i]

    def _split(self, t: int) -> int:
        """Index of the step beginning at ``t`` (created if needed; t >= the first step)."""
        times = self.times
        i = bisect_right(times, t) - 1
        if times[i] == t:
            return i
        times.insert(i + 1, t)
        self.free.insert(i + 1, self.free[i])
        return i + 1

    def _add(self, start: int, end: int, delta: int) -> None:
        if end <= start:
            return
        start = max(start, self.times[0])
        i = self._split(start)
        k = self._split(end)
        free = self.free
        for x in range(i, k):
            free[x] += delta
        self._merge_at(k)
        self._merge_at(i)

    def _merge_at(self, i: int) -> None:
        if 0 < i < len(self.times) and self.free[i] == self.free[i - 1]:
            del self.times[i]
            del self.free[i]
