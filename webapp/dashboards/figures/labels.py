"""Category labels that never overlap: horizontal where they fit, else vertical, thinned where even
vertical labels would touch, long ones shortened (the full name stays in the hover and the legend).

Bokeh draws a categorical axis's labels where the categories are, whatever their length, so policy
names, users and bins ran into each other on narrow plots. Every figure stretches to the page's width,
so the rule is decided for the narrowest plot a figure gets on a 1024 px window (:data:`FULL_PLOT_PX`,
:data:`HALF_PLOT_PX`): labels that fit there fit on every wider window (1400 px), since the room per
label only grows with the width while the labels keep their size.

:func:`label_fit` is the rule, :func:`label_boxes` the boxes it leaves (what the tests check for
overlap), :func:`fit_category_axis` applies it to a figure's x axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: the page's content on a 1024 px window: main's 1.25rem padding each side and a scrollbar
PAGE_AT_1024 = 1024 - 2 * 20 - 16
#: a plot's frame inside its figure: the y axis with its ticks and title, the toolbar on the right
FRAME_PX = 110
#: the plot area of a figure as wide as the page, and of one of two figures side by side, at 1024 px
FULL_PLOT_PX = PAGE_AT_1024 - FRAME_PX
HALF_PLOT_PX = PAGE_AT_1024 // 2 - FRAME_PX
#: the same on a 1400 px window (main is at most 1200 px wide)
PAGE_AT_1400 = min(1400 - 16, 1200) - 2 * 20
#: a legend on the plot's right (policy names at 11 px)
LEGEND_PX = 200
#: Bokeh's axis labels are 11 px (group labels bold): an upper bound of a character's width there, and
#: the room a line of them needs across (a vertical label's thickness, with some air)
CHAR_PX = 7.0
LINE_PX = 14.0
#: labels longer than this are shortened (with "…") when they stand vertical (the axis would grow tall)
MAX_CHARS = 22
#: Bokeh's FactorRange puts this many categories' width between groups of nested factors
GROUP_PADDING = 1.4


def text_px(label: str) -> float:
    """An upper bound of a label's width in pixels at the axes' font size."""
    return CHAR_PX * len(label) + 4.0


def shortened(label: str, limit: int = MAX_CHARS) -> str:
    """``label`` cut to ``limit`` characters, the last one "…" (unchanged when it is short enough)."""
    return label if len(label) <= limit else label[:limit - 1] + "…"


@dataclass(frozen=True)
class LabelFit:
    """How one level of an axis's labels is drawn: ``orientation`` "horizontal" or "vertical", every
    ``every``-th label shown (the others blank), ``texts`` the labels as drawn (shortened or blank)."""

    orientation: str
    every: int
    texts: list[str] = field(default_factory=list)


def label_fit(labels: Sequence[str], room_px: float) -> LabelFit:
    """The rule for ``labels`` spaced ``room_px`` apart (centre to centre): horizontal when the widest
    fits in its room; else vertical, where a label needs only LINE_PX across: every label when the room
    allows it, else every k-th (k = LINE_PX / room rounded up, always the first), shortened to MAX_CHARS."""
    labels = [str(label) for label in labels]
    if not labels or max(text_px(label) for label in labels) <= room_px:
        return LabelFit("horizontal", 1, labels)
    every = max(1, math.ceil(LINE_PX / max(room_px, 1e-9)))
    return LabelFit("vertical", every, [shortened(label) if i % every == 0 else "" for i, label in enumerate(labels)])


def label_boxes(fit: LabelFit, room_px: float) -> list[tuple[float, float]]:
    """The horizontal extent (left, right) of every label drawn under ``fit`` with its category's centre
    at ``room_px`` × (index + 0.5): a horizontal label's text width, a vertical one's line thickness."""
    boxes = []
    for i, text in enumerate(fit.texts):
        if not text:
            continue
        centre = room_px * (i + 0.5)
        half = (text_px(text) if fit.orientation == "horizontal" else LINE_PX) / 2
        boxes.append((centre - half, centre + half))
    return boxes


def overlapping(boxes: Sequence[tuple[float, float]]) -> bool:
    """Whether any two of the extents overlap (touching is not overlapping)."""
    ordered = sorted(boxes)
    return any(left < previous_right for (_, previous_right), (left, _) in zip(ordered, ordered[1:]))


def factor_room(factors: Sequence[Any], plot_px: float) -> tuple[float, float | None]:
    """The room per innermost category and, for two-level factors ((group, label) tuples), per group
    (its categories' room: the padding between groups is extra), on a plot area ``plot_px`` wide."""
    if factors and isinstance(factors[0], tuple):
        groups = list(dict.fromkeys(factor[0] for factor in factors))
        units = len(factors) + GROUP_PADDING * (len(groups) - 1)
        per = plot_px / units
        return per, per * min(sum(1 for factor in factors if factor[0] == group) for group in groups)
    return plot_px / max(len(factors), 1), None


def fit_category_axis(axis: Any, factors: Sequence[Any], plot_px: float = FULL_PLOT_PX) -> dict[str, LabelFit]:
    """Draw the labels of categorical ``axis`` (a figure's x axis, categories ``factors``: strings or
    (group, label) tuples) so they never overlap on a plot area ``plot_px`` wide or wider. Returns the
    fits used: {"labels": ..., "groups": ...} (groups only for nested factors). Nested factors' inner
    labels are hidden where even vertical ones would touch (the figure's legend names the colours);
    their group labels stand vertical where they do not fit across (a group spans at least two
    categories, room enough for one line)."""
    per, per_group = factor_room(factors, plot_px)
    fits: dict[str, LabelFit] = {}
    if per_group is None:
        fit = label_fit([str(f) for f in factors], per)
        axis.major_label_orientation = fit.orientation
        axis.major_label_overrides = {str(f): text for f, text in zip(factors, fit.texts) if text != str(f)}
        fits["labels"] = fit
        return fits
    inner = label_fit([str(f[1]) for f in factors], per)
    if inner.every > 1:   # the labels repeat in every group, and the colours (with a legend) say which bar is which
        axis.major_label_text_font_size = "0px"
        inner = LabelFit(inner.orientation, inner.every, [""] * len(factors))
    else:
        axis.major_label_orientation = inner.orientation
    groups = list(dict.fromkeys(str(f[0]) for f in factors))
    outer = label_fit(groups, per_group)
    if outer.orientation == "vertical":   # Bokeh draws a group's own text: stood up, never thinned or cut
        outer = LabelFit("vertical", 1, groups)
    axis.group_label_orientation = outer.orientation
    fits.update(labels=inner, groups=outer)
    return fits
