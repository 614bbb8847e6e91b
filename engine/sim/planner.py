"""Plans of waiting jobs, and their improvement by simulated annealing (the PLAN 1/2/3 kernel).

A *plan* of a permutation of the waiting jobs places them one at a time, in permutation order, at
the earliest time the availability profile allows (running jobs hold their processors until their
expected ends); each placed job then holds its processors in the profile for the next ones.

The annealing kernel (:func:`anneal`) evaluates thousands of neighbouring permutations per
decision, so evaluating one is made cheap in four exact ways:

* **Snapshots.** The profile before each position of the current permutation is kept (every
  ``stride``-th position when memory is short), so a neighbour is re-planned only from the first
  position it changes. Placing a job copies its source snapshot into the next one with the job's
  reservation folded in (one pass), so no separate copy is needed.
* **Convergence.** Past the last changed position, once every re-placed job got the start it has
  in the current plan, the profile is the current one and so is the rest of the plan: the cost is
  the new prefix plus the current suffix.
* **Early rejection.** The acceptance test is decided before the evaluation: the random number u
  gives the largest acceptable cost, and every cost here is a sum of non-negative terms (or a
  maximum), so a re-plan stops as soon as its partial cost passes that limit.
* **Lower bound.** When the best plan reaches the cost of every job starting now (for the
  makespan: the longest of the running jobs' ends and the waiting jobs' durations), nothing can
  beat it and annealing stops.

None of these changes which permutation is chosen. The kernels are compiled by numba when it is
installed; without it the same functions run as plain Python (correct, much slower).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.sim.jit import njit   # numba, at the first call of a kernel

#: What a plan's cost measures (the ``kind`` argument of the kernels).
MEAN_WAIT = 0            # PLAN 1: sum of (start - submit) over the planned jobs
MEAN_SQUARED_WAIT = 1    # PLAN 2: sum of (start - submit)²
MAKESPAN = 2             # PLAN 3: latest expected end of running and planned jobs, from now

#: How a cost increase is scaled in the acceptance test exp(-increase / (T * scale)).
SCALE_INITIAL = 0        # scale = cost of the initial (queue order) plan
SCALE_CURRENT = 1        # scale = cost of the current plan (a relative change)
SCALE_ABSOLUTE = 2       # scale = 1: the increase in the cost's own unit (seconds, seconds²)

#: A snapshot of the profile is kept before every SNAPSHOT_EVERY-th position (a re-plan starts up
#: to SNAPSHOT_EVERY - 1 positions early; fewer snapshots to write and to keep in cache), or
#: sparser when the two banks of snapshots would need more than SNAPSHOT_BUDGET_BYTES.
SNAPSHOT_EVERY = 8
SNAPSHOT_BUDGET_BYTES = 64 * 2 ** 20


@njit(cache=True)
def place(times, free, length, duration, n):
    """Place a job of ``n`` processors for ``duration`` at its earliest fit in the profile
    (times, free)[:length], whose first step begins now, and reserve it there (in place; the arrays
    need room for one more step). Equal neighbouring steps are merged. Returns (start, new length).

    In a busy plan most jobs land near the end of the profile, so the steps moved to make room
    are few; the scan from now is the main cost."""
    # earliest fit: a start is always the beginning of a step; the last step has every processor
    # free, so the scan ends there at the latest
    first = 0
    start = times[0]
    i = 0
    last = length - 1
    while True:
        if free[i] >= n:
            if i == last or times[i + 1] - start >= duration:
                break
            i += 1
        else:
            i += 1
            first = i
            start = times[i]
    end = start + duration
    x = first
    while x < length and times[x] < end:
        free[x] -= n
        x += 1
    if x == length or times[x] != end:
        # split the step holding `end`: from `end` on it keeps its free processors
        for y in range(length, x, -1):
            times[y] = times[y - 1]
            free[y] = free[y - 1]
        times[x] = end
        free[x] = free[x - 1] + n
        length += 1
    elif free[x] == free[x - 1]:
        length = _remove_step(times, free, length, x)
    if first > 0 and free[first] == free[first - 1]:
        length = _remove_step(times, free, length, first)
    return start, length


@njit(cache=True)
def _remove_step(times, free, length, x):
    for y in range(x, length - 1):
        times[y] = times[y + 1]
        free[y] = free[y + 1]
    return length - 1


@njit(cache=True)
def term_of(kind, waited, offset, duration):
    """One job's contribution to the cost: it waited ``waited`` s and starts ``offset`` s from now."""
    if kind == MEAN_WAIT:
        return float(waited + offset)
    if kind == MEAN_SQUARED_WAIT:
        wait = float(waited + offset)
        return wait * wait
    return float(offset + duration)


