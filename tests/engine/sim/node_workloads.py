"""Small hand-made workloads and machines with node-level requests."""

from __future__ import annotations

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
