"""The compiled loop of conservative backfilling (engine.policies.conservative.run_conservative)
schedules as the Python loop.

Each scenario runs three ways: the compiled loop (``Simulation.compiled = True``), the Python loop
with the queue's columns (``Simulation.compiled = False``) and the Python loop with the compression
over job numbers (``Conservative.reference``); the whole schedules (starts, ends, start order, every
column) and the schedule check's verdicts must be equal, and where the naive reference applies
(FCFS order, no overrun, no bound) its starts too. The random traces have ties on purpose:
simultaneous submits, equal requests, runtime 0, jobs of the whole machine, jobs ending early and
(overruns) running past their request, which makes the policy rebuild its profile.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.policies import conservative
from engine.policies.conservative import Conservative
from engine.policies.registry import build_scheduler, resolve
from engine.run import simulate
from engine.sim.simulator import Simulation, SimResult, SimulationError
from engine.workload import load_workload
from engine.workload.model import Workload
from engine.workload.window import select_days
from tests.engine import reference
from tests.engine.conftest import make_workload
from tests.engine.policies.test_conservative import reference_path
from tests.engine.policies.test_reference import reference_jobs, tied_traces
from tests.engine.sim.test_poolloop import path
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"


def three_ways(workload: Workload, capacity: int, policy: Any, **options: Any) -> tuple[SimResult | str, ...]:
    """(compiled loop, Python loop, Python loop with the reference compression): each run's result,
    or the message of the SimulationError that stopped it."""
    runs: list[SimResult | str] = []
    for compiled, referenced in ((True, False), (False, False), (False, True)):
        with path(compiled), reference_path() if referenced else nullcontext():
            try:
                runs.append(simulate(workload, capacity, policy, **options))
            except SimulationError as error:
                runs.append(str(error))
    return tuple(runs)


def assert_same_runs(*runs: SimResult | str) -> None:
    first = runs[0]
    if isinstance(first, str):
        assert all(other == first for other in runs[1:])
        return
    assert not any(isinstance(other, str) for other in runs[1:])
    verdict = {k: v for k, v in first.meta["summary"]["validation"].items() if k != "seconds"}
    for other in runs[1:]:
        pd.testing.assert_frame_equal(first.schedule, other.schedule)
        assert verdict == {k: v for k, v in other.meta["summary"]["validation"].items() if k != "seconds"}


def policy_of(ordering: str, bound: int | None) -> dict[str, Any]:
    return {"ordering": ordering, "algorithm": "conservative",
            **({} if bound is None else {"params": {"backfill_bound": bound}})}


def with_overruns(rows: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Every third job runs three times its request, plus a second (overruns allowed)."""
    return [(s, 3 * q + 1 if i % 3 == 0 else r, q, p) for i, (s, r, q, p) in enumerate(rows)]


# -- random traces with ties ----------------------------------------------------------------------

@settings(max_examples=400, deadline=None, derandomize=True)
@given(tied_traces(max_jobs=40), st.sampled_from(["fcfs", "sjf", "largest"]), st.sampled_from([None, 1, 3]),
       st.booleans(), st.booleans(), st.booleans())
def test_random_tied_traces_schedule_as_the_python_loop_and_the_reference(trace, ordering, bound, exact, overruns,
                                                                            whole_machine):
    rows, capacity = trace
    if whole_machine:   # every fourth job asks for the whole machine
        rows = [(s, r, q, capacity if i % 4 == 0 else p) for i, (s, r, q, p) in enumerate(rows)]
    if overruns:
        rows = with_overruns(rows)
    workload = make_workload(rows)
    runs = three_ways(workload, capacity, policy_of(ordering, bound), exact_estimates=exact)
    assert isinstance(runs[0], SimResult), runs[0]
    assert_same_runs(*runs)
    if ordering == "fcfs" and bound is None and not overruns:
        expected = reference.conservative(reference_jobs(workload), capacity, exact=exact)
        assert isinstance(runs[0], SimResult) and runs[0].schedule.start.tolist() == expected


