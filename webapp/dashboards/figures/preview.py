"""The queue-reconfiguration preview: current vs proposed configuration, CPU vs multi-resource fair-share.

Pure functions: schedules (DataFrames of engine.sim results) in, Bokeh layouts out. The paper's
figures they follow (Klusáček, Tóth, Podolníková, JSSPP 2015): throughput and wait per week (Fig. 5),
the wait distribution before/after (Fig. 6), the CDF of the penalty increase (Fig. 8) and the wait
of the jobs the multi-resource penalty affects (Fig. 9).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column, row
from bokeh.models import (
    ColumnDataSource,
    FactorRange,
    HoverTool,
    LayoutDOM,
    Legend,
    NumeralTickFormatter,
    Whisker,
)

from engine.api import busy_by_group, penalty_increase, priority_series, wall_clock, weekly

from .distributions import ecdf, wait_cdf_figure
from .labels import FULL_PLOT_PX, HALF_PLOT_PX, fit_category_axis
from .style import allocation_colours, new_figure, note, policy_colours

SAMPLES = 600
HALF = 445


def short(label: str) -> str:
    """"current: metacentrum-historical" -> "current" (bar groups; the colours match the legends)."""
    return label.split(":", 1)[0]


def cluster_utilization_figure(schedules: Mapping[str, pd.DataFrame], clusters: Mapping[str, int], *,
                               zone: str = "UTC") -> LayoutDOM:
    """Per-cluster utilization over time (busy cores / cluster cores), one plot per configuration,
    sampled at SAMPLES evenly spaced instants (the note says so); dates in the trace's ``zone``."""
    origin = min(int(s["submit"].min()) for s in schedules.values())
    end = max(int(s["end"].max()) for s in schedules.values())
    times = np.linspace(origin, end, SAMPLES)
    colours = allocation_colours(list(clusters))
    figures = []
    for label, schedule in schedules.items():
        fig = new_figure(f"Cluster utilization — {label}", width=HALF, height=300, x_axis_type="datetime")
        fig.add_layout(Legend(click_policy="hide", location="top_left"), "center")
        busy = busy_by_group(schedule, "cluster", times)
        fig.xaxis.axis_label = f"date ({zone})"
        for name, cores in clusters.items():
            fig.line(wall_clock(times, zone), busy.get(name, np.zeros(SAMPLES)) / cores,
                     color=colours[name], line_width=1.5, legend_label=name)
        fig.yaxis.formatter = NumeralTickFormatter(format="0%")
        fig.yaxis.axis_label = "busy cores"
        figures.append(fig)
    return column(row(*figures), note(f"Sampled at {SAMPLES} instants over the span; times in {zone} (the trace's "
                                      f"time base read as Unix time).", width=2 * HALF))


def weekly_figure(schedules: Mapping[str, pd.DataFrame], *, zone: str = "UTC") -> LayoutDOM:
    """Throughput per week (jobs completed and core-hours) and mean wait per week, per configuration;
    each week drawn at its first day (in the trace's ``zone``)."""
    origin = min(int(s["submit"].min()) for s in schedules.values())
    colours = policy_colours(schedules)
    jobs_fig = new_figure("Jobs completed per week", width=HALF, height=280, x_axis_type="datetime")
    wait_fig = new_figure("Mean wait of the jobs started each week", width=HALF, height=280, x_axis_type="datetime")
    for fig in (jobs_fig, wait_fig):
        fig.add_layout(Legend(click_policy="hide", location="top_left"), "center")
        fig.xaxis.axis_label = f"week starting ({zone})"
    for label, schedule in schedules.items():
        table = weekly(schedule, origin)
        days = wall_clock(origin + table["week"].to_numpy() * 7 * 86400, zone)
        jobs_fig.step(days, table["jobs"], mode="after", color=colours[label], line_width=2,
                      legend_label=label)
        wait_fig.step(days, table["mean_wait"] / 3600, mode="after", color=colours[label], line_width=2,
                      legend_label=label)
    jobs_fig.add_tools(HoverTool(tooltips=[("week starting", "$x{%F}"), ("jobs", "$y{0,0}")],
                                 formatters={"$x": "datetime"}))
    wait_fig.yaxis.axis_label = "hours"
    return row(jobs_fig, wait_fig)


def legend_above(fig: Any) -> None:
    """The figure's legend in one row above the plot, not over its bars."""
    legend = fig.legend[0]
    fig.center = [item for item in fig.center if item is not legend]
    legend.orientation = "horizontal"
    fig.add_layout(legend, "above")


