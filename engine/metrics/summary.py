"""One JSON-able dict of headline figures for a simulated schedule.

Every value is a plain ``int``, ``float``, ``None`` (undefined, e.g. for an empty schedule or
a zero-length span; NaN never escapes), or for ``rejected`` a ``{reason: count}`` dict.

Percentiles (``median_*``, ``p95_*``) use numpy's default linear interpolation between order
statistics. ``span`` is ``last end - first submit``; ``utilization`` is the useful work
``sum(procs * runtime)`` over ``capacity * span`` (processors a buddy allocator holds beyond the
request, the ``alloc`` column, count as idle).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from engine.metrics.deadlines import deadline_summary, has_deadlines
from engine.metrics.fairness import jain_index, mean_by_owner
from engine.metrics.jobs import bounded_slowdowns, response_times, skip_counts, stretches, waits

#: Every key :func:`summarize` returns, in order.
SUMMARY_KEYS = (
    "jobs", "rejected", "rejected_total",
    "mean_wait", "median_wait", "p95_wait", "max_wait",
    "mean_response", "median_response", "p95_response", "max_response",
    "mean_bsld", "median_bsld", "p95_bsld", "max_bsld",
    "max_stretch", "mean_stretch", "weighted_turnaround",
    "mean_abs_skip", "max_skip",
    "utilization", "makespan", "throughput", "jain_bsld",
    "killed", "wall_seconds",
)


def plain(value: Any) -> Any:
    """A JSON-able value: numpy/pandas scalars and arrays as plain Python values, NaN and
    infinities as ``None``, anything else that JSON cannot hold (a path, ...) as its text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        as_float = float(value)
        return as_float if math.isfinite(as_float) else None
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    return str(value)


def distribution(name: str, values: np.ndarray) -> dict[str, float]:
    """``mean_<name>, median_<name>, p95_<name>, max_<name>`` of a non-empty array."""
    median, p95 = np.percentile(values, [50, 95])
    return {
        f"mean_{name}": float(values.mean()),
        f"median_{name}": float(median),
        f"p95_{name}": float(p95),
        f"max_{name}": float(values.max()),
    }


def rejected_counts(rejected: Mapping[str, int] | None) -> dict[str, int]:
    return {str(reason): int(count) for reason, count in (rejected or {}).items()}


def summarize(
    schedule: pd.DataFrame,
    capacity: int,
    *,
    rejected: Mapping[str, int] | None = None,
    wall_seconds: float | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Headline metrics of ``schedule`` on a machine of ``capacity`` processors.

    ``rejected`` (jobs removed before simulation, by reason) and ``wall_seconds`` (simulation
    time) are passed through; ``extra`` entries are added last (made JSON-able) and may not
    overwrite a metric. An empty schedule gives ``jobs = 0``, ``killed = 0`` and ``None`` for
    every statistic.
    """
    rejected_by_reason = rejected_counts(rejected)
    result: dict[str, Any] = dict.fromkeys(SUMMARY_KEYS)
    result.update(
        jobs=len(schedule),
        rejected=rejected_by_reason,
        rejected_total=sum(rejected_by_reason.values()),
        killed=0,
        wall_seconds=plain(wall_seconds),
    )
    if len(schedule):
        result.update(schedule_statistics(schedule, capacity))
        if has_deadlines(schedule):
            result.update(deadline_summary(schedule))
    if extra:
        clashes = set(extra) & set(SUMMARY_KEYS)
        if clashes:
            raise ValueError(f"extra summary entries would overwrite metrics: {sorted(clashes)}")
        result.update({str(k): plain(v) for k, v in extra.items()})
    return {k: plain(v) for k, v in result.items()}


def schedule_statistics(schedule: pd.DataFrame, capacity: int) -> dict[str, Any]:
    """Everything in the summary that needs at least one job."""
    submit = schedule["submit"].to_numpy(dtype=np.int64)
    end = schedule["end"].to_numpy(dtype=np.int64)
    runtime = schedule["runtime"].to_numpy(dtype=np.int64)
    procs = schedule["procs"].to_numpy(dtype=np.float64)
    wait = waits(schedule)
    response = response_times(submit, end)
    bsld = bounded_slowdowns(response, runtime)
    stretch = stretches(wait, schedule["requested_time"].to_numpy())
    skip = skip_counts(schedule)

    span = int(end.max() - submit.min())
    work = float(np.dot(procs, runtime))
    total_procs = float(procs.sum())
    stats: dict[str, Any] = {
        **distribution("wait", wait),
        **distribution("response", response),
        **distribution("bsld", bsld),
        "max_stretch": float(stretch.max()),
        "mean_stretch": float(stretch.mean()),
        "weighted_turnaround": float(np.dot(procs, response)) / total_procs if total_procs > 0 else None,
        "mean_abs_skip": float(np.abs(skip).mean()),
        "max_skip": int(skip.max()),
        "makespan": span,
        "utilization": work / (capacity * span) if span > 0 and capacity > 0 else None,
        "throughput": len(schedule) / (span / 3600.0) if span > 0 else None,
        "jain_bsld": jain_index(mean_by_owner(schedule["user"].to_numpy(), bsld)),
        "killed": int(schedule["killed"].to_numpy(dtype=bool).sum()),
    }
    return stats


def summarize_result(result: Any, **extra: Any) -> dict[str, Any]:
    """The summary of a simulation result: every metric, what produced it, and the figures its
    policy adds (``result.meta["summary"]``). The command line and the web both call this."""
    meta = result.meta
    produced = {key: meta[key] for key in ("policy", "label", "allocation", "exact_estimates", "seed",
                                           "capacity", "engine_version") if key in meta}
    produced.update(meta.get("summary") or {})
    produced.update(extra)
    return summarize(result.schedule, result.capacity, rejected=meta.get("rejected"),
                     wall_seconds=meta.get("wall_seconds"), extra=produced)
