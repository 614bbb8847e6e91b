"""Time on the x axis: calendar dates in the trace's time zone when the trace says when it started,
else time since the trace's start.

A schedule's times are seconds in the trace's own time base. SWF traces count them from the header's
UnixStartTime (in the header's TimeZoneString); MetaCentrum-style traces give absolute epochs. Bokeh
draws datetime axes in UTC, so calendar x values are the *local wall-clock* time in milliseconds
(daylight saving included): the axis then reads as the trace's local dates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from engine.api import date_text, epoch_origin

@dataclass(frozen=True)
class TimeAxis:
    origin: int | None = None    # Unix time of t = 0 in the schedule's time base; None: no calendar
    tz: str = "UTC"
    unit: float = 86400.0        # without a calendar: seconds per axis unit (days or hours)
    wall_clock: bool = False     # the times are the zone's wall clock read as if UTC (a sacct dump's)

    @property
    def clock(self) -> str:
        """The zone the schedule's epochs count in: the trace's, or UTC for wall-clock times."""
        return "UTC" if self.wall_clock else self.tz

    @property
    def calendar(self) -> bool:
        return self.origin is not None

    def for_span(self, span_seconds: float) -> TimeAxis:
        """The same axis, in hours rather than days when the span is under three days (no calendar)."""
        unit = 86400.0 if span_seconds >= 3 * 86400 else 3600.0
        return TimeAxis(self.origin, self.tz, unit, self.wall_clock)

    def x(self, seconds: np.ndarray | float) -> np.ndarray:
        """Schedule seconds -> x values: local wall-clock milliseconds, or days/hours since the start."""
        values = np.asarray(seconds, dtype=float)
        if not self.calendar:
            return values / self.unit
        if values.size == 0:     # pandas' empty index has no zone to convert from
            return values.copy()
        utc = pd.to_datetime(values + float(self.origin), unit="s", utc=True)
        local = pd.DatetimeIndex(np.atleast_1d(utc)).tz_convert(self.clock).tz_localize(None)
        millis = local.as_unit("ms").asi8.astype(float)
        return millis.reshape(values.shape) if values.ndim else millis[0]

    def figure_kwargs(self) -> dict:
        return {"x_axis_type": "datetime"} if self.calendar else {}

    @property
    def label(self) -> str:
        if self.calendar:
            return f"date and time ({self.tz})"
        return "time (days since trace start)" if self.unit == 86400.0 else "time (hours since trace start)"

    def text(self, seconds: float) -> str:
        """One instant in words, as the axis shows it: "2023-11-14 23:13" or "day 3.25"."""
        if self.calendar:
            return date_text(float(seconds) + float(self.origin), self.clock)
        return f"day {seconds / 86400:,.2f}"

    def seconds(self, text: str) -> float | None:
        """A time typed by a person -> schedule seconds: a number of seconds, or (with a calendar) a
        date such as 2023-11-14 or 2023-11-14 23:00 in the trace's time zone; None if unreadable."""
        text = (text or "").strip()
        if not text:
            return None
        try:
            value = float(text)
        except ValueError:
            pass
        else:
            return value if np.isfinite(value) else None
        if not self.calendar:
            return None
        try:
            stamp = pd.Timestamp(text)
        except (ValueError, TypeError):
            return None
        if stamp is pd.NaT:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.tz_localize(self.clock, ambiguous=True, nonexistent="shift_forward")
        return stamp.timestamp() - float(self.origin)


def time_axis(header: Mapping[str, object] | None, first_submit: float | None, *, zone: str = "",
              wall_clock: bool = False) -> TimeAxis:
    """The trace's calendar, from its header (UnixStartTime, TimeZoneString or TimeZone offset) or,
    without a start time, from submit times that are epochs; else a relative axis. ``zone``: the
    zone stored with the trace (chosen at upload or read from the log), before the header's;
    ``wall_clock``: the times are that zone's wall clock read as if UTC (a sacct dump's)."""
    header = header or {}
    tz = _zone({"TimeZoneString": zone}) if zone else _zone(header)
    origin = epoch_origin(header, first_submit)   # 0: the submits are epochs already
    return TimeAxis() if origin is None else TimeAxis(origin, tz, wall_clock=wall_clock)


def _zone(header: Mapping[str, object]) -> str:
    name = str(header.get("TimeZoneString", "")).strip()
    if re.fullmatch(r"UTC[+-]\d\d:\d\d", name):
        return name                   # a fixed offset, as the accounting-log readers name it
    if name:
        try:
            ZoneInfo(name)
            return name
        except (ZoneInfoNotFoundError, ValueError):
            pass
    offset = _number(header.get("TimeZone"))
    if offset is not None and offset % 3600 == 0 and abs(offset) <= 14 * 3600:
        hours = int(offset // 3600)   # Etc/GMT signs are inverted: UTC-5 is Etc/GMT+5
        return "UTC" if hours == 0 else f"Etc/GMT{'+' if hours < 0 else '-'}{abs(hours)}"
    return "UTC"


def _number(value: object) -> float | None:
    try:
        return float(str(value).split()[0])
    except (TypeError, ValueError, IndexError):
        return None
