"""User resampling: a new trace of the same length made of whole user job streams, at a chosen load.

Zakay & Feitelson, "Workload resampling for performance evaluation of parallel job schedulers",
ICPE 2013: a trace is one sample of its users' behaviour; recombining the users' job streams gives
other samples of the same population (and so confidence intervals), and adding or leaving out users
gives other load levels without distorting job sizes, runtimes or the arrival pattern.

Our form of it (simpler than the paper's: no feedback from response times to later submissions,
and no split into long-term and temporary users by the length of their activity, though both kinds
are drawn in proportion): the trace is seen as ``H`` weeks from its first submit. A user's *stream*
is all of their jobs, spanning weeks ``w0..w1``. The new trace is built by drawing users uniformly
with replacement and placing each drawn stream, whole, at a start week drawn uniformly among those
where it fits inside the ``H`` weeks. A stream moves only by whole weeks, so every job keeps its
time of day and day of the week: the daily and weekly cycles of the trace are kept. Each placed
copy becomes a new user (``user`` renumbered 1.., ``resampled_from`` the original user). Streams
are added until the offered work (``sum(procs * runtime)``) reaches ``load`` times the trace's;
a stream that would overshoot the target by more than ``tolerance`` is skipped (up to
:data:`SKIPS` in a row, after which the work ends as close to the target as the smallest overshoot or
stopping short allows), so the
work is within ``tolerance`` of the target unless single streams are larger than that.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.workload.errors import WorkloadError
from engine.workload.load import check_load_factor
from engine.workload.model import Workload
from engine.workload.window import WEEK

#: streams skipped in a row (each would overshoot the target) before settling for the closest
SKIPS = 200


def offered_work(workload: Workload) -> float:
    """``sum(procs * runtime)``: processor-seconds the jobs ask of the machine."""
    jobs = workload.jobs
    return float(np.dot(jobs["procs"].to_numpy(dtype=np.float64), jobs["runtime"].to_numpy(dtype=np.float64)))


def resample_users(workload: Workload, seed: int, *, load: float = 1.0, tolerance: float = 0.02) -> Workload:
    """A resampled trace (see the module docstring): whole user streams, shifted by whole weeks,
    until the offered work is ``load`` times the trace's, within ``tolerance``."""
    load = check_load_factor(load)
    jobs = workload.jobs
    if not len(jobs):
        return workload
    if "user" not in jobs or (jobs["user"] < 0).all():
        raise WorkloadError("user resampling needs the users of the jobs, and this trace records none")
    submit = jobs["submit"].to_numpy(dtype=np.int64)
    origin = int(submit.min())
    horizon = int((submit.max() - origin) // WEEK + 1)
    week = (submit - origin) // WEEK
    work = jobs["procs"].to_numpy(dtype=np.float64) * jobs["runtime"].to_numpy(dtype=np.float64)
    target = load * float(work.sum())
    users, inverse = np.unique(jobs["user"].to_numpy(), return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    rows_of = np.split(order, np.cumsum(np.bincount(inverse))[:-1])
    first_week = np.array([week[rows].min() for rows in rows_of])
    span = np.array([week[rows].max() for rows in rows_of]) - first_week + 1
    stream_work = np.array([work[rows].sum() for rows in rows_of])
    rng = np.random.default_rng(seed)
    placed: list[tuple[int, int]] = []           # (user index, shift in weeks)
    total, skipped, closest = 0.0, 0, (-1, 0, np.inf)
    while total < target * (1 - tolerance):
        user = int(rng.integers(len(users)))
        shift = int(rng.integers(horizon - span[user] + 1)) - int(first_week[user])
        after = total + stream_work[user]
        if after <= target * (1 + tolerance):
            placed.append((user, shift))
            total, skipped, closest = after, 0, (-1, 0, np.inf)
            continue
        if after - target < closest[2] - target:
            closest = (user, shift, after)
        skipped += 1
        if skipped >= SKIPS:
            if closest[2] - target < target - total:
                placed.append((closest[0], closest[1]))
            break
    return _assembled(workload, rows_of, users, placed, seed, load)


def _assembled(workload: Workload, rows_of: list[np.ndarray], users: np.ndarray, placed: list[tuple[int, int]],
               seed: int, load: float) -> Workload:
    """The placed streams as one workload, sorted by submit (stable), jobs renumbered 1.."""
    parts = []
    for copy, (user, shift) in enumerate(placed, start=1):
        part = workload.jobs.iloc[rows_of[user]].copy()
        part["submit"] = part["submit"].to_numpy(dtype=np.int64) + shift * WEEK
        part["resampled_from"] = users[user]
        part["user"] = copy
        parts.append(part)
    columns = [*workload.jobs.columns, "resampled_from"]
    jobs = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    jobs = jobs.sort_values(["submit"], kind="stable").reset_index(drop=True)
    jobs["job_id"] = np.arange(1, len(jobs) + 1, dtype=np.int64)
    metadata = {**workload.metadata, "resampled": {"seed": int(seed), "load": load, "streams": len(placed)}}
    return Workload(jobs, metadata, workload.report, workload.source)
