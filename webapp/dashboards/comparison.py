"""From runs' schedules to the comparison dashboard's layouts (no Django here: plain data in).

Every number comes from the engine's metrics (through engine.api); this module only
chooses what to show, downsamples it for display and says so, and calls the figure builders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from bokeh.layouts import column
from bokeh.models import Column, Div, GridBox, GridPlot, LayoutDOM, Row

from engine import api
from webapp.dashboards.figures import (
    GanttWindow,
    PolicyTimelines,
    deadline_figures,
    fairness_figure,
    gantt_figure,
    grid_edges,
    linked_timelines,
    mean_wait_grid,
    metrics_table_html,
    policy_colours,
    ratio_heatmap,
    sweep_trend,
    wait_cdf_figure,
    wait_heatmaps,
)
from webapp.dashboards.figures.gantt import jobs_in_window
from webapp.dashboards.figures.job_diff import job_diff_layout
from webapp.dashboards.figures.sweep import DEADLINE_SWEEP_METRICS, SWEEP_METRICS
from webapp.dashboards.figures.style import heading, note
from webapp.core.time_axis import TimeAxis
from webapp.dashboards.figures.timelines import is_long

#: Points per step series sent to the browser (a few thousand is sharp on any screen).
MAX_STEP_POINTS = 1_000
#: Allocations drawn separately in the occupancy plots; the rest add up in "other".
TOP_ALLOCATIONS = 8
DEFAULT_GANTT_SECONDS = 86_400


@dataclass(frozen=True)
class Comparison:
    """What a comparison page shows: done runs' schedules under their (unique) labels."""

    schedules: dict[str, pd.DataFrame]
    capacity: int
    summaries: dict[str, dict] = field(default_factory=dict)
    busy_column: str = "procs"                      # "alloc" when the buddy allocator rounds up
    targets: Mapping[str, float] | None = None      # allocation → target share of the machine
    sweep_parameter: str = ""
    sweep_values: list = field(default_factory=list)                    # the swept values, in order
    sweep_series: dict[str, list] = field(default_factory=dict)         # policy → summary per value (or None)
    sweep_baselines: dict[str, dict] = field(default_factory=dict)      # runs not swept → summary
    sweep_derived: dict[str, list] = field(default_factory=dict)        # runs not swept → derived per value
    missing: list[str] = field(default_factory=list)           # runs not shown, with why
    time_axis: TimeAxis = field(default_factory=TimeAxis)       # calendar of the trace, if it has one
    baseline: str = ""                                          # the run the metrics table compares against
    table_css: str = ""                                         # the metrics table's style, for the download
    unusable: dict[str, str] = field(default_factory=dict)     # runs that cannot be the baseline → why

    @property
    def colours(self) -> dict[str, str]:
        """One colour per run, the same in every figure, the page's legend and the table."""
        return policy_colours(self.schedules)


def allocation_key(schedule: pd.DataFrame) -> str | None:
    """The allocations file's ``allocation`` column when the experiment has one, else the allocation
    the trace provides: group, else queue, else user (first with two known values: numbers from 0, or
    names, as a run on clusters with a queue configuration gives its queues)."""
    if "allocation" in schedule.columns:
        return "allocation"
    for key in ("group", "queue", "user"):
        if key in schedule.columns and known_values(schedule[key]).nunique() >= 2:
            return key
    return None


def known_values(values: pd.Series) -> pd.Series:
    """The values a trace recorded: ids >= 0 (SWF's -1 is unknown), or non-empty names (an accounting
    log's queues are names)."""
    if pd.api.types.is_numeric_dtype(values):
        return values[values >= 0]
    return values[values.notna() & (values.astype(str) != "")]


def summaries_of(comparison: Comparison) -> dict[str, dict]:
    """Each run's summary: the stored one when present, else the engine's summarize_schedule()."""
    return {label: comparison.summaries.get(label) or api.summarize_schedule(s, comparison.capacity)
            for label, s in comparison.schedules.items()}


