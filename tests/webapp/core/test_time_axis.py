"""Time axes in the trace's calendar (UnixStartTime and its time zone, or epoch submits), else time
since the start."""

from __future__ import annotations

import numpy as np
import pandas as pd

from webapp.core.time_axis import TimeAxis, time_axis

CTC_HEADER = {"UnixStartTime": "835823160", "TimeZone": "-18000", "TimeZoneString": "US/Eastern"}


def wall_clock(millis: float) -> str:
    return pd.Timestamp(millis, unit="ms").strftime("%Y-%m-%d %H:%M")


def test_a_trace_with_a_start_time_gets_dates_in_its_zone():
    axis = time_axis(CTC_HEADER, first_submit=0)
    assert axis.calendar and axis.tz == "US/Eastern" and axis.figure_kwargs() == {"x_axis_type": "datetime"}
    assert wall_clock(axis.x(0.0)) == "1996-06-26 17:06"      # the header's StartTime: Wed Jun 26 17:06:00 EDT 1996
    assert axis.text(3600) == "1996-06-26 18:06" and axis.label == "date and time (US/Eastern)"


def test_daylight_saving_time_is_followed():
    axis = TimeAxis(0, "Europe/Prague")
    winter, summer = axis.x(np.array([pd.Timestamp("2023-01-15 12:00Z").timestamp(),
                                      pd.Timestamp("2023-07-15 12:00Z").timestamp()]))
    assert wall_clock(winter) == "2023-01-15 13:00" and wall_clock(summer) == "2023-07-15 14:00"


def test_a_fixed_offset_is_used_when_the_zone_has_no_name():
    assert time_axis({"UnixStartTime": "835823160", "TimeZone": "-18000"}, 0).tz == "Etc/GMT+5"


def test_epoch_submits_are_dates_even_when_the_header_has_a_start_time():
    assert time_axis({}, first_submit=1_356_996_147).origin == 0
    assert time_axis({"UnixStartTime": "1356994800"}, first_submit=1_356_996_147).origin == 0   # already added


def test_without_a_start_time_it_is_time_since_the_start():
    axis = time_axis({"MaxProcs": "128"}, first_submit=0)
    assert not axis.calendar and axis.figure_kwargs() == {}
    assert axis.x(86400.0 * 3) == 3.0 and axis.label == "time (days since trace start)"
    assert axis.for_span(3600).x(7200.0) == 2.0 and "hours" in axis.for_span(3600).label


def test_a_typed_date_or_number_becomes_schedule_seconds():
    axis = TimeAxis(1_700_000_000, "Europe/Prague")   # 2023-11-14 23:13:20 in Prague
    assert axis.seconds("2023-11-15") == 46 * 60 + 40
    assert axis.seconds("3600") == 3600.0 and axis.seconds("") is None and axis.seconds("soon") is None
    assert TimeAxis().seconds("2023-11-15") is None
