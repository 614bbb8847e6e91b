"""The time-left estimate shown beside progress (command line, run and preview pages)."""

import io

from engine.cli import ProgressBar
from engine.metrics.units import countdown_text as format_duration
from engine.sim.eta import time_left


def test_time_left_goes_on_at_the_average_pace_so_far():
    assert time_left(0.25, 60.0) == 180.0       # a quarter in a minute: three more minutes
    assert time_left(1.0, 60.0) == 0.0
    assert time_left(0.0, 60.0) is None         # no pace yet
    assert time_left(0.5, 0.0) is None


def test_durations_read_as_hours_minutes_seconds():
    assert format_duration(None) == "?"
    assert format_duration(12.4) == "12 s"
    assert format_duration(250) == "4 min 10 s"
    assert format_duration(3900) == "1 h 05 min"


def test_the_command_line_bar_says_the_time_left():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    bar.began -= 30.0                           # 30 s ago
    bar.update(0.5)
    assert "50.0% of jobs, about 30 s left" in stream.getvalue()
