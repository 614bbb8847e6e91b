"""Mean wait by job size × runtime (logarithmic bins) per policy, and the ratio between two policies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import (ColorBar, ColumnDataSource, FixedTicker, HoverTool, Label, LayoutDOM, LogColorMapper,
                          Range1d)
from bokeh.palettes import RdBu11, Viridis256

from .style import (DURATION_TICKS, bin_index, count_axis, duration_axis, duration_formatter, duration_tick_text,
                    log_edges, log_tick_values, new_figure, note)

BINS = 15
RATIO_OFFSET_SECONDS = 1.0


@dataclass(frozen=True)
class WaitGrid:
    """mean[r, s]: mean wait of jobs in runtime bin r and size bin s (NaN where no job)."""

    size_edges: np.ndarray
    runtime_edges: np.ndarray
    mean: np.ndarray
    count: np.ndarray


def grid_edges(schedules: Mapping[str, pd.DataFrame], bins: int = BINS) -> tuple[np.ndarray, np.ndarray]:
    """Logarithmic size and runtime edges shared by every policy (same jobs, same cells)."""
    procs = np.concatenate([s["procs"].to_numpy(dtype=float) for s in schedules.values()])
    runtime = np.concatenate([s["runtime"].to_numpy(dtype=float) for s in schedules.values()])
    return log_edges(procs, bins), log_edges(runtime, bins)


def mean_wait_grid(schedule: pd.DataFrame, size_edges: np.ndarray, runtime_edges: np.ndarray) -> WaitGrid:
    """Mean wait per (runtime bin, size bin); runtimes under 1 s count in the first runtime bin."""
    n_size, n_runtime = len(size_edges) - 1, len(runtime_edges) - 1
    s = bin_index(schedule["procs"].to_numpy(dtype=float), size_edges)
    r = bin_index(schedule["runtime"].to_numpy(dtype=float), runtime_edges)
    cell = r * n_size + s
    count = np.bincount(cell, minlength=n_size * n_runtime).reshape(n_runtime, n_size)
    total = np.bincount(cell, weights=schedule["wait"].to_numpy(dtype=float),
                        minlength=n_size * n_runtime).reshape(n_runtime, n_size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return WaitGrid(size_edges, runtime_edges, mean, count)


def wait_ratio(a: WaitGrid, b: WaitGrid, offset: float = RATIO_OFFSET_SECONDS) -> np.ndarray:
    """(mean wait under a + offset) / (mean wait under b + offset); the offset keeps 0 s waits finite."""
    return (a.mean + offset) / (b.mean + offset)


def _cells(grid: WaitGrid, values: np.ndarray) -> dict[str, np.ndarray]:
    r, s = np.nonzero(np.isfinite(values))
    return {
        "left": grid.size_edges[s], "right": grid.size_edges[s + 1],
        "bottom": grid.runtime_edges[r], "top": grid.runtime_edges[r + 1],
        "value": values[r, s], "jobs": grid.count[r, s],
    }


def _grid_figure(title: str, grid: WaitGrid, values: np.ndarray, mapper: LogColorMapper, *,
                 value_label: str = "mean wait", value_format: str = "{0,0} s") -> object:
    fig = new_figure(title, width=420, height=380, x_axis_type="log", y_axis_type="log",
                     x_range=Range1d(grid.size_edges[0], grid.size_edges[-1]),
                     y_range=Range1d(grid.runtime_edges[0], grid.runtime_edges[-1]))
    fig.quad(left="left", right="right", bottom="bottom", top="top", source=ColumnDataSource(_cells(grid, values)),
             fill_color={"field": "value", "transform": mapper}, line_color="white", line_width=0.5)
    fig.xaxis.axis_label = "job size (processors, log)"
    fig.yaxis.axis_label = "runtime (log)"
    duration_axis(fig.yaxis)
    count_axis(fig.xaxis)
    fig.grid.visible = False
    fig.add_tools(HoverTool(tooltips=[("size", "@left{0,0}–@right{0,0}"), ("runtime", "@bottom{0,0}–@top{0,0} s"),
                                      (value_label, "@value" + value_format), ("jobs", "@jobs")]))
    return fig


def wait_heatmaps(grids: Mapping[str, WaitGrid]) -> LayoutDOM:
    """Every run's heat map as a small multiple of ONE figure (a Bokeh figure costs the browser 100-250 ms
    to build): panels in rows of up to three, the same bins, axes and colour scale in each."""
    finite = np.concatenate([g.mean[np.isfinite(g.mean)] for g in grids.values()] or [np.ones(1)])
    positive = np.maximum(finite, 1.0)
    mapper = LogColorMapper(palette=Viridis256, low=float(positive.min()), high=float(max(positive.max(), 10.0)))
    first = next(iter(grids.values()))
    x_edges, y_edges = np.log10(first.size_edges), np.log10(first.runtime_edges)
    labels = list(grids)
    columns = 2 if len(labels) in (2, 4) else min(3, len(labels))
    rows = -(-len(labels) // columns)
    width, height = x_edges[-1] - x_edges[0], y_edges[-1] - y_edges[0]
    step_x, step_y = width * (1 + PANEL_GAP), height * (1 + 2 * PANEL_GAP)
    cells: dict[str, list[np.ndarray]] = {}
    fig = new_figure("Mean wait by job size and runtime: " + ", ".join(labels), height=70 + 250 * rows,
                     x_range=Range1d(x_edges[0] - 0.02 * width, x_edges[0] + (columns - 1) * step_x + width * 1.02),
                     y_range=Range1d(y_edges[0] - 0.02 * height, y_edges[0] + (rows - 1) * step_y + height * (1 + PANEL_GAP)))
    x_ticks: dict[float, str] = {}
    y_ticks: dict[float, str] = {}
    for i, (label, grid) in enumerate(grids.items()):
        dx = (i % columns) * step_x
        dy = (rows - 1 - i // columns) * step_y          # the first run top left
        part = _cells(grid, np.maximum(grid.mean, 1.0))
        part.update(x0=np.log10(part["left"]) + dx, x1=np.log10(part["right"]) + dx,
                    y0=np.log10(part["bottom"]) + dy, y1=np.log10(part["top"]) + dy,
                    run=np.full(len(part["value"]), label, dtype=object))
        for key, values in part.items():
            cells.setdefault(key, []).append(values)
        fig.add_layout(Label(x=x_edges[0] + dx, y=y_edges[-1] + dy + 0.03 * height, text=f"Mean wait — {label}",
                             text_font_size="12px", text_font_style="bold", text_baseline="bottom"))
        if i < columns:
            x_ticks.update(_log_ticks(first.size_edges, dx, lambda v: f"{v:,.0f}"))
        if i % columns == 0:
            y_ticks.update(_log_ticks(first.runtime_edges, dy, duration_tick_text, DURATION_TICKS))
    source = ColumnDataSource({key: np.concatenate(values) for key, values in cells.items()})
    fig.quad(left="x0", right="x1", bottom="y0", top="y1", source=source,
             fill_color={"field": "value", "transform": mapper}, line_color="white", line_width=0.5)
    fig.xaxis.ticker = FixedTicker(ticks=list(x_ticks), minor_ticks=[])
    fig.xaxis.major_label_overrides = x_ticks
    fig.yaxis.ticker = FixedTicker(ticks=list(y_ticks), minor_ticks=[])
    fig.yaxis.major_label_overrides = y_ticks
    fig.xaxis.axis_label = "job size (processors, log) in each panel"
    fig.yaxis.axis_label = "runtime (log)"
    fig.grid.visible = False
    fig.add_tools(HoverTool(tooltips=[("run", "@run"), ("size", "@left{0,0}–@right{0,0}"),
                                      ("runtime", "@bottom{0,0}–@top{0,0} s"), ("mean wait", "@value{0,0} s"),
                                      ("jobs", "@jobs")]))
    fig.add_layout(ColorBar(color_mapper=mapper, title="mean wait", width=10, formatter=duration_formatter(),
                            ticker=FixedTicker(ticks=list(DURATION_TICKS), minor_ticks=[])), "right")
    text = (f"{len(first.size_edges) - 1} × {len(first.runtime_edges) - 1} logarithmic bins; empty cells have no jobs; "
            "same bins, axes and colour scale in every map; means under 1 s are coloured as 1 s.")
    return column(fig, note(text))


#: Space between two heat-map panels, as a share of a panel.
PANEL_GAP = 0.12


def _log_ticks(edges: np.ndarray, offset: float, text, candidates=None) -> dict[float, str]:  # noqa: ANN001
    """Round values inside ``edges`` (powers of ten, or ``candidates``) at log10(value) + offset."""
    return {float(np.log10(v)) + offset: text(v) for v in log_tick_values(float(edges[0]), float(edges[-1]), candidates)}


def ratio_heatmap(a_label: str, a: WaitGrid, b_label: str, b: WaitGrid) -> LayoutDOM:
    """(mean wait a + 1 s) / (mean wait b + 1 s) per cell: red where a waits longer, blue where shorter."""
    ratio = wait_ratio(a, b)
    finite = ratio[np.isfinite(ratio)]
    spread = float(np.max(np.abs(np.log10(finite)))) if finite.size else 1.0
    spread = max(spread, 0.3)
    # RdBu11 runs dark blue (low: a waits less) → dark red (high: a waits longer)
    mapper = LogColorMapper(palette=RdBu11, low=10 ** -spread, high=10 ** spread)
    fig = _grid_figure(f"Wait ratio {a_label} / {b_label}", a, ratio, mapper,
                       value_label="ratio", value_format="{0.00}")
    fig.width = 560
    fig.add_layout(ColorBar(color_mapper=mapper, title=f"{a_label} / {b_label}", width=10), "right")
    text = (f"Each cell: (mean wait under {a_label} + 1 s) / (mean wait under {b_label} + 1 s). "
            f"Red: jobs of that size and runtime wait longer under {a_label}; blue: shorter.")
    return column(fig, note(text, width=560))
