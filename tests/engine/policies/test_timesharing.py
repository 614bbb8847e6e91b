"""Hand-worked time-sharing (TSS) schedules: the admission rule, the shared rate, rounding.

Traces are (submit, runtime, requested, procs); N is the machine size, D the processors held by
admitted jobs, and every admitted job progresses at rate min(1, N / D).
"""

from __future__ import annotations


import numpy as np
import pytest

from engine.policies.registry import catalog
from engine.run import simulate
from engine.sim import Cancelled
from engine.workload import load_workload
from engine.workload.window import select_days
from tests.engine.conftest import make_workload
from tests.shared_data import SHARED_DATA

KTH = SHARED_DATA / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"


def schedule(trace, capacity, policy="tss", **kwargs) -> dict[int, tuple[int, int]]:
    result = simulate(make_workload(trace), capacity, policy, **kwargs)
    s = result.schedule
    return {int(j): (int(a), int(b)) for j, a, b in zip(s.job_id, s.start, s.end)}


def test_a_job_on_the_whole_machine_keeps_the_head_out():
    """The paper's example: J1 holds all 4 processors, so admitting J2 cannot raise utilization
    (it is already 4/4); J2 waits for J1 exactly as under space sharing."""
    trace = [(0, 10, 10, 4), (1, 5, 5, 2)]
    assert schedule(trace, 4) == {1: (0, 10), 2: (10, 15)}
    assert schedule(trace, 4) == schedule(trace, 4, "fcfs")


def test_two_jobs_share_the_machine_at_rate_n_over_d():
    """N = 4. J1 (2 procs, 10 s) starts at 0. At t=1 D = 2 < 4, so J2 (4 procs, 6 s) is admitted:
    D = 6, rate 4/6 = 2/3. J1 has 9 s of work left, J2 6 s: J2 ends first, after 6 / (2/3) = 9 s,
    at t = 10. J1 got 9 x 2/3 = 6 s of work meanwhile, 3 s left at full speed: it ends at 13.
    (Space sharing: J1 0-10, J2 10-16.)"""
    assert schedule([(0, 10, 10, 2), (1, 6, 6, 4)], 4) == {1: (0, 13), 2: (1, 10)}


def test_the_blocked_head_holds_back_the_jobs_behind_it():
    """N = 4. J1 (3 procs, 9 s) at 0; J2 (2 procs, 10 s) admitted at 1 (D = 3 < 4) -> D = 5,
    rate 4/5. J3 (1 proc) arrives at 2 with D = 5 >= 4: not admitted. J1 has 8 s left at t=1:
    8 / 0.8 = 10 s -> ends at 11. J2 got 10 x 0.8 = 8 s by then, 2 s left. At 11 D = 2: J3 is
    admitted (D = 3, rate 1): J3 ends at 12, J2 at 13."""
    assert schedule([(0, 9, 9, 3), (1, 10, 10, 2), (2, 1, 1, 1)], 4) == {1: (0, 11), 2: (1, 13), 3: (11, 12)}


def test_several_jobs_are_admitted_at_one_instant_while_demand_is_below_n():
    """N = 4, four 1-processor jobs and a 4-wide one all at t=0: the four small ones are admitted
    (D = 0, 1, 2, 3 < 4 before each), then D = 4 keeps the wide one out until they end at 5."""
    trace = [(0, 5, 5, 1)] * 4 + [(0, 2, 2, 4)]
    assert schedule(trace, 4) == {1: (0, 5), 2: (0, 5), 3: (0, 5), 4: (0, 5), 5: (5, 7)}


def test_exact_times_are_rounded_to_the_nearest_second():
    """N = 4. J1 (3 procs, 10 s) at 0, J2 (2 procs, 10 s) at 1 -> D = 5, rate 0.8. J1: 9 s left
    / 0.8 = 11.25 s -> ends at 12.25 (reported 12); J2 has done 9 s, 1 s left at full speed:
    ends at 13.25 (reported 13)."""
    assert schedule([(0, 10, 10, 3), (1, 10, 10, 2)], 4) == {1: (0, 12), 2: (1, 13)}


def test_buddy_allocation_shares_by_the_rounded_size():
    """N = 96 with buddy: 40 processors hold a 64 block. J2 is admitted at 1 (D = 64 < 96):
    D = 128, rate 96/128 = 3/4. J2 (4 s) ends after 4 / 0.75 = 5.33 s -> 6.33 (reported 6);
    J1 had 100 - 1 - 4 = 95 s left then, at full speed: 101.33 (reported 101)."""
    result = schedule([(0, 100, 100, 40), (1, 4, 4, 40)], 96, allocation="buddy")
    assert result == {1: (0, 101), 2: (1, 6)}
    count = schedule([(0, 100, 100, 40), (1, 4, 4, 40)], 96)   # 80 <= 96: no sharing at all
    assert count == {1: (0, 100), 2: (1, 5)}


def test_zero_runtime_jobs_end_when_admitted():
    assert schedule([(0, 0, 1, 4), (0, 3, 3, 4)], 4) == {1: (0, 0), 2: (0, 3)}


def test_the_summary_reports_peak_demand_and_slowed_jobs():
    result = simulate(make_workload([(0, 10, 10, 2), (1, 6, 6, 4)]), 4, "tss")
    summary = result.meta["summary"]
    assert {k: summary[k] for k in ("timesharing_peak_demand", "timesharing_slowed_jobs")} == \
        {"timesharing_peak_demand": 1.5, "timesharing_slowed_jobs": 2}


def test_the_preset_is_in_the_catalog_with_its_model_written_out():
    tss = next(p for p in catalog() if p["name"] == "tss")
    assert tss["algorithm"] == "timesharing"
    for choice in ("raises machine utilization", "N/D", "context-switch", "memory"):
        assert choice in tss["description"]


def test_time_sharing_composes_with_another_ordering():
    """Largest first + time sharing: the 4-wide J3 overtakes J2 when J1 ends."""
    policy = {"ordering": "largest", "algorithm": "timesharing"}
    assert schedule([(0, 4, 4, 4), (1, 1, 1, 1), (2, 1, 1, 4)], 4, policy) == {1: (0, 4), 3: (4, 5), 2: (5, 6)}


def test_thirty_days_of_kth_keep_the_sharing_bounds():
    """On a real month: every job waits >= 0, runs at least its runtime and never slower than half
    speed (D < 2N), and starts in arrival order (FCFS admission)."""
    workload = select_days(load_workload(KTH), 0, 30)
    s = simulate(workload, 100, "tss", allocation="buddy").schedule
    assert (s.start >= s.submit).all()
    took, runtime = (s.end - s.start).to_numpy(), s.runtime.to_numpy()
    assert (took >= runtime - 1).all() and (took <= 2 * runtime + 1).all()
    assert np.array_equal(s.start_order.to_numpy(), np.arange(len(s)))
    assert (took > runtime + 1).any()   # sharing really happened


def test_progress_is_reported_and_should_stop_cancels_the_rate_loop():
    """Same contract as the space-sharing loop: about 200 progress reports ending at 1.0, and
    should_stop() asked every 1000 instants."""
    rows = [(i, 5, 5, 1 + i % 3) for i in range(3000)]
    seen: list[float] = []
    simulate(make_workload(rows), 4, "tss", progress=seen.append)
    assert seen[-1] == 1.0 and 100 <= len(seen) <= 300 and seen == sorted(seen)
    with pytest.raises(Cancelled, match="cancelled at t="):
        simulate(make_workload(rows), 4, "tss", should_stop=lambda: True)
