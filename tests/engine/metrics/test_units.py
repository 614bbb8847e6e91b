"""The one formatting module: each rule at its edges, worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.metrics.summary import SUMMARY_KEYS
from engine.metrics.units import (METRICS, countdown_text, date_text, duration_text, metric_heading, metric_label,
                                  metric_text, number_text, percent_text)


@pytest.mark.parametrize("seconds, text", [
    (0, "0 s"), (0.0412, "0.041 s"), (2.46, "2.5 s"), (7, "7 s"), (59.4, "59 s"), (60, "1.0 min"),
    (30_317, "8.4 h"), (3_599, "60.0 min"), (3_600, "1.0 h"),
    (2 * 86_400 - 1, "48.0 h"), (2 * 86_400, "2.0 days"), (332.914 * 86_400, "332.9 days"),
    (-5_400, "-1.5 h"), (12_345_678, "142.9 days"), (np.float64(90), "1.5 min"),
])
def test_a_duration_takes_the_unit_that_fits(seconds, text):
    assert duration_text(seconds) == text


@pytest.mark.parametrize("missing", [None, math.nan, math.inf, "", "n/a"])
def test_a_missing_value_is_a_dash(missing):
    assert duration_text(missing) == percent_text(missing) == number_text(missing) == date_text(missing) == "–"
    assert metric_text("mean_wait", missing) == "–"


def test_a_countdown_reads_as_a_clock():
    assert [countdown_text(s) for s in (None, 12.4, 250, 3_900, 7_200)] == ["?", "12 s", "4 min 10 s",
                                                                            "1 h 05 min", "2 h 00 min"]


def test_shares_and_numbers():
    assert percent_text(0.586) == "58.6 %" and percent_text(2.11, 0) == "211 %" and percent_text(0) == "0.0 %"
    assert number_text(1_234_567) == "1,234,567" and number_text(8853.052, 1) == "8,853.1"


def test_dates_are_the_wall_clock_of_the_zone():
    # 1996-09-23 00:00 UTC; Stockholm is on summer time (UTC+2) then, on winter time (UTC+1) in December
    assert date_text(843_436_800, "Europe/Stockholm") == "1996-09-23 02:00"
    assert date_text(843_436_800 + 80 * 86_400, "Europe/Stockholm") == "1996-12-12 01:00"
    assert date_text(843_436_800, "UTC-05:00", with_time=False) == "1996-09-22"
    assert date_text(843_436_800) == "1996-09-23 00:00"


def test_every_summary_metric_has_words_and_a_unit_where_it_has_one():
    for code in SUMMARY_KEYS:
        if code == "rejected":   # a table of counts by reason, written as its own columns
            continue
        assert code in METRICS, code
        assert "_" not in metric_label(code), code
    assert metric_heading("mean_wait") == "Mean wait (s)" and metric_heading("wall_seconds") == "Simulation time (s)"
    assert metric_heading("mean_bsld") == "Mean bounded slowdown (τ = 10 s)"
    assert metric_heading("throughput") == "Throughput (jobs/h)"


def test_each_metric_is_written_as_its_kind():
    assert metric_text("mean_wait", 30_317) == "8.4 h"
    assert metric_text("utilization", 0.586) == "58.6 %"
    assert metric_text("jobs", 3986) == "3,986"
    assert metric_text("throughput", 12.345) == "12.3 jobs/h"
    assert metric_text("jain_bsld", 0.81234) == "0.812"
    assert metric_text("mean_decision_ms", 3.21) == "3.2 ms"
    assert METRICS["utilization"].lower_is_better is False and METRICS["mean_wait"].lower_is_better is True


def test_an_unknown_code_gets_its_words():
    assert metric_label("dbf_first_allocation_misses") == "Dbf first allocation misses"
    assert metric_text("dbf_first_allocation_misses", 3) == "3.00"
