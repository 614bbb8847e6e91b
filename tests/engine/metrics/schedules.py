"""Small hand-made schedules for the metrics tests, in the simulator's column layout."""

from __future__ import annotations

import numpy as np
import pandas as pd

SCHEDULE_COLUMNS = [
    "job_id", "user", "submit", "start", "end", "procs", "requested_time", "runtime", "wait",
    "killed", "alloc", "group", "queue", "partition", "start_order",
]


def make_schedule(jobs: list[dict]) -> pd.DataFrame:
    """Jobs in arrival order, each given by ``submit, start, end, procs`` (and optionally
    ``user, requested_time, killed, start_order, group, queue``).

    ``runtime = end - start`` and ``wait = start - submit`` are derived; ``start_order`` defaults
    to the order of start times, ties broken by arrival (what a simulator would record).
    """
    rows = []
    for position, job in enumerate(jobs):
        runtime = job["end"] - job["start"]
        rows.append({
            "job_id": job.get("job_id", position + 1),
            "user": job.get("user", 1),
            "submit": job["submit"],
            "start": job["start"],
            "end": job["end"],
            "procs": job["procs"],
            "requested_time": job.get("requested_time", runtime),
            "runtime": runtime,
            "wait": job["start"] - job["submit"],
            "killed": job.get("killed", False),
            "alloc": job.get("alloc", job["procs"]),
            "group": job.get("group", -1),
            "queue": job.get("queue", -1),
            "partition": -1,
        })
    frame = pd.DataFrame(rows, columns=SCHEDULE_COLUMNS[:-1])
    if jobs and all("start_order" in job for job in jobs):
        frame["start_order"] = [job["start_order"] for job in jobs]
    else:
        order = np.argsort(frame["start"].to_numpy(), kind="stable")
        ranks = np.empty(len(frame), dtype=np.int64)
        ranks[order] = np.arange(len(frame))
        frame["start_order"] = ranks
    return frame.astype({"killed": bool}).astype({c: "int64" for c in SCHEDULE_COLUMNS if c != "killed"})


def empty_schedule() -> pd.DataFrame:
    return make_schedule([])


def three_jobs_on_four_processors() -> pd.DataFrame:
    """The worked example used across the tests (capacity 4).

    A (user 1): 2 procs, submitted 0, runs 0-100; asked for 100 s and was killed at its limit.
    B (user 2): 4 procs, submitted 10, must wait for A: runs 100-150; asked for 100 s.
    C (user 1): 1 proc, submitted 20, backfilled at once beside A: runs 20-22; asked for 10 s.
    Start order: A, C, B.

        procs
          4 |                          BBBBBBBBBB
          3 |    C
          2 |AAAAAAAAAAAAAAAAAAAAAAAAA
            0   20 22                 100       150
    """
    return make_schedule([
        {"user": 1, "submit": 0, "start": 0, "end": 100, "procs": 2, "requested_time": 100, "killed": True},
        {"user": 2, "submit": 10, "start": 100, "end": 150, "procs": 4, "requested_time": 100},
        {"user": 1, "submit": 20, "start": 20, "end": 22, "procs": 1, "requested_time": 10},
    ])
