"""Conservative backfilling: hand-worked cases, and the fast compression against a plain one.

:func:`plain_compress` is compression exactly as specified in engine/policies/conservative.py, with
nothing pruned: in rounds, every waiting job in queue order gives its reservation up, takes the
earliest fit from now, and rounds repeat until no job moves. The fast version must give the very
same schedule (starts, ends and start order) on random traces and on real ones.

The compression over the queue's columns (issue 14) is held, job by job, to the compression over
job numbers it replaces (``Conservative.reference``), on random tie-heavy traces and real windows.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from engine.policies.conservative import Conservative, earlier_fit_at, no_fit_before, no_fit_in_columns
from engine.run import simulate
from engine.sim.profile import FOREVER, NEVER, add, earliest_start
from engine.workload import load_workload
from engine.workload.model import Workload
from tests.engine.conftest import make_workload
from tests.shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[3]
SWF = SHARED_DATA / "swf"


def plain_compress(self: Conservative) -> None:
    """Compression as specified, nothing pruned: rounds over every waiting job until none moves."""
    sim, profile = self.sim, self.profile
    self._freed_until = NEVER
    moved = True
    while moved:
        moved = False
        for job in self.queue.jobs():
            start, duration, n = int(self.reserved[job]), sim.estimate[job], sim.size[job]
            if start <= sim.now:
                continue            # due now: it starts (or waits to fit) where it is
            profile.release(start, start + duration, n)
            new = profile.earliest_start(sim.now, duration, n)
            profile.reserve(new, new + duration, n)
            assert new <= start, "a reservation moved later"
            if new < start:
                self._note(job, new)
                moved = True


@contextmanager
def plain_fixpoint():
    """Conservative runs with :func:`plain_compress` inside this block."""
    fast = Conservative.compress
    Conservative.compress = plain_compress
    Conservative.reference = True     # reservations moved outside the queue's columns
    try:
        yield
    finally:
        Conservative.compress = fast
        Conservative.reference = False


@contextmanager
def reference_path():
    """Conservative compresses over job numbers (compress_round), as before the queue's columns."""
    Conservative.reference = True
    try:
        yield
    finally:
        Conservative.reference = False


def run(workload: Workload, capacity: int, *, plain: bool = False, reference: bool = False, ordering: str = "fcfs",
        allocation: str = "count", params: dict | None = None) -> pd.DataFrame:
    policy = {"ordering": ordering, "algorithm": "conservative", "params": params or {}}
    with plain_fixpoint() if plain else reference_path() if reference else nullcontext():
        return simulate(workload, capacity, policy, allocation=allocation).schedule


def starts(schedule: pd.DataFrame) -> list[int]:
    return schedule.start.tolist()


# -- hand-worked ---------------------------------------------------------------------------------

def test_a_later_job_may_not_delay_an_earlier_reservation_even_where_easy_would_let_it():
    """4 processors. A (2 procs) runs [0, 10), B (1 proc) [0, 4). H wants all 4: reserved at 10.
    C (2 procs, 6 s) is reserved in the hole [4, 10). D (1 proc, 5 s) fits now, at 3, and would
    end at 8, before H's reservation, so EASY starts it; but it would hold a processor C needs
    at 4, so conservative gives it the first place that delays nobody: after H, at 20."""
    rows = [(0, 10, 10, 2), (0, 4, 4, 1), (1, 10, 10, 4), (2, 6, 6, 2), (3, 5, 5, 1)]
    a, b, h, c, d = range(5)
    conservative = starts(simulate(make_workload(rows), 4, "conservative").schedule)
    assert conservative == [0, 0, 10, 4, 20]
    easy = starts(simulate(make_workload(rows), 4, "easy").schedule)
    assert easy[d] == 3 and easy[c] > conservative[c]   # EASY lets D jump ahead, delaying C


def test_an_early_end_moves_reservations_earlier():
    """A holds all 4 processors for a requested 100 s but ends at 30; B and C, reserved at 100,
    move to 30."""
    rows = [(0, 30, 100, 4), (1, 50, 50, 2), (2, 20, 20, 2)]
    assert starts(simulate(make_workload(rows), 4, "conservative").schedule) == [0, 30, 30]


