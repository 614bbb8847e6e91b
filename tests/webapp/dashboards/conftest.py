"""Small hand-checkable schedules for the figure builders."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def make_schedule(rows: list[tuple[int, int, int, int, int]]) -> pd.DataFrame:
    """(user, submit, start, runtime, procs) rows → a schedule frame with the engine's columns."""
    frame = pd.DataFrame(rows, columns=["user", "submit", "start", "runtime", "procs"])
    frame.insert(0, "job_id", np.arange(1, len(frame) + 1))
    frame["end"] = frame["start"] + frame["runtime"]
    frame["requested_time"] = frame["runtime"] * 2
    frame["wait"] = frame["start"] - frame["submit"]
    frame["killed"] = False
    frame["alloc"] = frame["procs"]
    frame["group"] = frame["user"] % 2
    frame["queue"] = 0
    frame["partition"] = -1
    frame["start_order"] = frame["start"].rank(method="first").astype(int) - 1
    columns = ["job_id", "user", "submit", "start", "end", "procs", "requested_time", "runtime", "wait",
               "killed", "alloc", "group", "queue", "partition", "start_order"]
    return frame[columns]


@pytest.fixture
def small_schedules() -> dict[str, pd.DataFrame]:
    """Two policies, four jobs on a 4-processor machine."""
    fcfs = make_schedule([(1, 0, 0, 100, 2), (2, 10, 100, 50, 4), (1, 20, 150, 10, 1), (3, 30, 150, 1000, 2)])
    easy = make_schedule([(1, 0, 0, 100, 2), (2, 10, 100, 50, 4), (1, 20, 20, 10, 1), (3, 30, 150, 1000, 2)])
    return {"FCFS": fcfs, "EASY": easy}
