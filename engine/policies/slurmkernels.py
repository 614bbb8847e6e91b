"""The ``slurm`` policy's hot loops, compiled (engine.jit: numba at the first call, plain Python
without it): Fair Tree over the association tree in arrays, and the walks of a pass over the
waiting jobs in priority order (limits, partition blocking, pending reasons, the backfill profile).

Each kernel makes the same operations in the same order as the Python rules it replaced
(engine.policies.slurm: :func:`~engine.policies.slurm.fair_tree_factors`, still the fallback and
the reference; the passes' walks, now only here), so the schedules are the same to the last start
(tests/engine/policies/test_slurm_identity.py).
"""

from __future__ import annotations

import numpy as np

from engine.sim.jit import njit
from engine.sim.profile import FOREVER, NEVER, _NEVER_FITS, add, earliest_start

#: the pending reasons, by code (a waiting job's ``reason`` array entry; -1: not waiting). Codes
#: from HOLD are a limit's: HOLD + SiteLimits.held_code.
NONE, PRIORITY, RESOURCES, RESERVED, HOLD = 0, 1, 2, 3, 3

#: what a walk stopped at (engine.policies.slurm.SlurmBackfill): the end of its jobs or of its bound;
#: a job that may start now (the caller starts it or not); in a pool's backfill pass before the
#: profile, a job that does not fit now (the caller builds the profile); a job that can never fit
DONE, CANDIDATE, NEEDS_PROFILE, NEVER_FITS = 0, 1, 2, 3
#: how the backfill walk takes a job that no limit holds (slurmkernels.takes; a limit's hold is its code > 0)
TAKEN, PASSED, BOUND = 0, -1, -2


@njit(cache=True)
def _same_level(a: float, b: float) -> bool:
    """math.isclose(a, b, rel_tol=1e-12) or a == b, as CPython computes it (infinities: only equal)."""
    if a == b:
        return True
    if np.isinf(a) or np.isinf(b):
        return False
    diff = abs(b - a)
    return diff <= abs(1e-12 * b) or diff <= abs(1e-12 * a)


@njit(cache=True)
def _push_levels(node_of: np.ndarray, level_of: np.ndarray, top: int, first: int, last: int,
                 children: np.ndarray, shares: np.ndarray, usage: np.ndarray) -> int:
    """Append the children ``children[first:last]`` with their Level Fairshare among them at
    ``top`` of the items (levels(): S / U with the siblings' sums added one by one from 0; no
    shares: 0; shares without usage: infinite)."""
    total_shares = 0.0
    total_usage = 0.0
    for k in range(first, last):
        total_shares += shares[children[k]]
        total_usage += usage[children[k]]
    for k in range(first, last):
        c = children[k]
        s = shares[c] / total_shares if total_shares > 0 else 0.0
        u = usage[c] / total_usage if total_usage > 0 else 0.0
        node_of[top] = c
        level_of[top] = 0.0 if s == 0 else (np.inf if u == 0 else s / u)
        top += 1
    return top


@njit(cache=True)
def _rank_sorted(node_of: np.ndarray, level_of: np.ndarray, is_user: np.ndarray, begin: int, end: int) -> None:
    """Items [begin, end) by decreasing level, users before accounts of the same level, stable
    (Python's sorted(key=(-level, not user))): a stable sort by kind, then one by level."""
    if end - begin < 2:
        return
    kind = np.empty(end - begin)
    for k in range(end - begin):
        kind[k] = 0.0 if is_user[node_of[begin + k]] else 1.0
    by_kind = np.argsort(kind, kind="mergesort")
    keys = np.empty(end - begin)
    for k in range(end - begin):
        keys[k] = -level_of[begin + by_kind[k]]
    order = by_kind[np.argsort(keys, kind="mergesort")]
    nodes = node_of[begin:end].copy()
    levels = level_of[begin:end].copy()
    for k in range(end - begin):
        node_of[begin + k] = nodes[order[k]]
        level_of[begin + k] = levels[order[k]]


