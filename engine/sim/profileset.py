"""Many availability profiles at once: one per cluster, as the rows of two 2-D arrays.

Row ``c`` is a :class:`engine.sim.profile.Profile` of cluster c (free cores over time as a step
function, equal neighbouring steps merged) and the same kernels of engine.sim.profile run on it;
``length[c]`` of its steps are in use. Keeping every row in one pair of arrays lets one compiled
call search all of a job's clusters (node-level conservative backfilling asks up to 47 of them per
job, engine.policies.nodecons).

Rows advance lazily: a row is moved up to *now* (its past steps dropped) only when an operation
touches it, not at every event. That changes no answer: a row nothing touched since its last
advance is the same step function from now on, and advancing it later drops the same steps.
"""

from __future__ import annotations

import numpy as np

from engine.sim.jit import njit
from engine.sim.profile import _NEVER_FITS as NEVER_FITS
from engine.sim.profile import NEVER, add, advance, earliest_start


class ProfileSet:
    """One core profile per cluster (see the module docstring)."""

    def __init__(self, capacities: list[int], now: int = 0, width: int = 64) -> None:
        k = len(capacities)
        self.capacities = capacities
        self.times = np.zeros((k, width), dtype=np.int64)
        self.free = np.zeros((k, width), dtype=np.int64)
        self.times[:, 0] = now
        self.free[:, 0] = capacities
        self.length = np.ones(k, dtype=np.int64)
        #: changes made to each row so far (a row whose count did not move is the same from now on)
        self.version = np.zeros(k, dtype=np.int64)

    def steps(self, c: int, now: int) -> list[tuple[int, int]]:
        """(time, free) of every step of cluster c's row from ``now`` on (tests and debugging)."""
        advance_row(self.times, self.free, self.length, c, now)
        n = int(self.length[c])
        return list(zip(self.times[c, :n].tolist(), self.free[c, :n].tolist()))

    def make_room(self, steps: int) -> None:
        """Make sure every row has room for ``steps`` more steps (each change adds at most two)."""
        width = self.times.shape[1]
        need = int(self.length.max()) + steps
        if need > width:
            size = max(2 * width, 2 * need)
            for name in ("times", "free"):
                old = getattr(self, name)
                grown = np.zeros((old.shape[0], size), dtype=np.int64)
                grown[:, :width] = old
                setattr(self, name, grown)

    def change(self, c: int, now: int, start: int, end: int, delta: int) -> None:
        """Add ``delta`` free cores on [start, end) to cluster c's row (reserve: delta < 0)."""
        if self.length[c] + 2 > self.times.shape[1]:
            self.make_room(2)
        change(self.times, self.free, self.length, self.version, c, now, start, end, delta)


@njit(cache=True)
def advance_row(times, free, length, c, now):
    """Bring row c up to ``now`` (a no-op if it is there already)."""
    if times[c, 0] != now:
        length[c] = advance(times[c], free[c], length[c], now)


@njit(cache=True)
def change(times, free, length, version, c, now, start, end, delta):
    advance_row(times, free, length, c, now)
    length[c] = add(times[c], free[c], length[c], start, end, delta)
    version[c] += 1


@njit(cache=True)
def duration_on(estimate, factor):
    """A job's believed duration on a cluster of speed factor ``factor`` (NodeAllocator.estimate_on)."""
    if factor == 1.0:
        return estimate
    return np.int64(np.ceil(estimate * factor))


@njit(cache=True)
def earliest_over(times, free, length, now, clusters, cores, nodes, exclusive, node_cores, estimate, factor,
                  avail_from, avail_to, before, only, own_c, own_start, own_end, own_n, own_known):
    """The cluster (of ``clusters``, in that order) where a job can start earliest, and that start:
    (cluster, start), or (-1, NEVER) if no start before ``before`` (FOREVER: no limit) fits; ties
    go to the first cluster. The job holds ``cores`` cores on a cluster, or, if ``exclusive``,
    ``nodes`` whole nodes (``node_cores[c]`` cores each); ``only[c]``: whether
    cluster c is searched (the own cluster always is); (own_c, own_start, own_end, own_n): the job's
    current reservation, counted as free (own_c = -1: none). A cluster's start must leave the job
    ending within its availability window. (NEVER_FITS, c) if the job never fits on cluster c.

    ``own_known``: the own cluster is known to give no start before ``before`` (it is not searched).
    The third number says whether the own cluster was searched up to ``before`` and gave none."""
    best_c, best_t, own_none = -1, NEVER, False
    for x in range(len(clusters)):
        c = clusters[x]
        if c == own_c and own_known or not only[c] and c != own_c:
            continue
        duration = duration_on(estimate, factor[c])
        held = nodes * node_cores[c] if exclusive else cores
        start = max(now, avail_from[c])
        limit = before if best_c < 0 else min(before, best_t)
        advance_row(times, free, length, c, now)
        if c == own_c:
            t = earliest_start(times[c], free[c], length[c], start, duration, held, limit,
                               own_start, own_end, own_n)
        else:
            t = earliest_start(times[c], free[c], length[c], start, duration, held, limit, 0, 0, 0)
        if t == NEVER_FITS:
            return NEVER_FITS, c, False
        if t == NEVER or t + duration > avail_to[c]:
            if c == own_c and limit == before:
                own_none = True
            continue
        if best_c < 0 or t < best_t:
            best_c, best_t = c, t
    return best_c, best_t, own_none

