"""Invariants every schedule keeps, on random traces (hypothesis) and on whole real traces.

Capacity never exceeded (ends before starts at one instant), no start before submit, every job
runs exactly once for its runtime, and the same input gives the same schedule.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.policies.registry import PRESETS
from engine.run import simulate
from engine.workload import load_workload
from engine.workload.window import select_days
from tests.engine.conftest import make_workload
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"
# a replay keeps what happened, not these invariants; slurm and pbs need a site's files (tests/engine/policies/
# test_slurm.py and test_pbs.py check their schedules)
POLICIES = sorted(p for p in PRESETS if p not in ("recorded", "slurm", "pbs"))


def assert_valid(schedule: pd.DataFrame, capacity: int) -> None:
    assert (schedule.start >= schedule.submit).all(), "a job started before it was submitted"
    assert (schedule.end - schedule.start == schedule.runtime).all(), "a job did not run for its runtime"
    assert sorted(schedule.start_order) == list(range(len(schedule))), "a job started twice or never"
    times = np.concatenate([schedule.start.to_numpy(), schedule.end.to_numpy()])
    deltas = np.concatenate([schedule.alloc.to_numpy(), -schedule.alloc.to_numpy()])
    order = np.lexsort((deltas, times))        # at one instant, releases (negative) first
    busy = np.cumsum(deltas[order])
    assert busy.max(initial=0) <= capacity, f"{busy.max()} processors busy on a machine of {capacity}"


job = st.tuples(
    st.integers(0, 500),      # submit
    st.integers(0, 120),      # runtime
    st.integers(1, 150),      # requested time
    st.integers(1, 8),        # processors
)


@settings(max_examples=40, deadline=None)
@given(st.lists(job, min_size=1, max_size=40), st.sampled_from(POLICIES), st.sampled_from(["count", "buddy"]))
def test_random_traces_keep_every_invariant(rows, policy, allocation):
    rows = [(s, min(r, q), q, p) for s, r, q, p in rows]   # killed at the request, as cleaning does
    workload = make_workload(rows)
    first = simulate(workload, 8, policy, allocation=allocation).schedule
    assert_valid(first, 8)
    again = simulate(workload, 8, policy, allocation=allocation).schedule
    pd.testing.assert_frame_equal(first, again)


@settings(max_examples=30, deadline=None)
@given(st.lists(job, min_size=1, max_size=40), st.integers(0, 6))
def test_no_job_is_passed_by_more_than_masc_later_arrivals(rows, masc):
    rows = [(s, min(r, q), q, p) for s, r, q, p in rows]
    schedule = simulate(make_workload(rows), 8, {"preset": "sorted-masc", "params": {"masc": masc}}).schedule
    order = schedule.start_order.to_numpy()
    for job_index in range(len(schedule)):
        later_arrivals_started_first = (order[job_index + 1:] < order[job_index]).sum()
        assert later_arrivals_started_first <= masc


def test_overrunning_jobs_keep_the_invariants_under_every_policy():
    """With overruns allowed, jobs run past their requests; reservations must cope."""
    rows = [(0, 30, 10, 3), (1, 10, 10, 4), (2, 5, 5, 1), (3, 50, 20, 2), (4, 10, 10, 4)]
    for policy in POLICIES:
        assert_valid(simulate(make_workload(rows), 4, policy).schedule, 4)


@pytest.mark.slow
@pytest.mark.parametrize("trace", ["KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-Par-1996-3.1-cln.swf.gz"])
@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "sorted-masc"])
def test_whole_real_traces_keep_every_invariant(trace, policy):
    workload = load_workload(SWF / trace)
    capacity = int(workload.metadata["procs"])
    result = simulate(workload, capacity, policy)
    assert len(result.schedule) == len(workload.jobs)
    assert_valid(result.schedule, capacity)


@pytest.mark.slow
def test_a_month_of_a_real_trace_with_buddy_allocation_and_overruns():
    workload = select_days(load_workload(SWF / "KTH-SP2-1996-2.1-cln.swf.gz", overrun="run"), 0, 30)
    assert (workload.jobs.runtime > workload.jobs.requested_time).any()
    for policy in ("easy", "conservative"):
        result = simulate(workload, 100, policy, allocation="buddy")
        assert_valid(result.schedule, 100)


def test_a_policy_can_ask_for_a_pass_when_nothing_happens():
    """wake_at(t): the simulator runs a scheduling pass at t although no job ends or arrives."""
    from engine.policies.algorithm import Algorithm
    from engine.sim.simulator import Simulation

    class StartAtTen(Algorithm):
        def on_submit(self, job: int) -> None:
            super().on_submit(job)
            self.sim.wake_at(10)

        def schedule(self) -> None:
            if self.sim.now >= 10 and len(self.queue):
                self.start(self.queue.head())

    from engine.policies.ordering import submit_order

    sim = Simulation(make_workload([(0, 5, 5, 1)]), 4)
    sim.run(StartAtTen(sim, submit_order(sim, {}), {}))
    assert sim.start_time == [10]