job = st.tuples(
    st.integers(0, 300),                            # submit
    st.integers(0, 100),                            # runtime: most jobs end before their request
    st.sampled_from([1, 10, 20, 40, 80, 100]),      # requested time
    st.sampled_from([1, 2, 3, 4, 8]),               # processors (8: the whole machine)
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(job, min_size=1, max_size=400), st.sampled_from(["fcfs", "sjf", "largest"]),
       st.sampled_from([None, 2, 5]), st.booleans())
def test_longer_random_queues_schedule_as_the_python_loop(rows, ordering, bound, overruns):
    """Long enough queues for several blocks of the columns' summaries (SPAN = 64 positions each)."""
    if overruns:
        rows = with_overruns(rows)
    runs = three_ways(make_workload(rows), 8, policy_of(ordering, bound))
    assert isinstance(runs[0], SimResult), runs[0]
    assert_same_runs(*runs)


# -- hand-worked ------------------------------------------------------------------------------------

def test_a_job_beyond_the_bound_starts_at_its_reservation_though_nothing_happens_then():
    """One processor. J0 (asks 1 s) ends at once, J1 and J2 (1 s each) are reserved at 1 and 2.
    With backfill_bound 1 the compression at 0 moves J1 only (to 0): J2 keeps 2, where nothing
    ends or arrives (J1 ends at 1, as expected). J2 must start at 2, not wait for ever; without
    the bound it moves to 1."""
    rows = [(0, 0, 1, 1), (0, 1, 1, 1), (0, 1, 1, 1)]
    bounded = three_ways(make_workload(rows), 1, policy_of("fcfs", 1))
    assert_same_runs(*bounded)
    assert bounded[0].schedule.start.tolist() == [0, 0, 2]
    exact = three_ways(make_workload(rows), 1, policy_of("fcfs", None))
    assert_same_runs(*exact)
    assert exact[0].schedule.start.tolist() == [0, 0, 1]


def test_a_due_job_that_does_not_fit_makes_the_compiled_loop_rebuild_as_the_python_one():
    """J0 asks 10 s but runs 40: J1 (all 4 processors) is reserved at 10 and due then, but J0
    still runs; the profile is rebuilt from the running jobs (J0 expected to end at 11) and the
    waiting jobs placed again; J1 starts at 40, J2 and J3 fit before or after it."""
    rows = [(0, 40, 10, 2), (1, 10, 10, 4), (2, 5, 5, 1), (12, 5, 5, 2), (13, 30, 30, 2)]
    runs = three_ways(make_workload(rows), 4, "conservative")
    assert_same_runs(*runs)
    assert runs[0].schedule.start.tolist()[1] == 40


def end_state(workload: Workload, capacity: int, policy: Any, compiled: bool) -> dict[str, Any]:
    sim = Simulation(workload, capacity)
    sim.compiled = compiled
    scheduler = build_scheduler(resolve(policy), sim)
    assert isinstance(scheduler, Conservative) and scheduler.columns is not None
    sim.run(scheduler)
    columns = scheduler.columns
    return {"now": sim.now, "started": sim.started, "finished": sim.finished, "free": sim.free,
            "start": sim.start_time, "end": sim.end_time, "order": sim.start_order,
            "steps": scheduler.profile.steps(), "reserved": scheduler.reserved.tolist(), "seq": scheduler.seq.tolist(),
            "clock": int(scheduler._clock[0]), "next_due": scheduler._next_due, "freed": scheduler._freed_until,
            "waiting": columns.length, "dirty": columns.dirty}


@settings(max_examples=100, deadline=None, derandomize=True)
@given(tied_traces(max_jobs=30), st.booleans())
def test_the_compiled_loop_leaves_the_policy_as_the_python_loop_does(trace, overruns):
    """The simulation and the policy's state after the run (the profile, reservations, seq, clock)."""
    rows, capacity = trace
    if overruns:
        rows = with_overruns(rows)
    workload = make_workload(rows)
    assert end_state(workload, capacity, "conservative", True) == end_state(workload, capacity, "conservative", False)


# -- what runs where ---------------------------------------------------------------------------------

