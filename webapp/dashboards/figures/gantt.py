"""Gantt chart of a time window, one panel per policy in one figure (one time axis; canvas).

Schedules say how many processors a job held, not which ones (the engine allocates by count), so
processors are numbered here for drawing: jobs take the lowest free numbers in start order, and a
job that gets a fragmented set is drawn as several rectangles (as evalys draws ProcSet intervals).

Above `max_rectangles` in the window the chart would be unreadable and slow, so every panel switches
to an aggregate — processors in use per job-size class and time bucket — and the title says so.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColorBar, ColumnDataSource, HoverTool, LayoutDOM, LinearColorMapper, Range1d
from bokeh.palettes import Category20, Inferno256

from .style import TIME_TOOLS, PanelRows, new_figure, note, run_names
from webapp.core.time_axis import TimeAxis

MAX_RECTANGLES = 200_000
TIME_BUCKETS = 400
USER_PALETTE = Category20[20]


@dataclass(frozen=True)
class Rectangles:
    job: np.ndarray     # row position in the windowed schedule
    low: np.ndarray     # first processor number
    high: np.ndarray    # one past the last processor number


def jobs_in_window(schedule: pd.DataFrame, start: float, end: float) -> pd.DataFrame:
    """Jobs running at some instant of [start, end), sorted by start (then start_order when present)."""
    runs = (schedule["start"] < end) & (schedule["end"] > start)
    instant = (schedule["start"] == schedule["end"]) & (schedule["start"] >= start) & (schedule["start"] < end)
    window = schedule[runs | instant]
    order = ["start", "start_order"] if "start_order" in window.columns else ["start"]
    return window.sort_values(order, kind="stable").reset_index(drop=True)


def number_processors(starts: np.ndarray, ends: np.ndarray, widths: np.ndarray, capacity: int) -> Rectangles:
    """First-fit processor numbers for jobs given in start order; one rectangle per contiguous piece.

    Jobs ending at an instant release their processors before jobs starting then claim them. If the
    schedule ever over-commits the machine, the excess is drawn above `capacity` (visible, not hidden).
    """
    free: list[list[int]] = [[0, int(capacity)]]
    running: list[tuple[float, int]] = []
    held: dict[int, list[tuple[int, int]]] = {}
    overflow_top = int(capacity)
    job_ids, lows, highs = [], [], []
    for j in range(len(starts)):
        while running and running[0][0] <= starts[j]:
            _, done = heapq.heappop(running)
            for lo, hi in held.pop(done):
                if lo < capacity:
                    _release(free, lo, hi)
        need = int(widths[j])
        pieces: list[tuple[int, int]] = []
        while need > 0 and free:
            lo, hi = free[0]
            take = min(need, hi - lo)
            pieces.append((lo, lo + take))
            need -= take
            if lo + take == hi:
                free.pop(0)
            else:
                free[0][0] = lo + take
        if need > 0:
            pieces.append((overflow_top, overflow_top + need))
            overflow_top += need
        held[j] = pieces
        heapq.heappush(running, (float(ends[j]), j))
        for lo, hi in pieces:
            job_ids.append(j)
            lows.append(lo)
            highs.append(hi)
    return Rectangles(np.asarray(job_ids, np.int64), np.asarray(lows, np.int64), np.asarray(highs, np.int64))


def _release(free: list[list[int]], lo: int, hi: int) -> None:
    """Give [lo, hi) back to the sorted free list, merging with neighbours."""
    i = 0
    while i < len(free) and free[i][0] < lo:
        i += 1
    free.insert(i, [lo, hi])
    if i + 1 < len(free) and free[i][1] == free[i + 1][0]:
        free[i][1] = free.pop(i + 1)[1]
    if i > 0 and free[i - 1][1] == free[i][0]:
        free[i - 1][1] = free.pop(i)[1]


def size_classes(procs: np.ndarray) -> np.ndarray:
    """Power-of-two size class: 0 for 1 processor, 1 for 2–3, 2 for 4–7, ..."""
    return np.floor(np.log2(np.maximum(np.asarray(procs, dtype=float), 1.0))).astype(np.int64)


def class_label(k: int) -> str:
    return "1" if k == 0 else f"{2 ** k}–{2 ** (k + 1) - 1}"


def mean_in_use_per_bucket(starts: np.ndarray, ends: np.ndarray, widths: np.ndarray,
                           edges: np.ndarray) -> np.ndarray:
    """Time-averaged processors in use in each bucket [edges[i], edges[i+1]) — exact, vectorized.

    The area under the step function up to t is F_end(t) − F_start(t) with
    F_x(t) = Σ_j w_j · min(t, x_j); evaluating it at the edges gives each bucket's area.
    """
    def cumulative(points: np.ndarray) -> np.ndarray:
        order = np.argsort(points, kind="stable")
        x, w = points[order].astype(float), widths[order].astype(float)
        prefix_wx = np.concatenate([[0.0], np.cumsum(w * x)])
        suffix_w = np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]])
        k = np.searchsorted(x, edges, side="right")
        return prefix_wx[k] + edges * suffix_w[k]

    area = cumulative(np.asarray(ends, float)) - cumulative(np.asarray(starts, float))
    return np.diff(area) / np.diff(edges)


@dataclass(frozen=True)
class GanttWindow:
    start: float
    end: float


def gantt_figure(schedules: Mapping[str, pd.DataFrame], capacity: int, window: GanttWindow, *,
                 max_rectangles: int = MAX_RECTANGLES, axis: TimeAxis | None = None) -> LayoutDOM:
    """The runs' Gantt charts of `window` as panels of ONE figure (one Bokeh figure costs the browser
    100-250 ms to build, six of them most of a second): the first run at the top, each panel named
    above it; aggregated above `max_rectangles`."""
    windows = {label: jobs_in_window(s, window.start, window.end) for label, s in schedules.items()}
    jobs = sum(len(w) for w in windows.values())
    axis = (axis or TimeAxis()).for_span(window.end - window.start)
    x_range = Range1d(*axis.x(np.array([window.start, window.end])))
    if jobs > max_rectangles:
        return _aggregated(windows, capacity, window, x_range, axis,
                           f"{jobs:,} jobs in this window exceed the {max_rectangles:,}-rectangle limit")
    rectangles = {label: _rectangles(w, capacity) for label, w in windows.items()}
    total = sum(len(r.job) for r in rectangles.values())
    if total > max_rectangles:
        return _aggregated(windows, capacity, window, x_range, axis,
                           f"{total:,} rectangles in this window exceed the {max_rectangles:,} limit")
    top = max([capacity, *(int(r.high.max()) for r in rectangles.values() if len(r.high))])
    panels = PanelRows(list(schedules), top)
    fig = new_figure(f"Gantt, {axis.text(window.start)} to {axis.text(window.end)}: " + ", ".join(schedules)
                     + " (top to bottom)", height=panels.height(GANTT_PANEL_PX), tools=TIME_TOOLS, x_range=x_range,
                     y_range=panels.y_range(), **axis.figure_kwargs())
    columns: dict[str, list[np.ndarray]] = {}
    for index, label in enumerate(schedules):
        part = _gantt_columns(index, windows[label], rectangles[label], axis, panels.offset(label))
        for key, values in part.items():
            columns.setdefault(key, []).append(values)
    source = ColumnDataSource({key: np.concatenate(values) for key, values in columns.items()})
    # numbers, not a colour string and a run name per rectangle: 30,000 strings cost the browser more to
    # decode and to parse at every paint than the rectangles themselves
    fig.quad(left="left", right="right", bottom="bottom", top="top", fill_alpha=0.8, line_color="#333", line_width=0.3,
             fill_color={"field": "shade", "transform": user_colours()}, source=source)
    panels.decorate(fig, {label: {0: "0", capacity: f"{capacity:,}"} for label in schedules})
    fig.xaxis.axis_label = axis.label
    fig.yaxis.axis_label = "processor (numbered for drawing)"
    fig.add_tools(HoverTool(tooltips=[("run", "@panel{custom}"), ("job", "@job_id"), ("user", "@user"),
                                      ("processors", "@procs"), ("wait", "@wait{0,0} s")],
                            formatters={"@panel": run_names(list(schedules))}))
    text = (f"{jobs:,} jobs ({total:,} rectangles) running between {axis.text(window.start)} and {axis.text(window.end)} "
            f"over the {len(schedules)} runs, one panel each; colour = user; processors are numbered for drawing "
            "(first fit in start order), a job on a fragmented set is drawn as several rectangles.")
    return column(fig, note(text))


#: Height of one run's panel in the Gantt charts (pixels).
GANTT_PANEL_PX = 190


def _rectangles(window: pd.DataFrame, capacity: int) -> Rectangles:
    widths = window["alloc"] if "alloc" in window.columns else window["procs"]
    return number_processors(window["start"].to_numpy(float), window["end"].to_numpy(float),
                             widths.to_numpy(np.int64), capacity)


def user_colours() -> LinearColorMapper:
    """Colour = user: the user number modulo the palette (``shade``), mapped to the palette in the browser
    (a new mapper per figure: a Bokeh model belongs to one document)."""
    return LinearColorMapper(palette=USER_PALETTE, low=-0.5, high=len(USER_PALETTE) - 0.5)


def _gantt_columns(panel: int, window: pd.DataFrame, rects: Rectangles, axis: TimeAxis,
                   offset: float) -> dict[str, np.ndarray]:
    """One run's rectangles (``panel``: its number, top first), raised to its panel."""
    rows = window.iloc[rects.job]
    users = rows["user"].to_numpy(np.int64)
    return {
        "left": np.asarray(axis.x(rows["start"].to_numpy(float))), "right": np.asarray(axis.x(rows["end"].to_numpy(float))),
        "bottom": rects.low.astype(float) + offset, "top": rects.high.astype(float) + offset,
        "shade": (np.abs(users) % len(USER_PALETTE)).astype(np.int8),
        "panel": np.full(len(rows), panel, dtype=np.int8),
        "job_id": rows["job_id"].to_numpy(np.int64), "user": users, "procs": rows["procs"].to_numpy(np.int64),
        "wait": rows["wait"].to_numpy(np.int64),
    }