def user_wait_figure(schedules: Mapping[str, pd.DataFrame], *, top: int = 20) -> LayoutDOM:
    """Mean wait per user under each configuration (the `top` users with the most jobs)."""
    counts = pd.concat([s["user"] for s in schedules.values()]).value_counts()
    users = [str(u) for u in counts.index[:top]]
    labels = list(schedules)
    factors = [(user, short(label)) for user in users for label in labels]
    values = []
    for user in users:
        for label in labels:
            schedule = schedules[label]
            waits = schedule.loc[schedule["user"].astype(str) == user, "wait"]
            values.append(float(waits.mean()) / 3600 if len(waits) else 0.0)
    colours = {short(label): colour for label, colour in policy_colours(labels).items()}
    source = ColumnDataSource({"x": factors, "hours": values, "colour": [colours[f[1]] for f in factors],
                               "configuration": [f[1] for f in factors]})
    fig = new_figure(f"Mean wait per user (the {len(users)} users with most jobs)", height=300,
                     x_range=FactorRange(*factors))
    fig.vbar(x="x", top="hours", width=0.9, color="colour", source=source, legend_field="configuration")
    legend_above(fig)
    fit_category_axis(fig.xaxis[0], factors, FULL_PLOT_PX)
    fig.yaxis.axis_label = "hours"
    fig.add_tools(HoverTool(tooltips=[("user, configuration", "@x"), ("mean wait", "@hours{0.0} h")]))
    return fig


def priority_figure(schedule: pd.DataFrame, label: str, *, decay_hours: float = 72.0, decay_factor: float = 0.5,
                    top: int = 8, zone: str = "UTC") -> LayoutDOM:
    """Recorded fair-share usage (lower = higher priority) of the `top` heaviest users over time."""
    series = priority_series(schedule, decay_hours=decay_hours, decay_factor=decay_factor)
    fig = new_figure(f"Fair-share usage over time — {label} (lower usage = served first)", height=300,
                     x_axis_type="datetime")
    if series.empty:
        return column(fig, note("No job completed: no usage recorded."))
    heaviest = series.groupby("user")["usage"].max().nlargest(top).index.tolist()
    colours = allocation_colours([str(u) for u in heaviest])
    fig.add_layout(Legend(click_policy="hide", location="top_left"), "center")
    for user in heaviest:
        part = series[series["user"] == user]
        fig.step(wall_clock(part["time"].to_numpy(), zone), part["usage"] / 3600, mode="after",
                 color=colours[str(user)], line_width=1.5, legend_label=f"user {user}")
    fig.yaxis.axis_label = "penalty x hours (decayed)"
    fig.xaxis.axis_label = f"date ({zone})"
    return column(fig, note(f"The {len(heaviest)} users with the largest usage; decay x{decay_factor:g} every "
                            f"{decay_hours:g} h; a job is charged when it completes."))


def fairness_figures(cpu: pd.DataFrame, multi: pd.DataFrame) -> LayoutDOM:
    """Fig. 9 (mean and standard deviation of the wait of affected jobs under CPU-only and
    multi-resource fair-share) and Fig. 8 (CDF of the penalty increase of affected jobs)."""
    affected, increase = penalty_increase(cpu["fairshare_weight"].to_numpy(), multi["fairshare_weight"].to_numpy())
    bars = new_figure("Wait of the jobs the RAM penalty affects", width=HALF, height=300,
                      x_range=["CPU-only fair-share", "multi-resource fair-share"])
    cdf = new_figure("Penalty increase of affected jobs (CDF)", width=HALF, height=300, x_axis_type="log")
    if not affected.any():
        return column(row(bars, cdf), note("No job's penalty differs between the two fair-shares (no RAM requests?)."))
    names, means, lows, highs = [], [], [], []
    for name, schedule in (("CPU-only fair-share", cpu), ("multi-resource fair-share", multi)):
        waits = schedule["wait"].to_numpy(np.float64)[affected] / 3600
        names.append(name)
        means.append(waits.mean())
        lows.append(max(waits.mean() - waits.std(), 0.0))
        highs.append(waits.mean() + waits.std())
    source = ColumnDataSource({"name": names, "mean": means, "low": lows, "high": highs})
    bars.vbar(x="name", top="mean", width=0.6, color="#0072B2", source=source)
    bars.add_layout(Whisker(base="name", lower="low", upper="high", source=source))
    bars.yaxis.axis_label = "mean wait (hours) ± standard deviation"
    fit_category_axis(bars.xaxis[0], names, HALF_PLOT_PX)
    rising = increase[increase > 0]
    x, y = ecdf(rising)
    if x.size:
        cdf.step(x, y, mode="after", color="#D55E00", line_width=2)
    cdf.xaxis.axis_label = "penalty increase (%)"
    cdf.yaxis.formatter = NumeralTickFormatter(format="0%")
    text = (f"{int(affected.sum()):,} jobs are affected (their multi-resource penalty differs from their cores); "
            f"{rising.size:,} of them pay more, {int(affected.sum()) - rising.size:,} less; "
            f"{np.mean(rising >= 100):.0%} of those paying more at least double.") if rising.size else \
        f"{int(affected.sum()):,} jobs are affected; none pays more."
    return column(row(bars, cdf), note(text, width=2 * HALF))


