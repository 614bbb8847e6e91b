"""Step series swept from schedule events, downsampling for display, monthly tables."""

from __future__ import annotations

import calendar

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.metrics.timeseries import (
    busy_processors,
    downsample_steps,
    monthly,
    occupancy_by,
    queue_length,
    queued_processors,
    step_integral_at,
)

from .schedules import empty_schedule, make_schedule, three_jobs_on_four_processors

DAY = 86400


def steps(frame: pd.DataFrame) -> list[tuple]:
    return [tuple(int(v) for v in row) for row in frame.itertuples(index=False)]


def area(series: pd.DataFrame) -> int:
    """Integral of a step series that ends at 0."""
    return int((series["value"].to_numpy()[:-1] * np.diff(series["time"].to_numpy())).sum())


def test_busy_processors_of_the_worked_example():
    busy = busy_processors(three_jobs_on_four_processors())
    # t=0 A starts (2); t=20 C starts (3); t=22 C ends (2); t=100 A ends and B starts at once (4);
    # t=150 B ends (0)
    assert steps(busy) == [(0, 2), (20, 3), (22, 2), (100, 4), (150, 0)]
    # 2*20 + 3*2 + 2*78 + 4*50 = 402 = sum of procs * runtime
    assert area(busy) == 402


def test_a_finish_and_a_start_at_the_same_second_never_exceed_capacity():
    busy = busy_processors(make_schedule([
        {"submit": 0, "start": 0, "end": 10, "procs": 4},
        {"submit": 0, "start": 10, "end": 20, "procs": 3},
        {"submit": 0, "start": 10, "end": 30, "procs": 1},
    ]))
    # the full machine changes hands at t=10: no row for it at all, since the value stays 4
    assert steps(busy) == [(0, 4), (20, 1), (30, 0)]
    assert busy["value"].max() == 4


def test_queue_length_at_each_event():
    queue = queue_length(three_jobs_on_four_processors())
    # t=0 A arrives and starts (0); t=10 B arrives and waits (1);
    # t=20 C arrives and starts at once (still 1, no row); t=100 B starts (0)
    assert steps(queue) == [(0, 0), (10, 1), (100, 0)]
    assert steps(queued_processors(three_jobs_on_four_processors())) == [(0, 0), (10, 4), (100, 0)]


def test_alloc_column_counts_what_a_buddy_allocator_holds():
    schedule = make_schedule([{"submit": 0, "start": 0, "end": 10, "procs": 3, "alloc": 4}])
    assert steps(busy_processors(schedule, column="alloc")) == [(0, 4), (10, 0)]


def test_occupancy_by_user_stacks_up_to_busy_processors():
    schedule = three_jobs_on_four_processors()
    wide = occupancy_by(schedule, "user")
    # user 1 used 2*100 + 1*2 = 202 processor-seconds, user 2 4*50 = 200: user 1 first
    assert list(wide.columns) == ["time", "1", "2"]
    assert steps(wide) == [(0, 2, 0), (20, 3, 0), (22, 2, 0), (100, 0, 4), (150, 0, 0)]
    busy = busy_processors(schedule)
    assert wide[["1", "2"]].sum(axis=1).tolist() == busy["value"].tolist()


def test_occupancy_by_keeps_the_largest_owners_and_lumps_the_rest():
    schedule = make_schedule([
        {"user": 5, "submit": 0, "start": 0, "end": 10, "procs": 1},   # 10 proc-s
        {"user": 6, "submit": 0, "start": 0, "end": 10, "procs": 3},   # 30 proc-s
        {"user": 7, "submit": 0, "start": 5, "end": 10, "procs": 2},   # 10 proc-s
    ])
    wide = occupancy_by(schedule, "user", top=1)
    assert list(wide.columns) == ["time", "6", "other"]
    assert steps(wide) == [(0, 3, 1), (5, 3, 3), (10, 0, 0)]


def test_empty_schedule_gives_empty_series():
    assert len(busy_processors(empty_schedule())) == 0
    assert len(queue_length(empty_schedule())) == 0
    assert list(occupancy_by(empty_schedule(), "user").columns) == ["time"]
    assert len(monthly(empty_schedule(), capacity=4)) == 0


