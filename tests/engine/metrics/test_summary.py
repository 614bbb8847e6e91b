"""The summary dict: every value of the worked example checked against arithmetic done by hand."""

from __future__ import annotations

import json
import math

import pytest

from engine.metrics import summarize
from engine.metrics.summary import SUMMARY_KEYS

from .schedules import empty_schedule, make_schedule, three_jobs_on_four_processors


def test_every_value_of_the_worked_example():
    summary = summarize(three_jobs_on_four_processors(), capacity=4,
                        rejected={"oversize": 2, "zero_procs": 1}, wall_seconds=0.5)
    expected = {
        "jobs": 3,
        "rejected": {"oversize": 2, "zero_procs": 1},
        "rejected_total": 3,
        # waits 0, 90, 0 -> sorted 0, 0, 90; p95 interpolates at rank 0.95*2 = 1.9: 0 + 0.9*(90-0)
        "mean_wait": 30.0, "median_wait": 0.0, "p95_wait": 81.0, "max_wait": 90.0,
        # responses 100, 140, 2 -> sorted 2, 100, 140; mean 242/3; p95 = 100 + 0.9*(140-100)
        "mean_response": 242 / 3, "median_response": 100.0, "p95_response": 136.0, "max_response": 140.0,
        # bsld 1, 2.8, 1 -> sorted 1, 1, 2.8; mean 4.8/3; p95 = 1 + 0.9*(2.8-1)
        "mean_bsld": 1.6, "median_bsld": 1.0, "p95_bsld": 2.62, "max_bsld": 2.8,
        # stretch 1, 1.9, 1
        "max_stretch": 1.9, "mean_stretch": 1.3,
        # TT = sum(P*T)/sum(P) = (2*100 + 4*140 + 1*2) / (2+4+1) = 762/7
        "weighted_turnaround": 762 / 7,
        # skips 0, -1, +1
        "mean_abs_skip": 2 / 3, "max_skip": 1,
        # span = last end 150 - first submit 0; work = 2*100 + 4*50 + 1*2 = 402; 402 / (4*150)
        "utilization": 0.67, "makespan": 150,
        # 3 jobs in 150 s = 3 / (150/3600) per hour
        "throughput": 72.0,
        # users' mean bsld: user 1 (1+1)/2 = 1, user 2 2.8 -> (1+2.8)^2 / (2*(1+2.8^2)) = 14.44/17.68
        "jain_bsld": 14.44 / 17.68,
        "killed": 1,
        "wall_seconds": 0.5,
    }
    assert list(summary) == list(SUMMARY_KEYS)
    assert summary.pop("rejected") == expected.pop("rejected")
    assert summary == pytest.approx(expected)


def test_the_summary_is_plain_json():
    summary = summarize(three_jobs_on_four_processors(), capacity=4, wall_seconds=1.25)
    assert json.loads(json.dumps(summary, allow_nan=False)) == summary
    assert all(type(v) in (int, float, dict, type(None)) for v in summary.values())
    assert type(summary["jobs"]) is int and type(summary["max_skip"]) is int and type(summary["makespan"]) is int


def test_empty_schedule_has_no_statistics_and_raises_nothing():
    summary = summarize(empty_schedule(), capacity=4, rejected={"oversize": 5})
    assert summary["jobs"] == 0
    assert summary["killed"] == 0
    assert summary["rejected"] == {"oversize": 5} and summary["rejected_total"] == 5
    counts = {"jobs", "killed", "rejected", "rejected_total"}
    assert all(summary[key] is None for key in SUMMARY_KEYS if key not in counts)


def test_a_zero_length_span_has_no_utilization_or_throughput():
    # one job of 0 s, submitted and run at t=5: span 0, everything else is defined
    summary = summarize(make_schedule([{"submit": 5, "start": 5, "end": 5, "procs": 1}]), capacity=4)
    assert summary["makespan"] == 0
    assert summary["utilization"] is None and summary["throughput"] is None
    assert summary["mean_bsld"] == 1.0 and summary["jain_bsld"] == 1.0


def test_extra_entries_are_added_but_cannot_overwrite_metrics():
    summary = summarize(three_jobs_on_four_processors(), capacity=4, extra={"policy": "easy", "ratio": math.nan})
    assert summary["policy"] == "easy" and summary["ratio"] is None
    with pytest.raises(ValueError, match="mean_wait"):
        summarize(three_jobs_on_four_processors(), capacity=4, extra={"mean_wait": 0})


def test_summary_ignores_row_labels():
    # a schedule sliced out of a bigger frame keeps its index labels; positions are what count
    schedule = three_jobs_on_four_processors()
    schedule.index = [10, 11, 12]
    assert summarize(schedule, capacity=4) == summarize(three_jobs_on_four_processors(), capacity=4)
