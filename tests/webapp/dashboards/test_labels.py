"""Category labels never overlap at 1024 and 1400 px: the orientation rule (webapp.dashboards.figures.labels)
and the figures that use it. A label's box is its text width when horizontal, a line's thickness when vertical;
the rule is decided on the narrowest plot (1024 px) and the boxes are checked there and at 1400 px."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bokeh.models import Plot

from webapp.dashboards.figures import labels as rule
from webapp.dashboards.figures.labels import (FRAME_PX, FULL_PLOT_PX, HALF_PLOT_PX, PAGE_AT_1400, label_boxes, label_fit,
                                              overlapping)

POLICIES = ["easy", "conservative", "dbf (deadline_fraction=0.2)", "dbf (deadline_fraction=0.4)",
            "fcfs", "sorted-masc (masc=10)", "plan2 (annealing: T0=1, Tth=0.0001, N=100, r=0.9)"]
FULL_1400, HALF_1400 = PAGE_AT_1400 - FRAME_PX, PAGE_AT_1400 // 2 - FRAME_PX


def test_the_widths_are_the_pages_at_1024_and_1400():
    assert FULL_PLOT_PX == 1024 - 40 - 16 - FRAME_PX and HALF_PLOT_PX < FULL_PLOT_PX < FULL_1400
    assert FULL_1400 == 1160 - FRAME_PX        # main is at most 1200 px wide, less its padding


@pytest.mark.parametrize("labels", [
    POLICIES, POLICIES[:2], [f"user{i}" for i in range(40)], [str(i) for i in range(200)], ["0.2", "0.4", "0.6"],
    ["< 1 min", "1–10 min", "10 min–1 h", "1–4 h", "4–12 h", "12–24 h", "1–3 d", "3–7 d", "≥ 7 d"],
])
@pytest.mark.parametrize("narrow, wide", [(FULL_PLOT_PX, FULL_1400), (HALF_PLOT_PX, HALF_1400)])
def test_no_two_label_boxes_overlap_at_1024_or_1400(labels, narrow, wide):
    fit = label_fit(labels, narrow / len(labels))
    for plot in (narrow, wide):
        boxes = label_boxes(fit, plot / len(labels))
        assert not overlapping(boxes), (fit.orientation, fit.every, plot)


def test_the_naive_horizontal_labels_would_overlap_where_the_rule_turns_them():
    room = HALF_PLOT_PX / len(POLICIES)
    assert overlapping(label_boxes(rule.LabelFit("horizontal", 1, POLICIES), room))     # what Bokeh drew
    fit = label_fit(POLICIES, room)
    assert fit.orientation == "vertical" and fit.every == 1
    assert fit.texts[-1] == "plan2 (annealing: T0=…" and len(fit.texts[-1]) == rule.MAX_CHARS
    assert fit.texts[0] == "easy"


def test_short_labels_stay_horizontal_and_crowded_ones_are_thinned():
    assert label_fit(["0.2", "0.4", "0.6", "0.8"], HALF_PLOT_PX / 4).orientation == "horizontal"
    many = [str(i) for i in range(200)]
    fit = label_fit(many, FULL_PLOT_PX / 200)          # 4.3 px apart: every 4th label, vertical
    assert fit.orientation == "vertical" and fit.every == 4
    assert fit.texts[:5] == ["0", "", "", "", "4"]
    assert overlapping([(0, 10), (9, 20)]) and not overlapping([(0, 10), (10, 20)])


def test_the_sweep_plot_keeps_values_across():
    from webapp.dashboards.figures.sweep import sweep_trend

    layout = sweep_trend("load", [0.3, 0.5, 0.8], {"easy": [{"mean_wait": 1.0}] * 3})
    axes = [fig.xaxis[0] for fig in layout.select({"type": Plot}) if hasattr(fig, "xaxis")]
    assert axes and {axis.major_label_orientation for axis in axes} == {"horizontal"}


def test_long_user_names_stand_vertical_on_the_fairness_plot():
    from webapp.dashboards.figures.fairness import fairness_figure

    users = [f"research-group-{i:02d}" for i in range(25)]
    frame = pd.DataFrame({"user": users, "jobs": np.arange(25, 0, -1), "mean_wait": np.linspace(10, 5000, 25),
                          "mean_bsld": np.linspace(1, 30, 25)})
    layout = fairness_figure({"easy": frame, "fcfs": frame})
    axes = [fig.xaxis[0] for fig in layout.select({"type": Plot})]
    assert axes and {axis.major_label_orientation for axis in axes} == {"vertical"}


def test_the_preview_wait_bins_hide_repeated_labels_and_name_the_colours():
    from webapp.dashboards.figures.preview import wait_distribution_figure

    rng = np.random.default_rng(0)
    schedules = {name: pd.DataFrame({"wait": rng.exponential(20_000, 300), "user": 1})
                 for name in ("current: metacentrum-historical", "proposed: metacentrum-2014")}
    fig = wait_distribution_figure(schedules)
    axis = fig.xaxis[0]
    # 18 bars and 8 gaps on a half-width plot at 1024 px: 12.8 px apart, under a line's 14 px
    assert axis.major_label_text_font_size == "0px" and axis.group_label_orientation == "vertical"
    assert [item.label["field"] for item in fig.legend[0].items] == ["configuration"]
