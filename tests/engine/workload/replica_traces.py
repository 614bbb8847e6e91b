"""Seeded synthetic traces with users, for the replicate tests (windows, shaking, resampling)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.workload.model import Workload

DAY, WEEK = 86_400, 7 * 86_400


def user_trace(seed: int = 0, *, jobs: int = 2000, weeks: float = 10, users: int = 25, procs: int = 64) -> Workload:
    """``jobs`` jobs of ``users`` users over ``weeks`` weeks, busier in working hours; each user has
    a favourite size and runtime, so streams differ from each other."""
    rng = np.random.default_rng(seed)
    user = rng.integers(1, users + 1, size=jobs)
    day = rng.integers(0, int(weeks * 7), size=jobs)
    hour = np.where(rng.random(jobs) < 0.7, rng.integers(8, 18, size=jobs), rng.integers(0, 24, size=jobs))
    submit = np.sort(day * DAY + hour * 3600 + rng.integers(0, 3600, size=jobs)) + 1_000_000
    size = np.minimum(2 ** (user % 6), procs)
    runtime = (user * 97 % 3000 + rng.integers(1, 600, size=jobs)).astype(np.int64)
    requested = runtime + rng.integers(0, 1800, size=jobs)
    frame = pd.DataFrame({"job_id": np.arange(1, jobs + 1), "submit": submit, "runtime": runtime,
                          "requested_time": requested, "procs": size, "user": user, "group": user % 3,
                          "queue": -1, "partition": -1, "killed": False})
    return Workload(frame, {"procs": procs}, source="synthetic")