def test_downsampling_by_max_keeps_a_one_second_peak():
    # 0 processors for 1000 s, except a burst to 64 during second 501
    times = np.arange(1001)
    values = np.zeros(1001, dtype=np.int64)
    values[501] = 64
    small = downsample_steps(pd.DataFrame({"time": times, "value": values}), max_points=11)
    assert len(small) == 11
    # buckets of 100 s starting at 0, 100, ..., 900, then the last row at t=1000
    assert small["time"].tolist() == list(range(0, 1001, 100))
    assert small["value"].tolist() == [0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0]


def test_downsampling_by_mean_keeps_the_area():
    times = np.arange(1001)
    values = np.zeros(1001, dtype=np.int64)
    values[501] = 64
    small = downsample_steps(pd.DataFrame({"time": times, "value": values}), max_points=11, how="mean")
    # the burst's 64 processor-seconds spread over its 100 s bucket
    assert small["value"].tolist() == pytest.approx([0, 0, 0, 0, 0, 0.64, 0, 0, 0, 0, 0])


def test_downsampling_carries_a_value_into_buckets_with_no_rows():
    series = pd.DataFrame({"time": [0, 1, 2, 1000], "value": [1, 2, 5, 0]})
    small = downsample_steps(series, max_points=3)
    # buckets [0, 500) and [500, 1000): the second has no row of its own but 5 is still in effect
    assert steps(small) == [(0, 5), (500, 5), (1000, 0)]


def test_small_series_are_not_downsampled_and_tiny_budgets_are_refused():
    series = busy_processors(three_jobs_on_four_processors())
    assert downsample_steps(series, max_points=5).equals(series)
    with pytest.raises(ValueError):
        downsample_steps(series, max_points=1)


def test_step_integral_at_points_before_inside_and_after():
    # value 2 on [0, 10), 5 on [10, 20), 0 after
    assert step_integral_at(np.array([0, 10, 20]), np.array([2, 5, 0]), np.array([-5, 0, 5, 15, 30])).tolist() == [
        0, 0, 10, 45, 70]


def test_monthly_without_a_calendar_uses_30_day_bins():
    # one processor busy from day 0 to day 45 on a 2-processor machine;
    # a second job submitted on day 40 that runs 1 day later for 2 days on 2 processors
    schedule = make_schedule([
        {"submit": 0, "start": 0, "end": 45 * DAY, "procs": 1},
        {"submit": 40 * DAY, "start": 41 * DAY, "end": 43 * DAY, "procs": 1},
    ])
    table = monthly(schedule, capacity=2)
    assert table["month"].tolist() == ["days 0-30", "days 30-60"]
    assert table["jobs"].tolist() == [1, 1]
    assert table["mean_wait"].tolist() == [0.0, DAY]
    # jobs submitted per bin: 45 days * 24 h, then 2 days * 24 h
    assert table["core_hours"].tolist() == pytest.approx([45 * 24, 2 * 24])
    # used in bin 1: 30 days * 1 proc; in bin 2: 15 days + 2 days
    assert table["used_core_hours"].tolist() == pytest.approx([30 * 24, 17 * 24])
    # bin 2 is covered only up to the last end (day 45): 17 / (2 * 15)
    assert table["utilization"].tolist() == pytest.approx([0.5, 17 / 30])


def test_monthly_uses_calendar_months_in_the_trace_time_zone():
    # UnixStartTime 2019-01-31 23:30 UTC is 00:30 on 1 February in Prague (UTC+1)
    start_epoch = calendar.timegm((2019, 1, 31, 23, 30, 0))
    schedule = make_schedule([
        {"submit": 0, "start": 0, "end": 60, "procs": 1},
        # 28 days later: 1 March 00:30 in Prague
        {"submit": 28 * DAY, "start": 28 * DAY, "end": 28 * DAY + 60, "procs": 1},
    ])
    table = monthly(schedule, capacity=1, start_epoch=start_epoch, tz="Europe/Prague")
    assert table["month"].tolist() == ["2019-02", "2019-03"]
    assert table["jobs"].tolist() == [1, 1]
    # February starts at local midnight, i.e. 30 minutes before the trace's t=0
    assert table["start"].tolist()[0] == -1800
    in_utc = monthly(schedule, capacity=1, start_epoch=start_epoch)
    assert in_utc["month"].tolist() == ["2019-01", "2019-02"]
    assert in_utc["jobs"].tolist() == [1, 1]
    assert np.isnan(monthly(schedule, start_epoch=start_epoch)["utilization"]).all()  # no capacity


