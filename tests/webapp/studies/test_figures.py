"""The study trend plot: one line per policy in grid order, log y only where seconds span decades."""

from __future__ import annotations

import math

from bokeh.models import LogScale

from webapp.studies.figures import study_trend


def lines_of(layout):  # noqa: ANN001, ANN201
    fig = layout.children[0]
    return fig, {r.data_source.data["line"][0]: list(r.data_source.data["y"]) for r in fig.renderers
                 if r.glyph.__class__.__name__ == "Line"}


def test_one_line_per_series_with_gaps_for_missing_points():
    series = {"fcfs": [{"weighted_turnaround": 100.0}, None], "tss": [{"weighted_turnaround": 50.0},
                                                                      {"weighted_turnaround": 60.0}]}
    layout = study_trend("load", [0.5, 1], series, "weighted_turnaround", "turnaround")
    fig, lines = lines_of(layout)
    assert list(fig.x_range.factors) == ["0.5", "1"]
    assert lines["tss"] == [50.0, 60.0] and lines["fcfs"][0] == 100.0 and math.isnan(lines["fcfs"][1])
    assert not isinstance(fig.y_scale, LogScale)              # 100 / 50: linear
    assert "fcfs at 1" in layout.children[1].text               # the gap is named


def test_seconds_spanning_more_than_two_decades_get_a_log_axis_and_infinity_a_label():
    series = {"sorted-masc": [{"weighted_turnaround": 10.0}, {"weighted_turnaround": 5000.0}]}
    fig, _ = lines_of(study_trend("masc", [5, "inf"], series, "weighted_turnaround", "turnaround"))
    assert isinstance(fig.y_scale, LogScale) and list(fig.x_range.factors) == ["5", "∞"]
    skips = {"sorted": [{"mean_abs_skip": 1.0}, {"mean_abs_skip": 3000.0}]}
    fig, _ = lines_of(study_trend("load", [1, 2], skips, "mean_abs_skip", "skip"))
    assert not isinstance(fig.y_scale, LogScale)               # counts stay linear
