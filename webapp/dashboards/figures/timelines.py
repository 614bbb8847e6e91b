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
from bokeh.models import (ColumnDataSource, CustomJS, Div, HoverTool, LayoutDOM, Legend, NumeralTickFormatter,
                          RadioButtonGroup, Range1d, Span)
from bokeh.plotting import figure

from .style import (TIME_TOOLS, allocation_colours, new_figure, note, policy_colours,
                    time_axis_label, time_unit_for_span)


@dataclass(frozen=True)
class PolicyTimelines:
    """Step series of one run (each value holds from its time until the next row's time)."""

    busy: pd.DataFrame                        # columns time, value: processors in use
    queue: pd.DataFrame                       # columns time, value: jobs waiting
    occupancy: pd.DataFrame | None = None     # column time + one column per allocation (processors)
    notes: list[str] = field(default_factory=list)   # e.g. "downsampled from 480,000 steps"


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


def _time_figure(title: str, x_range: Range1d | None, unit: float, height: int = 230) -> figure:
    kwargs = {"x_range": x_range} if x_range is not None else {}
    fig = new_figure(title, height=height, tools=TIME_TOOLS, **kwargs)
    fig.xaxis.axis_label = time_axis_label(unit)
    fig.add_layout(Legend(click_policy="hide", label_text_font_size="11px"), "right")
    return fig


def _step_lines(fig: figure, series: Mapping[str, pd.DataFrame], colours: Mapping[str, str],
                unit: float, scale: float = 1.0) -> None:
    for label, frame in series.items():
        source = ColumnDataSource({"x": frame["time"].to_numpy(dtype=float) / unit,
                                   "y": frame["value"].to_numpy(dtype=float) / scale})
        fig.step("x", "y", source=source, mode="after", color=colours[label], line_width=1.5,
                 legend_label=label)


def linked_timelines(timelines: Mapping[str, PolicyTimelines], capacity: int, *,
                     allocation_kind: str = "group",
                     targets: Mapping[str, float] | None = None,
                     colours: Mapping[str, str] | None = None) -> LayoutDOM:
    """Utilization, queue length and a stacked occupancy plot (a button per policy) sharing one x_range.

    `targets` maps an allocation name to its target share of the machine (0..1); the occupancy
    plots stack the targeted allocations at the bottom and draw a dashed line at the cumulative
    target up to each of them, so a band whose top edge stays on its line is on target.
    """
    colours = dict(colours or policy_colours(timelines))
    lo, hi = _span_seconds(timelines)
    unit = time_unit_for_span(hi - lo)
    x_range = Range1d(lo / unit, hi / unit)

    utilization = _time_figure("Utilization (processors in use / machine size)", x_range, unit)
    utilization.y_range = Range1d(0, 1.05)
    utilization.yaxis.formatter = NumeralTickFormatter(format="0%")
    utilization.yaxis.axis_label = "utilization"
    _step_lines(utilization, {k: t.busy for k, t in timelines.items()}, colours, unit, scale=float(capacity))

    queue = _time_figure("Queue length (jobs waiting)", x_range, unit)
    queue.yaxis.axis_label = "jobs waiting"
    _step_lines(queue, {k: t.queue for k, t in timelines.items()}, colours, unit)

    parts: list[LayoutDOM] = [note("One time axis: pan or zoom any plot and all follow; click a legend entry to hide it."),
                               utilization, queue]
    occupancies = {label: t.occupancy for label, t in timelines.items()
                   if t.occupancy is not None and t.occupancy.shape[1] > 1}
    if occupancies:
        parts.append(occupancy_selector(occupancies, capacity, x_range=x_range, unit=unit,
                                        allocation_kind=allocation_kind, targets=targets))
    all_notes = [f"{label}: {', '.join(t.notes)}" for label, t in timelines.items() if t.notes]
    if all_notes:
        parts.append(note("Downsampled for display (time-averaged into at most 1,000 points per series; "
                          "zooming in does not add detail) from: "
                          + "; ".join(all_notes) + "."))
    return column(*parts)


