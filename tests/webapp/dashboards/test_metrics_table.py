"""The metrics table: units in the header, every run's change against the baseline, coloured."""

from __future__ import annotations

from webapp.dashboards.figures.metrics_table import change, metrics_table_html

SUMMARIES = {
    "easy": {"mean_wait": 7200.0, "utilization": 0.80, "mean_bsld": 3.0},
    "fcfs": {"mean_wait": 10800.0, "utilization": 0.70, "mean_bsld": 2.0},
    "plan2 <x>": {"mean_wait": 3600.0, "utilization": 0.88},
}


def test_durations_get_one_unit_per_row_in_its_header():
    html = metrics_table_html(SUMMARIES, baseline="easy")
    assert "Mean wait (h)</th><td class='num'>2.00</td><td class='num'>3.00" in html
    assert "Utilization (%)</th><td class='num'>80.0</td>" in html


def test_changes_against_the_baseline_are_coloured_by_what_is_better():
    html = metrics_table_html(SUMMARIES, baseline="easy")
    assert "3.00 <span class='delta worse'>+50.0 %</span>" in html      # more wait is worse
    assert "88.0 <span class='delta better'>+10.0 %</span>" in html     # more utilization is better
    assert "<small>baseline</small>" in html.split("data-run='fcfs'")[0]


def test_run_names_are_escaped_and_missing_values_shown_as_a_dash():
    html = metrics_table_html(SUMMARIES, baseline="fcfs")
    assert "plan2 &lt;x&gt;" in html and "<x>" not in html and "–" in html


def test_a_zero_baseline_gives_the_difference_not_a_percentage():
    assert change(2.0, 0.0, True) == ("+2", "worse") and change(5.0, 5.0, True) == ("±0", "same")
