"""Wait-time distributions per policy."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from bokeh.layouts import column
from bokeh.models import HoverTool, LayoutDOM, Legend, NumeralTickFormatter

from .style import duration_axis, new_figure, note, policy_colours

CDF_POINTS = 2_000


def ecdf(values: np.ndarray, *, max_points: int = CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF as (x, fraction of values <= x), at most `max_points` points.

    Points are kept at distinct values; when there are more than `max_points` of them an evenly
    spaced subset (always including the last, where the CDF is exactly 1) is kept, so the drawn step
    curve is exact at every point it shows.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return np.empty(0), np.empty(0)
    distinct, counts = np.unique(values, return_counts=True)
    fraction = np.cumsum(counts) / values.size
    if distinct.size > max_points:
        keep = np.unique(np.linspace(0, distinct.size - 1, max_points).round().astype(np.int64))
        distinct, fraction = distinct[keep], fraction[keep]
    return distinct, fraction


def wait_cdf_figure(waits: Mapping[str, np.ndarray], *, colours: Mapping[str, str] | None = None,
                    floor_seconds: float = 1.0) -> LayoutDOM:
    """CDF of wait time per policy on a log time axis; waits under `floor_seconds` sit at the floor."""
    colours = dict(colours or policy_colours(waits))
    fig = new_figure("Wait time distribution (CDF)", width=560, height=360, x_axis_type="log")
    fig.add_layout(Legend(click_policy="hide", location="top_left"), "center")
    notes = []
    for label, values in waits.items():
        values = np.asarray(values, dtype=float)
        x, y = ecdf(np.maximum(values, floor_seconds))
        fig.step(x, y, mode="after", color=colours[label], line_width=2, legend_label=label)
        zero = np.count_nonzero(values < floor_seconds)
        if values.size:
            notes.append(f"{label}: {zero / values.size:.0%} of jobs waited under {floor_seconds:g} s")
    fig.xaxis.axis_label = "wait (log)"
    duration_axis(fig.xaxis)
    fig.yaxis.axis_label = "fraction of jobs"
    fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fig.add_tools(HoverTool(tooltips=[("wait ≤", "$x{0,0} s"), ("jobs", "$y{0.0%}")]))
    text = "Waits under 1 s are drawn at 1 s. " + "; ".join(notes) + "."
    return column(fig, note(text, width=560))
