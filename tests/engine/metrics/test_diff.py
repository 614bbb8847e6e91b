"""Two schedules of the same jobs, job by job (engine.metrics.diff), on a hand-worked example."""

from __future__ import annotations

import pandas as pd

from engine.metrics.diff import (
    delta_histogram,
    gains_by,
    job_classes,
    job_diff,
    moved_most,
)


def schedule(starts: list[int]) -> pd.DataFrame:
    jobs = pd.DataFrame({"job_id": [1, 2, 3, 4], "user": [7, 7, 8, 9], "procs": [1, 4, 100, 1],
                         "runtime": [100, 4000, 40000, 5], "submit": [0, 0, 0, 0]})
    jobs["start"] = starts
    jobs["end"] = jobs["start"] + jobs["runtime"]
    return jobs


def test_start_differences_are_b_minus_a_over_the_jobs_of_both():
    diff = job_diff(schedule([0, 10, 100, 5]), schedule([0, 4000, 50, 90000]).iloc[:3])
    assert diff.jobs["delta"].tolist() == [0, 3990, -50] and (diff.only_a, diff.only_b) == (1, 0)
    assert diff.jobs["job_class"].tolist() == ["1 proc, < 10 min", "2–8 procs, 1–10 h", "65–512 procs, > 10 h"]


def test_the_scheduler_s_own_ids_come_along_where_the_schedules_have_them():
    a, b = schedule([0, 10, 100, 5]), schedule([0, 4000, 50, 90000])
    a["native_id"] = b["native_id"] = ["112461.server", "112462.server", "112463.server", "112464.server"]
    diff = job_diff(a, b.iloc[1:])
    assert diff.jobs[["job_id", "native_id"]].values.tolist() == [[2, "112462.server"], [3, "112463.server"],
                                                                   [4, "112464.server"]]
    assert "native_id" not in job_diff(schedule([0, 1, 2, 3]), schedule([0, 1, 2, 3])).jobs


def test_the_histogram_counts_each_job_once_in_its_band():
    bands = delta_histogram([0, 3990, -50, -86400 * 8, 0.5])
    counts = dict(zip(bands["band"], bands["jobs"]))
    assert counts["same start"] == 2 and counts["later 1 h–6 h"] == 1
    assert counts["earlier 1 s–1 min"] == 1 and counts["earlier 1 w+"] == 1
    assert bands["jobs"].sum() == 5 and bands["sign"].tolist() == sorted(bands["sign"])


def test_users_that_gain_come_first_then_those_that_lose():
    diff = job_diff(schedule([0, 10, 100, 5]), schedule([0, 4000, 50, 5]))
    table = gains_by(diff.jobs, "user")
    assert table["user"].tolist() == [8, 7]           # user 9's job did not move: neither gains nor loses
    assert table["total_delta"].tolist() == [-50, 3990] and table["jobs"].tolist() == [1, 2]


def test_the_jobs_that_moved_most_either_way():
    diff = job_diff(schedule([0, 10, 100, 5]), schedule([0, 4000, 50, 5]))
    assert moved_most(diff.jobs, 2)["job_id"].tolist() == [2, 3]


def test_job_class_bands_include_their_upper_edge():
    assert job_classes([8, 9], [600, 601]).tolist() == ["2–8 procs, < 10 min", "9–64 procs, 10 min–1 h"]