@njit(cache=True)
def combine(kind, cost, term):
    if kind == MAKESPAN:
        return max(cost, term)
    return cost + term


@njit(cache=True)
def plan_cost(order, duration, size, waited, kind, base_t, base_f, base_len, base_cost, starts):
    """Plan ``order`` (indices into duration/size/waited) from the base profile; writes each job's
    start offset from now into ``starts`` (by job index) and returns the plan's cost."""
    times = np.empty(base_len + len(order) + 1, dtype=np.int64)
    free = np.empty(base_len + len(order) + 1, dtype=np.int64)
    times[:base_len] = base_t[:base_len]
    free[:base_len] = base_f[:base_len]
    now = base_t[0]
    length = base_len
    cost = base_cost
    for k in range(len(order)):
        job = order[k]
        start, length = place(times, free, length, duration[job], size[job])
        starts[job] = start - now
        cost = combine(kind, cost, term_of(kind, waited[job], start - now, duration[job]))
    return cost


@njit(cache=True)
def lower_bound(duration, waited, kind, base_cost):
    """The cost if every job started now: no plan costs less."""
    cost = base_cost
    for job in range(len(duration)):
        cost = combine(kind, cost, term_of(kind, waited[job], 0, duration[job]))
    return cost


@njit(cache=True)
def anneal(order, duration, size, waited, kind, base_t, base_f, base_len, base_cost,
           temperatures, moves_per_temperature, scale_mode, pick, put, draw, stride,
           snap_t, snap_f, snap_len, best_order, best_starts):
    """Simulated annealing over permutations of ``order`` (Algorithm 1 of the paper).

    ``temperatures`` are the successive temperatures; at each, ``moves_per_temperature`` moves: move
    m takes the job at position pick[m] out and puts it at position put[m] (0..n-2, skipping its own
    position) and is accepted if it is no worse, or else with probability exp(-increase / (T *
    scale)), decided by draw[m] in [0, 1). Snapshots of the profile before every ``stride``-th
    position live in snap_t/snap_f[bank, slot] (two banks: current and candidate); the jobs between
    two snapshots are placed in one working profile, in place.

    Writes the best permutation found into ``best_order`` and its start offsets (by job) into
    ``best_starts``; returns (initial cost, best cost, moves evaluated, moves accepted).
    """
    n = len(order)
    now = base_t[0]
    perm = order.copy()
    starts = np.empty(n, dtype=np.int64)          # current plan: start offset by job
    terms = np.empty(n, dtype=np.float64)         # current plan: cost term by position
    prefix = np.empty(n + 1, dtype=np.float64)    # cost of the first k positions (with base_cost)
    suffix = np.empty(n + 1, dtype=np.float64)    # kind MAKESPAN: max term of positions >= k
    which = np.zeros(n // stride + 1, dtype=np.int64)   # bank holding each slot's current snapshot
    cand = np.empty(n, dtype=np.int64)
    cand_starts = np.empty(n, dtype=np.int64)
    cand_terms = np.empty(n, dtype=np.float64)
    work_t = np.empty(snap_t.shape[2], dtype=np.int64)   # the profile being planned, in place
    work_f = np.empty(snap_t.shape[2], dtype=np.int64)

    # the initial plan, keeping its snapshots in bank 0
    work_t[:base_len] = base_t[:base_len]
    work_f[:base_len] = base_f[:base_len]
    length = base_len
    _save(work_t, work_f, length, snap_t, snap_f, snap_len, 0, 0)
    prefix[0] = base_cost
    for k in range(n):
        job = perm[k]
        start, length = place(work_t, work_f, length, duration[job], size[job])
        if (k + 1) % stride == 0:
            _save(work_t, work_f, length, snap_t, snap_f, snap_len, 0, (k + 1) // stride)
        starts[job] = start - now
        terms[k] = term_of(kind, waited[job], start - now, duration[job])
        prefix[k + 1] = combine(kind, prefix[k], terms[k])
    suffix[n] = 0.0
    for k in range(n - 1, -1, -1):
        suffix[k] = max(suffix[k + 1], terms[k])
    cost = prefix[n]
    initial = cost
    best = cost
    best_order[:] = perm
    best_starts[:] = starts
    bound = lower_bound(duration, waited, kind, base_cost)
    evaluated = 0
    accepted = 0
    if n < 2 or best <= bound:
        return initial, best, evaluated, accepted

    m = 0
    for temperature in temperatures:
        for _ in range(moves_per_temperature):
            i = pick[m]
            j = put[m]
            u = draw[m]
            m += 1
            if j >= i:
                j += 1
            p = min(i, j)
            q = max(i, j)
            # the candidate permutation differs from perm on positions p..q only
            if i < j:
                for k in range(p, q):
                    cand[k] = perm[k + 1]
                cand[q] = perm[i]
            else:
                cand[p] = perm[i]
                for k in range(p + 1, q + 1):
                    cand[k] = perm[k - 1]
            if scale_mode == SCALE_INITIAL:
                scale = initial
            elif scale_mode == SCALE_CURRENT:
                scale = cost
            else:
                scale = 1.0
            if u <= 0.0:
                limit = np.inf
            else:
                limit = cost - temperature * scale * math.log(u)
            ceiling = max(limit, cost)   # a partial cost above this cannot be accepted
            evaluated += 1

            # re-plan from the snapshot at or before position p
            slot = p // stride
            bank = which[slot]
            length = snap_len[bank, slot]
            work_t[:length] = snap_t[bank, slot, :length]
            work_f[:length] = snap_f[bank, slot, :length]
            checkpoint = (slot + 1) * stride   # next position whose snapshot is kept
            total = prefix[p]
            mismatched = 0
            rejected = False
            converged = n - 1   # last position re-planned
            for k in range(slot * stride, n):
                job = perm[k] if (k < p or k > q) else cand[k]
                start, length = place(work_t, work_f, length, duration[job], size[job])
                if k + 1 == checkpoint:
                    _save(work_t, work_f, length, snap_t, snap_f, snap_len, 1 - which[checkpoint // stride],
                          checkpoint // stride)
                    checkpoint += stride
                if k < p:
                    continue   # positions before p keep their places and costs
                offset = start - now
                cand_starts[k] = offset
                term = term_of(kind, waited[job], offset, duration[job])
                cand_terms[k] = term
                total = combine(kind, total, term)
                if total > ceiling:
                    rejected = True
                    break
                if offset != starts[job]:
                    mismatched += 1
                if k >= q and mismatched == 0:
                    converged = k   # the rest of the plan is the current one
                    if k + 1 < n:
                        if kind == MAKESPAN:
                            total = max(total, suffix[k + 1])
                        else:
                            total = total + (prefix[n] - prefix[k + 1])
                    break
            if rejected or not (total <= cost or total < limit):
                continue

            # accept: the candidate becomes the current plan
            accepted += 1
            for k in range(p, q + 1):
                perm[k] = cand[k]
            for k in range(p, converged + 1):
                starts[perm[k]] = cand_starts[k]
                terms[k] = cand_terms[k]
            for s in range(p // stride + 1, (converged + 1) // stride + 1):
                which[s] = 1 - which[s]
            for k in range(p, n):
                prefix[k + 1] = combine(kind, prefix[k], terms[k])
            if kind == MAKESPAN:
                for k in range(converged, -1, -1):
                    suffix[k] = max(suffix[k + 1], terms[k])
            cost = prefix[n]
            if cost < best:
                best = cost
                best_order[:] = perm
                best_starts[:] = starts
                if best <= bound:
                    return initial, best, evaluated, accepted
    return initial, best, evaluated, accepted


@njit(cache=True)
def _save(work_t, work_f, length, snap_t, snap_f, snap_len, bank, slot):
    snap_t[bank, slot, :length] = work_t[:length]
    snap_f[bank, slot, :length] = work_f[:length]
    snap_len[bank, slot] = length


def temperature_schedule(t0: float, t_threshold: float, cooling: float) -> np.ndarray:
    """T0, r·T0, r²·T0, ... while T > Tth (the paper's outer loop; (1, 1e-4, 0.9) gives 88)."""
    temperatures = []
    t = t0
    while t > t_threshold:
        temperatures.append(t)
        t *= cooling
    return np.asarray(temperatures, dtype=np.float64)


@dataclass
class Plan:
    """The outcome of one planning decision."""

    order: np.ndarray        # best permutation (indices into the inputs)
    starts: np.ndarray       # planned start offsets from now, by input index
    initial_cost: float
    cost: float
    evaluated: int
    accepted: int


def snapshot_stride(n: int, steps: int) -> int:
    """Keep a snapshot before every stride-th position (see SNAPSHOT_EVERY)."""
    per_slot = 2 * steps * 16   # two banks of (time, free) int64 pairs
    slots = max(SNAPSHOT_BUDGET_BYTES // per_slot, 2)
    return max(SNAPSHOT_EVERY, math.ceil((n + 1) / (slots - 1)))


def best_plan(duration: np.ndarray, size: np.ndarray, waited: np.ndarray, kind: int,
              base_t: np.ndarray, base_f: np.ndarray, base_cost: float, *,
              temperatures: np.ndarray, moves_per_temperature: int, scale_mode: int,
              rng: np.random.Generator) -> Plan:
    """Anneal the permutations of the jobs (initially in input order) and return the best plan.

    ``base_t``/``base_f``: the profile of the running jobs from now (its first time); ``waited``:
    how long each job has waited already; ``base_cost``: for MAKESPAN the latest running job's
    expected end from now, else 0. Random moves are drawn from ``rng`` before annealing, always
    the same number for the same queue length, so the result depends on the seed only.
    """
    n = len(duration)
    moves = len(temperatures) * moves_per_temperature if n >= 2 else 0
    pick = rng.integers(0, n, size=moves) if moves else np.zeros(0, dtype=np.int64)
    put = rng.integers(0, n - 1, size=moves) if moves else np.zeros(0, dtype=np.int64)
    draw = rng.random(moves)
    steps = len(base_t) + n + 1   # each placed job adds at most one step
    stride = snapshot_stride(n, steps)
    slots = n // stride + 1
    snap_t = np.empty((2, slots, steps), dtype=np.int64)
    snap_f = np.empty((2, slots, steps), dtype=np.int64)
    snap_len = np.zeros((2, slots), dtype=np.int64)
    order = np.arange(n, dtype=np.int64)
    best_order = np.empty(n, dtype=np.int64)
    best_starts = np.empty(n, dtype=np.int64)
    initial, cost, evaluated, accepted = anneal(
        order, duration, size, waited, kind, base_t, base_f, len(base_t), float(base_cost),
        temperatures, moves_per_temperature, scale_mode, pick.astype(np.int64), put.astype(np.int64), draw,
        stride, snap_t, snap_f, snap_len, best_order, best_starts)
    return Plan(best_order, best_starts, float(initial), float(cost), int(evaluated), int(accepted))
