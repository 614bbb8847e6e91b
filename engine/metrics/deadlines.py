"""Metrics of the deadline scenario (N'takpé & Suter, JSSPP 2017, §6.1), from a schedule with a
``deadline`` column (NaN for regular jobs; see :mod:`engine.workload.deadlines`).

=======================  =======================================================================
``wait``, ``stretch``    as in :mod:`engine.metrics.jobs`, split into regular and deadline jobs
``miss``                 a deadline job that ended after its deadline (``end > deadline``)
``24-hour`` deadline     slack ``deadline - submit`` of at most 24 h: under the paper's rule
                         ``max(24 h, 10 × requested)`` the jobs that asked for up to 2.4 h;
                         longer slacks are the *proportional* deadlines
``usage``                ``(end - submit) / (deadline - submit)``, per deadline job (eq. 3)
=======================  =======================================================================

The paper drops two kinds of job from some averages, offered here as options:
:func:`waited_somewhere` keeps the regular jobs that waited under at least one of the compared
policies (§6.3: jobs that started at submission under every policy hide the differences), and
``mean_deadline_usage_waited`` averages usage over the deadline jobs that waited (Fig. 7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from engine.metrics.jobs import stretches, waits
from engine.workload.deadlines import DEADLINE, MIN_SLACK, deadline_mask

#: Edges of the usage histogram (fractions of the deadline's slack; the last bin holds misses).
USAGE_EDGES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, np.inf)

#: Keys :func:`deadline_summary` returns, in order.
DEADLINE_KEYS = (
    "deadline_jobs", "regular_jobs",
    "mean_wait_regular", "mean_wait_deadline", "mean_stretch_regular", "mean_stretch_deadline",
    "max_stretch_regular", "deadline_misses", "deadline_misses_24h", "deadline_misses_proportional",
    "mean_deadline_usage", "median_deadline_usage", "max_deadline_usage", "mean_deadline_usage_waited",
)


def has_deadlines(schedule: pd.DataFrame) -> bool:
    return DEADLINE in schedule.columns


def deadline_usage(schedule: pd.DataFrame) -> np.ndarray:
    """Usage of every deadline job, in row order: (end - submit) / (deadline - submit)."""
    mask = deadline_mask(schedule)
    submit = schedule["submit"].to_numpy(dtype=np.float64)[mask]
    end = schedule["end"].to_numpy(dtype=np.float64)[mask]
    deadline = schedule[DEADLINE].to_numpy(dtype=np.float64)[mask]
    return (end - submit) / (deadline - submit)


def misses(schedule: pd.DataFrame) -> dict[str, int]:
    """Deadline jobs that ended after their deadline: all, with a 24-hour slack, with a longer one."""
    mask = deadline_mask(schedule)
    deadline = schedule[DEADLINE].to_numpy(dtype=np.float64)[mask] if mask.any() else np.empty(0)
    end = schedule["end"].to_numpy(dtype=np.float64)[mask]
    slack = deadline - schedule["submit"].to_numpy(dtype=np.float64)[mask]
    late = end > deadline
    short = slack <= MIN_SLACK
    return {"deadline_misses": int(late.sum()), "deadline_misses_24h": int((late & short).sum()),
            "deadline_misses_proportional": int((late & ~short).sum())}


def usage_histogram(usage: np.ndarray, edges: tuple[float, ...] = USAGE_EDGES) -> tuple[np.ndarray, np.ndarray]:
    """(counts, edges): deadline jobs per usage bin; bins are [a, b), the last one (>= 1) the misses
    and the jobs that ended exactly at their deadline."""
    edge_array = np.asarray(edges, dtype=np.float64)
    bins = np.searchsorted(edge_array, np.asarray(usage, dtype=np.float64), side="right") - 1
    bins = np.clip(bins, 0, len(edge_array) - 2)
    return np.bincount(bins, minlength=len(edge_array) - 1), edge_array


def deadline_summary(schedule: pd.DataFrame, *, keep: np.ndarray | None = None) -> dict[str, Any]:
    """The scenario's figures (:data:`DEADLINE_KEYS`); ``None`` where a group is empty.

    ``keep``: an optional boolean row mask applied to the *regular* jobs' wait and stretch figures
    (e.g. :func:`waited_somewhere`); deadline jobs are always all counted.
    """
    mask = deadline_mask(schedule)
    regular = ~mask if keep is None else (~mask & keep)
    wait = waits(schedule).astype(np.float64)
    stretch = stretches(wait, schedule["requested_time"].to_numpy())
    usage = deadline_usage(schedule)
    waited = wait[mask] > 0
    result: dict[str, Any] = {
        "deadline_jobs": int(mask.sum()),
        "regular_jobs": int(regular.sum()),
        "mean_wait_regular": _mean(wait[regular]),
        "mean_wait_deadline": _mean(wait[mask]),
        "mean_stretch_regular": _mean(stretch[regular]),
        "mean_stretch_deadline": _mean(stretch[mask]),
        "max_stretch_regular": float(stretch[regular].max()) if regular.any() else None,
        **misses(schedule),
        "mean_deadline_usage": _mean(usage),
        "median_deadline_usage": float(np.median(usage)) if len(usage) else None,
        "max_deadline_usage": float(usage.max()) if len(usage) else None,
        "mean_deadline_usage_waited": _mean(usage[waited]),
    }
    return result


def waited_somewhere(schedules: Mapping[str, pd.DataFrame]) -> np.ndarray:
    """Row mask of the jobs that waited under at least one of ``schedules`` (the paper's filter of
    jobs that waited 0 under every compared policy). The schedules must hold the same jobs in the
    same order (the same workload and deadline seed), which is checked."""
    frames = list(schedules.values())
    if not frames:
        return np.zeros(0, dtype=bool)
    ids = frames[0]["job_id"].to_numpy()
    for label, frame in schedules.items():
        if len(frame) != len(ids) or not np.array_equal(frame["job_id"].to_numpy(), ids):
            raise ValueError(f"{label}: not the same jobs as the other schedules; the zero-wait filter needs them")
    return np.logical_or.reduce([waits(frame) > 0 for frame in frames])


def with_deadlines_of(schedule: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``schedule`` whose ``deadline`` column is that of ``jobs`` (matched by job id; a job
    ``jobs`` does not have is regular). For a schedule that did not read deadlines (EASY, conservative)
    against the deadline jobs of one share of the scenario: the schedule is the same at every share,
    its deadline figures are not. ValueError when ``jobs`` repeats a job id (no match is possible)."""
    ids = jobs["job_id"].to_numpy()
    if len(np.unique(ids)) != len(ids):
        raise ValueError("the workload repeats job ids: its deadlines cannot be matched to the schedule's jobs")
    deadline = (jobs[DEADLINE].to_numpy(dtype=np.float64) if DEADLINE in jobs.columns
                else np.full(len(jobs), np.nan))
    marked = schedule.copy()
    marked[DEADLINE] = pd.Series(deadline, index=ids).reindex(schedule["job_id"].to_numpy()).to_numpy(dtype=np.float64)
    return marked


def compared_summaries(schedules: Mapping[str, pd.DataFrame], *, drop_zero_wait: bool = False) -> dict[str, dict]:
    """:func:`deadline_summary` of each schedule; with ``drop_zero_wait`` the regular jobs' figures
    leave out the jobs that waited 0 under every one of them (§6.3)."""
    keep = waited_somewhere(schedules) if drop_zero_wait else None
    return {label: deadline_summary(frame, keep=keep) for label, frame in schedules.items()}


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None
