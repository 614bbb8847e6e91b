"""A JSON-able characterization of a workload: what the trace page and ``engine inspect`` show."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.workload.model import Workload
from engine.workload.recorded import recorded_starts

SECONDS_PER_DAY = 86_400


def describe(workload: Workload) -> dict:
    """Jobs, submit span, users and groups, size/runtime/request statistics, core-hours, the header
    metadata and the cleaning report. Only plain ints, floats, strings, lists and dicts."""
    jobs = workload.jobs
    submit = jobs["submit"]
    first = int(submit.min()) if len(jobs) else None
    last = int(submit.max()) if len(jobs) else None
    span = last - first if first is not None and last is not None else 0
    procs = workload.metadata.get("procs")
    return {
        "source": workload.source,
        "jobs": int(len(jobs)),
        "first_submit": first,
        "last_submit": last,
        "span_seconds": int(span),
        "span_days": round(span / SECONDS_PER_DAY, 3),
        "users": _distinct_known(jobs["user"]),
        "groups": _distinct_known(jobs["group"]),
        "procs": int(procs) if procs is not None else None,
        "size": _stats(jobs["procs"]),
        "runtime": _stats(jobs["runtime"]),
        "requested_time": _stats(jobs["requested_time"]),
        "killed": int(jobs["killed"].sum()),
        "core_hours": round(float((jobs["procs"] * jobs["runtime"]).sum()) / 3600.0, 1),
        "recorded_starts": int((recorded_starts(workload) >= 0).sum()),
        "metadata": {key: _plain(value) for key, value in workload.metadata.items()},
        "report": workload.report.to_dict(),
    }


def _distinct_known(column: pd.Series) -> int:
    """Distinct ids, not counting -1 (unknown)."""
    return int(column[column >= 0].nunique())


def _stats(column: pd.Series) -> dict:
    if column.empty:
        return {"min": None, "median": None, "mean": None, "max": None}
    values = column.to_numpy(dtype=np.float64)
    return {
        "min": int(values.min()),
        "median": float(np.median(values)),
        "mean": round(float(values.mean()), 3),
        "max": int(values.max()),
    }


def _plain(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    return value
