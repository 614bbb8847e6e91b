"""Two schedules of the same jobs, job by job: who starts earlier or later under B than under A.

``delta`` = start under B − start under A (seconds): negative means the job started earlier under B
(B is better for it), positive later. Only jobs present in both schedules are compared (a policy may
reject or drop different jobs); :func:`job_diff` says how many were left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Job classes: processors and runtime bands, coarse enough to read at a glance.
SIZE_BANDS = ((1, "1 proc"), (8, "2–8 procs"), (64, "9–64 procs"), (512, "65–512 procs"), (np.inf, "> 512 procs"))
RUNTIME_BANDS = ((600, "< 10 min"), (3600, "10 min–1 h"), (36000, "1–10 h"), (np.inf, "> 10 h"))

#: Edges (seconds) of the start-time difference histogram, mirrored around "same start".
DELTA_EDGES = (1, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400)
DELTA_NAMES = ("1 s", "1 min", "10 min", "1 h", "6 h", "1 d", "1 w")


@dataclass(frozen=True)
class JobDiff:
    jobs: pd.DataFrame          # one row per job in both: job_id, user, procs, runtime, submit, start_a, start_b, delta,
    #                             job_class (and native_id, the scheduler's own id, where the schedules have it)
    only_a: int                 # jobs in A's schedule only
    only_b: int


def job_diff(a: pd.DataFrame, b: pd.DataFrame) -> JobDiff:
    """The jobs of both schedules side by side, matched by job_id."""
    keep = ["job_id", "user", "procs", "runtime", "submit", "start", "end"] + (["native_id"] if "native_id" in a else [])
    left = a[keep].rename(columns={"start": "start_a", "end": "end_a"})
    right = b[["job_id", "start", "end"]].rename(columns={"start": "start_b", "end": "end_b"})
    jobs = left.merge(right, on="job_id", how="inner", validate="one_to_one")
    jobs["delta"] = jobs["start_b"].astype(np.int64) - jobs["start_a"].astype(np.int64)
    jobs["job_class"] = job_classes(jobs["procs"].to_numpy(), jobs["runtime"].to_numpy())
    return JobDiff(jobs.reset_index(drop=True), only_a=len(a) - len(jobs), only_b=len(b) - len(jobs))


def job_classes(procs: np.ndarray, runtime: np.ndarray) -> np.ndarray:
    """ "9–64 procs, 1–10 h" per job (SIZE_BANDS × RUNTIME_BANDS)."""
    size = np.searchsorted([edge for edge, _ in SIZE_BANDS], np.asarray(procs, float), side="left")
    length = np.searchsorted([edge for edge, _ in RUNTIME_BANDS], np.asarray(runtime, float), side="left")
    sizes = np.array([name for _, name in SIZE_BANDS], dtype=object)
    lengths = np.array([name for _, name in RUNTIME_BANDS], dtype=object)
    return sizes[np.minimum(size, len(sizes) - 1)] + ", " + lengths[np.minimum(length, len(lengths) - 1)]


def delta_histogram(delta: np.ndarray) -> pd.DataFrame:
    """Jobs per band of start-time difference: "earlier by ≥ 1 w" ... "same start" ... "later by ≥ 1 w"
    (rows in that order; columns band, jobs, sign: -1 earlier, 0 same, 1 later)."""
    delta = np.asarray(delta, dtype=float)
    edges = np.asarray(DELTA_EDGES, float)
    magnitude = np.searchsorted(edges, np.abs(delta), side="right") - 1   # -1: under 1 s (same)
    rows = []
    for k in range(len(edges) - 1, -1, -1):
        upper = f"–{DELTA_NAMES[k + 1]}" if k + 1 < len(edges) else "+"
        rows.append((f"earlier {DELTA_NAMES[k]}{upper}", int(np.count_nonzero((delta < 0) & (magnitude == k))), -1))
    rows.append(("same start", int(np.count_nonzero(magnitude < 0)), 0))
    for k in range(len(edges)):
        upper = f"–{DELTA_NAMES[k + 1]}" if k + 1 < len(edges) else "+"
        rows.append((f"later {DELTA_NAMES[k]}{upper}", int(np.count_nonzero((delta > 0) & (magnitude == k))), 1))
    return pd.DataFrame(rows, columns=["band", "jobs", "sign"])


def gains_by(jobs: pd.DataFrame, key: str, top: int = 8) -> pd.DataFrame:
    """Per value of ``key`` (user, job_class): jobs, mean and total start difference (B − A, seconds),
    the ``top`` that gain most under B (most negative total) then the ``top`` that lose most."""
    grouped = jobs.groupby(key, sort=True)["delta"].agg(jobs="size", mean_delta="mean", total_delta="sum").reset_index()
    gain = grouped[grouped["total_delta"] < 0].sort_values(["total_delta", key], kind="stable").head(top)
    lose = grouped[grouped["total_delta"] > 0].sort_values(["total_delta", key], ascending=[False, True],
                                                           kind="stable").head(top)
    return pd.concat([gain, lose[::-1]], ignore_index=True)


def moved_most(jobs: pd.DataFrame, top: int = 20) -> pd.DataFrame:
    """The ``top`` jobs whose start moved most (either way), largest |delta| first, ties by job id."""
    order = np.lexsort((jobs["job_id"].to_numpy(), -np.abs(jobs["delta"].to_numpy())))
    return jobs.iloc[order[:top]].reset_index(drop=True)
