"""The deadline section of the comparison: shown with deadline jobs, built from engine.metrics.deadlines."""

from __future__ import annotations

import numpy as np
from bokeh.embed import json_item
from bokeh.models import ColumnDataSource, Div

from webapp.dashboards.comparison import Comparison, deadlines_layout, plot_names
from webapp.dashboards.figures.deadlines import deadline_figures

from .conftest import make_schedule


def with_deadlines(schedule, deadlines):
    schedule = schedule.copy()
    schedule["deadline"] = np.array(deadlines, dtype=float)
    return schedule


# job 2 (submit 10, ends 150) is due at 100: a miss with a 90 s slack, so a 24-hour one;
# job 3 (submit 20) is due at 220: ends at 30 under EASY (usage 10 / 200 = 5 %), 160 under DBF (70 %)
DBF = with_deadlines(make_schedule([(1, 0, 0, 100, 2), (2, 10, 100, 50, 4), (1, 20, 150, 10, 1)]),
                     [np.nan, 100, 220])
EASY = with_deadlines(make_schedule([(1, 0, 0, 100, 2), (2, 10, 100, 50, 4), (1, 20, 20, 10, 1)]),
                      [np.nan, 100, 220])


def sources(layout):
    return [s.data for s in layout.select({"type": ColumnDataSource})]


def test_the_section_counts_misses_and_usage_per_policy():
    layout = deadlines_layout(Comparison({"dbf": DBF, "easy": EASY}, 4), {})
    json_item(layout)   # serializable
    misses = next(d for d in sources(layout) if "misses" in d)
    assert dict(zip(map(tuple, misses["y"]), misses["misses"])) == {
        ("dbf", "24h"): 1, ("dbf", "proportional"): 0, ("easy", "24h"): 1, ("easy", "proportional"): 0}
    usage = sorted(list(d["count"]) for d in sources(layout) if "share" in d)
    # EASY: 5 % (bin 0) and the miss (last bin); DBF: 70 % (bin 7) and the miss
    assert usage == [[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]]


def test_the_zero_wait_filter_is_an_option_said_in_the_note():
    layout = deadlines_layout(Comparison({"dbf": DBF, "easy": EASY}, 4), {"zero_wait": "drop"})
    waits = next(d for d in sources(layout) if "wait" in d)
    # the only regular job (job 1) waited 0 under both: nothing left to average
    assert np.isnan(waits["wait"][0])
    assert any("waited 0 under every policy" in div.text for div in layout.select({"type": Div}))


def test_the_section_is_listed_only_with_deadline_jobs():
    assert "deadlines" not in plot_names(False)
    assert "deadlines" in plot_names(False, has_deadlines=True)
    plain = make_schedule([(1, 0, 0, 100, 2)])
    layout = deadlines_layout(Comparison({"fcfs": plain}, 4), {})
    assert "No deadline jobs" in layout.text


def test_the_figure_builder_takes_summaries_and_histograms():
    summaries = {"a": {"mean_wait_regular": 10.0, "mean_wait_deadline": None, "deadline_jobs": 0}}
    layout = deadline_figures(summaries, {"a": (np.zeros(11, dtype=int), np.linspace(0, 1.1, 12))})
    json_item(layout)
