"""Two runs side by side, job by job (evalys' diff vocabulary): how start times moved from A to B,
which users and job classes gain or lose most, the jobs that moved most, and a diff Gantt."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, Div, FactorRange, HoverTool, LayoutDOM, Range1d

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
                  _gains(jobs),
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


def _gains(jobs: pd.DataFrame):
    """Users and job classes that gained or lost most, in ONE figure (a group of bars each on one axis of
    job-hours; one figure less for the browser to build)."""
    names: list[tuple[str, str]] = []
    columns: dict[str, list] = {"hours": [], "jobs": [], "mean": []}
    for key, what in (("user", "Users"), ("job_class", "Job classes")):
        table = gains_by(jobs, key)
        names += [(what, f"user {v}" if key == "user" else str(v)) for v in table[key]]
        columns["hours"] += list(table["total_delta"].to_numpy(float) / 3600.0)
        columns["jobs"] += list(table["jobs"].to_numpy())
        columns["mean"] += list(table["mean_delta"].to_numpy(float) / 3600.0)
    hours = np.asarray(columns["hours"], float)
    source = ColumnDataSource({"name": names, "label": [name for _, name in names], "hours": hours,
                               "jobs": np.asarray(columns["jobs"]), "mean": np.asarray(columns["mean"], float),
                               "colour": np.where(hours < 0, EARLIER, LATER)})
    fig = new_figure("Users and job classes: most gained (green), most lost (red)",
                     height=max(200, 60 + 18 * len(names)), y_range=FactorRange(*(names[::-1] or [("", "none")])))
    fig.hbar(y="name", right="hours", height=0.75, color="colour", source=source)
    fig.yaxis.group_label_orientation = "vertical"
    fig.xaxis.axis_label = "job-hours: Σ (start under B − start under A)"
    fig.add_tools(HoverTool(tooltips=[("", "@label"), ("jobs", "@jobs{0,0}"), ("total (h)", "@hours{0,0.0}"),
                                      ("mean per job (h)", "@mean{0,0.00}")]))
    return fig


#: The moved-jobs table's look (a Div's shadow DOM does not see the page's CSS).
TABLE_STYLE = ("<style>table.moved{border-collapse:collapse;font-size:12px;margin:4px 0}"
               "table.moved th,table.moved td{border-bottom:1px solid #e3e3e3;padding:2px 8px;text-align:left}"
               "table.moved td.num{text-align:right;font-variant-numeric:tabular-nums}"
               "table.moved tr:nth-child(even) td{background:#f6f6f6}</style>")


def _moved_table(jobs: pd.DataFrame, axis: TimeAxis):
    """The jobs that moved most, as an HTML table (no DataTable: the page then needs no bokeh-tables bundle)."""
    moved = moved_most(jobs)
    head = "".join(f"<th>{html.escape(title)}</th>" for title in
                   ("job", "user", "procs", "runtime (h)", "start under A", "start under B", "B − A (h)"))
    body = "".join(
        f"<tr><td class='num'>{job}</td><td class='num'>{user}</td><td class='num'>{procs:,}</td>"
        f"<td class='num'>{runtime / 3600.0:,.2f}</td><td>{html.escape(axis.text(a))}</td>"
        f"<td>{html.escape(axis.text(b))}</td><td class='num'>{delta / 3600.0:,.2f}</td></tr>"
        for job, user, procs, runtime, a, b, delta in zip(
            moved["job_id"], moved["user"], moved["procs"], moved["runtime"].to_numpy(float),
            moved["start_a"], moved["start_b"], moved["delta"].to_numpy(float)))
    return Div(text=f"{TABLE_STYLE}<b>The jobs that moved most</b><table class='moved'><thead><tr>{head}</tr></thead>"
                    f"<tbody>{body}</tbody></table>", sizing_mode="stretch_width")


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
