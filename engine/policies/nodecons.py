"""Compiled parts of node-level conservative backfilling (engine.policies.heterogeneous.NodeConservative).

The reservations live in arrays indexed by job (cluster, start, end, cores; cluster -1: none) and
the per-cluster core profiles in one :class:`engine.sim.profileset.ProfileSet`, so that a whole
compression pass is one call: for each job of the pass, in queue order, the earliest start on the
clusters that gained room or earlier on its own (:func:`engine.sim.profileset.earliest_over`, the
same search, cluster by cluster in the class's order, as the Python pass made).
"""

from __future__ import annotations

from engine.sim.jit import njit
from engine.sim.profile import add
from engine.sim.profileset import NEVER_FITS, advance_row, duration_on, earliest_over


@njit(cache=True)
def compress_pass(order, first, times, free, length, version, now, res_c, res_s, res_e, res_n, own_none,
                  blocked, class_of, list_of, offsets, flat, cores, nodes, exclusive, node_cores, estimate, factor,
                  avail_from, avail_to, freed, moved):
    """One compression pass over ``order[first:]`` (waiting jobs in queue order): each reserved job
    not yet due and not blocked moves to its earliest start on the ``freed`` clusters (or earlier on
    its own cluster) if that is earlier than its reservation. A request class's clusters are
    ``flat[offsets[l]:offsets[l + 1]]`` with ``l = list_of[class]``. The jobs moved are written to
    ``moved`` in order. Returns (where it stopped, jobs moved): it stops early, before the job it
    would move, when a profile row has no room left for the move (the caller grows the rows and
    calls again from there); where = -1 - i if job order[i] never fits on one of its clusters.

    ``own_none[job]``: the ``version`` of the job's own row when a search of it found no earlier
    start (-1: none known). While that row is not changed, nor the reservation, it is not searched
    again: time only shrinks the starts it could give (the row is the same step function from now
    on, and a start that did not fit then does not fit now)."""
    width = times.shape[1]
    k = 0
    for i in range(first, len(order)):
        job = order[i]
        own = res_c[job]
        start = res_s[job]
        if own < 0 or start <= now or blocked[job]:
            continue
        cls = class_of[job]
        clusters = flat[offsets[list_of[cls]]:offsets[list_of[cls] + 1]]
        c, t, none = earliest_over(times, free, length, now, clusters, cores[cls], nodes[cls], exclusive[cls],
                                   node_cores, estimate[job], factor, avail_from, avail_to, start, freed, own, start,
                                   res_e[job], res_n[job], own_none[job] == version[own])
        if c == NEVER_FITS:
            return -1 - i, k
        if none:
            own_none[job] = version[own]
        if c < 0 or t >= start:
            continue
        if length[own] + 4 > width or length[c] + 4 > width:
            return i, k
        advance_row(times, free, length, own, now)      # not searched if known to give nothing
        length[own] = add(times[own], free[own], length[own], start, res_e[job], res_n[job])
        version[own] += 1
        held = nodes[cls] * node_cores[c] if exclusive[cls] else cores[cls]
        end = t + duration_on(estimate[job], factor[c])
        length[c] = add(times[c], free[c], length[c], t, end, -held)
        version[c] += 1
        res_c[job], res_s[job], res_e[job], res_n[job] = c, t, end, held
        own_none[job] = -1
        moved[k] = job
        k += 1
    return len(order), k
