"""Read-only helpers over the platform's models: what the dashboards need, loaded once.

Schedules of finished runs are immutable, so they are kept in a small in-process cache keyed by
run id and finish time (a re-run gets a new finish time).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import pandas as pd

from webapp.allocations.services import with_allocations
from webapp.dashboards.comparison import Comparison
from webapp.experiments.models import Experiment, Run

CACHED_SCHEDULES = 8
_cache: OrderedDict[tuple, pd.DataFrame] = OrderedDict()
_cache_lock = threading.Lock()


def cached_schedule(run: Run) -> pd.DataFrame:
    key = (run.pk, run.finished_at.isoformat() if run.finished_at else "")
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    schedule = run.load_schedule()
    with _cache_lock:
        _cache[key] = schedule
        while len(_cache) > CACHED_SCHEDULES:
            _cache.popitem(last=False)
    return schedule


def unique_labels(runs: list[Run]) -> list[str]:
    """Run labels, made unique with the run id where two runs share one (legends need distinct names)."""
    labels = [run.label or f"run {run.pk}" for run in runs]
    return [f"{label} (#{run.pk})" if labels.count(label) > 1 else label for label, run in zip(labels, runs)]


def _why_missing(run: Run, label: str) -> str:
    if run.status == Run.Status.FAILED:
        return f"{label} failed" + (f" ({run.error.splitlines()[0][:120]})" if run.error else "")
    return f"{label} is {run.status}"


def load_comparison(experiment: Experiment) -> Comparison:
    """The experiment's done runs as a Comparison; the others are listed in `missing` with why."""
    runs = list(experiment.runs.order_by("position", "pk"))
    labels = unique_labels(runs)
    done = [(label, run) for label, run in zip(labels, runs) if run.status == Run.Status.DONE]
    schedules = {label: cached_schedule(run) for label, run in done}
    summaries = {label: run.summary for label, run in done if run.summary}
    missing = [_why_missing(run, label) for label, run in zip(labels, runs) if run.status != Run.Status.DONE]
    series, baselines = sweep_series(experiment, runs, labels)
    schedules, targets = with_allocations(experiment, schedules)
    return Comparison(
        schedules=schedules, capacity=int(experiment.procs), summaries=summaries,
        busy_column="alloc" if experiment.allocation == Experiment.Allocation.BUDDY else "procs",
        sweep_parameter=experiment.sweep_param if series else "", sweep_values=list(experiment.sweep_values or []),
        sweep_series=series, sweep_baselines=baselines, missing=missing, targets=targets,
    )


def sweep_series(experiment: Experiment, runs: list[Run], labels: list[str]) -> tuple[dict[str, list], dict[str, dict]]:
    """Swept runs grouped by policy preset (one summary per swept value), and the runs not swept."""
    values = list(experiment.sweep_values or [])
    if not experiment.sweep_param or not values:
        return {}, {}
    series: dict[str, list[Any]] = {}
    baselines: dict[str, dict] = {}
    for label, run in zip(labels, runs):
        if run.sweep_value is None:
            if run.summary:
                baselines[label] = run.summary
            continue
        preset = str((run.policy or {}).get("preset", label))
        row = series.setdefault(preset, [None] * len(values))
        if run.sweep_value in values and run.status == Run.Status.DONE:
            row[values.index(run.sweep_value)] = run.summary
    return series, baselines

