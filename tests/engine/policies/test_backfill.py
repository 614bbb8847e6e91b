"""Hand-worked schedules for the in-order, first-fit and EASY algorithms and the orderings.

Each test states the trace as (submit, runtime, requested, procs) and the schedule derived on paper.
"""

from __future__ import annotations

from engine.run import simulate
from tests.engine.conftest import make_workload


def starts(result) -> dict[int, tuple[int, int]]:
    """job_id -> (start, end)."""
    s = result.schedule
    return {int(j): (int(a), int(b)) for j, a, b in zip(s.job_id, s.start, s.end)}


# Machine of 4. J1 holds 3 processors until 10; J2 wants all 4 (the blocked head); J3 is short
# enough to finish before J2's reservation (shadow time 10); J4 would run past it with no extra
# processors left (4 - 4 = 0), so it must wait.
EASY_TRACE = [(0, 10, 10, 3), (1, 5, 5, 4), (2, 5, 5, 1), (3, 20, 20, 1)]


def test_fcfs_head_blocks_everything_behind_it():
    """SSS: J2 blocks the queue, so J3 waits although a processor is free."""
    result = simulate(make_workload(EASY_TRACE), 4, "fcfs")
    assert starts(result) == {1: (0, 10), 2: (10, 15), 3: (15, 20), 4: (15, 35)}


def test_easy_backfills_a_job_that_ends_before_the_shadow_time():
    result = simulate(make_workload(EASY_TRACE), 4, "easy")
    assert starts(result)[3] == (2, 7)


def test_easy_refuses_a_backfill_that_would_delay_the_head():
    result = simulate(make_workload(EASY_TRACE), 4, "easy")
    assert starts(result)[2] == (10, 15)     # the head starts exactly at its shadow time
    assert starts(result)[4] == (15, 35)     # J4 (ends 23 > 10, needs 1 > 0 extra) waited


def test_easy_lets_long_jobs_use_the_extra_processors():
    """Machine of 6: J1 holds 4 until 10; head J2 needs 5, so at 10 there are 6 - 5 = 1 extra.
    J3 (1 processor, 100 s) takes the extra one; J4 (same) finds no extra left and waits."""
    trace = [(0, 10, 10, 4), (1, 10, 10, 5), (2, 100, 100, 1), (3, 100, 100, 1)]
    result = starts(simulate(make_workload(trace), 6, "easy"))
    assert result[3] == (2, 102)
    assert result[2] == (10, 20)
    assert result[4] == (20, 120)


def test_first_fit_starts_any_job_that_fits_without_reservation():
    """J4 takes the processor J3 frees at 7, and J2 (the 4-wide job) waits until J4 ends at 27."""
    result = starts(simulate(make_workload(EASY_TRACE), 4, "firstfit"))
    assert result == {1: (0, 10), 2: (27, 32), 3: (2, 7), 4: (7, 27)}


def test_easy_with_exact_estimates_backfills_on_real_runtimes():
    """J3 asks for 50 s but runs 5: with requests EASY refuses it (7 < 10 only on real time)."""
    trace = [(0, 10, 10, 3), (1, 5, 5, 4), (2, 5, 50, 1)]
    assert starts(simulate(make_workload(trace), 4, "easy"))[3] == (15, 20)
    assert starts(simulate(make_workload(trace), 4, "easy", exact_estimates=True))[3] == (2, 7)


def test_sjf_orders_by_requested_time():
    """While J1 holds the whole machine, three jobs arrive; they run shortest request first."""
    trace = [(0, 10, 10, 2), (1, 30, 30, 2), (2, 10, 10, 2), (3, 20, 20, 2)]
    result = starts(simulate(make_workload(trace), 2, "sjf"))
    assert [result[j][0] for j in (3, 4, 2)] == [10, 20, 40]


# Machine of 4. J1 takes all 4 until 10; meanwhile J2 (1 proc), J3 (2), J4 (3) arrive.
MASC_TRACE = [(0, 10, 10, 4), (1, 10, 10, 1), (2, 10, 10, 2), (3, 10, 10, 3)]


def test_sorted_runs_the_largest_waiting_job_first():
    """At 10 J4 (3) starts, J3 (2) no longer fits; at 20 J3 then J2. J2 was passed by J4 and J3."""
    result = simulate(make_workload(MASC_TRACE), 4, "sorted")
    assert starts(result) == {1: (0, 10), 4: (10, 20), 3: (20, 30), 2: (20, 30)}
    assert result.schedule.set_index("job_id").start_order.loc[[4, 3, 2]].tolist() == [1, 2, 3]


def test_masc_pins_a_job_once_it_has_been_passed_masc_times():
    """MASC 1: J4 starts at 10 and passes J2 and J3 once each; both are pinned to the head in
    arrival order, so J2 (1 proc) starts at 10 in the processor J4 left, and J3 follows at 20."""
    result = simulate(make_workload(MASC_TRACE), 4, {"preset": "sorted-masc", "params": {"masc": 1}})
    assert starts(result) == {1: (0, 10), 4: (10, 20), 2: (10, 20), 3: (20, 30)}


def test_masc_zero_is_fcfs():
    fcfs = simulate(make_workload(MASC_TRACE), 4, "fcfs").schedule
    masc0 = simulate(make_workload(MASC_TRACE), 4, {"preset": "sorted-masc", "params": {"masc": 0}}).schedule
    assert masc0.start.tolist() == fcfs.start.tolist()


def test_sorted_easy_backfills_behind_the_largest_job():
    """Largest first puts J4 (3 procs) at the head at t=3; EASY backfills J2 (1 proc, 5 s) in the
    meantime because it ends (8) before J1 frees the machine at 10."""
    trace = [(0, 10, 10, 2), (3, 5, 5, 1), (3, 10, 10, 3)]
    result = starts(simulate(make_workload(trace), 4, "sorted-easy"))
    assert result == {1: (0, 10), 2: (3, 8), 3: (10, 20)}


def test_easy_counts_every_job_that_ends_at_the_shadow_time_as_extra():
    """Machine of 5. J1 and J2 (2 processors each) both end at 10, one processor is free; head J3
    needs 3, so it fits once either has ended: shadow time 10. Both end then, so 5 - 3 = 2
    processors are extra, and J4 (1 processor, 100 s) may take the free one now. (Stopping at J1,
    the first job that makes the head fit, counted 0 extra and kept J4 waiting until 10.) J3 still
    starts at its shadow time."""
    trace = [(0, 10, 10, 2), (0, 10, 10, 2), (1, 10, 10, 3), (2, 100, 100, 1)]
    result = starts(simulate(make_workload(trace), 5, "easy"))
    assert result == {1: (0, 10), 2: (0, 10), 3: (10, 20), 4: (2, 102)}
