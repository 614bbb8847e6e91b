"""Small hand-made workloads and machines with node-level requests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.platform.machines import Cluster, Machine
from engine.workload.model import Workload

GB = 1024 ** 2   # KB


def node_workload(rows: list[dict]) -> Workload:
    """Jobs from dicts with submit, runtime and optional requested, nodes, ppn, mem (KB), gpus,
    exclusive, clusters, user, queue_name; numbered 0.. in that order."""
    frame = pd.DataFrame([{
        "job_id": i, "submit": r["submit"], "runtime": r["runtime"],
        "requested_time": r.get("requested", r["runtime"]), "procs": r.get("nodes", 1) * r.get("ppn", 1),
        "user": r.get("user", 1), "group": -1, "queue": -1, "partition": -1, "killed": False,
        "nodes": r.get("nodes", 1), "ppn": r.get("ppn", 1), "mem": r.get("mem", 0), "gpus": r.get("gpus", 0),
        "exclusive": r.get("exclusive", False), "queue_name": r.get("queue_name", ""),
        "clusters": r.get("clusters", ""), "exclude": "", "hosts": "", "properties": r.get("properties", ""),
    } for i, r in enumerate(rows)])
    return Workload(frame, {"procs": 0}, source="hand-made")


def machine(*clusters: tuple) -> Machine:
    """Clusters from (name, nodes, cores, ram_kb[, gpus[, available_from]]) tuples."""
    built = []
    for spec in clusters:
        name, nodes, cores, ram = spec[:4]
        gpus = spec[4] if len(spec) > 4 else 0
        available_from = spec[5] if len(spec) > 5 else None
        built.append(Cluster(name, nodes, cores, ram, gpus, available_from=available_from))
    return Machine(tuple(built), source="hand-made")


#: the three queues bursty_node_workload's jobs are sent to (qa only to clusters a and b)
QUEUES = """queues:
  - {name: qa, walltime: 2h, pool: [a, b], max_cores: 14, user_max_jobs: 2}
  - {name: qb, walltime: 2h, user_max_cores: 6}
  - {name: qc, walltime: 2h}
"""


def bursty_node_workload(seed: int, n: int = 90) -> Workload:
    """Jobs in bursts far apart, many submitted in the same second and many of equal runtimes (ends
    and starts at one instant); node shapes, exclusive jobs, cores anywhere (nodes 0), memory that
    makes classes of equal shape, three queues and three users."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        nodes = int(rng.choice([0, 1, 1, 2, 3]))
        rows.append({"submit": int((i // 30) * 20_000 + rng.integers(0, 4) * 50),
                     "runtime": int(rng.choice([60, 120, 300, int(rng.integers(1, 900))])),
                     "nodes": nodes, "ppn": int(rng.choice([1, 2, 4])), "mem": int(rng.integers(0, 3)) * GB,
                     "exclusive": bool(nodes and rng.random() < 0.15), "user": int(rng.integers(1, 4)),
                     "queue_name": str(rng.choice(["qa", "qb", "qc"]))})
    workload = node_workload(sorted(rows, key=lambda row: row["submit"]))       # (a trace is in submit order)
    spread = workload.jobs["nodes"] == 0
    workload.jobs.loc[spread, "procs"] = rng.integers(1, 9, int(spread.sum()))
    workload.jobs["requested_time"] = workload.jobs["runtime"] + rng.integers(0, 300, n)
    return workload


def windowed_machine() -> Machine:
    """Three clusters; b opens late in the first burst and closes during the third (jobs waiting)."""
    return Machine((Cluster("a", 3, 4, 16 * GB),
                    Cluster("b", 2, 8, 16 * GB, available_from=100, available_to=41_000),
                    Cluster("c", 4, 2, 4 * GB)), source="hand-made")
