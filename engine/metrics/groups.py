"""Figures per group of jobs (queue, cluster): what the per-queue summary and the preview show."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

HOUR = 3600.0


def per_group(schedule: pd.DataFrame, column: str) -> dict[str, dict[str, Any]]:
    """``{group: {jobs, mean_wait, p95_wait, core_hours}}`` for every value of ``column`` (sorted by name).

    Core-hours are processors × runtime of the group's jobs; waits are in seconds."""
    if column not in schedule or schedule.empty:
        return {}
    frame = pd.DataFrame({
        "group": schedule[column].astype(str).to_numpy(),
        "wait": schedule["wait"].to_numpy(dtype=np.float64),
        "work": schedule["procs"].to_numpy(dtype=np.float64) * schedule["runtime"].to_numpy(dtype=np.float64),
    })
    result: dict[str, dict[str, Any]] = {}
    for name, part in frame.groupby("group", sort=True):
        waits = part["wait"].to_numpy()
        result[str(name)] = {
            "jobs": int(len(part)),
            "mean_wait": float(waits.mean()),
            "p95_wait": float(np.percentile(waits, 95)),
            "core_hours": round(float(part["work"].sum()) / HOUR, 1),
        }
    return result


def busy_by_group(schedule: pd.DataFrame, column: str, times: np.ndarray) -> dict[str, np.ndarray]:
    """Processors held by each group's running jobs at each of ``times`` (a job holds [start, end))."""
    result: dict[str, np.ndarray] = {}
    if column not in schedule or schedule.empty:
        return result
    for name, part in schedule.groupby(schedule[column].astype(str), sort=True):
        edges = np.concatenate([part["start"].to_numpy(), part["end"].to_numpy()])
        deltas = np.concatenate([part["procs"].to_numpy(), -part["procs"].to_numpy()]).astype(np.float64)
        order = np.argsort(edges, kind="stable")
        edges, level = edges[order], np.cumsum(deltas[order])
        index = np.searchsorted(edges, times, side="right") - 1
        result[str(name)] = np.where(index >= 0, level[np.maximum(index, 0)], 0.0)
    return result


def weekly(schedule: pd.DataFrame, origin: int) -> pd.DataFrame:
    """Per week from ``origin`` (by end time): jobs completed, core-hours completed, mean wait (s) of
    the jobs that started that week."""
    week = 7 * 86400
    end_week = (schedule["end"].to_numpy() - origin) // week
    start_week = (schedule["start"].to_numpy() - origin) // week
    weeks = int(max(end_week.max(), start_week.max())) + 1 if len(schedule) else 0
    work = schedule["procs"].to_numpy(np.float64) * schedule["runtime"].to_numpy(np.float64) / HOUR
    jobs = np.bincount(end_week, minlength=weeks)
    core_hours = np.bincount(end_week, weights=work, minlength=weeks)
    started = np.bincount(start_week, minlength=weeks)
    wait_sum = np.bincount(start_week, weights=schedule["wait"].to_numpy(np.float64), minlength=weeks)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_wait = np.where(started > 0, wait_sum / np.maximum(started, 1), np.nan)
    return pd.DataFrame({"week": np.arange(weeks), "jobs": jobs, "core_hours": core_hours, "mean_wait": mean_wait})


def penalty_increase(cpu_penalty: np.ndarray, multi_penalty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paper's *affected jobs* (multi-resource penalty differs from the CPU one) as a mask, and
    their percentage increase ``(P_mrfs - P_cpu) / P_cpu * 100`` (negative when it fell)."""
    cpu = np.asarray(cpu_penalty, dtype=np.float64)
    multi = np.asarray(multi_penalty, dtype=np.float64)
    affected = ~np.isclose(cpu, multi) & (cpu > 0)
    return affected, (multi[affected] - cpu[affected]) / cpu[affected] * 100.0
