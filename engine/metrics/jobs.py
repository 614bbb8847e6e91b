"""Per-job metrics, computed from a simulated schedule the same way for every policy.

The schedule is the simulator's per-job DataFrame (one row per job, in arrival order, so the row
position is the job's arrival rank). Times are integer seconds in the trace's own time base.

Definitions (``tau`` = :data:`BSLD_TAU` = 10 s):

=============  ==========================================================================
``response``   ``end - submit`` (turnaround time)
``slowdown``   ``response / max(runtime, 1)`` -- a job that ran 0 s is treated as having run
               1 s, so the ratio stays finite; it then equals its response in seconds
``bsld``       ``max(1, response / max(runtime, tau))`` -- bounded slowdown; very short jobs
               are measured against ``tau`` so a 1 s job that waited 1 s does not count as
               "slowed down twice"
``stretch``    ``(wait + requested_time) / max(requested_time, 1)`` -- the wait relative to
               what the user asked for; a 0 s request counts as 1 s
``skip``       ``arrival rank - start rank`` -- positive when the job started ahead of
               ``skip`` jobs that arrived before it, negative when it was overtaken
=============  ==========================================================================

The array-level helpers below are what :func:`engine.metrics.summary.summarize` uses, so the
summary and the per-job table can never disagree.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Lower bound on the runtime used in bounded slowdown (seconds).
BSLD_TAU = 10


def response_times(submit: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Turnaround per job: ``end - submit``."""
    return np.asarray(end, dtype=np.int64) - np.asarray(submit, dtype=np.int64)


def slowdowns(response: np.ndarray, runtime: np.ndarray) -> np.ndarray:
    """``response / max(runtime, 1)``: plain slowdown, finite for zero-length jobs."""
    return np.asarray(response, dtype=np.float64) / np.maximum(np.asarray(runtime, dtype=np.float64), 1.0)


def bounded_slowdowns(response: np.ndarray, runtime: np.ndarray, tau: float = BSLD_TAU) -> np.ndarray:
    """``max(1, response / max(runtime, tau))``."""
    ratio = np.asarray(response, dtype=np.float64) / np.maximum(np.asarray(runtime, dtype=np.float64), float(tau))
    return np.maximum(ratio, 1.0)


def stretches(wait: np.ndarray, requested_time: np.ndarray) -> np.ndarray:
    """``(wait + requested) / max(requested, 1)``: 1.0 for a job that did not wait."""
    requested = np.asarray(requested_time, dtype=np.float64)
    return (np.asarray(wait, dtype=np.float64) + requested) / np.maximum(requested, 1.0)


def start_ranks(schedule: pd.DataFrame) -> np.ndarray:
    """0-based rank in which each job started.

    Uses the simulator's ``start_order`` when present (it knows the decision order of jobs started
    at the same instant); otherwise ranks by start time, ties broken by arrival.
    """
    if "start_order" in schedule.columns:
        return schedule["start_order"].to_numpy(dtype=np.int64)
    order = np.argsort(schedule["start"].to_numpy(), kind="stable")
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order), dtype=np.int64)
    return ranks


def skip_counts(schedule: pd.DataFrame) -> np.ndarray:
    """``arrival rank - start rank`` per job (arrival rank = row position).

    Note the sign: the Paragon paper (Subhlok et al., section 2.2) counts a job executed 3 jobs
    *earlier* than its arrival as -3; the SchedLab contract counts it as +3. ``mean_abs_skip``
    is the same under both conventions.
    """
    return np.arange(len(schedule), dtype=np.int64) - start_ranks(schedule)


def waits(schedule: pd.DataFrame) -> np.ndarray:
    """The schedule's ``wait`` column, or ``start - submit`` when it has none."""
    if "wait" in schedule.columns:
        return schedule["wait"].to_numpy(dtype=np.int64)
    return schedule["start"].to_numpy(dtype=np.int64) - schedule["submit"].to_numpy(dtype=np.int64)


def job_metrics(schedule: pd.DataFrame, *, tau: float = BSLD_TAU) -> pd.DataFrame:
    """A copy of ``schedule`` with ``response, slowdown, bsld, stretch, skip`` added.

    ``wait`` and ``killed`` are kept as the simulator wrote them (``wait`` is derived from
    ``start - submit`` if missing). The input frame is not modified.
    """
    result = schedule.copy()
    response = response_times(schedule["submit"].to_numpy(), schedule["end"].to_numpy())
    runtime = schedule["runtime"].to_numpy()
    wait = waits(schedule)
    if "wait" not in result.columns:
        result["wait"] = wait
    result["response"] = response
    result["slowdown"] = slowdowns(response, runtime)
    result["bsld"] = bounded_slowdowns(response, runtime, tau)
    result["stretch"] = stretches(wait, schedule["requested_time"].to_numpy())
    result["skip"] = skip_counts(schedule)
    return result
