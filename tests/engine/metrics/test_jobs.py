"""Per-job metrics on schedules small enough to check by hand."""

from __future__ import annotations

import pytest

from engine.metrics import job_metrics
from engine.metrics.jobs import BSLD_TAU

from .schedules import empty_schedule, make_schedule, three_jobs_on_four_processors


def test_the_worked_example_job_by_job():
    jobs = job_metrics(three_jobs_on_four_processors())

    # response = end - submit:      A 100-0 = 100,  B 150-10 = 140,  C 22-20 = 2
    assert jobs["response"].tolist() == [100, 140, 2]
    # slowdown = response / runtime: A 100/100 = 1,  B 140/50 = 2.8,  C 2/2 = 1
    assert jobs["slowdown"].tolist() == pytest.approx([1.0, 2.8, 1.0])
    # bsld = max(1, response / max(runtime, 10)): A 1,  B 2.8,  C max(1, 2/10) = 1
    assert jobs["bsld"].tolist() == pytest.approx([1.0, 2.8, 1.0])
    # stretch = (wait + requested) / requested: A (0+100)/100 = 1,  B (90+100)/100 = 1.9,  C (0+10)/10 = 1
    assert jobs["stretch"].tolist() == pytest.approx([1.0, 1.9, 1.0])
    # skip = arrival rank - start rank: A 0-0 = 0,  B 1-2 = -1 (overtaken by C),  C 2-1 = +1
    assert jobs["skip"].tolist() == [0, -1, 1]
    assert jobs["wait"].tolist() == [0, 90, 0]
    assert jobs["killed"].tolist() == [True, False, False]


def test_bounded_slowdown_measures_short_jobs_against_tau():
    assert BSLD_TAU == 10
    jobs = job_metrics(make_schedule([
        # a 2 s job that waited 3 s: response 5, slowdown 5/2 = 2.5, but bsld max(1, 5/10) = 1
        {"submit": 0, "start": 3, "end": 5, "procs": 1},
        # a 2 s job that waited 28 s: response 30, slowdown 15, bsld 30/10 = 3
        {"submit": 0, "start": 28, "end": 30, "procs": 1},
        # a 100 s job that waited 100 s: tau does not matter, slowdown = bsld = 200/100 = 2
        {"submit": 0, "start": 100, "end": 200, "procs": 1},
    ]))
    assert jobs["slowdown"].tolist() == pytest.approx([2.5, 15.0, 2.0])
    assert jobs["bsld"].tolist() == pytest.approx([1.0, 3.0, 2.0])


def test_zero_length_jobs_count_as_one_second():
    # runtime 0 and a 0 s request: slowdown = response / 1, stretch = (wait + 0) / 1
    jobs = job_metrics(make_schedule([{"submit": 0, "start": 7, "end": 7, "procs": 1, "requested_time": 0}]))
    assert jobs["slowdown"].tolist() == [7.0]
    assert jobs["bsld"].tolist() == [1.0]  # max(1, 7/10)
    assert jobs["stretch"].tolist() == [7.0]


def test_skip_counts_a_job_started_ahead_of_two_earlier_arrivals():
    jobs = job_metrics(make_schedule([
        {"submit": 0, "start": 50, "end": 60, "procs": 4, "start_order": 1},
        {"submit": 1, "start": 60, "end": 70, "procs": 4, "start_order": 2},
        {"submit": 2, "start": 2, "end": 50, "procs": 1, "start_order": 0},  # jumps the queue
    ]))
    # arrival ranks 0, 1, 2 minus start ranks 1, 2, 0
    assert jobs["skip"].tolist() == [-1, -1, 2]


def test_skip_falls_back_to_start_times_without_start_order():
    schedule = make_schedule([
        {"submit": 0, "start": 50, "end": 60, "procs": 4},
        {"submit": 2, "start": 2, "end": 50, "procs": 1},
    ]).drop(columns="start_order")
    assert job_metrics(schedule)["skip"].tolist() == [-1, 1]


def test_the_input_is_left_alone():
    schedule = three_jobs_on_four_processors()
    before = schedule.copy()
    job_metrics(schedule)
    assert schedule.equals(before)


def test_empty_schedule_gets_empty_columns():
    jobs = job_metrics(empty_schedule())
    assert len(jobs) == 0
    assert {"response", "slowdown", "bsld", "stretch", "skip"} <= set(jobs.columns)
