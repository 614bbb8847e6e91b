"""Cleaning: turn a raw SWF trace into a canonical, simulatable :class:`Workload`.

Rules, applied in this order; a job rejected by one rule is counted under that rule only, so
``len(workload) + report.total_rejected == trace.lines - trace.bad_lines``:

1. submit time < 0 (missing)                       -> rejected
2. runtime < 0 (missing, -1)                       -> rejected
3. processors: allocated_procs; if that is missing (<= 0) requested_procs is used (repaired);
   if both are missing                              -> rejected
4. more processors than the machine                -> rejected (oversize="reject")
                                                      or clipped to the machine (oversize="clip", repaired)
5. requested time missing (<= 0)                   -> set to the runtime, at least 1 s so that
                                                      ratios such as stretch stay defined (repaired)
6. runtime > requested time                        -> killed at the requested time (overrun="kill",
                                                      repaired, ``killed=True``) or left to run its
                                                      full runtime (overrun="run", counted as kept)
7. runtime == 0                                    -> kept as they are (they are real submissions
                                                      that occupied the queue), counted as kept
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from engine.workload.errors import WorkloadError
from engine.workload.model import CANONICAL_COLUMNS, CleaningReport, Workload
from engine.workload.names import header_names, name_metadata
from engine.workload.swf import SwfTrace

Oversize = Literal["reject", "clip"]
Overrun = Literal["kill", "run"]

#: Raw trace columns carried along after the canonical ones.
EXTRA_COLUMNS = ("wait_trace", "status", "executable", "requested_procs", "allocated_procs")

REJECT_SUBMIT = "submit time missing or negative"
REJECT_RUNTIME = "runtime missing or negative"
REJECT_PROCS = "processors missing (allocated and requested both <= 0)"
REJECT_OVERSIZE = "more processors than the machine"
REPAIR_PROCS = "processors taken from requested_procs (allocated missing)"
REPAIR_OVERSIZE = "processors clipped to the machine size"
REPAIR_REQUEST = "requested time missing, set to the runtime"
REPAIR_KILLED = "killed at requested time"
KEPT_OVERRUN = "runtime over requested time, left to run (overrun=run)"
KEPT_ZERO_RUNTIME = "runtime 0 (kept)"


def clean(
    trace: SwfTrace,
    *,
    machine_procs: int,
    oversize: Oversize = "reject",
    overrun: Overrun = "kill",
    extra: pd.DataFrame | None = None,
) -> Workload:
    """Apply the cleaning rules (see the module docstring) and count every decision.

    ``extra``: more columns, row-aligned with ``trace.jobs`` (e.g. the node-level requests of an
    extended trace), appended after the others and kept, dropped and sorted with their jobs."""
    machine_procs = _checked_machine_procs(machine_procs)
    _check_choice("oversize", oversize, ("reject", "clip"))
    _check_choice("overrun", overrun, ("kill", "run"))

    report = CleaningReport(bad_lines=trace.bad_lines)
    report.note_bad_lines(trace.bad_line_errors)
    raw = trace.jobs
    keep = np.ones(len(raw), dtype=bool)

    submit = raw["submit_time"].to_numpy()
    keep &= _reject_where(report, REJECT_SUBMIT, keep, submit < 0, submit)
    runtime = raw["run_time"].to_numpy(dtype=np.int64).copy()
    keep &= _reject_where(report, REJECT_RUNTIME, keep, runtime < 0, submit)

    procs = _processors(raw, keep, report)
    keep &= _reject_where(report, REJECT_PROCS, keep, procs <= 0, submit)
    procs = _fit_to_machine(procs, keep, machine_procs, oversize, report)
    keep &= _reject_where(report, REJECT_OVERSIZE, keep, procs > machine_procs, submit)

    requested = _requested_time(raw, runtime, keep, report)
    runtime, killed = _overruns(runtime, requested, keep, overrun, report)
    report.keep(KEPT_ZERO_RUNTIME, int((keep & (runtime == 0)).sum()))

    jobs = pd.DataFrame(
        {
            "job_id": raw["job_number"].to_numpy(),
            "submit": raw["submit_time"].to_numpy(),
            "runtime": runtime,
            "requested_time": requested,
            "procs": procs,
            "user": raw["user_id"].to_numpy(),
            "group": raw["group_id"].to_numpy(),
            "queue": raw["queue"].to_numpy(),
            "partition": raw["partition"].to_numpy(),
            "killed": killed,
            "wait_trace": raw["wait_time"].to_numpy(),
            "status": raw["status"].to_numpy(),
            "executable": raw["executable"].to_numpy(),
            "requested_procs": raw["requested_procs"].to_numpy(),
            "allocated_procs": raw["allocated_procs"].to_numpy(),
        }
    )
    if extra is not None:
        jobs = pd.concat([jobs, extra.reset_index(drop=True)], axis=1)
    jobs = _typed(jobs[keep]).sort_values("submit", kind="stable").reset_index(drop=True)

    metadata: dict = dict(trace.metadata)
    metadata["procs"] = machine_procs
    metadata.update(header_names(trace.metadata))
    metadata.update(name_metadata(getattr(trace, "names", {})))
    return Workload(jobs=jobs, metadata=metadata, report=report, source=trace.source)


def _reject_where(report: CleaningReport, reason: str, keep: np.ndarray, bad: np.ndarray,
                  submit: np.ndarray) -> np.ndarray:
    """Count the still-kept jobs that fail this rule (with their submit times) and return the mask of
    jobs that pass it."""
    newly_rejected = keep & bad
    report.reject(reason, int(newly_rejected.sum()), submit[newly_rejected].tolist())
    return ~newly_rejected


def _processors(raw: pd.DataFrame, keep: np.ndarray, report: CleaningReport) -> np.ndarray:
    """allocated_procs, falling back to requested_procs where the allocation is missing."""
    allocated = raw["allocated_procs"].to_numpy(dtype=np.int64)
    requested = raw["requested_procs"].to_numpy(dtype=np.int64)
    fallback = (allocated <= 0) & (requested > 0)
    report.repair(REPAIR_PROCS, int((keep & fallback).sum()))
    return np.where(fallback, requested, allocated)


def _fit_to_machine(
    procs: np.ndarray, keep: np.ndarray, machine_procs: int, oversize: Oversize, report: CleaningReport
) -> np.ndarray:
    if oversize != "clip":
        return procs
    too_big = procs > machine_procs
    report.repair(REPAIR_OVERSIZE, int((keep & too_big).sum()))
    return np.minimum(procs, machine_procs)


def _requested_time(
    raw: pd.DataFrame, runtime: np.ndarray, keep: np.ndarray, report: CleaningReport
) -> np.ndarray:
    requested = raw["requested_time"].to_numpy(dtype=np.int64)
    missing = requested <= 0
    report.repair(REPAIR_REQUEST, int((keep & missing).sum()))
    return np.where(missing, np.maximum(runtime, 1), requested)


def _overruns(
    runtime: np.ndarray, requested: np.ndarray, keep: np.ndarray, overrun: Overrun, report: CleaningReport
) -> tuple[np.ndarray, np.ndarray]:
    """Runtime and the killed flag after handling jobs that ran longer than they asked for."""
    over = runtime > requested
    counted = int((keep & over).sum())
    if overrun == "run":
        report.keep(KEPT_OVERRUN, counted)
        return runtime, np.zeros(len(runtime), dtype=bool)
    report.repair(REPAIR_KILLED, counted)
    return np.where(over, requested, runtime), over


def _typed(jobs: pd.DataFrame) -> pd.DataFrame:
    dtypes: dict[str, type] = {name: np.int64 for name in (*CANONICAL_COLUMNS, *EXTRA_COLUMNS)}
    dtypes["killed"] = bool
    return jobs.astype(dtypes)


def _checked_machine_procs(machine_procs: int) -> int:
    try:
        size = int(machine_procs)
    except (TypeError, ValueError):
        raise WorkloadError(f"machine size must be a positive integer, got {machine_procs!r}") from None
    if size <= 0 or size != machine_procs:
        raise WorkloadError(f"machine size must be a positive integer, got {machine_procs!r}")
    return size


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
