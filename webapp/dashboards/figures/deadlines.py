"""The deadline scenario (deadline-based backfilling): regular vs deadline waits, misses, and how much
of their deadline the deadline jobs used. Figures from engine.metrics.deadlines' numbers."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from bokeh.layouts import column
from bokeh.models import (
    ColumnDataSource,
    FactorRange,
    HoverTool,
    LayoutDOM,
    NumeralTickFormatter,
)
from bokeh.transform import factor_cmap

from .style import POLICY_PALETTE, duration_formatter, new_figure, note

GROUPS = ("regular", "deadline")


def deadline_figures(summaries: Mapping[str, Mapping[str, float | None]],
                     usage: Mapping[str, tuple[np.ndarray, np.ndarray]], *, filtered: bool = False) -> LayoutDOM:
    """Mean wait of regular and deadline jobs per policy, misses (24-hour / proportional deadline) per
    policy, and each policy's deadline usage distribution.

    ``summaries[label]``: :func:`engine.metrics.deadlines.deadline_summary`; ``usage[label]``: the
    (counts, edges) of :func:`engine.metrics.deadlines.usage_histogram`. ``filtered``: the regular
    jobs' waits leave out jobs that waited 0 under every policy (said in the note).
    """
    labels = list(summaries)
    waits = _wait_bars(summaries, labels)
    misses = _miss_bars(summaries, labels)
    usage_plot = _usage_lines(usage)
    jobs = max((s.get("deadline_jobs") or 0) for s in summaries.values()) if summaries else 0
    text = (f"{jobs:,} deadline jobs. Misses: jobs ending after their deadline; a 24-hour deadline is a slack of at "
            "most a day (jobs that asked for up to 2.4 h under the paper's rule). Usage: (end - submit) / "
            "(deadline - submit); the last bin (≥ 100 %) holds the misses.")
    if filtered:
        text += " Regular waits leave out the jobs that waited 0 under every policy shown."
    return column(waits, misses, usage_plot, note(text))   # full width: a sweep has a dozen runs


def _bar_height(factors: list) -> int:
    return 60 + 18 * len(factors)


def _wait_bars(summaries: Mapping[str, Mapping], labels: list[str]):
    """Horizontal bars (run labels are long, a sweep has a dozen of them: they read best as rows)."""
    factors = [(label, group) for label in labels for group in GROUPS]
    values = [summaries[label].get(f"mean_wait_{group}") for label, group in factors]
    source = ColumnDataSource({"y": factors, "wait": [np.nan if v is None else v for v in values],
                               "group": [g for _, g in factors]})
    fig = new_figure("mean wait: regular vs deadline jobs", height=_bar_height(factors),
                     y_range=FactorRange(*reversed(factors)))
    fig.hbar(y="y", right="wait", height=0.8, source=source,
             fill_color=factor_cmap("group", palette=[POLICY_PALETTE[0], POLICY_PALETTE[1]], factors=list(GROUPS)))
    fig.x_range.start = 0
    fig.xaxis.formatter = duration_formatter()   # round-duration ticks are for log axes: on this linear one they piled up at 0
    fig.xaxis.axis_label = "mean wait"
    fig.yaxis.group_label_orientation = "horizontal"
    fig.add_tools(HoverTool(tooltips=[("", "@y"), ("mean wait (s)", "@wait{0,0}")]))
    return fig


def _miss_bars(summaries: Mapping[str, Mapping], labels: list[str]):
    kinds = ("24h", "proportional")
    factors = [(label, kind) for label in labels for kind in kinds]
    counts = [summaries[label].get(f"deadline_misses_{kind}") or 0 for label, kind in factors]
    source = ColumnDataSource({"y": factors, "misses": counts, "kind": [k for _, k in factors]})
    fig = new_figure("deadline misses", height=_bar_height(factors), y_range=FactorRange(*reversed(factors)))
    fig.hbar(y="y", right="misses", height=0.8, source=source,
             fill_color=factor_cmap("kind", palette=[POLICY_PALETTE[3], POLICY_PALETTE[2]], factors=list(kinds)))
    fig.x_range.start = 0
    fig.xaxis.formatter = NumeralTickFormatter(format="0,0")
    fig.xaxis.axis_label = "deadline jobs ending after their deadline"
    fig.yaxis.group_label_orientation = "horizontal"
    fig.add_tools(HoverTool(tooltips=[("", "@y"), ("misses", "@misses{0,0}")]))
    return fig


def _usage_lines(usage: Mapping[str, tuple[np.ndarray, np.ndarray]]):
    fig = new_figure("deadline usage: share of deadline jobs per bin", height=max(280, 110 + 24 * len(usage)))
    for i, (label, (counts, edges)) in enumerate(usage.items()):
        total = counts.sum()
        share = counts / total if total else counts.astype(float)
        names = [f"{100 * a:.0f}–{100 * b:.0f} %" if np.isfinite(b) else f"≥ {100 * a:.0f} %"
                 for a, b in zip(edges[:-1], edges[1:])]
        source = ColumnDataSource({"x": np.arange(len(counts)) + 0.5, "share": share, "count": counts, "bin": names})
        colour = POLICY_PALETTE[i % len(POLICY_PALETTE)]
        fig.step("x", "share", source=source, mode="center", color=colour, line_width=2, legend_label=label)
        fig.scatter("x", "share", source=source, color=colour, size=6, legend_label=label)
    fig.xaxis.axis_label = "usage bin (0–10 %, 10–20 %, …, ≥ 100 %)"
    fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fig.legend.click_policy = "hide"
    fig.add_tools(HoverTool(tooltips=[("usage", "@bin"), ("jobs", "@count{0,0}"), ("share", "@share{0.0%}")]))
    return fig