@njit(cache=True)
def fair_tree(is_user: np.ndarray, shares: np.ndarray, first_child: np.ndarray, children: np.ndarray,
              postorder: np.ndarray, user_slot: np.ndarray, user_usage: np.ndarray, count: int,
              factor: np.ndarray) -> None:
    """Fair Tree's factors (``factor[node]`` = rank / ``count`` for each user node), as
    :func:`engine.policies.slurm.fair_tree_factors` gives them (22.05's fair_tree.c), node 0 the root.

    The tree in arrays: node ``v``'s children are ``children[first_child[v]:first_child[v + 1]]``
    in the dump's order; ``postorder`` lists children before parents; a user node's usage is
    ``user_usage[user_slot[v]]`` (0 where the slot is -1). The recursion of visit() is a stack of
    frames (a node's children sorted, a cursor, whether the first starts tied), each a stretch of
    the item arrays after its parent's: together at most every node once."""
    n = len(is_user)
    usage = np.zeros(n)
    for v in postorder:
        if is_user[v]:
            usage[v] = user_usage[user_slot[v]] if user_slot[v] >= 0 else 0.0
        else:
            total = 0.0
            for k in range(first_child[v], first_child[v + 1]):
                total += usage[children[k]]
            usage[v] = total
    node_of = np.zeros(n + 1, dtype=np.int64)
    level_of = np.zeros(n + 1)
    begin = np.zeros(n + 1, dtype=np.int64)
    end = np.zeros(n + 1, dtype=np.int64)
    cursor = np.zeros(n + 1, dtype=np.int64)
    tied_first = np.zeros(n + 1, dtype=np.bool_)
    rank = count
    rnt = count
    top = _push_levels(node_of, level_of, 0, first_child[0], first_child[1], children, shares, usage)
    _rank_sorted(node_of, level_of, is_user, 0, top)
    depth = 0
    begin[0], end[0], cursor[0], tied_first[0] = 0, top, 0, False
    while depth >= 0:
        i = cursor[depth]
        stop = end[depth]
        if i >= stop:
            depth -= 1
            continue
        cursor[depth] = i + 1
        tied = tied_first[depth] if i == begin[depth] else _same_level(level_of[i - 1], level_of[i])
        v = node_of[i]
        if is_user[v]:
            if not tied:
                rank = rnt
            factor[v] = rank / count
            rnt -= 1
            continue
        at = _push_levels(node_of, level_of, stop, first_child[v], first_child[v + 1], children, shares, usage)
        _rank_sorted(node_of, level_of, is_user, stop, at)
        depth += 1
        begin[depth], end[depth], cursor[depth], tied_first[depth] = stop, at, stop, tied


@njit(cache=True)
def count(running: np.ndarray, count_first: np.ndarray, count_slot: np.ndarray, signature: np.ndarray,
          job_counts: np.ndarray, job: int, sign: int) -> None:
    """Add sign x the job's counts (jobs, CPUs, nodes, memory, GPUs) to each of its signature's
    counters (engine.policies.slurmlimits.SiteLimits)."""
    sig = signature[job]
    for k in range(count_first[sig], count_first[sig + 1]):
        slot = count_slot[k]
        for c in range(running.shape[1]):
            running[slot, c] += sign * job_counts[job, c]


@njit(cache=True)
def held_code(job: int, running: np.ndarray, signature: np.ndarray, check_first: np.ndarray, check_slot: np.ndarray,
              check_index: np.ndarray, check_bound: np.ndarray, check_reason: np.ndarray,
              job_counts: np.ndarray) -> int:
    """SiteLimits.held_code: the reason code of the first check of the job's signature that holds it, 0 if none."""
    sig = signature[job]
    for k in range(check_first[sig], check_first[sig + 1]):
        index = check_index[k]
        term = 1 if index == 0 else job_counts[job, index]     # (a count of jobs: one, no load of the job's row)
        if running[check_slot[k], index] > check_bound[k] - term:
            return check_reason[k]
    return 0


@njit(cache=True)
def set_reason(job: int, code: int, now: int, reason: np.ndarray, since: np.ndarray, seconds: np.ndarray,
               first: np.ndarray, tally: np.ndarray) -> None:
    """The job's pending reason from now on (-1: it no longer waits): the time under the previous
    one is added to its seconds (a job's first seconds numbered in ``first`` by ``tally[0]``, the
    order a dict of jobs would have them in)."""
    current = reason[job]
    if current == code:
        return
    if current >= 0 and now > since[job]:
        if first[job] < 0:
            first[job] = tally[0]
            tally[0] += 1
        seconds[job, current] += now - since[job]
    since[job] = now
    reason[job] = code


