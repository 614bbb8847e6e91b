"""What a reconfiguration changes, as an admin reads it: per queue and per user, run beside run.

Runs (``recorded``, ``current``, ``proposed``, ...) are schedules of the same trace. Every figure is
over the jobs present in **all** of them (matched by ``job_id``), so each column describes the same
jobs; jobs are grouped by the queue the *trace* gives them (``queue_of``), so a configuration that
moves jobs to other queues is still compared job for job. The change is ``proposed - current``
(negative: jobs wait less).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from typing import Any

import numpy as np
import pandas as pd

from engine.platform.infer import zone_named

OVERALL = "overall"


def matched_waits(schedules: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per job present in every run: ``job_id``, ``user`` and each run's wait (a column per run)."""
    merged: pd.DataFrame | None = None
    for name, schedule in schedules.items():
        part = schedule[["job_id", "user", "wait"]].rename(columns={"wait": name})
        merged = part if merged is None else merged.merge(part.drop(columns="user"), on="job_id", how="inner")
    return merged if merged is not None else pd.DataFrame(columns=["job_id", "user"])


def by_queue(schedules: Mapping[str, pd.DataFrame], queue_of: Mapping[int, str], *, before: str = "current",
             after: str = "proposed") -> list[dict[str, Any]]:
    """Rows ``{"queue", "jobs", "mean_wait": {run: seconds}, "change": seconds | None}``: overall first,
    then each trace queue by name."""
    waits = matched_waits(schedules)
    runs = list(schedules)
    waits["queue"] = waits["job_id"].map(queue_of).fillna("(none)").astype(str)
    groups = [(OVERALL, waits)] + [(str(name), part) for name, part in waits.groupby("queue", sort=True)]
    rows = []
    for name, part in groups:
        means: dict[str, float | None] = {run: float(part[run].mean()) if len(part) else None for run in runs}
        low, high = means.get(before), means.get(after)
        change = high - low if low is not None and high is not None else None
        rows.append({"queue": name, "jobs": len(part), "mean_wait": means, "change": change})
    return rows


def user_changes(schedules: Mapping[str, pd.DataFrame], *, before: str = "current", after: str = "proposed",
                 top: int = 5) -> dict[str, list[dict[str, Any]]]:
    """The users whose mean wait falls most (``gain``) and rises most (``lose``) from ``before`` to
    ``after``: ``{"user", "jobs", "before", "after", "change"}`` (seconds), biggest change first."""
    waits = matched_waits({before: schedules[before], after: schedules[after]})
    if not len(waits):
        return {"gain": [], "lose": []}
    table = waits.groupby("user").agg(jobs=("job_id", "size"), before=(before, "mean"), after=(after, "mean"))
    table["change"] = table["after"] - table["before"]
    table = table.reset_index()
    gain = table[table["change"] < 0].sort_values(["change", "user"]).head(top)
    lose = table[table["change"] > 0].sort_values(["change", "user"], ascending=[False, True]).head(top)
    return {"gain": _records(gain), "lose": _records(lose)}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{"user": int(row.user), "jobs": int(row.jobs), "before": float(row.before), "after": float(row.after),
             "change": float(row.change)} for row in frame.itertuples(index=False)]


def wall_clock(epochs: np.ndarray, zone: str) -> pd.DatetimeIndex:
    """Epoch seconds as naive wall-clock times in ``zone`` (``Europe/Prague``, ``UTC+01:00``; what a
    datetime axis shows as is); an unknown zone is UTC."""
    stamps = pd.to_datetime(np.asarray(epochs, dtype=np.float64), unit="s", utc=True)
    return stamps.tz_convert(zone_named(zone) or UTC).tz_localize(None)
