"""The study's trend plot: one summary metric against one swept parameter, one line per policy
(and per value of the other swept parameters). A pure function of the data, like the dashboards'.

The x axis is categorical in grid order (grids mix scales and ∞). Metrics in seconds spanning more
than two decades get a log y axis with round-duration ticks: a saturated load point otherwise
flattens every other point onto the axis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, LayoutDOM, Legend, NumeralTickFormatter

from webapp.dashboards.figures.labels import FULL_PLOT_PX, LEGEND_PX, fit_category_axis
from webapp.dashboards.figures.style import duration_axis, duration_formatter, new_figure, note, policy_colours
from webapp.dashboards.figures.sweep import value_label

#: Metrics in seconds (drawn with duration ticks).
SECONDS = ("weighted_turnaround", "mean_wait", "median_wait", "p95_wait", "max_wait", "mean_response", "makespan")
SHARES = ("utilization",)


def study_trend(parameter: str, values: Sequence[object], series: Mapping[str, Sequence[Mapping | None]],
                metric: str, title: str) -> LayoutDOM:
    """``series[line]`` holds one summary per value of ``parameter`` (None: no result there)."""
    labels = [value_label(v) for v in values]
    table = {line: np.array([_metric(s, metric) for s in summaries], dtype=float) for line, summaries in series.items()}
    finite = np.concatenate([y[np.isfinite(y)] for y in table.values()] or [np.array([])])
    log_y = (metric in SECONDS and finite.size > 0 and finite.min() > 0 and finite.max() / finite.min() > 100)
    fig = new_figure(f"{title} against {parameter}", height=420, x_range=FactorRange(*labels),
                     y_axis_type="log" if log_y else "linear")
    legend = Legend(click_policy="hide", label_text_font_size="11px")
    fig.add_layout(legend, "right")
    colours = policy_colours(list(table))
    for line, y in table.items():
        source = ColumnDataSource({"x": labels, "y": y, "line": [line] * len(labels)})
        fig.line("x", "y", source=source, color=colours[line], line_width=2, legend_label=line)
        fig.scatter("x", "y", source=source, color=colours[line], size=7, legend_label=line)
    fig.xaxis.axis_label = parameter
    fit_category_axis(fig.xaxis[0], labels, FULL_PLOT_PX - LEGEND_PX)   # the legend on the right
    fig.yaxis.axis_label = title + (" (log scale)" if log_y else "")
    if metric in SECONDS:
        if log_y:
            duration_axis(fig.yaxis)
        else:
            fig.yaxis.formatter = duration_formatter()
    elif metric in SHARES:
        fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fig.add_tools(HoverTool(tooltips=[("line", "@line"), (parameter, "@x"), (title, "@y{0,0.00}")]))
    parts: list[LayoutDOM] = [fig]
    missing = [f"{line} at {label}" for line, y in table.items() for label, v in zip(labels, y) if not np.isfinite(v)]
    if missing:
        parts.append(note(f"No result (yet, or failed) for {', '.join(missing[:12])}"
                          f"{' and more' if len(missing) > 12 else ''}: gaps in the lines."))
    return column(*parts)


def _metric(summary: Mapping | None, key: str) -> float:
    value = (summary or {}).get(key)
    try:
        return float(value) if value is not None else float("nan")
    except (TypeError, ValueError):
        return float("nan")
