"""Builders for small hand-worked workloads."""

from __future__ import annotations

import os
import tempfile

import pandas as pd
import pytest

from engine.workload.model import Workload

#: the command line's parse cache (engine.workload.cache.read_through) in a folder of this test session,
#: never the user's; children started by tests inherit it
os.environ.setdefault("SCHEDLAB_PARSE_CACHE", tempfile.mkdtemp(prefix="schedlab-parse-tests-"))


def make_workload(rows: list[tuple], *, users: list[int] | None = None) -> Workload:
    """Jobs from (submit, runtime, requested_time, procs) tuples, numbered 1.. in that order."""
    jobs = pd.DataFrame(rows, columns=["submit", "runtime", "requested_time", "procs"])
    jobs.insert(0, "job_id", range(1, len(jobs) + 1))
    jobs["user"] = users if users is not None else [-1] * len(jobs)
    for column in ("group", "queue", "partition"):
        jobs[column] = -1
    jobs["killed"] = False
    jobs = jobs.sort_values("submit", kind="stable").reset_index(drop=True)
    return Workload(jobs, {"procs": "0"}, source="hand-worked")


@pytest.fixture
def workload():
    return make_workload