def occupancy_names(occupancies: Sequence[pd.DataFrame], targets: Mapping[str, float] | None = None) -> list:
    """Every allocation column of the given occupancy frames, targeted ones first (stack order)."""
    names: list = []
    for frame in occupancies:
        names += [c for c in frame.columns if c != "time" and c not in names]
    if "other" in names:  # the remainder always on top
        names = [n for n in names if n != "other"] + ["other"]
    targeted = {str(k) for k in (targets or {})}
    return [n for n in names if str(n) in targeted] + [n for n in names if str(n) not in targeted]


def occupancy_data(occupancy: pd.DataFrame, names: Sequence, unit: float) -> dict[str, np.ndarray]:
    """Step corner points of each allocation as column band<i> (zeros where the frame lacks it), and
    their total; columns are numbered, not named, so no allocation name can collide with x or total."""
    times = occupancy["time"].to_numpy(dtype=float)
    xs, total = step_points(times, np.zeros(len(times)))
    data: dict[str, np.ndarray] = {"x": xs / unit}
    for i, name in enumerate(names):
        values = occupancy[name].to_numpy(dtype=float) if name in occupancy.columns else np.zeros(len(times))
        data[f"band{i}"] = step_points(times, values)[1]
        total = total + data[f"band{i}"]
    data["total"] = total
    return data


def occupancy_selector(occupancies: Mapping[str, pd.DataFrame], capacity: int, *, x_range: Range1d, unit: float,
                       allocation_kind: str, targets: Mapping[str, float] | None = None) -> LayoutDOM:
    """ONE stacked occupancy plot with a button per policy that swaps its data in the browser.

    One figure instead of one per policy: each Bokeh figure costs the browser 100–250 ms to build,
    and the policies share allocations, colours and the time axis, so only the data differs.
    """
    labels = list(occupancies)
    names = occupancy_names(list(occupancies.values()), targets)
    first = labels[0]
    title = f"Processors in use by {allocation_kind} — {{}}"
    fig = occupancy_figure(occupancies[first], capacity, x_range=x_range, unit=unit, title=title.format(first),
                           targets=targets, name_prefix=f"{allocation_kind} ", names=names)
    if len(labels) == 1:
        return fig
    shown = fig.select_one({"name": "occupancy"})
    sources = {label: ColumnDataSource(occupancy_data(frame, names, unit)) for label, frame in occupancies.items()}
    sources[first] = shown
    buttons = RadioButtonGroup(labels=labels, active=0)
    buttons.js_on_change("active", CustomJS(
        args={"shown": shown, "sources": [sources[label] for label in labels], "labels": labels,
              "title": fig.title, "template": title},
        code="shown.data = sources[this.active].data; title.text = template.replace('{}', labels[this.active]);"))
    return column(row(Div(text=f"Occupancy by {html.escape(allocation_kind) or 'allocation'} under:"), buttons), fig)


def occupancy_figure(occupancy: pd.DataFrame, capacity: int, *, x_range: Range1d | None, unit: float,
                     title: str, targets: Mapping[str, float] | None = None, name_prefix: str = "",
                     names: Sequence | None = None) -> figure:
    """Stacked step areas of processors in use per allocation (`names` order = stack order)."""
    names = list(names) if names is not None else occupancy_names([occupancy], targets)
    targets = {str(k): float(v) for k, v in (targets or {}).items()}
    palette = allocation_colours(names)
    times = occupancy["time"].to_numpy(dtype=float)
    source = ColumnDataSource(occupancy_data(occupancy, names, unit), name="occupancy")
    fig = _time_figure(title, x_range, unit, height=260)
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
        fig.line([float(times.min()) / unit, float(times.max()) / unit], [cumulative * capacity] * 2,
                 line_dash="dashed", line_width=2, color=palette[name], legend_label=f"target up to {name_prefix}{name}")
    fig.add_tools(HoverTool(renderers=[total], tooltips=[("time", "$x{0.00}"), ("processors", "$y{0,0}")]))
    return fig
