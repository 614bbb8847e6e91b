"""EASY's deadline figures at each share of deadline jobs, derived from its one run (a deadline sweep runs
EASY once: it never reads deadlines), on a hand-worked serial workload."""

from __future__ import annotations

import numpy as np
import pytest

from engine.run import Pool, Scenario, deadline_summaries_at, run
from engine.workload.deadlines import pick_deadline_jobs
from tests.engine.conftest import make_workload

HOUR = 3_600

# One processor, everything submitted at 0, FCFS order (EASY has nothing to backfill on serial jobs):
#   job 1: runs 23 h (asked 23 h)  starts 0,    ends 23 h; a deadline would be max(24 h, 230 h) = 230 h: met
#   job 2: runs 1 h  (asked 1 h)   starts 23 h, ends 24 h; deadline 24 h: met (exactly on time is no miss)
#   job 3: runs 2 h  (asked 2 h)   starts 24 h, ends 26 h; deadline 24 h: missed by 2 h
#   job 4: runs 1 h  (asked 1 h)   starts 26 h, ends 27 h; deadline 24 h: missed by 3 h
ROWS = [(0, 23 * HOUR, 23 * HOUR, 1), (0, HOUR, HOUR, 1), (0, 2 * HOUR, 2 * HOUR, 1), (0, HOUR, HOUR, 1)]
WAIT = {1: 0.0, 2: 23.0 * HOUR, 3: 24.0 * HOUR, 4: 26.0 * HOUR}
MISSES = {3, 4}
SEED = 7


def scenario(policy: str = "easy", **params: object) -> Scenario:
    return Scenario(trace=make_workload(ROWS), policy={"preset": policy, "params": params} if params else policy,
                    platform=Pool(1), seed=SEED)


@pytest.fixture(scope="module")
def easy_schedule():
    schedule = run(scenario()).schedule
    assert dict(zip(schedule["job_id"], schedule["wait"].astype(float))) == WAIT   # the hand-worked schedule
    return schedule


def test_every_job_or_none_a_deadline_job(easy_schedule):
    none, every = deadline_summaries_at(scenario(), easy_schedule, [0.0, 1.0])
    assert none["deadline_jobs"] == 0 and none["regular_jobs"] == 4 and none["deadline_misses"] == 0
    assert none["mean_wait_regular"] == pytest.approx((0 + 23 + 24 + 26) / 4 * HOUR)
    assert every["deadline_jobs"] == 4 and every["regular_jobs"] == 0 and every["mean_wait_regular"] is None
    assert every["deadline_misses"] == 2 and every["deadline_misses_24h"] == 2   # jobs 3 and 4, both 24-hour
    assert every["max_deadline_usage"] == pytest.approx(27 / 24)                 # job 4 ends at 27 h of 24


@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.75])
def test_a_share_marks_the_jobs_a_dbf_run_at_that_share_gets(easy_schedule, fraction):
    (derived,) = deadline_summaries_at(scenario(), easy_schedule, [fraction])
    picked = {job for job, chosen in zip(range(1, 5), pick_deadline_jobs(4, fraction, SEED)) if chosen}
    regular = set(WAIT) - picked
    assert derived["deadline_jobs"] == len(picked) == round(4 * fraction)
    assert derived["deadline_misses"] == len(picked & MISSES)
    assert derived["mean_wait_regular"] == pytest.approx(np.mean([WAIT[j] for j in regular]))
    dbf = run(scenario("dbf", deadline_fraction=fraction)).schedule   # the same deadline jobs as DBF's own run
    assert {int(j) for j, d in zip(dbf["job_id"], dbf["deadline"]) if not np.isnan(d)} == picked


def test_the_shares_differ_where_a_copied_number_would_not(easy_schedule):
    summaries = deadline_summaries_at(scenario(), easy_schedule, [0.25, 0.5, 0.75, 1.0])
    assert [s["deadline_jobs"] for s in summaries] == [1, 2, 3, 4]
    assert [s["regular_jobs"] for s in summaries] == [3, 2, 1, 0]
    assert len({s["mean_wait_regular"] for s in summaries[:3]}) > 1   # the regular jobs differ, so does their wait