@njit(cache=True)
def block(p: int, parts: np.ndarray, union: np.ndarray, atoms: np.ndarray, has_nodes: np.ndarray,
          blocked: np.ndarray) -> None:
    """Partition ``p``'s top job did not fit: its partition waits behind it (Priority) and so does
    every partition whose nodes are all within blocked ones (RESERVED); ``atoms[p]`` marks the
    groups of nodes of partition ``p`` (the nodes of the same partitions), ``union`` those of the
    blocked partitions, ``blocked[q]`` the reason code of a job of partition ``q`` (0: none)."""
    parts[p] = True
    for a in range(atoms.shape[1]):
        if atoms[p, a]:
            union[a] = True
    for q in range(len(blocked)):
        if parts[q]:
            blocked[q] = PRIORITY
            continue
        covered = has_nodes[q]
        if covered:
            for a in range(atoms.shape[1]):
                if atoms[q, a] and not union[a]:
                    covered = False
                    break
        blocked[q] = RESERVED if covered else 0


@njit(cache=True)
def keyed_merge(order: np.ndarray, priority: np.ndarray, keys: np.ndarray, member: np.ndarray, left: bool,
                arrived: np.ndarray, arrived_priority: np.ndarray, tier_rank: np.ndarray, high: int,
                n: int) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
    """The waiting queue's order kept up between two priority calculations, in one pass: ``order``
    (with its jobs' ``priority`` and ``keys``, strictly increasing) without the jobs no longer
    ``member`` (when some ``left``), the ``arrived`` jobs merged in at their keys (tier rank, then
    higher priority, then job number: (tier_rank * (high + 1) + high - priority) * n + job).
    Returns (False, ...) and changes nothing when an arrived job's priority is outside [0, high]:
    the caller then sorts the long way."""
    new_keys = arrival_keys(arrived, arrived_priority, tier_rank, high, n)
    if len(new_keys) < len(arrived):
        return False, order, priority, keys
    k = len(arrived)
    sorting = np.argsort(new_keys)
    m = len(order)
    out_order = np.empty(m + k, dtype=np.int64)
    out_priority = np.empty(m + k, dtype=np.int64)
    out_keys = np.empty(m + k, dtype=np.int64)
    i = j = w = 0
    while i < m or j < k:
        if arrival_first(keys, i, new_keys, sorting, j):
            s = sorting[j]
            out_order[w], out_priority[w], out_keys[w] = arrived[s], arrived_priority[s], new_keys[s]
            j += 1
            w += 1
        else:
            if not left or member[order[i]]:
                out_order[w], out_priority[w], out_keys[w] = order[i], priority[i], keys[i]
                w += 1
            i += 1
    return True, out_order[:w], out_priority[:w], out_keys[:w]


@njit(cache=True)
def arrival_keys(arrived: np.ndarray, arrived_priority: np.ndarray, tier_rank: np.ndarray, high: int,
                 n: int) -> np.ndarray:
    """The order's keys of the ``arrived`` jobs (see :func:`keyed_merge`); shorter than ``arrived``
    (cut at the first) when a priority is outside [0, high]."""
    k = len(arrived)
    keys = np.empty(k, dtype=np.int64)
    for j in range(k):
        p = arrived_priority[j]
        if p < 0 or p > high:
            return keys[:j]
        keys[j] = (tier_rank[arrived[j]] * (high + 1) + (high - p)) * n + arrived[j]
    return keys


@njit(cache=True)
def arrival_first(keys: np.ndarray, i: int, new_keys: np.ndarray, sorting: np.ndarray, j: int) -> bool:
    """In a merge of the order (``keys``, from ``i``) with the arrivals (``new_keys`` in ``sorting``'s
    order, from ``j``; neither both at their end): whether the arrival comes next (keys are unique)."""
    return j < len(sorting) and (i >= len(keys) or new_keys[sorting[j]] < keys[i])


