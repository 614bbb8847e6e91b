"""Pure figure builders: DataFrames and dicts in, Bokeh layouts out (no Django, no I/O)."""

from __future__ import annotations

from .deadlines import deadline_figures
from .distributions import ecdf, wait_cdf_figure
from .fairness import fairness_figure
from .forest import forest_figure, forest_frame, interval_texts
from .gantt import GanttWindow, gantt_figure
from .heatmaps import grid_edges, mean_wait_grid, ratio_heatmap, wait_heatmaps
from .metrics_table import metrics_table, metrics_table_html
from .style import policy_colours
from .sweep import sweep_trend
from .timelines import PolicyTimelines, linked_timelines
from .trace import trace_characterization

__all__ = [
    "GanttWindow", "PolicyTimelines", "deadline_figures", "ecdf",
    "forest_figure", "forest_frame", "interval_texts", "fairness_figure", "gantt_figure", "grid_edges", "linked_timelines",
    "mean_wait_grid", "metrics_table", "metrics_table_html", "policy_colours", "ratio_heatmap", "sweep_trend", "trace_characterization",
    "wait_cdf_figure", "wait_heatmaps",
]
