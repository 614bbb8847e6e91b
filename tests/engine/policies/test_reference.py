"""The engine's EASY and conservative backfilling against the naive reference (tests/engine/reference.py),
job by job: on many small random traces built to have ties, and on real traces.

The random traces draw submit times, requested times and runtimes from a few values each, so that
jobs arrive together, ask for the same time, end at the same instant (and at a head's shadow time),
run exactly their request or less, or run 0 s.
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.run import simulate
from engine.workload import load_workload
from engine.workload.model import Workload
from tests.engine import reference
from tests.engine.conftest import make_workload
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"
REFERENCES = {"easy": reference.easy, "conservative": reference.conservative}


@st.composite
def tied_traces(draw, max_jobs: int = 25) -> tuple[list[tuple[int, int, int, int]], int]:
    """(rows of (submit, runtime, requested, procs), capacity) with many ties on purpose."""
    capacity = draw(st.integers(1, 8))
    instants = draw(st.lists(st.integers(0, 60), min_size=1, max_size=6))
    requests = draw(st.lists(st.sampled_from([1, 2, 3, 5, 8, 10, 20, 30]), min_size=1, max_size=4))
    rows = []
    for _ in range(draw(st.integers(1, max_jobs))):
        requested = draw(st.sampled_from(requests))
        runtime = draw(st.one_of(st.just(requested), st.just(0), st.integers(0, requested)))
        rows.append((draw(st.sampled_from(instants)), runtime, requested, draw(st.integers(1, capacity))))
    return rows, capacity


def reference_jobs(workload: Workload) -> list[reference.Job]:
    jobs = workload.jobs
    return [reference.Job(int(s), int(r), int(q), int(p))
            for s, r, q, p in zip(jobs.submit, jobs.runtime, jobs.requested_time, jobs.procs)]


def assert_same_starts(workload: Workload, capacity: int, policy: str, *, exact: bool = False) -> pd.DataFrame:
    schedule = simulate(workload, capacity, policy, exact_estimates=exact).schedule
    expected = REFERENCES[policy](reference_jobs(workload), capacity, exact=exact)
    engine = schedule.start.tolist()
    if engine != expected:
        first = next(i for i, (a, b) in enumerate(zip(engine, expected)) if a != b)
        differing = sum(a != b for a, b in zip(engine, expected))
        raise AssertionError(f"{policy}: {differing} of {len(engine)} starts differ; first at job {first} "
                             f"(row {workload.jobs.iloc[first].to_dict()}): engine {engine[first]}, "
                             f"reference {expected[first]}")
    return schedule


# -- hand-worked: the reference itself ------------------------------------------------------------

def test_the_reference_counts_every_job_ending_at_the_shadow_time():
    """The case that was wrong in the engine (see test_backfill): J4 uses the extra processor."""
    jobs = [reference.Job(0, 10, 10, 2), reference.Job(0, 10, 10, 2), reference.Job(1, 10, 10, 3),
            reference.Job(2, 100, 100, 1)]
    assert reference.easy(jobs, 5) == [0, 0, 10, 2]


def test_the_reference_compresses_when_a_job_ends_early():
    jobs = [reference.Job(0, 30, 100, 4), reference.Job(1, 50, 50, 2), reference.Job(2, 20, 20, 2)]
    assert reference.conservative(jobs, 4) == [0, 30, 30]


def test_a_job_of_runtime_zero_frees_its_processors_at_once():
    """J1 takes the whole machine for 0 s at 0; J2, arriving then too, starts at 0 as well."""
    jobs = [reference.Job(0, 0, 10, 4), reference.Job(0, 5, 5, 4)]
    for policy in REFERENCES.values():
        assert policy(jobs, 4) == [0, 0]


# -- the engine against the reference ---------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(tied_traces(), st.sampled_from(sorted(REFERENCES)), st.booleans())
def test_the_engine_schedules_tied_random_traces_as_the_reference_does(trace, policy, exact):
    rows, capacity = trace
    assert_same_starts(make_workload(rows), capacity, policy, exact=exact)


def head(workload: Workload, jobs: int) -> Workload:
    return Workload(workload.jobs.iloc[:jobs].reset_index(drop=True), workload.metadata, workload.report,
                    workload.source)


@pytest.mark.parametrize("policy", sorted(REFERENCES))
def test_the_engine_schedules_the_start_of_a_real_trace_as_the_reference_does(policy):
    workload = head(load_workload(SWF / "KTH-SP2-1996-2.1-cln.swf.gz"), 1000)
    schedule = assert_same_starts(workload, int(workload.metadata["procs"]), policy)
    assert (schedule.start > schedule.submit).sum() > 300, "too few jobs wait: the test would prove little"


@pytest.mark.slow
@pytest.mark.parametrize("trace", ["HPC2N-2002-2.2-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz",
                                   "CTC-SP2-1996-3.1-cln.swf.gz"])
@pytest.mark.parametrize("policy", sorted(REFERENCES))
def test_the_engine_schedules_thousands_of_real_jobs_as_the_reference_does(trace, policy):
    workload = head(load_workload(SWF / trace), 5000)
    assert_same_starts(workload, int(workload.metadata["procs"]), policy)
