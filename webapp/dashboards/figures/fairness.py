"""Per-user fairness: each user's mean wait and mean bounded slowdown under each policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, LayoutDOM, Legend
from bokeh.transform import dodge

from .labels import FULL_PLOT_PX, LEGEND_PX, fit_category_axis
from .style import (DURATION_TICKS, PLOT_WIDTH, PanelRows, duration_tick_text, log_tick_values, new_figure, note,
                    policy_colours)

TOP_USERS = 25


def top_users(per_user: Mapping[str, pd.DataFrame], *, rank_by: str = "jobs", top: int = TOP_USERS) -> list[str]:
    """The `top` users with the most `rank_by` (the same for every policy: same trace), as strings."""
    first = next(iter(per_user.values()))
    if rank_by in first.columns:
        first = first.sort_values(rank_by, ascending=False, kind="stable")
    return [str(u) for u in first["user"].head(top)]


def fairness_figure(per_user: Mapping[str, pd.DataFrame], *, jain: Mapping[str, float] | None = None,
                    colours: Mapping[str, str] | None = None, rank_by: str = "jobs",
                    top: int = TOP_USERS) -> LayoutDOM:
    """Dot plots (log y) of mean wait and mean bounded slowdown per user, one colour per policy.

    `per_user[label]` has columns user, mean_wait, mean_bsld (and `rank_by` to choose the users shown).
    Both plots share one categorical user axis; `jain` adds each policy's Jain index to its legend.
    """
    colours = dict(colours or policy_colours(per_user))
    known = next(iter(per_user.values()))["user"]
    if (pd.to_numeric(known, errors="coerce").fillna(0) >= 0).sum() < 2:
        return column(note("The trace does not tell users apart (fewer than two user ids), so there is no "
                           "per-user comparison; see the metrics table for the overall figures."))
    users = top_users(per_user, rank_by=rank_by, top=top)
    user_range = FactorRange(*users)
    width = max(700, min(PLOT_WIDTH, 40 * len(users) + 200))   # wider runs off a 1024 px screen
    frames = {label: frame.assign(user=frame["user"].astype(str)).set_index("user").reindex(users)
              for label, frame in per_user.items()}
    # both panels on log scales, each mapped to 0..1 of its panel: one figure instead of two
    scales = {field: _log_scale([np.maximum(f[field].to_numpy(dtype=float), 1.0) for f in frames.values()])
              for field in FIELDS}
    panels = PanelRows(list(FIELDS), 1.0)
    fig = new_figure("Mean wait and mean bounded slowdown per user", width=width, height=panels.height(200),
                     x_range=user_range, y_range=panels.y_range())
    fig.add_layout(Legend(click_policy="hide", label_text_font_size="11px"), "right")
    fit_category_axis(fig.xaxis[0], users, FULL_PLOT_PX - LEGEND_PX)
    fig.xaxis.axis_label = "user (most jobs first)"
    fig.yaxis.axis_label = "log scales"
    n = len(per_user)
    for i, (label, frame) in enumerate(frames.items()):
        offset = (i - (n - 1) / 2) * min(0.8 / max(n, 1), 0.2)
        legend = label if jain is None or label not in jain else f"{label} (Jain {jain[label]:.3f})"
        columns: dict[str, object] = {"user": users, "run": [label] * len(users)}
        for field in FIELDS:
            values = np.maximum(frame[field].to_numpy(dtype=float), 1.0)
            columns[field] = values
            columns[f"{field}_y"] = panels.offset(field) + scales[field].place(values)
        source = ColumnDataSource(columns)
        for field in FIELDS:
            fig.scatter(x=dodge("user", offset, range=user_range), y=f"{field}_y", source=source, size=8,
                        color=colours[label], legend_label=legend, alpha=0.9)
    fig.add_tools(HoverTool(tooltips=[("run", "@run"), ("user", "@user"), ("mean wait", "@mean_wait{0,0} s"),
                                      ("mean bsld", "@mean_bsld{0.00}")]))
    panels.decorate(fig, {"mean_wait": scales["mean_wait"].ticks(DURATION_TICKS, duration_tick_text),
                          "mean_bsld": scales["mean_bsld"].ticks(None, lambda v: f"{v:,.0f}")},
                    {"mean_wait": "Mean wait per user (log)", "mean_bsld": "Mean bounded slowdown per user (log)"})
    total = len(next(iter(per_user.values())))
    text = (f"The {len(users)} users with the most jobs of {total}; mean waits and slowdowns under 1 are drawn at 1 "
            "(the hover shows each user's figures).")
    return column(fig, note(text, width=width))


#: The two panels, top to bottom: per-user columns of engine.metrics.fairness.per_user.
FIELDS = ("mean_wait", "mean_bsld")


@dataclass(frozen=True)
class LogScale:
    """log10(value) from ``low`` to ``high`` mapped to 0..1 of a panel."""

    low: float
    high: float

    def place(self, values: np.ndarray) -> np.ndarray:
        return (np.log10(values) - self.low) / (self.high - self.low)

    def ticks(self, candidates: Sequence[float] | None, text: Callable[[float], str]) -> dict[float, str]:
        """Round values inside the scale (``candidates``, else powers of ten) at their place."""
        return {float(self.place(np.array([v]))[0]): text(v)
                for v in log_tick_values(10.0 ** self.low, 10.0 ** self.high, candidates)}


def _log_scale(values: list[np.ndarray]) -> LogScale:
    """From the decade under the smallest finite value to the decade over the largest (at least one decade)."""
    finite = np.concatenate([v[np.isfinite(v)] for v in values] or [np.ones(1)])
    if finite.size == 0:
        finite = np.ones(1)
    low = float(np.floor(np.log10(finite.min())))
    high = max(float(np.ceil(np.log10(finite.max()))), low + 1)
    return LogScale(low, high)