def downsampled(series: pd.DataFrame, what: str, notes: list[str], max_points: int = MAX_STEP_POINTS) -> pd.DataFrame:
    """The series itself when short enough, else its time-averaged version (and a note saying so)."""
    if len(series) <= max_points:
        return series
    notes.append(f"{what} {len(series):,} steps")
    return api.downsample_steps(series, max_points, how="mean")


def policy_timelines(schedule: pd.DataFrame, *, key: str | None, busy_column: str = "procs",
                     max_points: int = MAX_STEP_POINTS, axis: TimeAxis | None = None,
                     zoom: tuple[float, float] | None = None, span: tuple[float, float] | None = None) -> PolicyTimelines:
    """A run's timelines; over a long ``span`` (schedule seconds, all runs) also the daily envelopes
    and the raw steps inside ``zoom``."""
    notes: list[str] = []
    raw_busy = api.busy_processors(schedule, busy_column)
    raw_queue = api.queue_length(schedule)
    busy = downsampled(raw_busy, "utilization", notes, max_points)
    queue = downsampled(raw_queue, "queue", notes, max_points)
    occupancy = None
    if key is not None:
        occupancy = api.occupancy_by(schedule, key, column=busy_column, top=TOP_ALLOCATIONS)
        occupancy = downsampled(occupancy, key, notes, max_points)
    extra: dict = {}
    if span is not None and is_long(span[1] - span[0]):
        axis = axis or TimeAxis()
        edges = api.day_edges(int(span[0]), int(span[1]), start_epoch=axis.origin, tz=axis.tz)
        extra = {"busy_daily": api.envelope(raw_busy, edges), "queue_daily": api.envelope(raw_queue, edges)}
        if zoom is not None:
            extra.update(busy_raw=steps_in(raw_busy, *zoom), queue_raw=steps_in(raw_queue, *zoom))
    return PolicyTimelines(busy=busy, queue=queue, occupancy=occupancy, notes=notes, **extra)


def steps_in(series: pd.DataFrame, start: float, end: float) -> pd.DataFrame:
    """The steps of a series inside [start, end], with the value in effect at ``start`` as first row."""
    times = series["time"].to_numpy()
    first = max(int(np.searchsorted(times, start, side="right")) - 1, 0)
    last = int(np.searchsorted(times, end, side="right"))
    return series.iloc[first:last + 1].reset_index(drop=True)


def schedules_span(schedules: Mapping[str, pd.DataFrame]) -> tuple[float, float]:
    """From the first submit to the last end over every schedule (schedule seconds)."""
    frames = [s for s in schedules.values() if len(s)]
    if not frames:
        return 0.0, 1.0
    return (float(min(s["submit"].min() for s in frames)), float(max(s["end"].max() for s in frames)))


def _with_missing(layout: LayoutDOM, comparison: Comparison) -> LayoutDOM:
    if not comparison.missing:
        return layout
    return column(layout, note("Not shown: " + "; ".join(comparison.missing) + "."))


def metrics_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    """The metrics table (HTML with its style: the download shows it as the page does)."""
    requested = params.get("baseline")
    baseline = requested if requested in comparison.schedules and requested not in comparison.unusable \
        else comparison.baseline
    table = metrics_table_html(summaries_of(comparison), baseline=baseline or None, colours=comparison.colours,
                               unusable=comparison.unusable)
    return Div(text=f"<style>{comparison.table_css}</style>{table}", width=1100)


def timelines_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    key = allocation_key(next(iter(comparison.schedules.values())))
    span = schedules_span(comparison.schedules)
    window = gantt_window(comparison.schedules, params, comparison.time_axis)
    lines = {label: policy_timelines(s, key=key, busy_column=comparison.busy_column, axis=comparison.time_axis,
                                     zoom=(window.start, window.end), span=span)
             for label, s in comparison.schedules.items()}
    layout = linked_timelines(lines, comparison.capacity, allocation_kind=key or "", targets=comparison.targets,
                              colours=comparison.colours, axis=comparison.time_axis, zoom=(window.start, window.end))
    if key is None:
        return column(layout, note("No occupancy plots: the trace has no groups, queues or user ids to tell "
                                   "allocations apart."))
    return layout


