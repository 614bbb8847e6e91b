"""The deadline scenario of deadline-based backfilling (N'takpé & Suter, JSSPP 2017, §3 and §5).

A *deadline job* carries a ``deadline`` (seconds, the trace's time base) before which it must
complete; every other job is *regular* (``deadline`` is NaN). Deadlines come either from

* :func:`assign_deadlines`: X % of the jobs picked at random (seeded, so every policy of an
  experiment sees the same deadline jobs), each with
  ``deadline = submit + max(24 h, 10 × requested_time)`` (§5); or
* :func:`deadlines_from_column`: a column the workload already has (NaN, empty or negative =
  regular).

:func:`paper_preprocessing` is the paper's §3 preparation of a trace: jobs with a negative runtime or
processor count are dropped and jobs are stopped at their walltime (both already what
:func:`engine.workload.transforms.clean` does by default), and jobs of the queues the trace's header
names *interactive* are removed.

The column is float64 so that NaN can mark regular jobs in numpy arrays; the schedule CSV writes it
as whole seconds, empty for regular jobs.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from engine.workload.errors import WorkloadError
from engine.workload.model import Workload

DEADLINE = "deadline"
#: The shortest deadline of the scenario: a day after submission (§5, the daily load pattern).
MIN_SLACK = 86_400
#: The deadline grows with the walltime: 10 × the requested time (§5, the observed mean stretch).
WALLTIME_FACTOR = 10

REMOVED_INTERACTIVE = "interactive queue (paper preprocessing)"
_QUEUE_LINE = re.compile(r"^\s*(-?\d+)\s+(\S+)")


def scenario_deadlines(submit: np.ndarray, requested_time: np.ndarray) -> np.ndarray:
    """``submit + max(24 h, 10 × requested_time)`` for every job (int64 seconds)."""
    slack = np.maximum(MIN_SLACK, WALLTIME_FACTOR * np.asarray(requested_time, dtype=np.int64))
    return np.asarray(submit, dtype=np.int64) + slack


def pick_deadline_jobs(n: int, fraction: float, seed: int) -> np.ndarray:
    """A boolean mask with ``round(fraction × n)`` jobs chosen uniformly at random (seeded)."""
    if not 0.0 <= fraction <= 1.0 or math.isnan(fraction):
        raise WorkloadError(f"deadline fraction must be between 0 and 1, got {fraction!r}", field="deadline_fraction")
    count = int(round(fraction * n))
    mask = np.zeros(n, dtype=bool)
    if count:
        mask[np.random.default_rng(seed).choice(n, size=count, replace=False)] = True
    return mask


def assign_deadlines(workload: Workload, fraction: float, *, seed: int = 0) -> Workload:
    """A copy of ``workload`` in which ``fraction`` of the jobs (seeded pick) have the scenario's
    deadline; the rest are regular. Refuses a workload that already has deadlines."""
    jobs = workload.jobs
    if DEADLINE in jobs.columns and jobs[DEADLINE].notna().any():
        raise WorkloadError("the workload already has deadlines; a deadline fraction would replace them",
                            file=workload.source or None, field="deadline_fraction")
    chosen = pick_deadline_jobs(len(jobs), fraction, seed)
    deadline = scenario_deadlines(jobs["submit"].to_numpy(), jobs["requested_time"].to_numpy())
    return _with_deadlines(workload, np.where(chosen, deadline.astype(np.float64), np.nan),
                           f"{fraction:g} (seed {seed})")


def deadlines_from_column(workload: Workload, column: str = DEADLINE) -> Workload:
    """Use ``column`` as the deadline (NaN, empty or < 0 = regular job). A deadline at or before the
    job's submission is bad input and names the job."""
    jobs = workload.jobs
    if column not in jobs.columns:
        raise WorkloadError(f"no column {column!r} to read deadlines from", file=workload.source or None, field=column)
    values = pd.to_numeric(jobs[column], errors="coerce").to_numpy(dtype=np.float64)
    values = np.where(values < 0, np.nan, values)
    bad = np.flatnonzero(~np.isnan(values) & (values <= jobs["submit"].to_numpy()))
    if len(bad):
        job = jobs["job_id"].iloc[bad[0]] if "job_id" in jobs else bad[0]
        raise WorkloadError(f"job {job}: deadline {values[bad[0]]:g} is not after its submission "
                            f"{jobs['submit'].iloc[bad[0]]}", file=workload.source or None, field=column)
    return _with_deadlines(workload, values, f"column {column}")


def deadline_mask(jobs: pd.DataFrame) -> np.ndarray:
    """Which rows are deadline jobs (False everywhere when there is no deadline column)."""
    if DEADLINE not in jobs.columns:
        return np.zeros(len(jobs), dtype=bool)
    return ~np.isnan(jobs[DEADLINE].to_numpy(dtype=np.float64))


def interactive_queues(metadata: dict) -> set[int]:
    """Queue numbers whose header line (``; Queue: 0 interactive``) names them interactive."""
    queues = set()
    for line in str(metadata.get("Queue", "")).splitlines():
        match = _QUEUE_LINE.match(line)
        if match and "interactive" in match.group(2).lower():
            queues.add(int(match.group(1)))
    return queues


def paper_preprocessing(workload: Workload) -> Workload:
    """§3 of the paper: remove the jobs of interactive queues (counted in the cleaning report).

    The other two steps of §3, dropping jobs with a negative runtime or processor count and stopping
    jobs at their walltime, are the default cleaning rules, so a workload loaded with the defaults
    (``overrun="kill"``) already has them.
    """
    jobs = workload.jobs
    queues = interactive_queues(workload.metadata)
    if not queues or "queue" not in jobs.columns:
        return workload
    drop = jobs["queue"].isin(sorted(queues)).to_numpy()
    if not drop.any():
        return workload
    report = type(workload.report).from_dict(workload.report.to_dict())
    report.reject(REMOVED_INTERACTIVE, int(drop.sum()))
    return Workload(jobs.loc[~drop].reset_index(drop=True), dict(workload.metadata), report, workload.source)


def _with_deadlines(workload: Workload, deadline: np.ndarray, how: str) -> Workload:
    jobs = workload.jobs.copy()
    jobs[DEADLINE] = deadline
    metadata = dict(workload.metadata)
    metadata["deadlines"] = how
    return Workload(jobs, metadata, workload.report, workload.source)
