"""Sweep results: each metric against the swept parameter's values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, LayoutDOM, Legend, NumeralTickFormatter

from engine.api import metric_heading

from .labels import HALF_PLOT_PX, fit_category_axis
from .style import new_figure, note, policy_colours

#: (summary metric, its name with the unit of the y axis), names from engine.metrics.units
SWEEP_METRICS: tuple[tuple[str, str], ...] = tuple(
    (code, metric_heading(code)) for code in ("mean_wait", "mean_bsld", "utilization", "mean_abs_skip"))

#: the deadline scenario's figures a deadline-share sweep adds: they differ per share for every policy,
#: also for one run once (EASY, conservative), whose figures are derived at each share from its one
#: schedule (webapp.experiments.tasks.deadlines_per_share)
DEADLINE_SWEEP_METRICS: tuple[tuple[str, str], ...] = tuple(
    (code, metric_heading(code)) for code in ("mean_wait_regular", "deadline_misses"))

Summary = Mapping[str, float] | None


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


def sweep_trend(parameter: str, values: Sequence[object], series: Mapping[str, Sequence[Summary]], *,
                baselines: Mapping[str, Summary] | None = None,
                derived: Mapping[str, Sequence[Summary]] | None = None,
                metrics: Sequence[tuple[str, str]] = SWEEP_METRICS) -> LayoutDOM:
    """One small plot per metric: each swept policy's metric at each value, in sweep order.

    `series[policy]` holds one summary per value (None: failed or not done yet — a gap, named in the
    note). `baselines` are the experiment's runs that were not swept, drawn as dashed horizontal lines;
    `derived[policy]`, where one of them has it, holds figures derived from its one run at each value
    (one summary per value: a deadline-share sweep's deadline figures, which differ per share), drawn
    as a dashed line through the values for the metrics it has.
    The x axis is categorical (sweep order) because sweeps mix scales and ∞.
    """
    labels = [value_label(v) for v in values]
    x_range = FactorRange(*labels)
    colours = policy_colours([*series, *(baselines or {})])
    figs = []
    for key, title in metrics:
        # the legend below takes a line per entry from the plot's height: the plot keeps its 200 px
        fig = new_figure(f"{title} vs {parameter}", width=440, height=200 + 60 + 22 * (len(series) + len(baselines or {})),
                         x_range=x_range)
        fig.add_layout(Legend(click_policy="hide", label_text_font_size="10px"), "below")
        for policy, summaries in series.items():
            source = ColumnDataSource({"x": labels, "y": np.array([_metric(s, key) for s in summaries], float)})
            fig.line("x", "y", source=source, color=colours[policy], line_width=2, legend_label=policy)
            fig.scatter("x", "y", source=source, color=colours[policy], size=8, legend_label=policy)
        for policy, summary in (baselines or {}).items():
            per_value = derived_at((derived or {}).get(policy), key)
            if per_value is not None:   # run once, but this figure differs per value: derived at each
                source = ColumnDataSource({"x": labels, "y": per_value})
                fig.line("x", "y", source=source, color=colours[policy], line_dash="dashed", line_width=2,
                         legend_label=f"{policy} (run once, per {parameter})")
                fig.scatter("x", "y", source=source, color=colours[policy], size=7, marker="square",
                            legend_label=f"{policy} (run once, per {parameter})")
                continue
            level = _metric(summary, key)
            if np.isfinite(level):
                fig.line([labels[0], labels[-1]], [level, level], color=colours[policy], line_dash="dashed",
                         legend_label=f"{policy} (not swept)")
        fig.xaxis.axis_label = parameter
        fit_category_axis(fig.xaxis[0], labels, HALF_PLOT_PX)   # two plots a row
        fig.yaxis.axis_label = title
        if key == "utilization":
            fig.yaxis.formatter = NumeralTickFormatter(format="0%")
        fig.add_tools(HoverTool(tooltips=[(parameter, "@x"), (title, "@y{0,0.00}")]))
        figs.append(fig)
    # rows and column stretch too: stretching figures in a fixed-size row were squeezed to a few pixels
    grid = column(*[row(*figs[i:i + 2], sizing_mode="stretch_width") for i in range(0, len(figs), 2)],
                  sizing_mode="stretch_width")
    parts: list[LayoutDOM] = [grid]
    missing = [f"{policy} at {label}" for policy, summaries in series.items()
               for label, s in zip(labels, summaries) if not s]
    if missing:
        parts.append(note(f"No result yet (or failed) for {', '.join(missing)}: gaps in the lines."))
    return column(*parts, sizing_mode="stretch_width")


def derived_at(summaries: Sequence[Summary] | None, key: str) -> np.ndarray | None:
    """The figure ``key`` of a run the sweep ran once at each swept value, where it was derived per value
    (``summaries``: one per value); None where it was not (the figure is the same at every value)."""
    if not summaries or not any(summary and key in summary for summary in summaries):
        return None
    return np.array([_metric(summary, key) for summary in summaries], float)


def _metric(summary: Summary, key: str) -> float:
    try:
        value = summary[key] if summary else None
        return float(value) if value is not None else float("nan")
    except (KeyError, TypeError, ValueError):
        return float("nan")
