"""Shared look of every dashboard figure: the policy palette, figure defaults, notes, log bins."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from bokeh.models import (Axis, CustomJSHover, CustomJSTickFormatter, Div, FixedTicker, Label, LinearAxis,
                          NumeralTickFormatter, Range1d)
from bokeh.plotting import figure

from engine.api import DURATION_UNITS

#: Okabe–Ito colour-blind-safe colours (yellow dropped: unreadable as a line on white).
POLICY_PALETTE: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
    "#999933", "#882255", "#44AA99", "#117733", "#AA4499",
)

#: Categorical colours for stacked allocations (users, groups, queues) — distinct from policies.
ALLOCATION_PALETTE: tuple[str, ...] = (
    "#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB",
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
)
OTHERS_COLOUR = "#DDDDDD"

PLOT_WIDTH = 900
TIME_TOOLS = "xpan,xwheel_zoom,box_zoom,reset,save"
DEFAULT_TOOLS = "pan,wheel_zoom,box_zoom,reset,save"


def policy_colours(labels: Iterable[str]) -> dict[str, str]:
    """One colour per policy label, in the order given (stable across every figure of a page)."""
    return {label: POLICY_PALETTE[i % len(POLICY_PALETTE)] for i, label in enumerate(labels)}


def allocation_colours(names: Sequence[str]) -> dict[str, str]:
    colours = {name: ALLOCATION_PALETTE[i % len(ALLOCATION_PALETTE)] for i, name in enumerate(names)}
    for rest in ("other", "others"):  # engine.metrics.timeseries.occupancy_by names the remainder "other"
        if rest in colours:
            colours[rest] = OTHERS_COLOUR
    return colours


def new_figure(title: str, *, width: int = PLOT_WIDTH, height: int = 300, tools: str = DEFAULT_TOOLS,
               **kwargs) -> figure:
    """A figure with the dashboard defaults (its height, the page's width from ``width`` up, no logo,
    toolbar on the right): at 1400 px a plot uses the whole column, not two thirds of it."""
    kwargs.setdefault("sizing_mode", "stretch_width")
    fig = figure(title=title, width=width, height=height, tools=tools, toolbar_location="right", **kwargs)
    fig.toolbar.logo = None
    fig.title.text_font_size = "13px"
    for axis in [*fig.xaxis, *fig.yaxis]:
        if type(axis) is LinearAxis:   # not dates, logs or categories: 120,000 rather than 1.200e+5
            axis.formatter = NumeralTickFormatter(format="0,0.[000]")
    return fig


def note(text: str, *, width: int = PLOT_WIDTH) -> Div:
    """A short sentence under a figure saying what was aggregated, downsampled or left out."""
    div = Div(text="", width=width, styles={"font-size": "12px", "color": "#555"}, sizing_mode="stretch_width")
    div.text = _escape(text)
    return div


def duration_formatter() -> CustomJSTickFormatter:
    """Tick labels for axes in seconds in the units of engine.metrics.units (its DURATION_UNITS, the same
    thresholds): 30 s, 5 min, 2 h, 3 days (log axes otherwise show 2.5e+6)."""
    steps = "".join(f"if (v >= {shown_from:g}) return fmt(tick / {length:g}) + ' {unit}';\n"
                    for unit, length, shown_from in DURATION_UNITS)
    return CustomJSTickFormatter(code=f"""
        const v = Math.abs(tick);
        const fmt = (x) => (Math.round(x * 10) / 10).toLocaleString("en");
        {steps}
        return fmt(tick) + ' s';
    """)


def duration_tick_text(seconds: float) -> str:
    """A round duration as the time axes' tick formatter writes it (duration_formatter): 1 s, 10 min, 6 h, 7 days."""
    for unit, length, shown_from in DURATION_UNITS:
        if abs(seconds) >= shown_from:
            return f"{seconds / length:,.1f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{seconds:,.1f}".rstrip("0").rstrip(".") + " s"


#: Round durations for log time axes: 1 s, 10 s, 1 min, 10 min, 1 h, 6 h, 1 d, 7 d, 30 d, 1 y.
DURATION_TICKS = (1, 10, 60, 600, 3600, 21600, 86400, 604800, 2592000, 31536000, 315360000)


def duration_axis(axis: Axis | list) -> None:
    """Round-duration ticks and labels (1 min, 1 h, 1 d) on a log axis in seconds."""
    axis.ticker = FixedTicker(ticks=list(DURATION_TICKS), minor_ticks=[])
    axis.formatter = duration_formatter()


def count_axis(axis: Axis | list) -> None:
    """Plain numbers (1, 10, 100, 1,000) instead of 10^k on a log axis of counts."""
    axis.formatter = NumeralTickFormatter(format="0,0")


