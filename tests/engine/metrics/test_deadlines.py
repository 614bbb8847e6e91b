"""Deadline-scenario metrics on a hand-built schedule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.metrics.deadlines import (compared_summaries, deadline_summary, deadline_usage, misses, usage_histogram,
                                      waited_somewhere)
from engine.metrics.summary import summarize

HOUR, DAY = 3_600, 86_400


def schedule(rows: list[tuple]) -> pd.DataFrame:
    """(submit, start, requested_time, runtime, deadline or None) rows."""
    frame = pd.DataFrame(rows, columns=["submit", "start", "requested_time", "runtime", "deadline"])
    frame.insert(0, "job_id", range(1, len(frame) + 1))
    frame["end"] = frame["start"] + frame["runtime"]
    frame["wait"] = frame["start"] - frame["submit"]
    frame["deadline"] = frame["deadline"].astype(float)
    for column, value in (("user", 1), ("procs", 1), ("killed", False), ("start_order", 0)):
        frame[column] = value
    frame["start_order"] = range(len(frame))
    return frame


# regular: waits 0 and 600 s, asked 600 s   -> stretches 1 and (600 + 600) / 600 = 2
# deadline, 24-hour: asked 1 h, waited 12 h, ran 1 h: ends at 13 h <= 24 h (usage 13 / 24)
# deadline, 24-hour: asked 1 h, waited 24 h, ran 1 h: ends 1 h late (usage 25 / 24)
# deadline, proportional: asked 10 h -> deadline 100 h; waited 95 h, ran 10 h: 5 h late (usage 105 / 100)
ROWS = [
    (0, 0, 600, 600, None),
    (0, 600, 600, 300, None),
    (0, 12 * HOUR, HOUR, HOUR, DAY),
    (0, DAY, HOUR, HOUR, DAY),
    (0, 95 * HOUR, 10 * HOUR, 10 * HOUR, 100 * HOUR),
]


def test_regular_and_deadline_jobs_are_measured_apart():
    result = deadline_summary(schedule(ROWS))
    assert result["regular_jobs"] == 2 and result["deadline_jobs"] == 3
    assert result["mean_wait_regular"] == 300.0                                  # (0 + 600) / 2
    assert result["mean_wait_deadline"] == pytest.approx((12 + 24 + 95) * HOUR / 3)
    assert result["mean_stretch_regular"] == 1.5                                 # (1 + 2) / 2
    assert result["max_stretch_regular"] == 2.0
    assert result["mean_stretch_deadline"] == pytest.approx((13 + 25 + 10.5) / 3)  # (wait + asked) / asked


def test_misses_are_split_by_kind_of_deadline():
    assert misses(schedule(ROWS)) == {"deadline_misses": 2, "deadline_misses_24h": 1, "deadline_misses_proportional": 1}


def test_usage_is_the_share_of_the_slack_used():
    usage = deadline_usage(schedule(ROWS))
    np.testing.assert_allclose(usage, [13 / 24, 25 / 24, 1.05])
    counts, edges = usage_histogram(usage)
    assert counts[5] == 1 and counts[-1] == 2 and counts.sum() == 3   # [0.5, 0.6) and >= 1
    result = deadline_summary(schedule(ROWS))
    assert result["mean_deadline_usage"] == pytest.approx((13 / 24 + 25 / 24 + 1.05) / 3)


def test_usage_of_jobs_that_waited_leaves_out_those_that_started_at_once():
    rows = ROWS + [(0, 0, HOUR, HOUR, DAY)]       # started at once: usage 1 / 24
    result = deadline_summary(schedule(rows))
    assert result["mean_deadline_usage"] == pytest.approx((13 / 24 + 25 / 24 + 1.05 + 1 / 24) / 4)
    assert result["mean_deadline_usage_waited"] == pytest.approx((13 / 24 + 25 / 24 + 1.05) / 3)


def test_the_zero_wait_filter_drops_jobs_that_waited_under_no_policy():
    # job 1 waited 0 under both, job 2 only under b: the filter keeps job 2 (and the deadline jobs)
    a = schedule(ROWS)
    b = schedule([(0, 0, 600, 600, None), (0, 0, 600, 300, None), *ROWS[2:]])
    assert waited_somewhere({"a": a, "b": b})[:2].tolist() == [False, True]
    filtered = compared_summaries({"a": a, "b": b}, drop_zero_wait=True)
    assert filtered["a"]["mean_wait_regular"] == 600.0 and filtered["b"]["mean_wait_regular"] == 0.0
    assert compared_summaries({"a": a, "b": b})["a"]["mean_wait_regular"] == 300.0


def test_the_filter_needs_the_same_jobs_in_every_schedule():
    with pytest.raises(ValueError, match="not the same jobs"):
        waited_somewhere({"a": schedule(ROWS), "b": schedule(ROWS[:3])})


def test_the_summary_has_deadline_figures_only_with_a_deadline_column():
    with_deadlines = summarize(schedule(ROWS), 4)
    assert with_deadlines["deadline_misses"] == 2 and with_deadlines["mean_wait_regular"] == 300.0
    assert "deadline_misses" not in summarize(schedule(ROWS).drop(columns="deadline"), 4)


def test_no_deadline_jobs_gives_zero_counts_and_no_means():
    result = deadline_summary(schedule(ROWS[:2]))
    assert result["deadline_jobs"] == 0 and result["deadline_misses"] == 0
    assert result["mean_wait_deadline"] is None and result["mean_deadline_usage"] is None