@st.composite
def schedules(draw):
    n = draw(st.integers(min_value=1, max_value=40))
    small = st.integers(min_value=0, max_value=50)
    submits = sorted(draw(st.lists(small, min_size=n, max_size=n)))
    jobs = []
    for submit in submits:
        start = submit + draw(small)
        jobs.append({"submit": submit, "start": start, "end": start + draw(small),
                     "procs": draw(st.integers(min_value=1, max_value=8)),
                     "user": draw(st.integers(min_value=0, max_value=3))})
    return make_schedule(jobs)


@settings(max_examples=100, deadline=None)
@given(schedules())
def test_step_series_integrate_to_what_the_jobs_used_and_waited(schedule):
    busy = busy_processors(schedule)
    assert busy["time"].is_monotonic_increasing and busy["time"].is_unique
    assert area(busy) == int((schedule["procs"] * schedule["runtime"]).sum())
    assert area(queue_length(schedule)) == int(schedule["wait"].sum())
    wide = occupancy_by(schedule, "user")
    stacked = wide.drop(columns="time").sum(axis=1).to_numpy()
    assert stacked.tolist() == value_at(busy, wide["time"].to_numpy()).tolist()


def value_at(series: pd.DataFrame, times: np.ndarray) -> np.ndarray:
    """The value a step series holds at each of ``times`` (0 before its first row)."""
    row = np.searchsorted(series["time"].to_numpy(), times, side="right") - 1
    return np.where(row >= 0, series["value"].to_numpy()[np.maximum(row, 0)], 0)


def test_occupancy_too_wide_to_hold_asks_for_top(monkeypatch):
    import engine.metrics.timeseries as timeseries

    schedule = three_jobs_on_four_processors()  # 5 instants x 2 users = 10 cells
    monkeypatch.setattr(timeseries, "MAX_OCCUPANCY_CELLS", 9)
    with pytest.raises(ValueError, match="top="):
        occupancy_by(schedule, "user")
    monkeypatch.setattr(timeseries, "MAX_OCCUPANCY_CELLS", 10)
    assert len(occupancy_by(schedule, "user")) == 5


def test_downsampling_a_wide_frame_reduces_each_column():
    wide = pd.DataFrame({"time": [0, 1, 2, 3, 4], "a": [1, 3, 1, 0, 0], "b": [0, 0, 2, 2, 0]})
    small = downsample_steps(wide, max_points=3)
    # buckets [0, 2) and [2, 4), then the last row at t=4
    assert steps(small) == [(0, 3, 0), (2, 1, 2), (4, 0, 0)]
    mean = downsample_steps(wide, max_points=3, how="mean")
    assert mean["a"].tolist() == [2.0, 0.5, 0.0] and mean["b"].tolist() == [0.0, 2.0, 0.0]


def test_daily_envelope_by_hand():
    from engine.metrics.timeseries import day_edges, envelope

    series = pd.DataFrame({"time": [0, 100, 86450, 172800], "value": [2, 5, 1, 0]})
    daily = envelope(series, day_edges(0, 172800))
    assert daily["start"].tolist() == [0, 86400] and daily["end"].tolist() == [86400, 172800]
    assert daily["low"].tolist() == [2, 1] and daily["high"].tolist() == [5, 5]   # day 2 starts at 5 until 86450
    assert daily["mean"].tolist() == [(2 * 100 + 5 * 86300) / 86400, (5 * 50 + 1 * 86350) / 86400]


def test_calendar_days_follow_the_time_zone():
    from engine.metrics.timeseries import day_edges

    edges = day_edges(0, 3 * 86400, start_epoch=1_700_000_000, tz="Europe/Prague")   # starts 23:13:20 local
    assert edges.tolist() == [0, 2800, 2800 + 86400, 2800 + 2 * 86400, 3 * 86400]
