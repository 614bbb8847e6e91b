"""Workload characterization of one trace: when jobs arrive, how big and long they are, who uses it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, DataTable, FactorRange, HoverTool, NumeralTickFormatter, TableColumn
from bokeh.models import LayoutDOM
from bokeh.plotting import figure

from engine.api import epoch_origin

from .labels import FRAME_PX, fit_category_axis
from .style import (OTHERS_COLOUR, POLICY_PALETTE, count_axis, duration_axis, heading, integer_log_edges, log_edges,
                    new_figure, note)

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
HIST_BINS = 30
MAX_SCATTER_POINTS = 20_000
TOP_USERS = 15
BAR_COLOUR = POLICY_PALETTE[0]


@dataclass(frozen=True)
class LocalArrivals:
    hour: np.ndarray       # 0..23 per job
    weekday: np.ndarray    # 0 = Monday .. 6 per job, or empty when the trace has no calendar
    clock_note: str        # which clock the hours are on


def local_arrivals(submit: np.ndarray, metadata: dict[str, str]) -> LocalArrivals:
    """Hour of day and weekday of each submission on the site's wall clock.

    SWF times are seconds from the header's UnixStartTime, other traces' are epochs already
    (engine.api.epoch_origin says which); TimeZoneString names the site's zone. Without either
    there is no calendar: hours are counted from the trace start and there are no weekdays.
    """
    submit = np.asarray(submit, dtype=np.int64)
    start = epoch_origin(metadata, int(submit.min()) if len(submit) else None)
    if start is None:
        hours = (submit // 3600) % 24
        return LocalArrivals(hours.astype(np.int64), np.empty(0, np.int64),
                             "hours since the trace start modulo 24 (the header has no UnixStartTime)")
    zone = (metadata.get("TimeZoneString") or "").strip() or "UTC"
    stamps = pd.to_datetime(start + submit, unit="s", utc=True)
    try:
        local = stamps.tz_convert(zone)
    except Exception:  # an unknown zone name: say so rather than guess
        local, zone = stamps, f"UTC (unknown time zone {zone!r})"
    return LocalArrivals(np.asarray(local.hour, np.int64), np.asarray(local.day_of_week, np.int64),
                         f"local time, {zone}")


def arrivals_figures(jobs: pd.DataFrame, metadata: dict[str, str]) -> LayoutDOM:
    arrivals = local_arrivals(jobs["submit"].to_numpy(), metadata)
    hours = np.bincount(arrivals.hour, minlength=24)[:24]
    by_hour = new_figure("Job arrivals by hour of day", width=560, height=260, x_range=(-0.5, 23.5))
    by_hour.vbar(x=np.arange(24), top=hours, width=0.8, color=BAR_COLOUR)
    by_hour.xaxis.axis_label = "hour of day"
    by_hour.yaxis.axis_label = "jobs submitted"
    by_hour.xaxis.ticker = list(range(0, 24, 2))
    by_hour.add_tools(HoverTool(tooltips=[("hour", "@x"), ("jobs", "@top")]))
    if arrivals.weekday.size == 0:
        return column(by_hour, note(f"Hours: {arrivals.clock_note}; no weekday chart without a calendar."))
    days = np.bincount(arrivals.weekday, minlength=7)[:7]
    by_day = new_figure("Job arrivals by day of week", width=340, height=260, x_range=list(WEEKDAYS))
    by_day.vbar(x=list(WEEKDAYS), top=days, width=0.8, color=BAR_COLOUR)
    by_day.yaxis.axis_label = "jobs submitted"
    fit_category_axis(by_day.xaxis[0], list(WEEKDAYS), 340 - FRAME_PX)
    by_day.add_tools(HoverTool(tooltips=[("day", "@x"), ("jobs", "@top")]))
    return column(row(by_hour, by_day), note(f"Hours and days on the site's clock: {arrivals.clock_note}."))


def log_histogram(values: np.ndarray, *, title: str, x_label: str, floor: float = 1.0,
                  bins: int = HIST_BINS, width: int = 450, integer: bool = False) -> LayoutDOM:
    """Histogram on logarithmic bins and a log x axis; values below `floor` are counted in a note.

    `integer` rounds the edges to whole numbers (job sizes), so no bin falls between two integers.
    """
    values = np.asarray(values, dtype=float)
    below = int(np.count_nonzero(values < floor))
    edges = integer_log_edges(values[values >= floor], bins) if integer else log_edges(values, bins, floor=floor)
    counts, _ = np.histogram(values[values >= floor], bins=edges)
    fig = new_figure(title, width=width, height=280, x_axis_type="log")
    source = ColumnDataSource({"left": edges[:-1], "right": edges[1:], "count": counts})
    fig.quad(left="left", right="right", bottom=0, top="count", source=source, color=BAR_COLOUR,
             line_color="white")
    fig.xaxis.axis_label = x_label
    fig.yaxis.axis_label = "jobs"
    fig.add_tools(HoverTool(tooltips=[("from", "@left{0,0}"), ("to", "@right{0,0}"), ("jobs", "@count")]))
    if below:
        return column(fig, note(f"{below:,} jobs below {floor:g} are not drawn on the log axis.", width=width))
    return fig


def requested_vs_actual(jobs: pd.DataFrame, *, max_points: int = MAX_SCATTER_POINTS,
                        seed: int = 0) -> LayoutDOM:
    """Requested against actual runtime, log–log, with the y = x line (perfect estimates)."""
    valid = jobs[(jobs["runtime"] > 0) & (jobs["requested_time"] > 0)]
    shown = valid
    if len(valid) > max_points:
        shown = valid.sample(n=max_points, random_state=seed)
    fig = new_figure("Requested vs actual runtime", width=450, height=380,
                     x_axis_type="log", y_axis_type="log")
    fig.scatter(shown["requested_time"].to_numpy(dtype=float), shown["runtime"].to_numpy(dtype=float),
                size=3, alpha=0.3, color=BAR_COLOUR)
    if len(valid):
        hi = float(max(valid["runtime"].max(), valid["requested_time"].max()))
        fig.line([1, hi], [1, hi], color="#555", line_dash="dashed", legend_label="actual = requested")
        fig.legend.location = "top_left"
    fig.xaxis.axis_label = "requested time (log)"
    fig.yaxis.axis_label = "actual runtime (log)"
    duration_axis(fig.xaxis)
    duration_axis(fig.yaxis)
    parts: list[str] = []
    if len(valid) > max_points:
        parts.append(f"Showing a random sample of {max_points:,} of {len(valid):,} jobs.")
    left_out = len(jobs) - len(valid)
    if left_out:
        parts.append(f"{left_out:,} jobs without a positive runtime or request are not drawn.")
    return column(fig, note(" ".join(parts), width=fig.width)) if parts else fig


def user_core_hours(jobs: pd.DataFrame, *, top: int = TOP_USERS) -> pd.DataFrame:
    """Core-hours per user, the `top` largest then one "others" row; columns user, core_hours, share."""
    core_hours = (jobs["procs"].astype(float) * jobs["runtime"].astype(float) / 3600.0)
    totals = core_hours.groupby(jobs["user"].astype(str)).sum().sort_values(ascending=False)
    head, tail = totals.iloc[:top], totals.iloc[top:]
    labels = [f"user {u}" for u in head.index]
    values = list(head.to_numpy())
    if len(tail):
        labels.append(f"others ({len(tail)} users)")
        values.append(float(tail.sum()))
    total = float(totals.sum()) or 1.0
    return pd.DataFrame({"user": labels, "core_hours": values, "share": np.asarray(values) / total})


def user_share_figure(jobs: pd.DataFrame, *, top: int = TOP_USERS) -> LayoutDOM:
    if jobs.loc[jobs["user"] >= 0, "user"].nunique() < 2:
        return column(heading("Share of core-hours per user", width=450),
                      note("The trace does not tell users apart (no user ids), so there are no shares to show.",
                           width=450))
    shares = user_core_hours(jobs, top=top)
    names = list(reversed(shares["user"].tolist()))
    colours = [OTHERS_COLOUR if n.startswith("others") else BAR_COLOUR for n in shares["user"]]
    fig = new_figure(f"Share of core-hours per user (top {top})", width=450, height=380,
                     y_range=FactorRange(*names))
    source = ColumnDataSource({"user": shares["user"].tolist(), "share": shares["share"].to_numpy(),
                               "core_hours": shares["core_hours"].to_numpy(), "colour": colours})
    fig.hbar(y="user", right="share", height=0.8, color="colour", source=source)
    fig.xaxis.formatter = NumeralTickFormatter(format="0%")
    fig.xaxis.axis_label = "share of all core-hours"
    fig.add_tools(HoverTool(tooltips=[("", "@user"), ("core-hours", "@core_hours{0,0}"),
                                      ("share", "@share{0.0%}")]))
    return fig


def cleaning_report_table(report: dict, *, total_jobs: int | None = None) -> LayoutDOM:
    """The cleaning report (rejected and repaired jobs by reason, bad lines) as a table."""
    kinds, reasons, counts = [], [], []
    for kind, action in (("rejected", "removed"), ("repaired", "repaired"), ("kept", "kept as is")):
        for reason, count in sorted((report.get(kind) or {}).items()):
            kinds.append(action)
            reasons.append(str(reason))
            counts.append(int(count))
    if report.get("bad_lines"):
        kinds.append("skipped")
        reasons.append("unreadable lines")
        counts.append(int(report["bad_lines"]))
    title = "Cleaning report" + (f" ({total_jobs:,} jobs kept)" if total_jobs is not None else "")
    if not kinds:
        return column(heading(title), note("Nothing was rejected or repaired."))
    source = ColumnDataSource({"kind": kinds, "reason": reasons, "count": counts})
    table = DataTable(source=source, width=560, height=min(40 + 26 * len(kinds), 300), index_position=None,
                      columns=[TableColumn(field="kind", title="action", width=90),
                               TableColumn(field="reason", title="reason", width=380),
                               TableColumn(field="count", title="jobs", width=90)])
    return column(heading(title), table)


def trace_characterization(jobs: pd.DataFrame, metadata: dict[str, str], report: dict | None = None) -> LayoutDOM:
    """Every trace-page plot in one layout (one json_item). The trace page shows the cleaning report
    as an HTML table above the plots; pass `report` to add it as a table here too (standalone use)."""
    sizes = log_histogram(jobs["procs"].to_numpy(), title="Job size distribution",
                          x_label="processors requested (log)", integer=True)
    runtimes = log_histogram(jobs["runtime"].to_numpy(), title="Runtime distribution",
                             x_label="runtime (log)")
    duration_axis(runtimes.select_one({"type": figure}).xaxis)
    count_axis(sizes.select_one({"type": figure}).xaxis)
    parts = [arrivals_figures(jobs, metadata), row(sizes, runtimes), row(requested_vs_actual(jobs), user_share_figure(jobs))]
    if report is not None:
        parts.append(cleaning_report_table(report, total_jobs=len(jobs)))
    return column(*parts)
