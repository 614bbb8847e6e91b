"""Replicas of a trace: windows that cover every job once, shaken copies, user-resampled traces."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from engine.errors import WorkloadError
from engine.workload.model import Workload
from engine.workload.resampling import offered_work, resample_users
from engine.workload.shaking import Shake, shake
from engine.workload.window import equal_edges, submitted_between, week_edges
from tests.engine.workload.replica_traces import WEEK, user_trace


def jobs_per_window(workload: Workload, edges: list[tuple[int, int]]) -> Counter:
    """How many windows each job id falls in."""
    seen: Counter = Counter()
    for start, end in edges:
        seen.update(submitted_between(workload, start, end).jobs["job_id"].tolist())
    return seen


@pytest.mark.parametrize("seed", range(5))
def test_weekly_windows_cover_every_job_exactly_once(seed):
    trace = user_trace(seed, weeks=9.5)
    edges = week_edges(trace)
    assert len(edges) == 10                                   # 9.5 weeks of submits: 10 windows
    assert all(end - start == WEEK for start, end in edges)
    assert all(edges[i][1] == edges[i + 1][0] for i in range(len(edges) - 1))
    seen = jobs_per_window(trace, edges)
    assert set(seen) == set(trace.jobs["job_id"]) and set(seen.values()) == {1}


def test_the_first_n_weeks_are_the_first_n_windows():
    trace = user_trace(1)
    assert week_edges(trace, 3) == week_edges(trace)[:3]


@pytest.mark.parametrize("count", [1, 3, 7, 13])
def test_equal_windows_cover_every_job_exactly_once(count):
    trace = user_trace(2)
    edges = equal_edges(trace, count)
    assert len(edges) == count
    lengths = [end - start for start, end in edges]
    assert max(lengths) - min(lengths) <= 1
    seen = jobs_per_window(trace, edges)
    assert set(seen) == set(trace.jobs["job_id"]) and set(seen.values()) == {1}


def test_a_job_on_a_week_edge_belongs_to_the_later_week():
    trace = user_trace(3)
    first = int(trace.jobs["submit"].min())
    jobs = trace.jobs.copy()
    jobs.loc[5, "submit"] = first + WEEK                       # exactly on the edge
    trace = Workload(jobs.sort_values("submit", kind="stable").reset_index(drop=True), trace.metadata)
    edges = week_edges(trace)
    assert jobs.loc[5, "job_id"] in set(submitted_between(trace, *edges[1]).jobs["job_id"])
    assert jobs.loc[5, "job_id"] not in set(submitted_between(trace, *edges[0]).jobs["job_id"])


def by_id(workload: Workload) -> pd.DataFrame:
    return workload.jobs.set_index("job_id").sort_index()


def test_a_shaken_copy_moves_every_submit_by_at_most_the_stated_seconds_and_keeps_the_rest():
    trace = user_trace(4)
    copy = shake(trace, seed=7, how=Shake(submit_seconds=30))
    before, after = by_id(trace), by_id(copy)
    moved = after["submit"] - before["submit"]
    assert moved.abs().max() <= 30 and (moved != 0).mean() > 0.9
    assert (after[["runtime", "requested_time", "procs", "user"]] == before[["runtime", "requested_time", "procs",
                                                                              "user"]]).all().all()
    assert copy.jobs["submit"].is_monotonic_increasing
    assert copy.jobs["submit"].min() >= trace.jobs["submit"].min()


def test_the_same_seed_gives_the_same_copy_and_another_seed_another():
    trace = user_trace(5)
    how = Shake(submit_seconds=120, runtime=0.1, estimate=0.2)
    pd.testing.assert_frame_equal(shake(trace, 3, how).jobs, shake(trace, 3, how).jobs)
    assert not shake(trace, 3, how).jobs["submit"].equals(shake(trace, 4, how).jobs["submit"])


def test_shaken_runtimes_and_estimates_stay_within_their_fractions_and_runtimes_within_requests():
    trace = user_trace(6)
    before, after = by_id(trace), by_id(shake(trace, 1, Shake(0, runtime=0.1, estimate=0.2)))
    request_ratio = after["requested_time"] / before["requested_time"]
    assert request_ratio.between(0.8 - 1e-3, 1.2 + 1e-3).all()
    runtime_ratio = after["runtime"] / before["runtime"]
    cut_at_request = after["runtime"] == after["requested_time"]     # a shorter request cuts the run
    assert (runtime_ratio <= 1.1 + 1e-2).all()
    assert (runtime_ratio.between(0.9 - 1e-2, 1.1 + 1e-2) | cut_at_request).all()
    assert 0 < cut_at_request.mean() < 0.5
    assert (after["runtime"] <= after["requested_time"]).all()
    assert (after["submit"] == before["submit"]).all()


@pytest.mark.parametrize("options", [{"submit_seconds": -1}, {"runtime": 1.0}, {"estimate": -0.1}])
def test_bad_shaking_is_an_input_error(options):
    with pytest.raises(WorkloadError):
        Shake(**options)


@pytest.mark.parametrize("load", [0.5, 1.0, 1.5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_resampling_reaches_the_load_target_within_tolerance(load, seed):
    trace = user_trace(seed, jobs=3000, users=40)
    copy = resample_users(trace, seed, load=load, tolerance=0.02)
    assert offered_work(copy) == pytest.approx(load * offered_work(trace), rel=0.02)


def test_resampling_keeps_each_users_stream_whole_moved_by_whole_weeks():
    trace = user_trace(8, jobs=3000, users=40)
    copy = resample_users(trace, 5, load=1.2)
    original = trace.jobs
    first = int(original["submit"].min())
    for _, stream in copy.jobs.groupby("user"):
        sources = stream["resampled_from"].unique()
        assert len(sources) == 1                               # one copied user per new user
        source = original[original["user"] == sources[0]]
        assert len(stream) == len(source)                      # all of their jobs, no more
        shift = stream["submit"].to_numpy() - source["submit"].to_numpy()
        assert len(set(shift)) == 1 and shift[0] % WEEK == 0   # moved together by whole weeks
        assert (stream["runtime"].to_numpy() == source["runtime"].to_numpy()).all()
        assert (stream["procs"].to_numpy() == source["procs"].to_numpy()).all()
        # inside the trace's span of weeks
        weeks = (int(original["submit"].max()) - first) // WEEK + 1
        assert stream["submit"].min() >= first and stream["submit"].max() < first + weeks * WEEK
    # time of day and day of week kept, job by job
    assert set((copy.jobs["submit"] - first) % WEEK) <= set((original["submit"] - first) % WEEK)
    assert copy.jobs["job_id"].tolist() == list(range(1, len(copy) + 1))
    assert copy.jobs["submit"].is_monotonic_increasing


def test_resampling_is_seeded():
    trace = user_trace(9)
    pd.testing.assert_frame_equal(resample_users(trace, 4).jobs, resample_users(trace, 4).jobs)
    assert not resample_users(trace, 4).jobs.equals(resample_users(trace, 5).jobs)


def test_resampling_a_trace_without_users_is_an_input_error():
    trace = user_trace(10)
    jobs = trace.jobs.assign(user=-1)
    with pytest.raises(WorkloadError, match="users"):
        resample_users(Workload(jobs, trace.metadata), 0)


@pytest.mark.parametrize("seed", range(5))
def test_when_no_mix_of_whole_streams_is_within_tolerance_the_work_ends_as_close_as_it_can(seed, workload):
    # user 1's stream is 100 processor-seconds, user 2's 30; load 0.5 asks for 65 (2 %: 63.7-66.3).
    # Whole streams give 0, 30, 60, 90, 100, ...: 60 (5 short) is closer than 90 (25 over).
    trace = workload([(0, 10, 20, 10), (3600, 10, 20, 3)], users=[1, 2])
    copy = resample_users(trace, seed, load=0.5)
    assert offered_work(copy) == 60
    assert copy.jobs["resampled_from"].tolist() == [2, 2]
