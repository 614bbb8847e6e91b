"""The forest plot builder and the intervals beside the metrics table, on hand-made reports."""

from __future__ import annotations

import math

from bokeh.models import HBar, Scatter, Span
from bokeh.plotting import figure

from webapp.dashboards.figures.forest import forest_figure, forest_frame, interval_texts
from webapp.dashboards.figures.metrics_table import metrics_table_html


def pair(a, b, metric, relative, low, high, *, set_name="weeks", told=True):
    return {"a": a, "b": b, "metric": metric, "set": set_name, "relative": relative,
            "relative_ci": None if low is None else [low, high], "told_from_noise": told,
            "verdict": f"{b} vs {a} on {metric}"}


REPORT = {
    "sets": [{"name": "weeks"}, {"name": "shake:5"}],
    "bootstrap": {"confidence": 0.95},
    "pairs": [pair("fcfs", "easy", "mean_wait", -0.5, -0.6, -0.4),
              pair("fcfs", "easy", "utilization", 0.01, -0.02, 0.03, told=False),
              pair("fcfs", "conservative", "mean_wait", 0.25, 0.0, 0.5),
              pair("easy", "conservative", "mean_wait", -0.1, None, None, told=False),
              pair("fcfs", "easy", "mean_wait", -0.3, -0.4, -0.2, set_name="shake:5")],
}


def test_the_frame_holds_the_first_sets_pairs_in_per_cent():
    frame = forest_frame(REPORT)
    assert len(frame) == 4                                           # the shaking set's pair is left out
    first = frame.iloc[0]
    assert first["row"] == "easy vs fcfs: Mean wait"
    assert (first["relative"], first["low"], first["high"]) == (-50.0, -60.0, -40.0)
    assert list(frame["told"]) == [True, False, True, False]
    assert math.isnan(frame.iloc[3]["low"])
    assert len(forest_frame(REPORT, "shake:5")) == 1


def test_the_figure_draws_one_bar_per_pair_with_an_interval_and_the_zero_line():
    layout = forest_figure(forest_frame(REPORT))
    fig = next(iter(layout.select({"type": figure})))
    bars = [r for r in fig.renderers if isinstance(r.glyph, HBar)]
    dots = [r for r in fig.renderers if isinstance(r.glyph, Scatter)]
    assert len(bars) == 1 and len(dots) == 1
    data = bars[0].data_source.data
    assert list(data["low"]) == [-60.0, -2.0, 0.0] and list(data["high"]) == [-40.0, 3.0, 50.0]
    assert data["colour"][0] != data["colour"][1]                   # told from noise or not
    assert list(fig.y_range.factors)[-1] == "easy vs fcfs: Mean wait"   # the first pair on top
    spans = [s for s in fig.center if isinstance(s, Span)]
    assert [s.location for s in spans] == [0]
    assert "1 pair(s) without an interval" in layout.children[1].text


def test_an_empty_report_draws_an_empty_figure():
    layout = forest_figure(forest_frame({"sets": [{"name": "weeks"}], "pairs": []}))
    assert next(iter(layout.select({"type": figure}))).y_range.factors == ["(none)"]


def test_intervals_are_against_the_baseline_and_turned_when_the_pair_is_the_other_way():
    texts = interval_texts(REPORT, "fcfs")
    assert texts[("easy", "mean_wait")] == "95 % CI −60.0 to −40.0 %"
    assert texts[("conservative", "mean_wait")] == "95 % CI +0.0 to +50.0 %"
    # against easy: conservative's pair (easy, conservative) has no interval; fcfs against easy is 1/(1+r) - 1
    turned = interval_texts(REPORT, "easy")
    low, high = 1 / (1 - 0.4) - 1, 1 / (1 - 0.6) - 1
    assert turned[("fcfs", "mean_wait")] == f"95 % CI +{100 * low:.1f} to +{100 * high:.1f} %"
    assert ("conservative", "mean_wait") not in turned


def test_the_metrics_table_shows_the_interval_beside_the_change():
    summaries = {"fcfs": {"mean_wait": 100.0}, "easy": {"mean_wait": 50.0}}
    table = metrics_table_html(summaries, baseline="fcfs", intervals=interval_texts(REPORT, "fcfs"),
                               interval_note="Intervals: from 52 weekly windows.")
    assert "95 % CI −60.0 to −40.0 %" in table and "Intervals: from 52 weekly windows." in table
    assert table.count("class='ci'") == 1                            # not under the baseline's own column
    assert "class='ci'" not in metrics_table_html(summaries, baseline="fcfs")
