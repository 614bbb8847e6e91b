"""Utilization, queue length and per-allocation occupancy over time, on ONE linked time axis.

Bokeh can only link ranges inside one document, so everything here is a single layout exported
as a single json_item (see the embedding notes §1.1).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from bokeh.layouts import column, row
from bokeh.models import (
    ColumnDataSource,
    CustomJS,
    Div,
    FixedTicker,
    HoverTool,
    Label,
    LayoutDOM,
    Legend,
    LinearColorMapper,
    RadioButtonGroup,
    Range1d,
    Span,
)
from bokeh.plotting import figure

from .style import TIME_TOOLS, PanelRows, allocation_colours, new_figure, note, policy_colours, run_names
from webapp.core.time_axis import TimeAxis

#: Above this many days a timeline is drawn as daily means with their min-max band, one panel per run.
LONG_SPAN_DAYS = 14


@dataclass(frozen=True)
class PolicyTimelines:
    """Step series of one run (each value holds from its time until the next row's time)."""

    busy: pd.DataFrame                        # columns time, value: processors in use
    queue: pd.DataFrame                       # columns time, value: jobs waiting
    occupancy: pd.DataFrame | None = None     # column time + one column per allocation (processors)
    notes: list[str] = field(default_factory=list)   # e.g. "downsampled from 480,000 steps"
    busy_daily: pd.DataFrame | None = None    # engine.metrics.timeseries.envelope per day (long traces)
    queue_daily: pd.DataFrame | None = None
    busy_raw: pd.DataFrame | None = None      # the raw steps inside the zoom window (long traces)
    queue_raw: pd.DataFrame | None = None


def step_points(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Corner points of a step function, for area glyphs that have no step mode (varea_stack).

    (t0, v0), (t1, v1) → (t0, v0), (t1, v0), (t1, v1): each value holds until the next time.
    """
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    if times.size == 0:
        return times, values
    xs = np.repeat(times, 2)[1:]
    ys = np.repeat(values, 2)[:-1]
    return xs, ys


def _span_seconds(timelines: Mapping[str, PolicyTimelines]) -> tuple[float, float]:
    starts = [float(t.busy["time"].min()) for t in timelines.values() if len(t.busy)]
    ends = [float(t.busy["time"].max()) for t in timelines.values() if len(t.busy)]
    if not starts:
        return 0.0, 1.0
    lo, hi = min(starts), max(ends)
    return lo, hi if hi > lo else lo + 1.0


def _time_figure(title: str, x_range: Range1d | None, axis: TimeAxis, height: int = 230, *,
                 legend: bool = True) -> figure:
    kwargs = {"x_range": x_range} if x_range is not None else {}
    fig = new_figure(title, height=height, tools=TIME_TOOLS, **kwargs, **axis.figure_kwargs())
    fig.xaxis.axis_label = axis.label
    if legend:
        fig.add_layout(Legend(click_policy="hide", label_text_font_size="11px"), "right")
    return fig


#: The two panels of a steps figure: utilization on top, queue length under it.
STEP_PANELS = ("utilization", "queue")


def steps_figure(title: str, busy: Mapping[str, pd.DataFrame], queue: Mapping[str, pd.DataFrame], capacity: int,
                 colours: Mapping[str, str], axis: TimeAxis, x_range: Range1d) -> figure:
    """Every run's utilization (top panel, 0 to 100 % of the machine) and queue length (bottom panel, 0 to
    the longest queue) as step lines in ONE figure (one figure less for the browser to build than two);
    a run's two lines share its legend entry (click: both hide). Each source keeps the value drawn
    (``value``: utilization share or jobs waiting) beside its place in the panel (``y``)."""
    panels = PanelRows(STEP_PANELS, 1.0)
    queue_top = max([1.0, *(float(frame["value"].max()) for frame in queue.values() if len(frame))])
    fig = _time_figure(title, x_range, axis, height=panels.height(165))
    fig.y_range = panels.y_range()
    for panel, series, scale in (("utilization", busy, float(capacity)), ("queue", queue, queue_top)):
        for label, frame in series.items():
            value = frame["value"].to_numpy(dtype=float) / (scale if panel == "utilization" else 1.0)
            source = ColumnDataSource({"x": axis.x(frame["time"].to_numpy(dtype=float)),
                                       "y": panels.offset(panel) + value / (1.0 if panel == "utilization" else scale),
                                       "value": value})
            fig.step("x", "y", source=source, mode="after", color=colours[label], line_width=1.5, legend_label=label)
    panels.decorate(fig, {"utilization": {0: "0 %", 0.5: "50 %", 1: "100 %"},
                          "queue": {0: "0", 0.5: f"{queue_top / 2:,.0f}", 1: f"{queue_top:,.0f}"}},
                    {"utilization": "Utilization (processors in use / machine size)",
                     "queue": f"Queue length (jobs waiting; 0 to {queue_top:,.0f})"})
    fig.yaxis.axis_label = "utilization · jobs waiting"
    return fig


def is_long(span_seconds: float) -> bool:
    return span_seconds > LONG_SPAN_DAYS * 86400


def linked_timelines(timelines: Mapping[str, PolicyTimelines], capacity: int, *,
                     allocation_kind: str = "group",
                     targets: Mapping[str, float] | None = None,
                     colours: Mapping[str, str] | None = None,
                     axis: TimeAxis | None = None, zoom: tuple[float, float] | None = None) -> LayoutDOM:
    """Utilization, queue length and a stacked occupancy plot (a button per policy) sharing one x_range.

    Over more than LONG_SPAN_DAYS days, overlaid step lines are unreadable: each run then gets its own
    small panel (shared axes) with the daily mean and the day's min-max band, and the raw steps of all
    runs are overlaid for the ``zoom`` window (schedule seconds) only.

    `targets` maps an allocation name to its target share of the machine (0..1); the occupancy
    plots stack the targeted allocations at the bottom and draw a dashed line at the cumulative
    target up to each of them, so a band whose top edge stays on its line is on target.
    """
    colours = dict(colours or policy_colours(timelines))
    lo, hi = _span_seconds(timelines)
    axis = (axis or TimeAxis()).for_span(hi - lo)
    x_range = Range1d(*axis.x(np.array([lo, hi])))
    long = is_long(hi - lo) and all(t.busy_daily is not None for t in timelines.values())
    if long:
        parts = _daily_panels(timelines, capacity, colours, axis, x_range, zoom)
    else:
        steps = steps_figure("Utilization and queue length: " + ", ".join(timelines),
                             {k: t.busy for k, t in timelines.items()}, {k: t.queue for k, t in timelines.items()},
                             capacity, colours, axis, x_range)
        parts = [note("One time axis: pan or zoom any plot and all follow; click a legend entry to hide it."), steps]
    occupancies = {label: t.occupancy for label, t in timelines.items()
                   if t.occupancy is not None and t.occupancy.shape[1] > 1}
    if occupancies:
        parts.append(occupancy_selector(occupancies, capacity, x_range=x_range, axis=axis,
                                        allocation_kind=allocation_kind, targets=targets))
    all_notes = [f"{label}: {', '.join(t.notes)}" for label, t in timelines.items() if t.notes]
    if all_notes:
        parts.append(note("Downsampled for display (time-averaged into at most 1,000 points per series; "
                          "zooming in does not add detail) from: "
                          + "; ".join(all_notes) + "."))
    return column(*parts)


#: Height of one run's band in the daily views, as a share of its row (the rest separates the rows).
BAND = 0.85


def _daily_panels(timelines: Mapping[str, PolicyTimelines], capacity: int, colours: Mapping[str, str],
                  axis: TimeAxis, x_range: Range1d, zoom: tuple[float, float] | None) -> list[LayoutDOM]:
    """Per metric, one figure with a row per run (small multiples sharing the time axis: one Bokeh
    figure, not one per run, which the browser builds in 100-250 ms each): daily mean + min-max band;
    then the raw steps of every run over the zoom window."""
    parts: list[LayoutDOM] = [note(
        "Long trace: one row per run on one time axis. Line: the daily time-weighted mean; band: the "
        "lowest to highest value during that day" + (f" (days in {axis.tz})" if axis.calendar else " (24-hour days from the first submit)")
        + ". Pan or zoom and every plot follows. The raw steps of every run are drawn below for the zoom window.")]
    peak = max(float(t.queue_daily["high"].max()) if t.queue_daily is not None and len(t.queue_daily) else 0.0
               for t in timelines.values())
    queue_top = max(1.0, peak)
    parts.append(_daily_rows(
        f"Daily mean and min–max per run: utilization (each row from 0 to 100 % of the machine), then queue length "
        f"(each row from 0 to {queue_top:,.0f} jobs waiting)", timelines,
        [("Utilization", "busy_daily", float(capacity)), ("Queue length (jobs waiting)", "queue_daily", queue_top)],
        colours, axis, x_range))
    if zoom is not None:
        parts += _raw_window(timelines, capacity, colours, axis, zoom)
    return parts


#: Rows between two metrics' blocks in the daily view (room for the block's name).
BLOCK_GAP = 0.6


def _daily_rows(title: str, timelines: Mapping[str, PolicyTimelines], blocks: Sequence[tuple[str, str, float]],
                colours: Mapping[str, str], axis: TimeAxis, x_range: Range1d) -> figure:
    """ONE figure of blocks (one per metric: name, PolicyTimelines attribute, full scale), each a row per run,
    top to bottom; row r spans [r, r + BAND] for values 0..scale."""
    labels = list(timelines)
    rows = len(labels)
    first_rows = [k * (rows + BLOCK_GAP) + BLOCK_GAP for k in range(len(blocks))]
    fig = _time_figure(title, x_range, axis, height=int(70 + 50 * (rows + BLOCK_GAP) * len(blocks)), legend=False)
    fig.y_range = Range1d(first_rows[-1] + rows + 0.05, -0.1)   # the first block at the top
    ticks: dict[float, str] = {}
    bands: dict[str, list] = {}
    means: dict[str, list] = {"xs": [], "ys": [], "colour": []}
    for block, ((what, attribute, scale), first_row) in enumerate(zip(blocks, first_rows)):
        fig.add_layout(Label(x=4, x_units="screen", y=first_row - 0.08, text=what, text_font_size="12px",
                             text_font_style="bold", text_baseline="bottom"))
        for i, label in enumerate(labels):
            daily = getattr(timelines[label], attribute)
            base = first_row + i + BAND                # the row's zero line (y grows downwards)
            left = np.asarray(axis.x(daily["start"].to_numpy(float)))
            mean = base - BAND * daily["mean"].to_numpy(float) / scale
            part = {"left": left, "right": np.asarray(axis.x(daily["end"].to_numpy(float))),
                    "low": base - BAND * daily["low"].to_numpy(float) / scale,
                    "high": base - BAND * daily["high"].to_numpy(float) / scale,
                    "mean_value": daily["mean"].to_numpy(float), "low_value": daily["low"].to_numpy(float),
                    "high_value": daily["high"].to_numpy(float),
                    "run": np.full(len(daily), i, dtype=np.int8), "what": np.full(len(daily), block, dtype=np.int8)}
            for key, values in part.items():
                bands.setdefault(key, []).append(values)
            xs, ys = step_points(np.append(left, part["right"][-1:]) if len(left) else left,
                                 np.append(mean, mean[-1:]) if len(mean) else mean)
            means["xs"].append(xs)
            means["ys"].append(ys)
            means["colour"].append(colours[label])
            ticks[first_row + i + BAND / 2] = label
    # ONE renderer for every run's bands and one for every daily mean (a renderer is a view for the browser to
    # build and paint; 26 of them cost more than the 4,000 bands); numbers, not strings, per band
    source = ColumnDataSource({key: np.concatenate(values) for key, values in bands.items()})
    shown = fig.quad(left="left", right="right", bottom="low", top="high", fill_alpha=0.22, line_color=None,
                     fill_color={"field": "run", "transform": LinearColorMapper(
                         palette=[colours[label] for label in labels], low=-0.5, high=rows - 0.5)}, source=source)
    fig.multi_line("xs", "ys", color="colour", line_width=1.5, source=ColumnDataSource(means))
    fig.hspan(y=[first + i + BAND for first in first_rows for i in range(rows)], line_color="#bbb", line_width=1)
    fig.add_tools(HoverTool(renderers=[shown], tooltips=[("run", "@run{custom}"), ("", "@what{custom}"),
                                                         ("mean", "@mean_value{0,0.0}"), ("min", "@low_value{0,0.0}"),
                                                         ("max", "@high_value{0,0.0}")],
                            formatters={"@run": run_names(labels), "@what": run_names([b[0] for b in blocks])}))
    fig.yaxis.ticker = FixedTicker(ticks=sorted(ticks), minor_ticks=[])
    fig.yaxis.major_label_overrides = ticks
    fig.ygrid.visible = False
    return fig


def _raw_window(timelines: Mapping[str, PolicyTimelines], capacity: int, colours: Mapping[str, str],
                axis: TimeAxis, zoom: tuple[float, float]) -> list[LayoutDOM]:
    start, end = zoom
    x_range = Range1d(*axis.x(np.array([start, end])))
    window = f"{axis.text(start)} to {axis.text(end)}"
    steps = steps_figure(f"Raw steps, {window}: " + ", ".join(timelines),
                         {k: t.busy_raw for k, t in timelines.items() if t.busy_raw is not None},
                         {k: t.queue_raw for k, t in timelines.items() if t.queue_raw is not None},
                         capacity, colours, axis, x_range)
    return [Div(text=f"<b>Zoom: every step of every run, {html.escape(window)}</b> (the window is the Gantt "
                     "window's start and end above)"), steps]


def occupancy_names(occupancies: Sequence[pd.DataFrame], targets: Mapping[str, float] | None = None) -> list:
    """Every allocation column of the given occupancy frames, targeted ones first (stack order)."""
    names: list = []
    for frame in occupancies:
        names += [c for c in frame.columns if c != "time" and c not in names]
    if "other" in names:  # the remainder always on top
        names = [n for n in names if n != "other"] + ["other"]
    targeted = {str(k) for k in (targets or {})}
    return [n for n in names if str(n) in targeted] + [n for n in names if str(n) not in targeted]


def occupancy_data(occupancy: pd.DataFrame, names: Sequence, axis: TimeAxis) -> dict[str, np.ndarray]:
    """Step corner points of each allocation as column band<i> (zeros where the frame lacks it), and
    their total; columns are numbered, not named, so no allocation name can collide with x or total."""
    times = occupancy["time"].to_numpy(dtype=float)
    xs, total = step_points(times, np.zeros(len(times)))
    data: dict[str, np.ndarray] = {"x": axis.x(xs)}
    for i, name in enumerate(names):
        values = occupancy[name].to_numpy(dtype=float) if name in occupancy.columns else np.zeros(len(times))
        data[f"band{i}"] = step_points(times, values)[1]
        total = total + data[f"band{i}"]
    data["total"] = total
    return data


def occupancy_selector(occupancies: Mapping[str, pd.DataFrame], capacity: int, *, x_range: Range1d, axis: TimeAxis,
                       allocation_kind: str, targets: Mapping[str, float] | None = None) -> LayoutDOM:
    """ONE stacked occupancy plot with a button per policy that swaps its data in the browser.

    One figure instead of one per policy: each Bokeh figure costs the browser 100–250 ms to build,
    and the policies share allocations, colours and the time axis, so only the data differs.
    """
    labels = list(occupancies)
    names = occupancy_names(list(occupancies.values()), targets)
    first = labels[0]
    title = f"Processors in use by {allocation_kind} — {{}}"
    fig = occupancy_figure(occupancies[first], capacity, x_range=x_range, axis=axis, title=title.format(first),
                           targets=targets, name_prefix=f"{allocation_kind} ", names=names)
    if len(labels) == 1:
        return fig
    shown = fig.select_one({"name": "occupancy"})
    sources = {label: ColumnDataSource(occupancy_data(frame, names, axis)) for label, frame in occupancies.items()}
    sources[first] = shown
    buttons = RadioButtonGroup(labels=labels, active=0)
    buttons.js_on_change("active", CustomJS(
        args={"shown": shown, "sources": [sources[label] for label in labels], "labels": labels,
              "title": fig.title, "template": title},
        code="shown.data = sources[this.active].data; title.text = template.replace('{}', labels[this.active]);"))
    return column(row(Div(text=f"Occupancy by {html.escape(allocation_kind) or 'allocation'} under:"), buttons), fig)


def occupancy_figure(occupancy: pd.DataFrame, capacity: int, *, x_range: Range1d | None, axis: TimeAxis,
                     title: str, targets: Mapping[str, float] | None = None, name_prefix: str = "",
                     names: Sequence | None = None) -> figure:
    """Stacked step areas of processors in use per allocation (`names` order = stack order)."""
    names = list(names) if names is not None else occupancy_names([occupancy], targets)
    targets = {str(k): float(v) for k, v in (targets or {}).items()}
    palette = allocation_colours(names)
    times = occupancy["time"].to_numpy(dtype=float)
    source = ColumnDataSource(occupancy_data(occupancy, names, axis), name="occupancy")
    fig = _time_figure(title, x_range, axis, height=260)
    fig.y_range = Range1d(0, capacity * 1.05)
    fig.yaxis.axis_label = "processors"
    fig.varea_stack(stackers=[f"band{i}" for i in range(len(names))], x="x", source=source, color=[palette[n] for n in names],
                    legend_label=[str(n) if n == "other" else f"{name_prefix}{n}" for n in names], alpha=0.85)
    # One invisible band under everything carries the hover: a tooltip per stacked band costs the
    # browser a view each, and the readout (time, processors at the pointer) is the same for all.
    total = fig.varea(x="x", y1=0, y2="total", source=source, fill_alpha=0)
    fig.add_layout(Span(location=capacity, dimension="width", line_color="#333", line_width=1))
    cumulative = 0.0
    for name in names:
        share = targets.get(str(name))
        if share is None:
            break  # targeted allocations sit at the bottom of the stack
        cumulative += float(share)
        fig.line(list(axis.x(np.array([times.min(), times.max()]))), [cumulative * capacity] * 2,
                 line_dash="dashed", line_width=2, color=palette[name], legend_label=f"target up to {name_prefix}{name}")
    when = ("time", "$x{%F %H:%M}") if axis.calendar else ("time", "$x{0.00}")
    fig.add_tools(HoverTool(renderers=[total], tooltips=[when, ("processors", "$y{0,0}")],
                            formatters={"$x": "datetime"} if axis.calendar else {}))
    return fig