def test_compression_repeats_rounds_until_no_job_moves():
    """4 processors. A (2 procs, requested 100 s) ends at 10; B (2 procs) runs [0, 20).
    X (3 procs, 30 s) is reserved at 100, Y (2 procs, 60 s) at 20. At 10, round one: X moves to
    80 (its own reservation covers [100, 110)), then Y moves to 10; Y now ends at 70, not 80, so
    round two moves X to 70."""
    rows = [(0, 10, 100, 2), (0, 20, 20, 2), (1, 30, 30, 3), (2, 60, 60, 2)]
    assert starts(simulate(make_workload(rows), 4, "conservative").schedule) == [0, 0, 70, 10]


def test_a_reservation_never_moves_later():
    """A job ending early only ever brings reservations forward: no start is later than it
    would be had every job run for its full request."""
    rows = [(0, 5, 50, 3), (1, 40, 40, 2), (2, 10, 30, 2), (3, 30, 30, 4), (4, 5, 5, 1)]
    early = simulate(make_workload(rows), 4, "conservative").schedule
    full = simulate(make_workload([(s, q, q, p) for s, _, q, p in rows]), 4, "conservative").schedule
    assert (early.start <= full.start).all()


# -- the fast compression is the plain fixpoint ----------------------------------------------------

job = st.tuples(
    st.integers(0, 300),      # submit
    st.integers(0, 100),      # runtime (most jobs end before their request)
    st.integers(1, 100),      # requested time
    st.integers(1, 8),        # processors
)


@settings(max_examples=150, deadline=None)
@given(st.lists(job, min_size=1, max_size=50), st.sampled_from(["fcfs", "sjf", "largest"]),
       st.sampled_from(["count", "buddy"]), st.booleans())
def test_fast_compression_gives_the_plain_fixpoint_schedule(rows, ordering, allocation, overruns):
    if not overruns:
        rows = [(s, min(r, q), q, p) for s, r, q, p in rows]
    workload = make_workload(rows)
    fast = run(workload, 8, ordering=ordering, allocation=allocation)
    plain = run(workload, 8, plain=True, ordering=ordering, allocation=allocation)
    pd.testing.assert_frame_equal(fast, plain)


@pytest.mark.slow
@pytest.mark.parametrize("trace", ["HPC2N-2002-2.2-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz"])
def test_fast_compression_gives_the_plain_fixpoint_schedule_on_real_traces(trace):
    workload = load_workload(SWF / trace)
    prefix = Workload(workload.jobs.iloc[:3000].reset_index(drop=True), workload.metadata,
                      workload.report, workload.source)
    capacity = int(workload.metadata["procs"])
    fast = run(prefix, capacity)
    assert (fast.start > fast.submit).sum() > 300, "too few jobs wait: the test would prove little"
    pd.testing.assert_frame_equal(fast, run(prefix, capacity, plain=True))


# -- with numba's cache, without it, and without numba at all ------------------------------------

CHILD = r"""
import hashlib, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from engine.run import simulate
from tests.engine.conftest import make_workload
rng = np.random.default_rng(7)
requested = rng.integers(1, 500, 400)
rows = [(int(s), int(rng.integers(0, q + 1)), int(q), int(p)) for s, q, p in
        zip(np.sort(rng.integers(0, 20000, 400)), requested, rng.integers(1, 33, 400))]
schedule = simulate(make_workload(rows), 32, "conservative").schedule
print(hashlib.sha1(schedule.to_csv(index=False).encode()).hexdigest())
"""


@pytest.mark.slow
def test_same_schedule_compiled_cold_compiled_cached_and_interpreted(tmp_path):
    def child(**env) -> str:
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        environment = {**inherited, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), **env}
        return subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], env=environment, check=True,
                              capture_output=True, text=True).stdout.strip()

    cold = child()
    assert any((tmp_path / "numba-cache").rglob("*.nbi")), "nothing was cached"
    assert child() == cold                          # loaded from the cache
    assert child(NUMBA_DISABLE_JIT="1") == cold     # the kernels as plain Python


# -- a failed search spares the searches it dominates ---------------------------------------------

steps = st.lists(st.tuples(st.integers(1, 20), st.integers(0, 8)), min_size=1, max_size=30)
request = st.tuples(st.integers(1, 8), st.integers(1, 60), st.integers(0, 400))   # size, duration, start


