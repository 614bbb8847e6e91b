"""What a trace records of the schedule that really happened: each job's start, where known.

SWF keeps it as the wait field (field 3; -1 = unknown), and the accounting-log readers write their
S records / sacct Start the same way, so every reader's workload has ``wait_trace``. A job has a
recorded start when that wait is >= 0: start = submit + wait.
"""

from __future__ import annotations

import numpy as np

from engine.workload.model import CleaningReport, Workload

REJECT_NO_START = "no recorded start time (recorded run)"


def recorded_starts(workload: Workload) -> np.ndarray:
    """Each job's recorded start (absolute, the trace's time base), -1 where the trace has none."""
    jobs = workload.jobs
    if "wait_trace" not in jobs:
        return np.full(len(jobs), -1, dtype=np.int64)
    wait = jobs["wait_trace"].to_numpy(dtype=np.int64)
    return np.where(wait >= 0, jobs["submit"].to_numpy(dtype=np.int64) + wait, -1)


def parsed_without_recorded_starts(workload: Workload) -> bool:
    """True for a workload parsed before the readers kept each job's recorded start (a columnar
    cache written then has no ``wait_trace`` column): parse the trace again to have them."""
    return "wait_trace" not in workload.jobs


def has_recorded_starts(workload: Workload) -> bool:
    """True when at least one job has a recorded start (the trace can be run as ``recorded``)."""
    return bool((recorded_starts(workload) >= 0).any())


def with_recorded_starts(workload: Workload) -> Workload:
    """Only the jobs with a recorded start; the others are counted in the report's rejections."""
    known = recorded_starts(workload) >= 0
    report = CleaningReport.from_dict(workload.report.to_dict())
    report.reject(REJECT_NO_START, int((~known).sum()))
    jobs = workload.jobs.loc[known].reset_index(drop=True)
    return Workload(jobs, dict(workload.metadata), report, workload.source)