@njit(cache=True)
def keyed_head(order: np.ndarray, keys: np.ndarray, member: np.ndarray, arrived: np.ndarray,
               arrived_priority: np.ndarray, tier_rank: np.ndarray, high: int, n: int,
               depth: int) -> tuple[bool, np.ndarray]:
    """The first ``depth`` jobs of the order :func:`keyed_merge` would make (those still ``member``
    of ``order`` and ``arrived``), without making it: what a main scheduler's pass of
    default_queue_depth jobs walks. (False, an empty array) when an arrived job's priority is
    outside [0, high]."""
    new_keys = arrival_keys(arrived, arrived_priority, tier_rank, high, n)
    if len(new_keys) < len(arrived):
        return False, order[:0]
    k, m = len(arrived), len(order)
    sorting = np.argsort(new_keys)
    head = np.empty(min(depth, m + k), dtype=np.int64)
    i = j = w = 0
    while w < len(head) and (i < m or j < k):
        if arrival_first(keys, i, new_keys, sorting, j):
            job = arrived[sorting[j]]
            j += 1
        else:
            job = order[i]
            i += 1
        if member[job]:
            head[w] = job
            w += 1
    return True, head[:w]


@njit(cache=True)
def main_walk(order: np.ndarray, i: int, stop: int, now: int, partition: np.ndarray, blocked: np.ndarray,
              running: np.ndarray, signature: np.ndarray, check_first: np.ndarray, check_slot: np.ndarray,
              check_index: np.ndarray, check_bound: np.ndarray, check_reason: np.ndarray, job_counts: np.ndarray,
              reason: np.ndarray, since: np.ndarray, seconds: np.ndarray, first: np.ndarray, tally: np.ndarray,
              after_select: np.ndarray) -> int:
    """The main scheduler's walk from ``order[i]``: a job a limit holds, or behind a blocked
    partition, gets that reason; returns the index of the first other job (a candidate: the caller
    starts it if it fits, else blocks its partition, and walks on from the next), or ``stop``. As
    job_scheduler.c's _schedule() (22.05.8): a job of a failed partition (_failed_partition, line
    1623) is passed over before any limit is looked at, with Priority if its reason was None or
    Resources, else keeping it (a limit's too, line 1625); the first job of a partition whose
    nodes blocked ones took gets RESERVED (line 1738, before select_nodes: a limit that only
    acct_policy_job_runnable_post_select names, ``after_select``, is not looked at; one of
    pre_select is, line 1714, only if its reason is a limit's) and fails its partition
    (fail_by_part): the partition's later jobs wait with Priority; in the others, select_nodes
    names the limit that holds the job (node_scheduler.c 2358, 2528)."""
    while i < stop:
        job = order[i]
        p = partition[job]
        if blocked[p] == PRIORITY:
            if reason[job] == NONE or reason[job] == RESOURCES or reason[job] == RESERVED:
                set_reason(job, PRIORITY, now, reason, since, seconds, first, tally)
            i += 1
            continue
        code = held_code(job, running, signature, check_first, check_slot, check_index, check_bound, check_reason,
                         job_counts)
        if code and blocked[p] == RESERVED and (after_select[code] or reason[job] <= HOLD):
            code = 0
        if code:
            set_reason(job, HOLD + code, now, reason, since, seconds, first, tally)
        elif blocked[p]:
            set_reason(job, RESERVED, now, reason, since, seconds, first, tally)
            blocked[p] = PRIORITY   # its partition fails with it: the jobs after it wait (Priority)
        else:
            return i
        i += 1
    return stop