def profile_of(widths_and_free: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Steps of the given widths from time 0; the last lasts for ever with all 8 free."""
    times = np.cumsum([0] + [w for w, _ in widths_and_free]).astype(np.int64)
    free = np.array([f for _, f in widths_and_free] + [8], dtype=np.int64)
    return times, free


def search(times, free, since, request, limit) -> int:
    n, duration, start = request
    return int(earliest_start(times, free, len(times), since, duration, n, limit, start, start + duration, n))


@settings(max_examples=300, deadline=None)
@given(steps, st.lists(request, min_size=1, max_size=6), request, st.integers(0, 400))
# a job reserved earlier than a failed one is not dominated by it: it fits at 0 into its own
# reservation from 10 on, where the failed one (reserved at 100) would need free processors
@example([(10, 8), (90, 0)], [(1, 50, 100)], (1, 50, 10), 400)
def test_a_search_starts_where_the_failed_searches_it_dominates_gave_up(widths_and_free, failures, job, hi):
    """As compress_round uses it: from the step holding no_fit_before's answer, the same earliest
    fit (or none) as a search from now, whatever the dominated failures were."""
    times, free = profile_of(widths_and_free)
    failed = np.array([(n, d, s, min(s, hi)) for n, d, s in failures
                       if search(times, free, 0, (n, d, s), min(s, hi)) == NEVER], dtype=np.int64).reshape(-1, 4)
    n, duration, start = job
    limit = min(start, hi)
    since = int(no_fit_before(failed, len(failed), n, duration, start, 0))
    expected = search(times, free, 0, job, limit)
    if since >= limit:
        assert expected == NEVER
    else:
        aligned = int(times[np.searchsorted(times, since, side="right") - 1])
        assert search(times, free, aligned, job, limit) == expected


# -- the queue's columns: the same schedule as the compression over job numbers -------------------

tie_heavy_job = st.tuples(
    st.integers(0, 60),       # submit: many arrive together
    st.integers(0, 40),       # runtime
    st.sampled_from([10, 20, 40, 80]),   # requested time: few values, many ties
    st.sampled_from([1, 2, 4, 8, 3]),    # processors
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(job, tie_heavy_job), min_size=1, max_size=80), st.sampled_from(["fcfs", "sjf", "largest"]),
       st.sampled_from(["count", "buddy"]), st.booleans(), st.sampled_from([None, 1, 3]))
def test_compression_over_the_queue_columns_gives_the_reference_schedule(rows, ordering, allocation, overruns, bound):
    if not overruns:
        rows = [(s, min(r, q), q, p) for s, r, q, p in rows]
    workload = make_workload(rows)
    params = {} if bound is None else {"backfill_bound": bound}
    fast = run(workload, 8, ordering=ordering, allocation=allocation, params=params)
    reference = run(workload, 8, reference=True, ordering=ordering, allocation=allocation, params=params)
    pd.testing.assert_frame_equal(fast, reference)


@pytest.mark.slow
@pytest.mark.parametrize("trace, procs, window", [
    ("HPC2N-2002-2.2-cln.swf.gz", None, slice(0, 20000)),
    ("RICC-2010-2.swf.gz", 8192, slice(0, 40000)),            # a long queue
    ("CEA-Curie-2011-2.1-cln.swf.gz", None, slice(100000, 110000)),
])
def test_compression_over_the_queue_columns_gives_the_reference_schedule_on_real_traces(trace, procs, window):
    workload = load_workload(SWF / trace, procs=procs)
    part = Workload(workload.jobs.iloc[window].reset_index(drop=True), workload.metadata, workload.report,
                    workload.source)
    capacity = int(workload.metadata["procs"])
    fast = run(part, capacity)
    assert (fast.start > fast.submit).sum() > 1000, "too few jobs wait: the test would prove little"
    pd.testing.assert_frame_equal(fast, run(part, capacity, reference=True))


profile_steps = st.lists(st.tuples(st.integers(1, 20), st.integers(0, 8)), min_size=1, max_size=40)


@settings(max_examples=400, deadline=None)
@given(profile_steps, st.integers(1, 8), st.integers(1, 80), st.integers(0, 500), st.integers(0, 500),
       st.integers(0, 500))
def test_earlier_fit_answers_as_earliest_start_with_the_own_reservation(widths_and_free, n, duration, start,
                                                                         since, limit):
    """The one-pass search of the fast compression against the general search, on a random profile
    holding the job's own reservation (n processors on [start, start + duration)); equal
    neighbouring steps merged, as the profile keeps them."""
    base_times, base_free = profile_of(widths_and_free)
    end = start + duration
    times = np.unique(np.concatenate((base_times, [start, end])))
    free = base_free[np.searchsorted(base_times, times, side="right") - 1]
    inside = (times >= start) & (times < end)
    assume(not (inside & (free < n)).any())       # the own reservation fits
    free = np.where(inside, free - n, free)
    kept = np.concatenate(([True], free[1:] != free[:-1]))
    times, free = times[kept], free[kept]
    since, limit = min(since, start), min(limit, start)
    expected = earliest_start(times, free, len(times), since, duration, n, limit, start, end, n)
    step = int(np.searchsorted(times, since, side="right")) - 1
    assert earlier_fit_at(times, free, len(times), max(step, 0), since, duration, n, limit, start)[0] == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(request, min_size=0, max_size=16), request, st.integers(0, 400), st.integers(0, 50))
def test_failed_searches_in_columns_give_what_no_fit_before_gives(failures, job, hi, now):
    rows = np.array([(n, d, s, min(s, hi)) for n, d, s in failures], dtype=np.int64).reshape(-1, 4)
    columns = np.full((5, 16), FOREVER, dtype=np.int64)
    columns[:4, :len(rows)] = rows.T      # no room freed since they failed
    n, duration, start = job
    assert no_fit_in_columns(columns, n, duration, start, now) == no_fit_before(rows, len(rows), n, duration, start, now)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(steps, st.tuples(st.integers(1, 8), st.integers(1, 60), st.integers(1, 400)),
       st.tuples(st.integers(0, 3), st.integers(0, 30), st.integers(0, 100)), st.integers(1, 400),
       st.tuples(st.integers(0, 400), st.integers(1, 60), st.integers(1, 8)),
       st.tuples(st.integers(0, 400), st.integers(1, 60), st.integers(1, 8)))
def test_a_failed_search_still_spares_the_windows_ending_before_the_room_freed_since(
        widths_and_free, failed, larger, hi, taken, freed):
    """After a failed search, the profile loses room anywhere and gains some from ``released`` on
    (a move): a job the failure dominates still finds no fit before no_fit_in_columns's answer."""
    times, free = profile_of(widths_and_free)
    n, duration, start = failed
    limit = min(start, hi)
    assume(search(times, free, 0, failed, limit) == NEVER)
    room = len(times) + 8
    t, f = np.zeros(room, np.int64), np.zeros(room, np.int64)
    t[:len(times)], f[:len(times)] = times, free
    length = len(times)
    at, width, k = taken       # a reservation made (room lost), where it fits
    if (f[:length][(t[:length] < at + width) & (np.append(t[1:length], FOREVER) > at)] >= k).all():
        length = add(t, f, length, at, at + width, -k)
    released, width, k = freed
    length = add(t, f, length, released, released + width, k)
    columns = np.full((5, 16), FOREVER, dtype=np.int64)
    columns[:, 0] = n, duration, start, limit, released
    job = (min(8, n + larger[0]), duration + larger[1], start + larger[2])     # dominated by the failure
    since = no_fit_in_columns(columns, *job, 0)
    assume(since > 0)
    assert search(t[:length], f[:length], 0, job, since) == NEVER


many_rounds_job = st.tuples(
    st.integers(0, 30),                  # submit: a long queue builds up at once
    st.sampled_from([0, 1, 5, 30, 200]),  # runtime: most end early, by much or little
    st.sampled_from([5, 30, 200, 400]),  # requested time: short and long jobs, ties
    st.sampled_from([1, 2, 3, 4, 8]),    # processors
)


@settings(max_examples=150, deadline=None)
@given(st.lists(many_rounds_job, min_size=20, max_size=150))
def test_compression_rounds_hold_each_job_to_the_room_freed_since_it_was_asked(rows):
    """Long tie-heavy queues where early ends start compressions of several rounds (moves that free
    room behind jobs already asked and ahead of others): the queue columns' rounds, which ask each
    job only about the room freed since it was last asked, against the compression over job numbers."""
    rows = [(s, min(r, q), q, p) for s, r, q, p in rows]
    workload = make_workload(rows)
    pd.testing.assert_frame_equal(run(workload, 8), run(workload, 8, reference=True))
