"""The deadline scenario: which jobs get a deadline, which deadline, and the paper's preprocessing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.run import simulate
from engine.workload import WorkloadError
from engine.workload.deadlines import (REMOVED_INTERACTIVE, assign_deadlines, deadline_mask, deadlines_from_column,
                                       interactive_queues, paper_preprocessing, scenario_deadlines)
from tests.engine.conftest import make_workload


def test_deadline_is_a_day_or_ten_walltimes_whichever_is_later():
    # 1 h asked: 10 h < 24 h, so 24 h: 100 + 86,400.  3 h asked: 30 h = 108,000 s > 24 h.
    # 2.4 h = 8,640 s asked: 10 x = 86,400 exactly, the two rules meet.
    deadlines = scenario_deadlines(np.array([100, 100, 0]), np.array([3_600, 10_800, 8_640]))
    assert deadlines.tolist() == [86_500, 108_100, 86_400]


def test_the_fraction_picks_that_many_jobs_the_same_for_the_same_seed():
    workload = make_workload([(t, 10, 3_600, 1) for t in range(50)])
    first = assign_deadlines(workload, 0.4, seed=3)
    again = assign_deadlines(workload, 0.4, seed=3)
    other = assign_deadlines(workload, 0.4, seed=4)
    assert deadline_mask(first.jobs).sum() == 20                     # round(0.4 x 50)
    np.testing.assert_array_equal(first.jobs["deadline"], again.jobs["deadline"])
    assert not np.array_equal(deadline_mask(first.jobs), deadline_mask(other.jobs))
    chosen = first.jobs[deadline_mask(first.jobs)]
    assert (chosen["deadline"] == chosen["submit"] + 86_400).all()
    assert "deadline" not in workload.jobs                            # the input is left alone


@pytest.mark.parametrize("fraction", [-0.1, 1.5, float("nan")])
def test_a_fraction_outside_0_1_is_refused(fraction):
    with pytest.raises(WorkloadError, match="between 0 and 1"):
        assign_deadlines(make_workload([(0, 1, 1, 1)]), fraction)


def test_a_workload_with_deadlines_is_not_given_a_second_set():
    workload = assign_deadlines(make_workload([(0, 1, 1, 1)] * 4), 0.5)
    with pytest.raises(WorkloadError, match="already has deadlines"):
        assign_deadlines(workload, 0.5)


def test_deadlines_can_come_from_a_column():
    workload = make_workload([(0, 1, 1, 1), (10, 1, 1, 1), (20, 1, 1, 1)])
    workload.jobs["due"] = [500, -1, np.nan]             # -1 and empty mean regular
    read = deadlines_from_column(workload, "due")
    assert read.jobs["deadline"].tolist()[0] == 500
    assert deadline_mask(read.jobs).tolist() == [True, False, False]


def test_a_deadline_before_the_submission_names_the_job_and_field():
    workload = make_workload([(0, 1, 1, 1), (10, 1, 1, 1)])
    workload.jobs["deadline"] = [np.nan, 10]
    with pytest.raises(WorkloadError, match=r"field deadline: job 2: deadline 10 is not after its submission 10"):
        deadlines_from_column(workload)


SDSC_DS_QUEUES = {"Queue": "0  interactive\n1  express          (p655 /  2hr /   8nodes / weekdays)\n"
                           "2  high             (p655 / 18hr / 164nodes)"}


def test_paper_preprocessing_removes_the_interactive_queues_and_counts_them():
    assert interactive_queues(SDSC_DS_QUEUES) == {0}
    workload = make_workload([(0, 1, 1, 1), (1, 1, 1, 1), (2, 1, 1, 1)])
    workload.jobs["queue"] = [0, 1, 0]
    workload.metadata.update(SDSC_DS_QUEUES)
    prepared = paper_preprocessing(workload)
    assert prepared.jobs["queue"].tolist() == [1]
    assert prepared.report.rejected[REMOVED_INTERACTIVE] == 2
    assert REMOVED_INTERACTIVE not in workload.report.rejected


def test_a_trace_without_interactive_queues_is_unchanged():
    workload = make_workload([(0, 1, 1, 1)])
    assert paper_preprocessing(workload) is workload


@pytest.mark.parametrize("policy", ["conservative", "easy", "fcfs", "dbf"])
def test_every_policy_sees_the_same_deadline_jobs(policy):
    workload = make_workload([(t * 5, 20, 30, 1 + t % 3) for t in range(30)])
    spec = {"preset": policy, "params": {"deadline_fraction": 0.5}}
    schedule = simulate(workload, 4, spec, seed=7).schedule
    expected = assign_deadlines(workload, 0.5, seed=7).jobs["deadline"]
    pd.testing.assert_series_equal(schedule["deadline"], expected, check_names=False)
