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