@njit(cache=True)
def backfill_walk(order: np.ndarray, state: np.ndarray, bound: int, caps: np.ndarray, counts: np.ndarray,
                  keys: np.ndarray, size: np.ndarray, estimate: np.ndarray, resolution: int, pool_free: int,
                  times: np.ndarray, free: np.ndarray, now: int, horizon: int, per_node: int, capacity: int,
                  partition: np.ndarray, parts: np.ndarray, union: np.ndarray, atoms: np.ndarray,
                  has_nodes: np.ndarray, blocked: np.ndarray, running: np.ndarray, signature: np.ndarray,
                  check_first: np.ndarray, check_slot: np.ndarray, check_index: np.ndarray, check_bound: np.ndarray,
                  check_reason: np.ndarray, job_counts: np.ndarray, reason: np.ndarray, since: np.ndarray,
                  seconds: np.ndarray, first: np.ndarray, tally: np.ndarray, ahead: np.ndarray,
                  least: np.ndarray, after_select: np.ndarray, held: np.ndarray, no_reserve: np.ndarray) -> int:
    """The backfill scheduler's walk (SlurmBackfill.backfill_pass) from ``order[state[0]]``, with
    ``state`` = (index, jobs tested, profile length (0: no profile yet, ``pool_free`` processors
    free now), 1 to go straight to the profile's test of the job at the index (already counted),
    the job's earliest start, the jobs held so far as Slurm counts them: :func:`held_reason`).
    Each job a limit holds does not count (its reason: :func:`held_reason`); at
    ``bound`` tested jobs the walk ends; a job past one of the per-pass caps (bf_max_job_user,
    bf_max_job_part, bf_max_job_user_part: :func:`over_caps`) is passed over.
    Without a profile, a tested job that fits now is a CANDIDATE (the caller starts it), one that
    does not asks for the profile (NEEDS_PROFILE: the caller builds it and resumes with state[3] =
    1, for this job's test on it); with the profile (``times``, ``free``, room for two steps per
    job): its earliest start; now: CANDIDATE (the caller starts it if it fits, then reserves it;
    else as below), else it waits (blocked or Resources) and is reserved there, whole nodes, if
    that is before ``horizon`` (-1: any) and the job may be reserved (``no_reserve[job]`` False: not
    under bf_min_prio_reserve or bf_min_age_reserve). Returns DONE, CANDIDATE, NEEDS_PROFILE or NEVER_FITS
    (the caller raises the profile's error).

    A pass only takes processors (nothing is added back to the profile during it), and a job's
    reservation only serves to decide whether a later job of the pass fits now. So once no job
    left to test fits now (on the profile as it is, or in the processors free without one: see
    :func:`next_fitting`), none will: the rest of the walk gives the jobs their reasons without
    the profile (its build, their starts, their reservations), with the same starts and reasons
    as with it. The first job left that fits now is kept (``witness``) and looked for again only
    when a reservation takes from its span. ``ahead`` (as ``counts``) and ``least`` (room
    for the profile's length) are scratch arrays for that look-ahead. A job that can never fit
    (more processors than the machine) is NEVER_FITS where the profile would have been asked for
    its start: when no fewer processors are free now than the smallest job left asks for."""
    i = state[0]
    tested = state[1]
    length = state[2]
    straight = state[3] == 1
    state[3] = 0
    stop = len(order)
    # the look-ahead: the first job from the index that fits now (-1: not looked for yet), and
    # where its search stopped (the walk's tested count and per-user counts as they will be there)
    witness = -1
    stopped, ahead_tested = 0, 0
    futile = False
    while i < stop:
        job = order[i]
        if not straight:
            taken = takes(job, tested, bound, caps, counts, keys, running, signature, check_first,
                          check_slot, check_index, check_bound, check_reason, job_counts)
            if taken > 0:
                held_reason(job, taken, tested, bound, caps, counts, keys, after_select, held,
                            state, now, reason, since, seconds, first, tally)
                i += 1
                continue
            if taken == BOUND:
                break
            if taken == PASSED:
                if reason[job] > HOLD:  # acct_policy_job_runnable_pre_select cleared it (backfill.c 2034)
                    set_reason(job, NONE, now, reason, since, seconds, first, tally)
                i += 1
                continue
            tested += 1
            if length == 0 and size[job] <= pool_free:
                state[0], state[1] = i, tested
                return CANDIDATE
        straight = False
        free_now = pool_free if length == 0 else free[0]
        if not futile and witness < i:
            # the jobs from this one on as the walk will test them, until one fits now
            if len(caps):
                ahead[:] = counts
            if length > 0:
                prefix_least(free, length, least)
            witness, stopped, ahead_tested = next_fitting(
                order, i, i, tested, bound, caps, ahead, keys, size, estimate, free_now,
                times, length, least, now, running, signature, check_first, check_slot, check_index, check_bound,
                check_reason, job_counts)
            futile = witness < 0
        if not futile and length == 0:
            state[0], state[1] = i, tested
            return NEEDS_PROFILE
        if futile:      # no job left fits now: this one waits (its start and reservation change nothing)
            if size[job] > capacity and least_size(order, i, size) <= free_now:
                state[0], state[1], state[2] = i, tested, length
                return NEVER_FITS
            p = partition[job]
            set_reason(job, blocked[p] if blocked[p] else RESOURCES, now, reason, since, seconds, first, tally)
            block(p, parts, union, atoms, has_nodes, blocked)
            i += 1
            continue
        duration = max(estimate[job], 1)
        at = earliest_start(times, free, length, now, fit_span(estimate[job]), size[job], FOREVER, 0, 0, 0)
        if at == _NEVER_FITS:
            state[0], state[1], state[2] = i, tested, length
            return NEVER_FITS
        if at == now:
            state[0], state[1], state[2], state[4] = i, tested, length, at
            return CANDIDATE
        p = partition[job]
        set_reason(job, blocked[p] if blocked[p] else RESOURCES, now, reason, since, seconds, first, tally)
        block(p, parts, union, atoms, has_nodes, blocked)
        if at != NEVER and (horizon < 0 or at < horizon) and not no_reserve[job]:
            begin = at - at % resolution
            length = add(times, free, length, begin, max((at + duration) - (at + duration) % resolution,
                                                          begin + resolution),
                         -reserved_size(size[job], per_node, capacity))
            w = order[witness]
            span = fit_span(estimate[w])
            if begin < now + span and least_until(times, free, length, now + span) < size[w]:
                # the reservation took from the witness's span: look on from after it
                prefix_least(free, length, least)
                witness, stopped, ahead_tested = next_fitting(
                    order, stopped + 1, -1, ahead_tested, bound, caps, ahead, keys, size, estimate,
                    free[0], times, length, least, now, running, signature, check_first, check_slot,
                    check_index, check_bound, check_reason, job_counts)
                futile = witness < 0
        i += 1
    state[0], state[1], state[2] = stop if i >= stop else i, tested, length
    return DONE


