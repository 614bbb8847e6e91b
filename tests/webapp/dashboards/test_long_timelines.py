"""Timelines longer than two weeks: one row per run (daily mean and min-max band) in one figure per
metric on a date axis, and the raw steps of every run over the zoom window."""

from __future__ import annotations

import pandas as pd
from bokeh.models import DatetimeAxis, Label, LegendItem
from bokeh.plotting import figure as Figure  # noqa: N812 - the class, to select figures by type

from engine.metrics.timeseries import day_edges, envelope
from webapp.core.time_axis import TimeAxis
from webapp.dashboards.figures.timelines import PolicyTimelines, linked_timelines

STEPS = pd.DataFrame({"time": [0, 100, 86450, 30 * 86400], "value": [2, 5, 1, 0]})
PRAGUE = TimeAxis(1_700_000_000, "Europe/Prague")


def lines(long: bool = True) -> PolicyTimelines:
    daily = envelope(STEPS, day_edges(0, 30 * 86400)) if long else None
    return PolicyTimelines(busy=STEPS, queue=STEPS, busy_daily=daily, queue_daily=daily, busy_raw=STEPS, queue_raw=STEPS)


def figures(layout) -> list:  # noqa: ANN001
    """The layout's figures in page order (select() gives no order)."""
    found, todo = [], [layout]
    while todo:
        item = todo.pop(0)
        if isinstance(item, Figure):
            found.append(item)
        todo[:0] = list(getattr(item, "children", []) or [])
    return found


def test_a_long_trace_gets_one_row_per_run_per_metric_and_raw_steps_for_the_window():
    runs = {name: lines() for name in ("fcfs", "easy", "sjf")}
    layout = linked_timelines(runs, 10, axis=PRAGUE, zoom=(0, 86400))
    titles = [f.title.text for f in figures(layout)]
    assert len(titles) == 2            # the daily rows of both metrics; the raw steps (utilization and queue panels)
    assert titles[0].startswith("Daily mean and min–max per run: utilization")
    assert "2023-11-14 23:13 to 2023-11-15 23:13" in titles[1]
    for fig in figures(layout):
        assert isinstance(fig.xaxis[0], DatetimeAxis)
    raw = figures(layout)[1]
    assert {item.label.value for item in raw.select({"type": LegendItem})} == set(runs)   # click a run to hide it
    rows = figures(layout)[0]
    # one renderer for every band and one for every daily mean (26 renderers cost the browser more than the data)
    assert len(rows.renderers) == 3                           # bands, means, the row separators
    bands = rows.renderers[0].data_source.data
    assert sorted(set(bands["run"])) == [0, 1, 2] and sorted(set(bands["what"])) == [0, 1]
    assert len(rows.renderers[1].data_source.data["xs"]) == 6   # a daily mean per run and metric
    ticks = rows.yaxis[0].major_label_overrides
    assert [ticks[k] for k in sorted(ticks)] == ["fcfs", "easy", "sjf"] * 2     # a row per run, per metric
    blocks = sorted((label.y, label.text) for label in rows.select({"type": Label}))
    assert [text for _, text in blocks] == ["Utilization", "Queue length (jobs waiting)"]


def test_a_short_trace_keeps_the_overlaid_steps():
    layout = linked_timelines({"fcfs": lines(long=False), "easy": lines(long=False)}, 10)
    titles = [f.title.text for f in figures(layout)]
    assert titles == ["Utilization and queue length: fcfs, easy"]
    panels = {label.text for label in figures(layout)[0].select({"type": Label})}
    assert panels == {"Utilization (processors in use / machine size)", "Queue length (jobs waiting; 0 to 5)"}