def log_tick_values(low: float, high: float, candidates: Sequence[float] | None = None) -> list[float]:
    """Round values from ``low`` to ``high`` for the ticks of a log axis: ``candidates``, else powers of ten."""
    values = candidates or [10.0 ** k for k in range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)]
    return [v for v in values if low <= v <= high]


def heading(text: str, *, width: int = PLOT_WIDTH) -> Div:
    return Div(text=f"<h3 style='margin:8px 0 2px 0'>{_escape(text)}</h3>", width=width)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def log_edges(values: np.ndarray, bins: int, *, floor: float = 1.0) -> np.ndarray:
    """`bins` logarithmic bin edges from the smallest value at least `floor` to the largest.

    Starting at the smallest value, not at `floor`, keeps every bin where there is data (a machine
    whose smallest job has 8 processors gets no empty 1–8 columns). When some values are below
    `floor` (e.g. 0-second runtimes) the edges start at `floor` and those values fall into the
    first bin when binned with `bin_index`; the top edge is nudged up so the maximum lands inside
    the last bin.
    """
    values = np.asarray(values, dtype=float)
    positive = values[np.isfinite(values) & (values >= floor)]
    below = np.count_nonzero(np.isfinite(values) & (values < floor))
    lo = float(positive.min()) if positive.size and not below else floor  # values under the floor: from the floor
    hi = float(positive.max()) if positive.size else floor * 10.0
    if hi <= lo:
        hi = lo * 10.0
    edges = np.logspace(np.log10(lo), np.log10(hi * 1.000001), bins + 1)
    edges[0] = lo  # exactly: 10 ** log10(8) is 7.999…
    return edges


def integer_log_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """Log edges rounded to integers (duplicates dropped): no empty bins between whole numbers."""
    edges = np.unique(np.floor(log_edges(values, bins)))
    values = np.asarray(values, dtype=float)
    top = float(values.max()) if values.size else 1.0
    if edges[-1] <= top:
        edges = np.append(edges, np.floor(top) + 1)
    return edges


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin number (0..len(edges)-2) of each value; values outside the edges are clipped in."""
    idx = np.searchsorted(edges, np.asarray(values, dtype=float), side="right") - 1
    return np.clip(idx, 0, len(edges) - 2)


def time_axis_label(unit_seconds: float) -> str:
    return {86400.0: "time (days since trace start)", 3600.0: "time (hours since trace start)"}.get(
        unit_seconds, "time (s since trace start)")


def time_unit_for_span(span_seconds: float) -> float:
    """Days on the time axes of long traces, hours for short ones."""
    return 86400.0 if span_seconds >= 3 * 86400 else 3600.0


class PanelRows:
    """Panels stacked in ONE figure (small multiples: a Bokeh figure costs the browser 100-250 ms to build,
    so six runs' panels in one figure instead of six figures): panel ``label``'s values 0..``top`` are drawn
    at offset(label) + value, the first panel at the top, a gap above each holding its name."""

    GAP = 0.16      # of a panel's height, above it, for its name

    def __init__(self, labels: Sequence[str], top: float) -> None:
        self.labels = list(labels)
        self.top = float(top)
        self.step = self.top * (1 + self.GAP)

    def offset(self, label: str) -> float:
        return (len(self.labels) - 1 - self.labels.index(label)) * self.step

    def y_range(self) -> Range1d:
        return Range1d(-0.02 * self.top, len(self.labels) * self.step)

    def height(self, panel_px: int) -> int:
        """The figure's height for panels of ``panel_px`` pixels (plus title and time axis)."""
        return 90 + panel_px * len(self.labels)

    def decorate(self, fig: figure, ticks: Mapping[str, Mapping[float, str]],
                 names: Mapping[str, str] | None = None) -> None:
        """Each panel's name (``names``, else its label) above it, a line under it, and its own y ticks
        (``ticks[label]``: panel value → text)."""
        labels: dict[float, str] = {}
        for label in self.labels:
            offset = self.offset(label)
            labels.update({offset + float(value): text for value, text in ticks[label].items()})
            fig.add_layout(Label(x=4, x_units="screen", y=offset + self.top * (1 + self.GAP * 0.15),
                                 text=(names or {}).get(label, label), text_font_size="12px",
                                 text_font_style="bold", text_baseline="bottom"))
        fig.hspan(y=[self.offset(label) for label in self.labels], line_color="#888", line_width=1)
        fig.yaxis.ticker = FixedTicker(ticks=sorted(labels), minor_ticks=[])
        fig.yaxis.major_label_overrides = labels
        fig.ygrid.visible = False


def run_names(labels: list[str]) -> CustomJSHover:
    """A hover field's name from its number (``@panel{custom}``: a rectangle's panel, top first): numbers,
    not a name per glyph, are sent to the browser."""
    return CustomJSHover(args={"labels": labels}, code="return labels[value]")
