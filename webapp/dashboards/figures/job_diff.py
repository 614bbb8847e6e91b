"""Two runs side by side, job by job (evalys' diff vocabulary): how start times moved from A to B,
which users and job classes gain or lose most, the jobs that moved most, and a diff Gantt."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
from bokeh.layouts import column, row
from bokeh.models import (
    ColumnDataSource,
    DataTable,
    Div,
    FactorRange,
    HoverTool,
    LayoutDOM,
    NumberFormatter,
    Range1d,
    TableColumn,
)

from engine.api import JobDiff, delta_histogram, gains_by, moved_most

from .labels import FULL_PLOT_PX, fit_category_axis
from .style import TIME_TOOLS, new_figure, note
from webapp.core.time_axis import TimeAxis

EARLIER, SAME, LATER = "#1e7b34", "#999999", "#b3261e"   # better / same / worse for the job under B
MAX_GANTT_JOBS = 300


def job_diff_layout(diff: JobDiff, a: str, b: str, colours: dict[str, str], axis: TimeAxis,
                    window: tuple[float, float]) -> LayoutDOM:
    jobs = diff.jobs
    intro = Div(text=(f"<b>{html.escape(b)}</b> against <b>{html.escape(a)}</b>, job by job: {len(jobs):,} jobs in "
                      "both; difference = start under B − start under A (<span style='color:"
                      f"{EARLIER}'>green: earlier under B</span>, <span style='color:{LATER}'>red: later</span>)."
                      + (f" Left out: {diff.only_a:,} jobs only in A, {diff.only_b:,} only in B."
                         if diff.only_a or diff.only_b else "")), width=900)
    if jobs.empty:
        return column(intro, note("No job is in both schedules."))
    return column(intro, _histogram(jobs["delta"].to_numpy()),
                  row(_gains(jobs, "user", "Users"), _gains(jobs, "job_class", "Job classes")),
                  _moved_table(jobs, axis), _diff_gantt(jobs, a, b, colours, axis, window))


def _histogram(delta: np.ndarray):
    bands = delta_histogram(delta)
    colours = np.where(bands["sign"] < 0, EARLIER, np.where(bands["sign"] > 0, LATER, SAME))
    source = ColumnDataSource({"band": bands["band"].tolist(), "jobs": bands["jobs"].to_numpy(), "colour": colours})
    fig = new_figure("Start-time difference, B − A: jobs per band", height=280, x_range=FactorRange(*bands["band"]))
    fig.vbar(x="band", top="jobs", width=0.85, color="colour", source=source)
    fit_category_axis(fig.xaxis[0], bands["band"].tolist(), FULL_PLOT_PX)
    fig.y_range.start = 0
    fig.yaxis.axis_label = "jobs"
    fig.add_tools(HoverTool(tooltips=[("", "@band"), ("jobs", "@jobs{0,0}")]))
    return fig


def _gains(jobs: pd.DataFrame, key: str, what: str):
    table = gains_by(jobs, key)
    names = [f"user {v}" if key == "user" else str(v) for v in table[key]]
    hours = table["total_delta"].to_numpy(float) / 3600.0
    source = ColumnDataSource({"name": names, "hours": hours, "jobs": table["jobs"].to_numpy(),
                               "mean": table["mean_delta"].to_numpy(float) / 3600.0,
                               "colour": np.where(hours < 0, EARLIER, LATER)})
    fig = new_figure(f"{what}: most gained (green), most lost (red)", width=445,
                     height=max(200, 40 + 22 * len(names)), y_range=FactorRange(*(names[::-1] or ["none"])))
    fig.hbar(y="name", right="hours", height=0.75, color="colour", source=source)
    fig.xaxis.axis_label = "job-hours: Σ (start under B − start under A)"
    fig.add_tools(HoverTool(tooltips=[("", "@name"), ("jobs", "@jobs{0,0}"), ("total (h)", "@hours{0,0.0}"),
                                      ("mean per job (h)", "@mean{0,0.00}")]))
    return fig


def _moved_table(jobs: pd.DataFrame, axis: TimeAxis):
    moved = moved_most(jobs)
    data = {"job_id": moved["job_id"].to_numpy(), "user": moved["user"].to_numpy(), "procs": moved["procs"].to_numpy(),
            "runtime_h": moved["runtime"].to_numpy(float) / 3600.0,
            "start_a": [axis.text(s) for s in moved["start_a"]], "start_b": [axis.text(s) for s in moved["start_b"]],
            "delta_h": moved["delta"].to_numpy(float) / 3600.0}
    hours = NumberFormatter(format="0,0.00")
    columns = [TableColumn(field="job_id", title="job", width=70), TableColumn(field="user", title="user", width=60),
               TableColumn(field="procs", title="procs", width=60),
               TableColumn(field="runtime_h", title="runtime (h)", formatter=hours, width=90),
               TableColumn(field="start_a", title="start under A", width=170),
               TableColumn(field="start_b", title="start under B", width=170),
               TableColumn(field="delta_h", title="B − A (h)", formatter=hours, width=90)]
    return column(Div(text="<b>The jobs that moved most</b>"),
                  DataTable(source=ColumnDataSource(data), columns=columns, width=880, height=28 + 25 * len(moved),
                            index_position=None))


def _diff_gantt(jobs: pd.DataFrame, a: str, b: str, colours: dict[str, str], axis: TimeAxis,
                window: tuple[float, float]):
    start, end = window
    axis = axis.for_span(end - start)
    running = (((jobs["start_a"] < end) & (jobs["end_a"] > start)) | ((jobs["start_b"] < end) & (jobs["end_b"] > start)))
    shown = jobs[running]
    left_out = 0
    if len(shown) > MAX_GANTT_JOBS:
        left_out = len(shown) - MAX_GANTT_JOBS
        shown = shown.iloc[np.argsort(-np.abs(shown["delta"].to_numpy()), kind="stable")[:MAX_GANTT_JOBS]]
    shown = shown.assign(first=np.minimum(shown["start_a"], shown["start_b"]))
    shown = shown.sort_values(["first", "job_id"], kind="stable").reset_index(drop=True)
    rows = np.arange(len(shown), dtype=float)
    fig = new_figure(f"Diff Gantt, {axis.text(start)} to {axis.text(end)}: {a} (wide bars) and {b} (narrow bars)",
                     height=min(700, 120 + 6 * len(shown)), tools=TIME_TOOLS,
                     x_range=Range1d(*axis.x(np.array([start, end]))), y_range=Range1d(len(shown), -1),
                     **axis.figure_kwargs())
    for run, suffix, height, alpha in ((a, "a", 0.8, 0.45), (b, "b", 0.35, 0.9)):
        source = ColumnDataSource({"y": rows, "left": axis.x(shown[f"start_{suffix}"].to_numpy(float)),
                                   "right": axis.x(shown[f"end_{suffix}"].to_numpy(float)),
                                   "job": shown["job_id"].to_numpy(), "user": shown["user"].to_numpy(),
                                   "delta_h": shown["delta"].to_numpy(float) / 3600.0})
        fig.hbar(y="y", left="left", right="right", height=height, fill_color=colours[run], fill_alpha=alpha,
                 line_color=None, source=source, legend_label=run)
    moves = ColumnDataSource({"y": rows, "a": axis.x(shown["start_a"].to_numpy(float)),
                              "b": axis.x(shown["start_b"].to_numpy(float)),
                              "colour": np.where(shown["delta"] < 0, EARLIER, np.where(shown["delta"] > 0, LATER, SAME))})
    fig.segment(x0="a", y0="y", x1="b", y1="y", color="colour", line_width=1.5, source=moves)
    fig.add_tools(HoverTool(tooltips=[("job", "@job"), ("user", "@user"), ("B − A (h)", "@delta_h{0,0.00}")]))
    fig.yaxis.visible = False
    fig.xaxis.axis_label = axis.label
    fig.legend.location = "top_right"
    text = (f"{len(shown):,} jobs running in this window under A or B, one row each (by first start); a thin line "
            "joins a job's start under A to its start under B (green: earlier under B, red: later)."
            + (f" {left_out:,} more left out: only the {MAX_GANTT_JOBS} that moved most are drawn; narrow the window "
               "to see them all." if left_out else "") + " The window is the Gantt window above.")
    return column(fig, note(text))
