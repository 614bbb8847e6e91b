"""Built-in synthetic workloads: the SFS paper's §9 test scenario.

Steffen (2019), §9.2: a machine of 1,400 nodes, empty at the start. On each of days 1 to 7 Alice
submits 12 jobs of 250 nodes and Bob 6 jobs of 65 nodes; on day 7 Chris submits one job of 750
nodes. Every job runs for a random 70-95 % of its requested time (§9.1). The simulation lasts about
two and a half weeks.

What the paper does not give, chosen here and stated: every day's jobs arrive together at the start
of the day (Alice's, then Bob's, then Chris's); every job requests 24 hours (``request_hours``); one
node is one processor of the simulated machine; users and groups are Alice 1, Bob 2, Chris 3; and
the allocations (for SFS) give each user a year's award whose target (2 x ideal) is Alice 500,
Bob 400 and Chris 750 nodes -- two of Alice's jobs, a day's six of Bob's, Chris's one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.workload.model import Workload
from engine.workload.swf import SWF_FIELDS, SwfTrace
from engine.workload.transforms import clean

DAY = 86_400
SFS_MACHINE_NODES = 1_400
#: user id -> (name, target occupancy in nodes)
SFS_USERS = {1: ("alice", 500), 2: ("bob", 400), 3: ("chris", 750)}


@dataclass(frozen=True)
class Stream:
    """Jobs one user submits: ``per_day`` jobs of ``procs`` at the start of each day in ``days``."""

    user: int
    days: tuple[int, ...]
    per_day: int
    procs: int


def sfs_streams() -> tuple[Stream, ...]:
    return (
        Stream(user=1, days=tuple(range(1, 8)), per_day=12, procs=250),   # Alice
        Stream(user=2, days=tuple(range(1, 8)), per_day=6, procs=65),     # Bob
        Stream(user=3, days=(7,), per_day=1, procs=750),                  # Chris
    )


@dataclass(frozen=True)
class Scenario:
    workload: Workload
    swf_text: str           # the same jobs as an SWF file (what the web app stores as a trace)
    allocations_text: str   # an allocations file for the scenario's users


def sfs_scenario(seed: int = 0, *, request_hours: float = 24.0, low: float = 0.70, high: float = 0.95) -> Scenario:
    """The §9 workload; runtimes uniform in [low, high] x request, drawn from ``seed``."""
    raw = _raw_jobs(sfs_streams(), seed, int(request_hours * 3600), low, high)
    header = {"Version": "2.2", "Computer": "SFS paper §9 scenario (synthetic)",
              "MaxNodes": str(SFS_MACHINE_NODES), "MaxProcs": str(SFS_MACHINE_NODES),
              "Note": f"Steffen 2019 §9: Alice 12x250, Bob 6x65 daily on days 1-7, Chris 1x750 on day 7; "
                      f"runtimes {low:.0%}-{high:.0%} of {request_hours:g} h requests, seed {seed}"}
    trace = SwfTrace(raw, header, source=f"sfs-scenario-seed{seed}.swf")
    workload = clean(trace, machine_procs=SFS_MACHINE_NODES)
    return Scenario(workload, swf_text(raw, header), sfs_allocations_text())


def _raw_jobs(streams: tuple[Stream, ...], seed: int, request: int, low: float, high: float) -> pd.DataFrame:
    submits, procs, users = [], [], []
    for day in range(1, max(d for s in streams for d in s.days) + 1):
        for stream in streams:
            if day in stream.days:
                submits += [(day - 1) * DAY] * stream.per_day
                procs += [stream.procs] * stream.per_day
                users += [stream.user] * stream.per_day
    n = len(submits)
    rng = np.random.default_rng(seed)
    runtime = np.rint(rng.uniform(low, high, n) * request).astype(np.int64)
    columns = {name: np.full(n, -1, dtype=np.int64) for name in SWF_FIELDS}
    columns.update(job_number=np.arange(1, n + 1), submit_time=np.asarray(submits), wait_time=np.zeros(n, dtype=np.int64),
                   run_time=runtime, allocated_procs=np.asarray(procs), requested_procs=np.asarray(procs),
                   requested_time=np.full(n, request), status=np.ones(n, dtype=np.int64),
                   user_id=np.asarray(users), group_id=np.asarray(users), queue=np.ones(n, dtype=np.int64),
                   partition=np.ones(n, dtype=np.int64))
    frame = pd.DataFrame(columns)
    frame["avg_cpu_time"] = frame["avg_cpu_time"].astype(np.float64)
    return frame


def swf_text(raw: pd.DataFrame, header: dict[str, str]) -> str:
    """Raw SWF fields as the text of an SWF file."""
    lines = [f"; {key}: {value}" for key, value in header.items()]
    values = raw[list(SWF_FIELDS)].to_numpy()
    lines += [" ".join(str(int(v)) for v in row) for row in values]
    return "\n".join(lines) + "\n"


def sfs_allocations_text() -> str:
    """Year-long awards whose targets (2 x ideal = 2 x award / (365 x 24 h)) are SFS_USERS' targets."""
    rows = ["allocation,members,award,period_days,target_factor,target"]
    for user, (name, target) in SFS_USERS.items():
        award = target / 2 * 365 * 24
        rows.append(f"{name},user:{user},{award:.0f},365,2,")
    return "\n".join(rows) + "\n"