def cdf_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    return wait_cdf_figure({label: s["wait"].to_numpy() for label, s in comparison.schedules.items()})


def fairness_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    per_user = {label: api.per_user(s) for label, s in comparison.schedules.items()}
    jain = {label: api.jain_index(table["mean_bsld"]) for label, table in per_user.items()}
    return fairness_figure(per_user, jain={k: v for k, v in jain.items() if v is not None},
                           colours=policy_colours(comparison.schedules))


def heatmaps_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    size_edges, runtime_edges = grid_edges(comparison.schedules)
    grids = {label: mean_wait_grid(s, size_edges, runtime_edges) for label, s in comparison.schedules.items()}
    return wait_heatmaps(grids)


def ratio_pair(labels: Sequence[str], a: str | None, b: str | None) -> tuple[str, str]:
    """The two policies to divide: the requested labels when valid, else the first two."""
    a = a if a in labels else labels[0]
    b = b if b in labels and b != a else next((x for x in labels if x != a), a)
    return a, b


def ratio_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    labels = list(comparison.schedules)
    a, b = ratio_pair(labels, params.get("a"), params.get("b"))
    size_edges, runtime_edges = grid_edges(comparison.schedules)
    grid_a = mean_wait_grid(comparison.schedules[a], size_edges, runtime_edges)
    grid_b = mean_wait_grid(comparison.schedules[b], size_edges, runtime_edges)
    return ratio_heatmap(a, grid_a, b, grid_b)


def default_window(schedules: Mapping[str, pd.DataFrame], seconds: int = DEFAULT_GANTT_SECONDS) -> GanttWindow:
    """One day from the median start time of the first schedule: mid-trace, past any warm-up."""
    first = next(iter(schedules.values()))
    if len(first) == 0:
        return GanttWindow(0, seconds)
    middle = float(np.median(first["start"].to_numpy()))
    return GanttWindow(middle, middle + seconds)


class WindowError(ValueError):
    """A Gantt window typed by a person that cannot be drawn; the message says why and what to type."""


def window_time(text: str, field: str, axis: TimeAxis) -> float | None:
    """One end of the window as schedule seconds; None when empty; WindowError when unreadable."""
    text = (text or "").strip()
    if not text:
        return None
    seconds = axis.seconds(text)
    if seconds is None:
        example = (f"a date such as {axis.text(0).split()[0]} or {axis.text(0)} ({axis.tz}), or seconds since "
                   "the trace's time origin" if axis.calendar else "a number of seconds since the trace's start")
        raise WindowError(f"Window {field}: “{text[:40]}” is not a time; give {example}.")
    return seconds


def gantt_window(schedules: Mapping[str, pd.DataFrame], params: Mapping[str, str],
                 axis: TimeAxis | None = None) -> GanttWindow:
    """The window of the Gantt charts and of the timelines' zoom: ``start``/``end`` as schedule seconds
    or (for a trace with a calendar) dates in its time zone; one day from mid-trace by default.
    WindowError when a time is unreadable, the end is not after the start, or no job runs in it."""
    axis = axis or TimeAxis()
    default = default_window(schedules)
    start = window_time(params.get("start", ""), "from", axis)
    end = window_time(params.get("end", ""), "to", axis)
    start = (default.start if end is None else end - (default.end - default.start)) if start is None else start
    end = start + (default.end - default.start) if end is None else end
    if end <= start:
        raise WindowError(f"The window ends ({axis.text(end)}) before it starts ({axis.text(start)}): "
                          "give a “to” after the “from”.")
    window = GanttWindow(start, end)
    if schedules and not any(jobs_running(s, window) for s in schedules.values()):
        first, last = schedules_span(schedules)
        raise WindowError(f"No job runs between {axis.text(start)} and {axis.text(end)}; the runs' jobs go "
                          f"from {axis.text(first)} to {axis.text(last)}.")
    return window