@njit(cache=True)
def held_reason(job: int, code: int, tested: int, bound: int, caps: np.ndarray, counts: np.ndarray, keys: np.ndarray,
                after_select: np.ndarray, held: np.ndarray, state: np.ndarray, now: int,
                reason: np.ndarray, since: np.ndarray, seconds: np.ndarray, first: np.ndarray,
                tally: np.ndarray) -> None:
    """The reason of a job that limit ``code`` holds in the backfill walk, as _attempt_backfill
    (backfill.c 22.05.8) sets it. A limit acct_policy_job_runnable_pre_select names (line 2034,
    before the job is counted) holds it with that reason. Pre_select clears any limit's reason
    first; one named only by acct_policy_job_runnable_post_select (``after_select[code]``) is named
    again once the job is tested on the nodes (line 2950; select_nodes if it could start now), and
    such a job counts, as Slurm tests it: towards bf_max_job_test (``bound``, with the ``tested``
    jobs; beyond, the pass ended before it: the job keeps its reason) and the per-pass caps
    (_job_exceeds_max_bf_param, line 2105: past one, skipped untested, its reason None). The
    replay's walk does not count it (its starts are not changed): the held ones are counted here
    only, in ``state[5]`` and ``held`` (zeroed with ``counts`` each pass)."""
    if not after_select[code]:
        set_reason(job, HOLD + code, now, reason, since, seconds, first, tally)
        return
    if tested + state[5] >= bound:
        return
    for k in range(len(caps)):
        slot = keys[job, k]
        if counts[slot] + held[slot] >= caps[k]:        # (over_caps, the held ones counted too)
            if reason[job] > HOLD:
                set_reason(job, NONE, now, reason, since, seconds, first, tally)
            return
    state[5] += 1
    count_in(job, caps, held, keys)
    set_reason(job, HOLD + code, now, reason, since, seconds, first, tally)


@njit(cache=True)
def over_caps(job: int, caps: np.ndarray, counts: np.ndarray, keys: np.ndarray) -> bool:
    """Whether the pass has tested its caps' worth of the job's kind already (backfill.c
    _job_exceeds_max_bf_param): ``caps[k]`` jobs of the job's ``keys[job, k]`` (its user, its
    partition, its user in its partition: a slot of ``counts``)."""
    for k in range(len(caps)):
        if counts[keys[job, k]] >= caps[k]:
            return True
    return False


