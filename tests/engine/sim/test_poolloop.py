"""The compiled loop (engine.sim.poolloop) schedules as the Python loop and the naive reference do.

Every test runs the same scenario through both paths (``Simulation.compiled`` forces one) and
compares the whole schedule (starts, ends, start order, every column) and the schedule check's
verdict; where the naive reference applies (FCFS order, jobs ending by their request), its starts
too. The random traces have ties on purpose (tests/engine/policies/test_reference.py's builder):
equal submits, equal requested times, equal ends, runtime 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.policies.backfill import Easy
from engine.policies.registry import build_scheduler, resolve
from engine.run import simulate
from engine.sim.simulator import Cancelled, Simulation, SimResult
from engine.sim.validate import ReservationWatch
from engine.workload import load_workload
from engine.workload.model import Workload
from engine.workload.window import select_days
from tests.engine import reference
from tests.engine.conftest import make_workload
from tests.engine.policies.test_reference import reference_jobs, tied_traces
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"
REFERENCES = {"fcfs": reference.fcfs, "easy": reference.easy}
POLICIES = ["fcfs", "easy", {"ordering": "sjf", "algorithm": "easy"}, {"ordering": "largest", "algorithm": "easy"},
            {"ordering": "sjf", "algorithm": "none"}, "sorted"]


@contextmanager
def path(compiled: bool) -> Iterator[None]:
    """Simulations in this block take the compiled loop (True) or the Python one (False)."""
    before = Simulation.compiled
    Simulation.compiled = compiled
    try:
        yield
    finally:
        Simulation.compiled = before


def both(workload: Workload, capacity: int, policy: Any, **options: Any) -> tuple[SimResult, SimResult]:
    with path(True):
        fast = simulate(workload, capacity, policy, **options)
    with path(False):
        slow = simulate(workload, capacity, policy, **options)
    return fast, slow


def assert_same_runs(fast: SimResult, slow: SimResult) -> None:
    pd.testing.assert_frame_equal(fast.schedule, slow.schedule)
    verdict = {k: v for k, v in fast.meta["summary"]["validation"].items() if k != "seconds"}
    assert verdict == {k: v for k, v in slow.meta["summary"]["validation"].items() if k != "seconds"}


def assert_same_as_reference(schedule: pd.DataFrame, workload: Workload, capacity: int, policy: str,
                             exact: bool) -> None:
    expected = REFERENCES[policy](reference_jobs(workload), capacity, exact=exact)
    differing = [i for i, (a, b) in enumerate(zip(schedule.start.tolist(), expected)) if a != b]
    assert not differing, f"{len(differing)} starts differ from the reference, first at job {differing[0]}"


# -- random traces with ties ----------------------------------------------------------------------

@settings(max_examples=300, deadline=None, derandomize=True)
@given(tied_traces(), st.sampled_from(range(len(POLICIES))), st.booleans(), st.booleans())
def test_random_tied_traces_schedule_as_the_python_loop_and_the_reference(trace, which, exact, overruns):
    rows, capacity = trace
    if overruns:   # some jobs run past their request (the scenario's overrun "run")
        rows = [(s, r * 3 if i % 3 == 0 else r, q, p) for i, (s, r, q, p) in enumerate(rows)]
    policy = POLICIES[which]
    workload = make_workload(rows)
    fast, slow = both(workload, capacity, policy, exact_estimates=exact)
    assert_same_runs(fast, slow)
    if isinstance(policy, str) and policy in REFERENCES and not overruns:
        assert_same_as_reference(fast.schedule, workload, capacity, policy, exact)


def watched_run(workload: Workload, capacity: int, compiled: bool) -> ReservationWatch:
    sim = Simulation(workload, capacity)
    sim.compiled = compiled
    scheduler = build_scheduler(resolve("easy"), sim)
    scheduler.watch = watch = ReservationWatch()
    sim.run(scheduler)
    return watch


@settings(max_examples=150, deadline=None, derandomize=True)
@given(tied_traces())
def test_the_reservation_watch_hears_the_same_from_both_loops(trace):
    """With overruns EASY's reservations may slip: both loops report the same promises and slips."""
    rows, capacity = trace
    rows = [(s, r * 4 + 1, q, p) for s, r, q, p in rows]
    workload = make_workload(rows)
    fast, slow = watched_run(workload, capacity, True), watched_run(workload, capacity, False)
    assert (fast.broken, fast.reservations, fast.head, fast.promised) == \
        (slow.broken, slow.reservations, slow.head, slow.promised)


