"""Metrics over time: step functions swept from the schedule's events, and monthly tables.

A *step series* is a DataFrame ``(time, value)`` sorted by time, one row per instant at which the
value changes: ``value`` holds from ``time`` until the next row's time (the last row's value
holds for ever; before the first row the value is 0). Series are built with one sorted sweep over
the schedule's events and are exact: the events of one instant are applied together, so a job
finishing and another starting at the same second never show more processors than exist.

Within one instant the events are ordered ends, then starts, then submits (see
:data:`EVENT_ORDER`); only the value after the whole instant is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from engine.metrics.jobs import bounded_slowdowns, response_times, waits

#: Tie order of events at one instant (lower sorts first).
EVENT_ORDER = {"end": 0, "start": 1, "submit": 2}

#: Largest ``instants x columns`` frame :func:`occupancy_by` builds (int64 cells: 200 MB).
MAX_OCCUPANCY_CELLS = 25_000_000

#: Bin width used by :func:`monthly` when the trace has no UnixStartTime.
DAYS_PER_BIN = 30

Event = tuple[np.ndarray, np.ndarray, str]  # (times, deltas, kind)


def _sorted_events(events: Sequence[Event]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Concatenate events and sort them by (time, kind); returns times, deltas and the sort order."""
    times = np.concatenate([np.asarray(t, dtype=np.int64) for t, _, _ in events])
    deltas = np.concatenate([np.asarray(d, dtype=np.int64) for _, d, _ in events])
    kinds = np.concatenate([np.full(len(t), EVENT_ORDER[kind], dtype=np.int64) for t, _, kind in events])
    order = np.argsort(times * len(EVENT_ORDER) + kinds, kind="stable")
    return times[order], deltas[order], order


def _last_of_each_instant(sorted_times: np.ndarray) -> np.ndarray:
    """Mask of the last event at each distinct time in an already sorted array."""
    mask = np.ones(len(sorted_times), dtype=bool)
    mask[:-1] = sorted_times[1:] != sorted_times[:-1]
    return mask


def step_series(events: Sequence[Event]) -> pd.DataFrame:
    """Sweep ``(times, deltas, kind)`` events into a step series of the running total."""
    times, deltas, _ = _sorted_events(events)
    levels = np.cumsum(deltas)
    at_instant_end = _last_of_each_instant(times)
    times, levels = times[at_instant_end], levels[at_instant_end]
    changed = np.ones(len(levels), dtype=bool)
    changed[1:] = levels[1:] != levels[:-1]
    return pd.DataFrame({"time": times[changed], "value": levels[changed]})


def busy_processors(schedule: pd.DataFrame, column: str = "procs") -> pd.DataFrame:
    """Processors in use over time (``column="alloc"`` for what a buddy allocator holds)."""
    amount = schedule[column].to_numpy(dtype=np.int64)
    return step_series([
        (schedule["end"].to_numpy(), -amount, "end"),
        (schedule["start"].to_numpy(), amount, "start"),
    ])


def queue_length(schedule: pd.DataFrame) -> pd.DataFrame:
    """Jobs submitted but not yet started, over time (a job with no wait never shows)."""
    ones = np.ones(len(schedule), dtype=np.int64)
    return step_series([
        (schedule["start"].to_numpy(), -ones, "start"),
        (schedule["submit"].to_numpy(), ones, "submit"),
    ])


def queued_processors(schedule: pd.DataFrame, column: str = "procs") -> pd.DataFrame:
    """Processors requested by waiting jobs, over time."""
    amount = schedule[column].to_numpy(dtype=np.int64)
    return step_series([
        (schedule["start"].to_numpy(), -amount, "start"),
        (schedule["submit"].to_numpy(), amount, "submit"),
    ])


