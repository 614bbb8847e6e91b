"""Per-user fairness: each user's mean wait and mean bounded slowdown under each policy."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, LayoutDOM, Legend
from bokeh.transform import dodge

from .labels import FULL_PLOT_PX, LEGEND_PX, fit_category_axis
from .style import PLOT_WIDTH, duration_axis, new_figure, note, policy_colours

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
    wait = new_figure("Mean wait per user", width=width, height=280, x_range=user_range, y_axis_type="log")
    bsld = new_figure("Mean bounded slowdown per user", width=width, height=280, x_range=user_range,
                      y_axis_type="log")
    for fig in (wait, bsld):
        fig.add_layout(Legend(click_policy="hide", label_text_font_size="11px"), "right")
        fit_category_axis(fig.xaxis[0], users, FULL_PLOT_PX - LEGEND_PX)
        fig.xaxis.axis_label = "user (most jobs first)"
    wait.yaxis.axis_label = "mean wait (log)"
    duration_axis(wait.yaxis)
    bsld.yaxis.axis_label = "mean bounded slowdown (log)"
    n = len(per_user)
    for i, (label, frame) in enumerate(per_user.items()):
        frame = frame.assign(user=frame["user"].astype(str)).set_index("user").reindex(users)
        offset = (i - (n - 1) / 2) * min(0.8 / max(n, 1), 0.2)
        legend = label if jain is None or label not in jain else f"{label} (Jain {jain[label]:.3f})"
        source = ColumnDataSource({
            "user": users,
            "mean_wait": np.maximum(frame["mean_wait"].to_numpy(dtype=float), 1.0),
            "mean_bsld": np.maximum(frame["mean_bsld"].to_numpy(dtype=float), 1.0),
        })
        for fig, field in ((wait, "mean_wait"), (bsld, "mean_bsld")):
            fig.scatter(x=dodge("user", offset, range=user_range), y=field, source=source, size=8,
                        color=colours[label], legend_label=legend, alpha=0.9)
    wait.add_tools(HoverTool(tooltips=[("user", "@user"), ("mean wait", "@mean_wait{0,0} s")]))
    bsld.add_tools(HoverTool(tooltips=[("user", "@user"), ("mean bsld", "@mean_bsld{0.00}")]))
    total = len(next(iter(per_user.values())))
    text = f"The {len(users)} users with the most jobs of {total}; mean waits under 1 s are drawn at 1 s."
    return column(wait, bsld, note(text, width=width))
