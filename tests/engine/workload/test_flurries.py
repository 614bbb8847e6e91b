"""Workload flurries (Tsafrir & Feitelson, IPDPS 2006): a planted burst is found, exactly, and removed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.errors import WorkloadError
from engine.workload.flurries import Flurry, FlurryRule, find_flurries, without_flurries
from engine.workload.model import Workload
from tests.engine.workload.replica_traces import DAY, user_trace

BURST_USER = 99


def with_burst(trace: Workload, jobs: int, start: int, every: int) -> Workload:
    """``trace`` plus ``jobs`` jobs of user 99, one every ``every`` seconds from ``start``."""
    rows = trace.jobs.iloc[:jobs].copy()
    rows["submit"] = start + every * np.arange(jobs)
    rows["user"] = BURST_USER
    rows["job_id"] = 100_000 + np.arange(jobs)
    frame = pd.concat([trace.jobs, rows]).sort_values("submit", kind="stable").reset_index(drop=True)
    return Workload(frame, trace.metadata)


def test_a_planted_burst_is_found_with_its_bounds_count_and_share():
    base = user_trace(0, jobs=4000, users=30)        # no user near 2 % of the jobs in a day
    start = int(base.jobs["submit"].min()) + 20 * DAY
    trace = with_burst(base, 300, start, every=60)   # 300 jobs in 5 hours: 7 % of 4,300
    found = find_flurries(trace)
    assert found == [Flurry(BURST_USER, start, start + 299 * 60, 300, 300 / 4300)]


def test_the_ordinary_users_make_no_flurry():
    assert find_flurries(user_trace(0, jobs=4000, users=30)) == []


def test_the_threshold_is_inclusive_and_one_job_less_is_no_flurry():
    base = user_trace(1, jobs=9000, users=60)
    rule = FlurryRule(share=0.02, window_hours=24, min_jobs=100)
    start = int(base.jobs["submit"].min()) + 3 * DAY
    # 9,000 + 190 jobs: 2 % is 183.8 -> 184 jobs in 24 h make a flurry
    exact = with_burst(base, 190, start, every=(24 * 3600 - 1) // 183)   # 184 of them inside one 24 h window
    assert rule.threshold(len(exact)) == 184
    assert [f.user for f in find_flurries(exact, rule)] == [BURST_USER]
    spread = with_burst(base, 190, start, every=24 * 3600 // 183 + 1)   # at most 183 in any 24 h
    assert find_flurries(spread, rule) == []


def test_a_burst_is_only_the_dense_part_of_the_users_jobs():
    base = user_trace(2, jobs=3000, users=30)
    start = int(base.jobs["submit"].min()) + 10 * DAY
    burst = with_burst(base, 200, start, every=30)
    # the same user also submits 20 jobs, one a day, long after the burst
    later = burst.jobs.iloc[:20].copy()
    later["submit"] = start + 30 * DAY + DAY * np.arange(20)
    later["user"], later["job_id"] = BURST_USER, 200_000 + np.arange(20)
    trace = Workload(pd.concat([burst.jobs, later]).sort_values("submit", kind="stable").reset_index(drop=True),
                     base.metadata)
    (flurry,) = find_flurries(trace)
    assert (flurry.first, flurry.last, flurry.jobs) == (start, start + 199 * 30, 200)
    cleaned = without_flurries(trace, [flurry])
    assert len(cleaned) == len(trace) - 200
    assert (cleaned.jobs["user"] == BURST_USER).sum() == 20     # the user's other jobs stay
    assert cleaned.metadata["flurries_removed"] == 200
    assert without_flurries(trace, [flurry.to_dict()]).jobs.equals(cleaned.jobs)


def test_unknown_users_make_no_flurry(workload):
    trace = workload([(i, 10, 20, 1) for i in range(500)], users=[-1] * 500)
    assert find_flurries(trace, FlurryRule(min_jobs=1)) == []


@pytest.mark.parametrize("options", [{"share": 0}, {"share": 1.5}, {"window_hours": 0}, {"min_jobs": 0}])
def test_bad_rules_are_input_errors(options):
    with pytest.raises(WorkloadError):
        FlurryRule(**options)


def test_the_rule_says_its_definition():
    assert FlurryRule().describe() == ("a user's jobs within 24 h numbering at least 2 % of the trace's jobs and at "
                                       "least 100 (after Tsafrir & Feitelson, IPDPS 2006)")