def occupancy_by(
    schedule: pd.DataFrame, key: str, *, column: str = "procs", top: int | None = None
) -> pd.DataFrame:
    """Processors in use per value of ``key`` (user, group, queue...), for stacked area plots.

    Returns a wide step frame: ``time`` and one column per key value, labelled ``str(value)``
    (Bokeh's ColumnDataSource needs string names), ordered by processor-seconds used, largest
    first. Rows are the instants at which any column changes; the columns sum to
    :func:`busy_processors` at every row.

    The frame holds ``instants x key values`` numbers; with hundreds of users pass ``top=N`` to
    keep the N largest and add the rest up in a column ``"other"``. Rather than silently lumping
    or running out of memory, a frame larger than :data:`MAX_OCCUPANCY_CELLS` raises
    ``ValueError`` saying which ``top`` would fit.
    """
    if top is not None and top < 0:
        raise ValueError(f"top must be a count of columns to keep, not {top}")
    if len(schedule) == 0:
        return pd.DataFrame({"time": pd.Series(dtype="int64")})
    codes, values = pd.factorize(schedule[key].to_numpy(), use_na_sentinel=False)
    amount = schedule[column].to_numpy(dtype=np.int64)
    start = schedule["start"].to_numpy(dtype=np.int64)
    end = schedule["end"].to_numpy(dtype=np.int64)

    usage = np.bincount(codes, weights=amount * (end - start), minlength=len(values))
    by_usage = np.argsort(-usage, kind="stable")
    labels = [str(v) for v in values[by_usage]]
    column_of_code = np.empty(len(values), dtype=np.int64)
    column_of_code[by_usage] = np.arange(len(values))
    if top is not None and top < len(values):
        column_of_code = np.minimum(column_of_code, top)
        labels = labels[:top] + ["other"]
    columns = column_of_code[codes]

    times, deltas, order = _sorted_events([(end, -amount, "end"), (start, amount, "start")])
    event_columns = np.concatenate([columns, columns])[order]
    instant_ends = _last_of_each_instant(times)
    instant_index = np.cumsum(instant_ends) - instant_ends  # index of each event's instant
    n_instants, n_columns = int(instant_ends.sum()), len(labels)
    if n_instants * n_columns > MAX_OCCUPANCY_CELLS:
        raise ValueError(
            f"occupancy by {key!r} would hold {n_instants} instants x {n_columns} columns; "
            f"pass top=N (at most {MAX_OCCUPANCY_CELLS // n_instants - 1}) to lump the smaller ones"
        )
    # one row per column, so that the running sums below run along contiguous memory
    changes = np.zeros((n_columns, n_instants), dtype=np.int64)
    np.add.at(changes, (event_columns, instant_index), deltas)
    changed = np.any(changes != 0, axis=0)
    levels = np.cumsum(changes, axis=1)[:, changed]
    frame = pd.DataFrame(levels.T, columns=labels, copy=False)
    frame.insert(0, "time", times[instant_ends][changed])
    return frame