def test_the_compiled_loop_runs_plain_conservative_only(monkeypatch):
    taken: list[str] = []
    real = conservative.run_compiled_loop
    monkeypatch.setattr(conservative, "run_compiled_loop", lambda *args: taken.append("compiled") or real(*args))
    rows = [(0, 10, 10, 2), (1, 5, 5, 4), (2, 5, 5, 1)]
    with path(True):
        for policy in ("conservative", {"ordering": "sjf", "algorithm": "conservative"},
                       {"preset": "conservative", "params": {"backfill_bound": 2}}):
            simulate(make_workload(rows), 4, policy)
        assert len(taken) == 3
        simulate(make_workload(rows), 4, "conservative", allocation="buddy")     # buddy blocks
        simulate(make_workload(rows), 4, {"ordering": "largest", "algorithm": "conservative",
                                          "params": {"masc": 2}})                  # a skipping limit
        with reference_path():
            simulate(make_workload(rows), 4, "conservative")
        assert len(taken) == 3
    with path(False):
        simulate(make_workload(rows), 4, "conservative")
        assert len(taken) == 3


def test_conservative_takes_the_compiled_loop_at_any_size(monkeypatch):
    """Its Python path loads numba as well (the profile's kernels): the compiled loop always pays."""
    taken: list[str] = []
    real = conservative.run_compiled_loop
    monkeypatch.setattr(conservative, "run_compiled_loop", lambda *args: taken.append("compiled") or real(*args))
    small = make_workload([(0, 1, 1, 1)] * 10)
    assert Simulation(small, 4).worth_compiling(numba_anyway=True)
    simulate(small, 4, "conservative")
    assert taken == ["compiled"]


def test_the_profile_grows_inside_the_compiled_loop():
    """Hundreds of jobs wait at once (the profile starts with room for 64 steps)."""
    rng = np.random.default_rng(3)
    rows = [(0, int(r), int(q), int(p)) for r, q, p in
            zip(rng.integers(0, 50, 600), rng.integers(50, 100, 600), rng.integers(1, 9, 600))]
    assert_same_runs(*three_ways(make_workload(rows), 8, "conservative"))


# -- real traces -------------------------------------------------------------------------------------

@pytest.mark.parametrize("trace, days", [("SDSC-SP2-1998-4.2-cln.swf.gz", (0, 60)),
                                         ("KTH-SP2-1996-2.1-cln.swf.gz", (200, 260))])
def test_windows_of_real_traces_schedule_as_the_python_loop_and_the_reference(trace, days):
    workload = select_days(load_workload(SWF / trace), *days)
    capacity = int(workload.metadata["procs"])
    runs = three_ways(workload, capacity, "conservative")
    assert_same_runs(*runs)
    assert (runs[0].schedule.start > runs[0].schedule.submit).sum() > 300, "too few jobs wait: the test would prove little"


@pytest.mark.slow
@pytest.mark.parametrize("bound", [None, 20])
def test_hpc2n_window_with_and_without_a_bound(bound):
    workload = load_workload(SWF / "HPC2N-2002-2.2-cln.swf.gz")
    part = Workload(workload.jobs.iloc[:30000].reset_index(drop=True), workload.metadata, workload.report,
                    workload.source)
    assert_same_runs(*three_ways(part, int(workload.metadata["procs"]), policy_of("fcfs", bound)))


@pytest.mark.slow
def test_overruns_and_exact_estimates_on_a_real_trace():
    workload = select_days(load_workload(SWF / "KTH-SP2-1996-2.1-cln.swf.gz", overrun="run"), 0, 120)
    assert (workload.jobs.runtime > workload.jobs.requested_time).any()
    for exact in (False, True):
        assert_same_runs(*three_ways(workload, 100, "conservative", exact_estimates=exact))


@pytest.mark.slow
def test_a_long_queue_of_ricc_schedules_as_the_python_loop():
    workload = load_workload(SWF / "RICC-2010-2.swf.gz", procs=8192)
    part = Workload(workload.jobs.iloc[:40000].reset_index(drop=True), workload.metadata, workload.report,
                    workload.source)
    runs = three_ways(part, 8192, "conservative")
    assert_same_runs(*runs)
    assert (runs[0].schedule.start > runs[0].schedule.submit).sum() > 1000
