"""Sweep results: each metric against the swept parameter's values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, LayoutDOM, NumeralTickFormatter

from .style import POLICY_PALETTE, heading, new_figure, note

SWEEP_METRICS: tuple[tuple[str, str], ...] = (
    ("mean_wait", "mean wait (s)"),
    ("mean_bsld", "mean bounded slowdown"),
    ("utilization", "utilization"),
    ("mean_abs_skip", "mean |skipping count|"),
)


def value_label(value: object) -> str:
    """"∞" for infinity/None (the registry's unbounded values), else the value as typed."""
    if value is None:
        return "∞"
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    if np.isinf(number):
        return "∞"
    return f"{int(number)}" if number.is_integer() else f"{number:g}"


def sweep_trend(parameter: str, values: Sequence[object], summaries: Sequence[Mapping[str, float] | None], *,
                metrics: Sequence[tuple[str, str]] = SWEEP_METRICS) -> LayoutDOM:
    """One small plot per metric: the metric at each swept value, in sweep order.

    The x axis is categorical (sweep order) because sweeps mix scales and ∞. A run that has no
    summary (failed, still running) is a gap in the line and is named in the note.
    """
    labels = [value_label(v) for v in values]
    x_range = FactorRange(*labels)
    figs = []
    for i, (key, title) in enumerate(metrics):
        y = np.array([_metric(s, key) for s in summaries], dtype=float)
        fig = new_figure(f"{title} vs {parameter}", width=440, height=260, x_range=x_range)
        source = ColumnDataSource({"x": labels, "y": y})
        colour = POLICY_PALETTE[i % len(POLICY_PALETTE)]
        fig.line("x", "y", source=source, color=colour, line_width=2)
        fig.scatter("x", "y", source=source, color=colour, size=8)
        fig.xaxis.axis_label = parameter
        fig.yaxis.axis_label = title
        if key == "utilization":
            fig.yaxis.formatter = NumeralTickFormatter(format="0%")
        fig.add_tools(HoverTool(tooltips=[(parameter, "@x"), (title, "@y{0,0.00}")]))
        figs.append(fig)
    grid = column(*[row(*figs[i:i + 2]) for i in range(0, len(figs), 2)])
    missing = [label for label, s in zip(labels, summaries) if not s]
    parts: list[LayoutDOM] = [heading(f"Sweep over {parameter}"), grid]
    if missing:
        parts.append(note(f"No result yet (or failed) for {parameter} = {', '.join(missing)}: gaps in the lines."))
    return column(*parts)


def _metric(summary: Mapping[str, float] | None, key: str) -> float:
    try:
        return float(summary[key]) if summary else float("nan")
    except (KeyError, TypeError, ValueError):
        return float("nan")