@njit(cache=True)
def count_in(job: int, caps: np.ndarray, counts: np.ndarray, keys: np.ndarray) -> None:
    """The job counted under each of its caps' kinds."""
    for k in range(len(caps)):
        counts[keys[job, k]] += 1


@njit(cache=True)
def takes(job: int, tested: int, bound: int, caps: np.ndarray, counts: np.ndarray, keys: np.ndarray,
          running: np.ndarray, signature: np.ndarray, check_first: np.ndarray, check_slot: np.ndarray,
          check_index: np.ndarray, check_bound: np.ndarray, check_reason: np.ndarray, job_counts: np.ndarray) -> int:
    """How the backfill walk takes ``job`` after ``tested`` jobs: the code of the limit that holds it
    (> 0: passed over, with that reason), BOUND (the walk ends), PASSED (past one of the per-pass
    caps, :func:`over_caps`: passed over) or TAKEN (tested: counted in ``counts``)."""
    code = held_code(job, running, signature, check_first, check_slot, check_index, check_bound, check_reason,
                     job_counts)
    if code:
        return code
    if tested >= bound:
        return BOUND
    if len(caps):
        if over_caps(job, caps, counts, keys):
            return PASSED
        count_in(job, caps, counts, keys)
    return TAKEN


@njit(cache=True)
def fit_span(estimate: int) -> int:
    """How long from its start a job must fit to start then: its time limit and the second the
    select plugin's will-run test adds (a time limit of 0 taken as 1 s)."""
    return max(estimate, 1) + 1


@njit(cache=True)
def least_size(order: np.ndarray, i: int, size: np.ndarray) -> int:
    """The fewest processors a job from ``order[i]`` on asks for."""
    low = size[order[i]]
    for k in range(i + 1, len(order)):
        if size[order[k]] < low:
            low = size[order[k]]
    return low


@njit(cache=True)
def prefix_least(free: np.ndarray, length: int, least: np.ndarray) -> None:
    """``least[k]``: the fewest processors free on the profile's steps 0 to k."""
    low = free[0]
    for k in range(length):
        if free[k] < low:
            low = free[k]
        least[k] = low


@njit(cache=True)
def least_until(times: np.ndarray, free: np.ndarray, length: int, end: int) -> int:
    """The fewest processors free on the profile from its first step (now) until ``end``."""
    low = free[0]
    for k in range(1, length):
        if times[k] >= end:
            break
        if free[k] < low:
            low = free[k]
    return low


@njit(cache=True)
def next_fitting(order: np.ndarray, i: int, counted: int, tested: int, bound: int, caps: np.ndarray,
                 counts: np.ndarray, keys: np.ndarray, size: np.ndarray, estimate: np.ndarray, free_now: int,
                 times: np.ndarray, length: int, least: np.ndarray, now: int, running: np.ndarray,
                 signature: np.ndarray, check_first: np.ndarray, check_slot: np.ndarray, check_index: np.ndarray,
                 check_bound: np.ndarray, check_reason: np.ndarray, job_counts: np.ndarray) -> tuple[int, int, int]:
    """The first job from ``order[i]`` on that the backfill walk will test and that fits now on the
    profile (``least``: its prefix minima, :func:`prefix_least`; without one, ``length`` 0, in the
    ``free_now`` processors): its index, or -1 if none; with
    where the search stopped and the tested count there. The jobs are taken as the walk takes them
    with no job started meanwhile (the limits' counters as they are): those a limit holds passed
    over, ``bound`` tested at most, the jobs past a per-pass cap (``counts``: the counts as the walk
    will have them at ``order[i]``; counted on here) passed over; the job at
    ``counted``, if i is there, is already counted."""
    stop = len(order)
    while i < stop:
        job = order[i]
        if i != counted:
            taken = takes(job, tested, bound, caps, counts, keys, running, signature, check_first,
                          check_slot, check_index, check_bound, check_reason, job_counts)
            if taken == BOUND:
                break
            if taken != TAKEN:
                i += 1
                continue
            tested += 1
        if size[job] > free_now:
            i += 1
            continue
        if length == 0:
            return i, i, tested
        end = now + fit_span(estimate[job])
        lo, hi = 0, length - 1          # the last step that begins before end
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if times[mid] < end:
                lo = mid
            else:
                hi = mid - 1
        if least[lo] >= size[job]:
            return i, i, tested
        i += 1
    return -1, i, tested