def step_integral_at(times: np.ndarray, values: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Integral of a step series from its first time to each of ``points`` (0 before the start)."""
    times = np.asarray(times, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    points = np.asarray(points, dtype=np.int64)
    if len(times) == 0:
        return np.zeros(len(points), dtype=np.float64)
    at_rows = np.zeros(len(times), dtype=np.float64)
    at_rows[1:] = np.cumsum(values[:-1] * np.diff(times))
    row = np.searchsorted(times, points, side="right") - 1
    inside = row >= 0
    safe_row = np.maximum(row, 0)
    return np.where(inside, at_rows[safe_row] + values[safe_row] * (points - times[safe_row]), 0.0)


def downsample_steps(
    series: pd.DataFrame, max_points: int, *, how: Literal["max", "mean"] = "max"
) -> pd.DataFrame:
    """Shrink a step frame (``time`` + value columns) to at most ``max_points`` rows for display.

    The span from the first to the last time is cut into ``max_points - 1`` buckets of equal
    width; each becomes one row at the bucket's start, and a final row keeps the last value at the
    last time. Per bucket and column:

    - ``how="max"`` (default): the largest value in effect at any moment of the bucket (including
      the value carried in from before it), so peaks are never lost -- a one-second burst to full
      capacity still reaches the top of the plot. The result over-states the series between peaks;
      for stacked areas the per-column maxima may add up to more than the total ever was.
    - ``how="mean"``: the time-weighted mean over the bucket; preserves the area (the integral),
      so stacked columns stay consistent, but flattens short peaks.

    Frames that are already small enough are returned unchanged (as a copy).
    """
    if max_points < 2:
        raise ValueError("max_points must be at least 2 (a first and a last row)")
    if how not in ("max", "mean"):
        raise ValueError(f"how must be 'max' or 'mean', not {how!r}")
    if len(series) <= max_points:
        return series.copy()
    times = series["time"].to_numpy(dtype=np.int64)
    value_columns = [c for c in series.columns if c != "time"]
    edges = np.unique(np.floor(np.linspace(times[0], times[-1], max_points)).astype(np.int64))
    result: dict[str, np.ndarray] = {"time": np.append(edges[:-1], times[-1])}
    if how == "max":
        reduce = _bucket_max_reducer(times, edges[:-1])
    else:
        def reduce(values: np.ndarray) -> np.ndarray:
            return np.diff(step_integral_at(times, values, edges)) / np.diff(edges)
    for name in value_columns:
        values = series[name].to_numpy()
        result[name] = np.append(reduce(values), values[-1])
    return pd.DataFrame(result)


def _bucket_max_reducer(times: np.ndarray, bucket_starts: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """A function giving, per bucket, the max of a column's values in effect during the bucket:
    the value carried in at the bucket's start and every value set inside it.

    The bucket geometry is worked out once here and shared by every column.
    """
    carried_row = np.searchsorted(times, bucket_starts, side="right") - 1  # >= 0: buckets start at times[0]
    inside = int(np.searchsorted(times, times[-1], side="left"))  # rows before the last time
    bucket_of_row = np.searchsorted(bucket_starts, times[:inside], side="right") - 1  # non-decreasing
    buckets = np.arange(len(bucket_starts))
    first_row = np.searchsorted(bucket_of_row, buckets, side="left")
    has_rows = first_row < np.searchsorted(bucket_of_row, buckets, side="right")
    segment_starts = first_row[has_rows]

    def reduce(values: np.ndarray) -> np.ndarray:
        maxima = values[carried_row].copy()
        # rows of consecutive non-empty buckets are contiguous, so one reduceat covers them all
        set_inside = np.maximum.reduceat(values[:inside], segment_starts)
        maxima[has_rows] = np.maximum(maxima[has_rows], set_inside)
        return maxima

    return reduce


def month_edges(first: int, last: int, *, start_epoch: int = 0, tz: str | None = None) -> tuple[list[str], np.ndarray]:
    """Labels and boundaries (trace seconds, one more than labels) of the months covering [first, last].

    With ``start_epoch`` (the trace header's UnixStartTime) these are calendar months in ``tz``
    (the header's TimeZoneString; UTC when None). With ``start_epoch == 0`` the trace has no
    calendar: the "months" are :data:`DAYS_PER_BIN`-day bins counted from t = 0, labelled
    ``"days 0-30"``, ``"days 30-60"``... and ``tz`` is ignored.
    """
    if not start_epoch:
        width = DAYS_PER_BIN * 86400
        first_bin, last_bin = first // width, last // width
        bins = np.arange(first_bin, last_bin + 2, dtype=np.int64)
        labels = [f"days {b * DAYS_PER_BIN}-{(b + 1) * DAYS_PER_BIN}" for b in bins[:-1]]
        return labels, bins * width
    zone = tz or "UTC"
    local = pd.to_datetime(np.array([first, last], dtype=np.int64) + start_epoch, unit="s", utc=True).tz_convert(zone)
    first_month, last_month = local.tz_localize(None).to_period("M")
    months = pd.period_range(first_month, last_month + 1, freq="M")
    starts = months.to_timestamp().tz_localize(zone, ambiguous=True, nonexistent="shift_forward")
    edges = starts.tz_convert("UTC").as_unit("s").asi8 - start_epoch
    return [str(m) for m in months[:-1]], edges


def monthly(
    schedule: pd.DataFrame,
    *,
    capacity: int | None = None,
    start_epoch: int = 0,
    tz: str | None = None,
) -> pd.DataFrame:
    """Per-month table: jobs keyed by the month of their submit, machine use by what ran in it.

    Months are calendar months when ``start_epoch`` is given, else 30-day bins (see
    :func:`month_edges`); every month from the first submit to the last end appears, even with no
    submissions. Columns:

    - ``month`` (label), ``start``, ``end`` (trace seconds, end exclusive);
    - ``jobs``, ``mean_wait``, ``mean_bsld``, ``core_hours`` (procs x runtime / 3600) of the jobs
      *submitted* in the month (NaN means for months without submissions);
    - ``used_core_hours``: processor-hours actually in use during the month, whenever the jobs
      were submitted (a job running across a month boundary is split);
    - ``utilization``: ``used_core_hours`` over ``capacity`` times the part of the month inside
      the trace's span (first submit to last end), so partial first/last months are not
      understated; NaN when ``capacity`` is not given.
    """
    columns = ["month", "start", "end", "jobs", "mean_wait", "mean_bsld", "core_hours", "used_core_hours", "utilization"]
    if len(schedule) == 0:
        return pd.DataFrame({name: pd.Series(dtype="str" if name == "month" else "float64") for name in columns})
    submit = schedule["submit"].to_numpy(dtype=np.int64)
    end = schedule["end"].to_numpy(dtype=np.int64)
    runtime = schedule["runtime"].to_numpy(dtype=np.int64)
    first, last = int(submit.min()), int(end.max())
    labels, edges = month_edges(first, last, start_epoch=start_epoch, tz=tz)
    n_months = len(labels)

    month_of_job = np.searchsorted(edges, submit, side="right") - 1
    jobs = np.bincount(month_of_job, minlength=n_months)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_wait = np.bincount(month_of_job, weights=waits(schedule), minlength=n_months) / jobs
        bsld = bounded_slowdowns(response_times(submit, end), runtime)
        mean_bsld = np.bincount(month_of_job, weights=bsld, minlength=n_months) / jobs
    core_hours = np.bincount(
        month_of_job, weights=schedule["procs"].to_numpy(dtype=np.float64) * runtime, minlength=n_months
    ) / 3600.0

    busy = busy_processors(schedule)
    used_core_seconds = np.diff(step_integral_at(busy["time"].to_numpy(), busy["value"].to_numpy(), edges))
    covered_seconds = np.diff(np.clip(edges, first, last)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if capacity:
            utilization = np.where(covered_seconds > 0, used_core_seconds / (capacity * covered_seconds), np.nan)
        else:
            utilization = np.full(n_months, np.nan)
    return pd.DataFrame({
        "month": labels,
        "start": edges[:-1],
        "end": edges[1:],
        "jobs": jobs,
        "mean_wait": mean_wait,
        "mean_bsld": mean_bsld,
        "core_hours": core_hours,
        "used_core_hours": used_core_seconds / 3600.0,
        "utilization": utilization,
    })


def day_edges(first: int, last: int, *, start_epoch: int | None = None, tz: str | None = None) -> np.ndarray:
    """Boundaries (trace seconds) of the days covering [first, last], clipped to it: calendar days in
    ``tz`` when ``start_epoch`` (the Unix time of t = 0) is given, else 24-hour days from ``first``."""
    if last <= first:
        return np.array([first, first + 1], dtype=np.int64)
    if start_epoch is None:
        inner = np.arange(first + 86400, last, 86400, dtype=np.int64)
    else:
        zone = tz or "UTC"
        local = pd.to_datetime(np.array([first, last], dtype=np.int64) + start_epoch, unit="s", utc=True).tz_convert(zone)
        days = pd.date_range(local[0].normalize(), local[1].normalize() + pd.Timedelta(days=1), freq="D")
        inner = days.tz_convert("UTC").as_unit("s").asi8 - start_epoch
        inner = inner[(inner > first) & (inner < last)]
    return np.concatenate([[first], inner, [last]]).astype(np.int64)


def envelope(series: pd.DataFrame, edges: np.ndarray) -> pd.DataFrame:
    """Per bucket [edges[i], edges[i+1]) of a step series (``time``, ``value``): the time-weighted
    ``mean`` and the ``low``/``high`` of the values in effect during it (0 before the first time).

    The readable form of a long timeline: a year of steps becomes a daily mean with its min-max band.
    """
    times = series["time"].to_numpy(dtype=np.int64)
    values = series["value"].to_numpy(dtype=np.float64)
    edges = np.asarray(edges, dtype=np.int64)
    buckets = len(edges) - 1
    if len(times) == 0 or buckets < 1:
        zeros = np.zeros(max(buckets, 0))
        return pd.DataFrame({"start": edges[:-1], "end": edges[1:], "mean": zeros, "low": zeros, "high": zeros})
    mean = np.diff(step_integral_at(times, values, edges)) / np.diff(edges)
    carried_row = np.searchsorted(times, edges[:-1], side="right") - 1
    carried = np.where(carried_row >= 0, values[np.maximum(carried_row, 0)], 0.0)
    low, high = carried.copy(), carried.copy()
    bucket = np.searchsorted(edges, times, side="right") - 1
    inside = (bucket >= 0) & (bucket < buckets) & (times < edges[-1])
    np.minimum.at(low, bucket[inside], values[inside])
    np.maximum.at(high, bucket[inside], values[inside])
    return pd.DataFrame({"start": edges[:-1], "end": edges[1:], "mean": mean, "low": low, "high": high})