def wait_distribution_figure(schedules: Mapping[str, pd.DataFrame]) -> LayoutDOM:
    """Share of jobs per wait bin (the paper's Fig. 6 bottom), before/after side by side."""
    edges = np.array([0, 60, 600, 3600, 4 * 3600, 12 * 3600, 86400, 3 * 86400, 7 * 86400, np.inf])
    names = ["< 1 min", "1–10 min", "10 min–1 h", "1–4 h", "4–12 h", "12–24 h", "1–3 d", "3–7 d", "≥ 7 d"]
    labels = list(schedules)
    colours = {short(label): colour for label, colour in policy_colours(labels).items()}
    factors = [(bin_, short(label)) for bin_ in names for label in labels]
    shares = {}
    for label, schedule in schedules.items():
        counts, _ = np.histogram(schedule["wait"].to_numpy(np.float64), bins=edges)
        shares[label] = counts / max(len(schedule), 1)
    values = [shares[label][names.index(bin_)] for bin_ in names for label in labels]
    source = ColumnDataSource({"x": factors, "share": values, "colour": [colours[f[1]] for f in factors],
                               "configuration": [f[1] for f in factors]})
    fig = new_figure("Jobs by wait time", width=HALF, height=360, x_range=FactorRange(*factors))
    fig.vbar(x="x", top="share", width=0.9, color="colour", source=source, legend_field="configuration")
    legend_above(fig)
    fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fit_category_axis(fig.xaxis[0], factors, HALF_PLOT_PX)
    fig.add_tools(HoverTool(tooltips=[("wait, configuration", "@x"), ("jobs", "@share{0.0%}")]))
    return fig


def preview_layout(current: pd.DataFrame, proposed: pd.DataFrame, counterpart: pd.DataFrame, *,
                   labels: tuple[str, str], clusters: Mapping[str, int], policy_is_multi: bool,
                   decay_hours: float = 72.0, decay_factor: float = 0.5, recorded: pd.DataFrame | None = None,
                   zone: str = "UTC") -> LayoutDOM:
    """Every preview figure in page order. ``counterpart`` is the proposed configuration under the
    other fair-share (CPU-only if the policy is multi-resource, and the reverse); ``recorded``, the
    schedule as it happened, is drawn beside them where the figure compares runs; dates in ``zone``."""
    pair = {labels[0]: current, labels[1]: proposed}
    runs = ({"recorded": recorded} if recorded is not None else {}) | pair
    cpu, multi = (counterpart, proposed) if policy_is_multi else (proposed, counterpart)
    return column(
        cluster_utilization_figure(pair, clusters, zone=zone),
        weekly_figure(runs, zone=zone),
        row(wait_cdf_figure({k: v["wait"].to_numpy() for k, v in runs.items()}), wait_distribution_figure(runs)),
        user_wait_figure(runs),
        priority_figure(current, labels[0], decay_hours=decay_hours, decay_factor=decay_factor, zone=zone),
        priority_figure(proposed, labels[1], decay_hours=decay_hours, decay_factor=decay_factor, zone=zone),
        fairness_figures(cpu, multi),
    )


def sweep_figure(parameter: str, values: list[str], series: Mapping[str, list[float | None]]) -> LayoutDOM:
    """The mean wait (hours) of each configuration at every swept value of ``parameter``, the values
    in their order as categories (a sweep may hold ``inf``); a value not done yet leaves a gap."""
    colours = policy_colours(list(series))
    fig = new_figure(f"Mean wait across {parameter}", height=300, x_range=FactorRange(*values))
    fig.add_layout(Legend(click_policy="hide", location="top_left"), "center")
    for label, hours in series.items():
        source = ColumnDataSource({"value": values, "hours": [np.nan if h is None else h for h in hours],
                                   "configuration": [label] * len(values)})
        fig.line("value", "hours", source=source, color=colours[label], line_width=2, legend_label=label)
        fig.scatter("value", "hours", source=source, color=colours[label], size=8, legend_label=label)
    fig.xaxis.axis_label = parameter
    fit_category_axis(fig.xaxis[0], values, FULL_PLOT_PX)
    fig.yaxis.axis_label = "mean wait (hours)"
    fig.y_range.start = 0
    fig.add_tools(HoverTool(tooltips=[("configuration", "@configuration"), (parameter, "@value"),
                                      ("mean wait", "@hours{0,0.0} h")]))
    return fig