def test_slipping_reservations_are_reported_by_the_compiled_loop():
    """J0 asks 10 s but runs 40 (overruns allowed); the head J1 (all 4 processors) is promised
    t=10; at 12 (J0 still running, expected to end in a second) t=13; it starts at 40."""
    rows = [(0, 40, 10, 2), (1, 10, 10, 4), (2, 5, 5, 1), (12, 5, 5, 1)]
    watch = watched_run(make_workload(rows), 4, True)
    assert watch.reservations == 1
    assert watch.broken == [("moved", 1, 10, 13, 12), ("late", 1, 13, 40, 40)]
    assert watch.broken == watched_run(make_workload(rows), 4, False).broken


# -- what runs where ---------------------------------------------------------------------------------

def test_the_compiled_loop_runs_plain_pool_runs_only(monkeypatch):
    taken: list[str] = []
    real = Simulation.run_compiled
    monkeypatch.setattr(Simulation, "run_compiled",
                        lambda self, *args: taken.append("compiled") or real(self, *args))
    rows = [(0, 10, 10, 2), (1, 5, 5, 4), (2, 5, 5, 1)]
    with path(True):
        for policy in ("fcfs", "easy", "sorted-easy"):
            simulate(make_workload(rows), 4, policy)
        assert len(taken) == 3
        simulate(make_workload(rows), 4, "easy", allocation="buddy")            # buddy blocks
        simulate(make_workload(rows), 4, {"preset": "easy", "params": {"backfill_bound": 2}})
        simulate(make_workload(rows), 4, "sorted-masc")                         # a skipping limit
        simulate(make_workload(rows), 4, "firstfit")
        assert len(taken) == 3


def test_small_runs_stay_in_python_and_large_ones_are_compiled():
    small, large = make_workload([(0, 1, 1, 1)] * 10), make_workload([(i, 1, 1, 1) for i in range(40_000)])
    assert Simulation(small, 4).worth_compiling() in (False, True)   # True only once numba is loaded
    assert Simulation(large, 4).worth_compiling()


@pytest.mark.parametrize("policy, requested", [("easy", 3), ("conservative", 5)])   # conservative: its own loop
def test_the_compiled_loop_reports_progress_and_can_be_cancelled(policy, requested):
    workload = make_workload([(i, 3, requested, 1) for i in range(1000)])
    seen: list[float] = []
    with path(True):
        simulate(workload, 2, policy, progress=seen.append)
        assert 150 <= len(seen) <= 220 and seen == sorted(seen) and seen[-1] == 1.0
        with pytest.raises(Cancelled):
            simulate(workload, 2, policy, should_stop=lambda: True)


# -- real traces -------------------------------------------------------------------------------------

@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_a_whole_real_trace_schedules_as_the_python_loop(policy):
    workload = load_workload(SWF / "KTH-SP2-1996-2.1-cln.swf.gz")
    assert_same_runs(*both(workload, int(workload.metadata["procs"]), policy))


@pytest.mark.parametrize("days", [(0, 60), (200, 260)])
@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_windows_of_a_real_trace_schedule_as_the_python_loop_and_the_reference(policy, days):
    workload = select_days(load_workload(SWF / "SDSC-SP2-1998-4.2-cln.swf.gz"), *days)
    capacity = int(workload.metadata["procs"])
    fast, slow = both(workload, capacity, policy)
    assert_same_runs(fast, slow)
    assert (fast.schedule.start > fast.schedule.submit).sum() > 300, "too few jobs wait: the test would prove little"
    assert_same_as_reference(fast.schedule, workload, capacity, policy, exact=False)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["fcfs", "easy", "sorted-easy"])
def test_hpc2n_schedules_as_the_python_loop(policy):
    workload = load_workload(SWF / "HPC2N-2002-2.2-cln.swf.gz")
    assert_same_runs(*both(workload, int(workload.metadata["procs"]), policy))


@pytest.mark.slow
def test_exact_estimates_and_overruns_on_a_real_trace():
    workload = select_days(load_workload(SWF / "KTH-SP2-1996-2.1-cln.swf.gz", overrun="run"), 0, 120)
    assert (workload.jobs.runtime > workload.jobs.requested_time).any()
    for exact in (False, True):
        assert_same_runs(*both(workload, 100, "easy", exact_estimates=exact))
    assert Easy is not None