def jobs_running(schedule: pd.DataFrame, window: GanttWindow) -> int:
    """How many jobs of ``schedule`` run at some instant of the window (as the Gantt chart draws them)."""
    return len(jobs_in_window(schedule, window.start, window.end))


def gantt_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    return gantt_figure(comparison.schedules, comparison.capacity,
                        gantt_window(comparison.schedules, params, comparison.time_axis), axis=comparison.time_axis)


def diff_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    """Runs a and b side by side, job by job."""
    labels = list(comparison.schedules)
    a, b = ratio_pair(labels, params.get("a"), params.get("b"))
    window = gantt_window(comparison.schedules, params, comparison.time_axis)
    diff = api.job_diff(comparison.schedules[a], comparison.schedules[b])
    return job_diff_layout(diff, a, b, comparison.colours, comparison.time_axis, (window.start, window.end))


def sweep_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    if not comparison.sweep_parameter:
        return column(heading("Sweep"), note("This experiment is not a sweep."))
    metrics = SWEEP_METRICS + (DEADLINE_SWEEP_METRICS if comparison.sweep_parameter == "deadline_fraction" else ())
    trend = sweep_trend(comparison.sweep_parameter, comparison.sweep_values, comparison.sweep_series,
                        baselines=comparison.sweep_baselines, derived=comparison.sweep_derived, metrics=metrics)
    if not comparison.sweep_baselines:
        return trend
    return column(trend, note(unswept_note(comparison.sweep_parameter, list(comparison.sweep_baselines),
                                           derived=list(comparison.sweep_derived))), sizing_mode="stretch_width")


def unswept_note(parameter: str, labels: list[str], *, derived: Sequence[str] = ()) -> str:
    """Why some runs are one dashed line: the experiment ran them once (see plan_runs); and, for a
    deadline-share sweep, that their deadline figures still differ per share (``derived``: the runs
    whose figures were derived at each share from their one schedule)."""
    text = (f"{', '.join(labels)}: run once, drawn as dashed lines: the swept value cannot change their schedule "
            "(they do not have it, or do not read it: EASY and conservative ignore deadlines, so a deadline-share "
            f"sweep runs only DBF at each share). Their overall figures are the same at every {parameter}")
    if parameter != "deadline_fraction":
        return text + "."
    if derived:
        return (text + f"; their regular jobs' and deadline figures are not (which jobs have a deadline depends on "
                f"the share): those of {', '.join(derived)} are derived at each share from the one schedule, with "
                "that share's deadline jobs (the ones DBF gets), as the DBF paper's Fig. 2 shows EASY and CBF per "
                "share through the regular jobs.")
    return (text + "; their regular jobs' and deadline figures differ per share but were not derived for these runs "
            "(they ran before this was recorded): run them again to see them per share.")


def has_deadline_jobs(schedules: Mapping[str, pd.DataFrame]) -> bool:
    return any(api.deadline_mask(s).any() for s in schedules.values())