@njit(cache=True)
def reserved_size(cpus: int, per_node: int, capacity: int) -> int:
    """What a pending job's backfill reservation takes: ``cpus`` rounded up to whole nodes of
    ``per_node`` CPUs (at most the machine), as Slurm's backfill table of node bitmaps does."""
    if per_node <= 1:
        return cpus
    return min(-(-cpus // per_node) * per_node, capacity)


@njit(cache=True)
def running_profile(ends: np.ndarray, sizes: np.ndarray, count: int, now: int, resolution: int, capacity: int,
                    times: np.ndarray, free: np.ndarray) -> int:
    """The running jobs' profile from (expected end, processors) of ``count`` jobs sorted by end:
    each end rounded up to ``resolution`` and at least now + 1 (a job past its expected end is
    thought to end in a second); returns its length."""
    total = 0
    for k in range(count):
        total += sizes[k]
    free_now = capacity - total
    times[0] = now
    free[0] = free_now
    length = 1
    released = 0
    for k in range(count):
        end = max(-(-ends[k] // resolution) * resolution, now + 1)
        released += sizes[k]
        if k + 1 < count:
            following = max(-(-ends[k + 1] // resolution) * resolution, now + 1)
            if following == end:
                continue
        times[length] = end
        free[length] = free_now + released
        length += 1
    return length


@njit(cache=True)
def insert_running(ends: np.ndarray, jobs: np.ndarray, sizes: np.ndarray, count: int, end: int, job: int,
                   size: int) -> None:
    """Insert (end, job) into the first ``count`` running jobs, kept sorted by (end, job)."""
    k = count
    while k > 0 and (ends[k - 1] > end or (ends[k - 1] == end and jobs[k - 1] > job)):
        k -= 1
    for m in range(count, k, -1):
        ends[m] = ends[m - 1]
        jobs[m] = jobs[m - 1]
        sizes[m] = sizes[m - 1]
    ends[k], jobs[k], sizes[k] = end, job, size


@njit(cache=True)
def remove_running(ends: np.ndarray, jobs: np.ndarray, sizes: np.ndarray, count: int, end: int, job: int) -> None:
    """Remove (end, job) from the first ``count`` running jobs (sorted by (end, job))."""
    lo, hi = 0, count
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] < end or (ends[mid] == end and jobs[mid] < job):
            lo = mid + 1
        else:
            hi = mid
    for m in range(lo, count - 1):
        ends[m] = ends[m + 1]
        jobs[m] = jobs[m + 1]
        sizes[m] = sizes[m + 1]


#: the first time window of the select plugin's will-run test (cons_common/job_test.c _will_run_test)
WILL_RUN_WINDOW = 30


@njit(cache=True)
def will_run_ends(ends: np.ndarray, count: int, out: np.ndarray) -> None:
    """The running jobs' ends as the select plugin's will-run test frees their resources
    (cons_common/job_test.c _will_run_test, 22.05), for ``count`` ends sorted: it removes the
    running jobs in batches and tests the pending job after each; the first batch holds the jobs
    ending by the first end raised to the next 30-s barrier, plus 30 s; each later one up to that
    barrier plus a window doubled (60, 120, ...; again while the next end lies beyond it); a job
    that fits after a batch starts at the batch's last end. So each end becomes its batch's last
    end (in ``out``)."""
    if count == 0:
        return
    barrier = ends[0] + (WILL_RUN_WINDOW - ends[0] % WILL_RUN_WINDOW)
    window = WILL_RUN_WINDOW
    i = 0
    while i < count:
        j = i + 1
        while j < count and ends[j] <= barrier + window:
            j += 1
        for k in range(i, j):
            out[k] = ends[j - 1]
        window *= 2
        while j < count and ends[j] > barrier + window:
            window *= 2
        i = j
