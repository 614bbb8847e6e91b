"""The forest plot of a replicated comparison (issue 26): every pair of policies x metric at a glance,
the difference with its bootstrap confidence interval as a horizontal bar, and the zero line.

Differences are relative (b against a, in %), so metrics of different units share one axis; the
engine's report (engine.api.combine_replicates) gives them with their intervals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, HoverTool, LayoutDOM, Span

from engine.api import metric_label

from .style import new_figure, note

#: the frame forest_figure draws, one row per pair x metric
FOREST_COLUMNS = ["row", "a", "b", "metric", "relative", "low", "high", "told", "verdict"]


def forest_frame(report: Mapping[str, Any], replicate_set: str | None = None) -> pd.DataFrame:
    """The report's pairs of one set (default: the first) as FOREST_COLUMNS: relative difference and
    interval in % (b against a), ``told`` whether the interval leaves zero out."""
    chosen = replicate_set or (report["sets"][0]["name"] if report.get("sets") else None)
    rows = []
    for pair in report.get("pairs", []):
        if pair.get("set") != chosen:
            continue
        low, high = pair.get("relative_ci") or (None, None)
        relative = pair.get("relative")
        rows.append({"row": f"{pair['b']} vs {pair['a']}: {metric_label(pair['metric'])}", "a": pair["a"],
                     "b": pair["b"], "metric": pair["metric"], "relative": _percent(relative),
                     "low": _percent(low), "high": _percent(high), "told": bool(pair.get("told_from_noise")),
                     "verdict": pair.get("verdict", "")})
    return pd.DataFrame(rows, columns=FOREST_COLUMNS)


def _percent(value: Any) -> float:
    return float("nan") if value is None else 100.0 * float(value)


def forest_figure(frame: pd.DataFrame, *, title: str = "Differences with their 95 % intervals",
                  width: int = 900) -> LayoutDOM:
    """One horizontal bar per row of ``frame`` (forest_frame's): the interval, a dot at the
    difference, dark when the interval leaves zero out; a vertical line at zero."""
    shown = frame.dropna(subset=["relative", "low", "high"])
    rows = list(dict.fromkeys(shown["row"]))[::-1]          # first pair at the top
    fig = new_figure(title, width=width, height=80 + 26 * max(1, len(rows)), y_range=rows or ["(none)"],
                     tools="pan,wheel_zoom,box_zoom,reset,save")
    source = ColumnDataSource({
        "row": list(shown["row"]), "relative": list(shown["relative"]), "low": list(shown["low"]),
        "high": list(shown["high"]), "verdict": list(shown["verdict"]),
        "colour": ["#1f4e79" if told else "#9aa5b1" for told in shown["told"]]})
    fig.hbar(y="row", left="low", right="high", height=0.35, color="colour", alpha=0.8, source=source)
    fig.scatter(x="relative", y="row", size=8, color="colour", line_color="white", source=source)
    fig.add_layout(Span(location=0, dimension="height", line_color="#c0392b", line_width=1.5, line_dash="dashed"))
    fig.xaxis.axis_label = "difference, b against a (%)"
    fig.add_tools(HoverTool(tooltips=[("", "@row"), ("difference", "@relative{0,0.0} %"),
                                      ("95 % interval", "@low{0,0.0} % to @high{0,0.0} %"), ("verdict", "@verdict")]))
    left_out = len(frame) - len(shown)
    text = ("Dark: the interval leaves zero out (a difference we can tell from noise); grey: it does not. "
            "Below zero, b's value is lower than a's.")
    if left_out:
        text += f" {left_out} pair(s) without an interval (too few replicates with values) are not drawn."
    return column(fig, note(text, width=width))


def interval_texts(report: Mapping[str, Any], baseline: str) -> dict[tuple[str, str], str]:
    """(policy, metric) -> "95 % CI −14.0 to −4.0 %": each policy's change against ``baseline`` as the
    metrics table shows it (value / baseline − 1), from the first set's pairs (a pair listed the
    other way round is turned: 1/(1+r) − 1 is monotone, so a percentile interval turns with it)."""
    chosen = report["sets"][0]["name"] if report.get("sets") else None
    confidence = round(100 * float(report.get("bootstrap", {}).get("confidence", 0.95)))
    texts: dict[tuple[str, str], str] = {}
    for pair in report.get("pairs", []):
        if pair.get("set") != chosen or not pair.get("relative_ci") or None in pair["relative_ci"]:
            continue
        low, high = (float(v) for v in pair["relative_ci"])
        if pair["a"] == baseline:
            other = pair["b"]
        elif pair["b"] == baseline and low > -1 and high > -1:
            other, (low, high) = pair["a"], (1 / (1 + high) - 1, 1 / (1 + low) - 1)
        else:
            continue
        if np.isfinite(low) and np.isfinite(high):
            texts[(other, pair["metric"])] = (f"{confidence} % CI {100 * low:+,.1f} to {100 * high:+,.1f} %"
                                              .replace("-", "−"))
    return texts