def deadlines_layout(comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    """Regular vs deadline jobs (deadline scenario); ``?zero_wait=drop`` applies the DBF paper's filter
    of the jobs that waited 0 under every policy to the regular jobs' waits."""
    schedules = {label: s for label, s in comparison.schedules.items() if api.has_deadlines(s)}
    if not has_deadline_jobs(schedules):
        return note("No deadline jobs in these runs (set deadline_fraction to run the deadline scenario).")
    filtered = params.get("zero_wait") == "drop"
    try:
        summaries = api.compared_summaries(schedules, drop_zero_wait=filtered)
    except ValueError:   # runs over different jobs: no common filter
        summaries, filtered = api.compared_summaries(schedules), False
    usage = {label: api.usage_histogram(api.deadline_usage(s)) for label, s in schedules.items()}
    return deadline_figures(summaries, usage, filtered=filtered)


#: Section titles, in page order (the page's h2 and the download's headings).
SECTION_TITLES: dict[str, str] = {
    "metrics": "Metrics",
    "sweep": "Sweep results",
    "deadlines": "Regular and deadline jobs",
    "timelines": "Utilization, queue and occupancy over time",
    "cdf": "Wait-time distribution",
    "fairness": "Per-user fairness",
    "heatmaps": "Mean wait by job size and runtime",
    "ratio": "Wait ratio between two runs",
    "diff": "Two runs side by side, job by job",
    "gantt": "Gantt chart",
}

#: Sections drawn when the reader asks (a button; the HTML download has them all): details of one pair of
#: runs or one window, which cost the browser as much as the rest of the page. Drawn at once when the
#: page's address sets one of the named parameters (the reader chose that pair or window for them).
ON_DEMAND: dict[str, tuple[str, ...]] = {"diff": ("a", "b"), "gantt": ("start", "end")}
SHOW_LABELS: dict[str, str] = {"diff": "Draw the two runs side by side, job by job", "gantt": "Draw the Gantt charts"}


def on_demand(name: str, params: Mapping[str, str]) -> bool:
    """Whether section ``name`` waits for the reader's click on the page with these query parameters."""
    return name in ON_DEMAND and not any(params.get(key) for key in ON_DEMAND[name])


Builder = Callable[[Comparison, Mapping[str, str]], LayoutDOM]

#: Plot name (URL part and element id) → builder, in page order.
PLOTS: dict[str, Builder] = {
    "metrics": metrics_layout,
    "sweep": sweep_layout,
    "deadlines": deadlines_layout,
    "timelines": timelines_layout,
    "cdf": cdf_layout,
    "fairness": fairness_layout,
    "heatmaps": heatmaps_layout,
    "ratio": ratio_layout,
    "diff": diff_layout,
    "gantt": gantt_layout,
}


def plot_names(comparison_is_sweep: bool, has_deadlines: bool = False, runs: int = 2) -> list[str]:
    return [name for name in PLOTS
            if (name != "sweep" or comparison_is_sweep) and (name != "deadlines" or has_deadlines)
            and (name not in ("ratio", "diff") or runs > 1)]


def build_plot(name: str, comparison: Comparison, params: Mapping[str, str]) -> LayoutDOM:
    """One named part of the page; the metrics table also names runs left out (failed, unfinished)."""
    layout = PLOTS[name](comparison, params)
    layout = _with_missing(layout, comparison) if name == "metrics" else layout
    if name != "metrics":
        stretch(layout)    # the page's width: figures stretch, fixed ones keep theirs
    return layout


def stretch(layout: LayoutDOM) -> LayoutDOM:
    """``layout`` and every row, column and grid in it as wide as the page: a row of fixed width holding
    stretching figures squeezed them to a few pixels (the heat maps, a job diff's gainers and losers)."""
    for model in layout.select({"type": LayoutDOM}):
        if isinstance(model, (Row, Column, GridBox, GridPlot)) and model.sizing_mode is None:
            model.sizing_mode = "stretch_width"
    layout.sizing_mode = "stretch_width"
    return layout


def full_layout(comparison: Comparison, params: Mapping[str, str], title: str) -> LayoutDOM:
    """Every part in one layout, for the self-contained HTML download."""
    parts: list[LayoutDOM] = [heading(title)]
    for name in plot_names(bool(comparison.sweep_parameter), has_deadline_jobs(comparison.schedules),
                           len(comparison.schedules)):
        parts += [heading(SECTION_TITLES[name]), stretch(PLOTS[name](comparison, params))]
    if comparison.missing:
        parts.append(note("Not shown: " + "; ".join(comparison.missing) + "."))
    return column(*parts, sizing_mode="stretch_width")