def _aggregated(windows: Mapping[str, pd.DataFrame], capacity: int, window: GanttWindow, x_range: Range1d,
                axis: TimeAxis, reason: str) -> LayoutDOM:
    edges = np.linspace(window.start, window.end, TIME_BUCKETS + 1)
    classes = sorted({int(k) for w in windows.values() for k in np.unique(size_classes(w["procs"].to_numpy()))}) or [0]
    mapper = LinearColorMapper(palette=tuple(reversed(Inferno256)), low=0.0, high=1.0)
    panels = PanelRows(list(windows), len(classes))
    fig = new_figure("Gantt aggregated, share of the machine used by each job-size class: " + ", ".join(windows)
                     + " (top to bottom)", height=panels.height(max(120, 22 * len(classes))), tools=TIME_TOOLS,
                     x_range=x_range, y_range=panels.y_range(), **axis.figure_kwargs())
    left, right, row, value, runs = [], [], [], [], []
    for panel, (label, w) in enumerate(windows.items()):
        widths = (w["alloc"] if "alloc" in w.columns else w["procs"]).to_numpy(float)
        k = size_classes(w["procs"].to_numpy())
        for row_index, cls in enumerate(classes):
            mask = k == cls
            used = mean_in_use_per_bucket(np.clip(w["start"].to_numpy(float)[mask], window.start, window.end),
                                          np.clip(w["end"].to_numpy(float)[mask], window.start, window.end),
                                          widths[mask], edges) / capacity
            left.append(axis.x(edges[:-1]))
            right.append(axis.x(edges[1:]))
            row.append(np.full(TIME_BUCKETS, panels.offset(label) + row_index, float))
            value.append(used)
            runs.append(np.full(TIME_BUCKETS, panel, dtype=np.int8))
    source = ColumnDataSource({"left": np.concatenate(left), "right": np.concatenate(right),
                               "bottom": np.concatenate(row), "top": np.concatenate(row) + 1.0,
                               "value": np.concatenate(value), "panel": np.concatenate(runs)})
    fig.quad(left="left", right="right", bottom="bottom", top="top", source=source, line_color=None,
             fill_color={"field": "value", "transform": mapper})
    panels.decorate(fig, {label: {i + 0.5: class_label(c) for i, c in enumerate(classes)} for label in windows})
    fig.yaxis.axis_label = "job size (processors)"
    fig.xaxis.axis_label = axis.label
    fig.add_tools(HoverTool(tooltips=[("run", "@panel{custom}"), ("share of machine", "@value{0.0%}")],
                            formatters={"@panel": run_names(list(windows))}))
    fig.add_layout(ColorBar(color_mapper=mapper, title="share of machine", width=10), "right")
    text = (f"AGGREGATED, not one rectangle per job: {reason}. Each cell is the time-averaged share of the "
            f"machine used by jobs of that size class in one of {TIME_BUCKETS} time buckets; nothing is left out. "
            "Narrow the window (start/end) to see individual jobs.")
    return column(note(text), fig)
