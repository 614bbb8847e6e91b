"""Check a heterogeneous schedule from the outside: no node, queue or user limit is ever exceeded."""

from __future__ import annotations

import pandas as pd

from engine.platform.machines import Machine
from engine.platform.queues import QueueConfig


def violations(schedule: pd.DataFrame, jobs: pd.DataFrame, machine: Machine,
               queues: QueueConfig | None = None) -> list[str]:
    """Replay starts and ends (ends first at one instant); list every over-commitment found.

    ``jobs`` is the simulated workload's frame (row-aligned with the schedule). Cores on a listed
    node: ppn (all the node's cores for exclusive jobs); RAM and GPUs per node as requested.
    """
    clusters = {c.name: c for c in machine.clusters}
    used = {(c.name, i): [0, 0, 0] for c in machine.clusters for i in range(c.nodes)}
    owners: dict[tuple[str, int], set[int]] = {node: set() for node in used}
    exclusive = jobs["exclusive"].tolist() if "exclusive" in jobs else [False] * len(jobs)
    ppn, mem, gpus = jobs["ppn"].tolist(), jobs["mem"].tolist(), jobs["gpus"].tolist()
    nodes_asked = jobs["nodes"].tolist()
    cluster_of, nodes_of = schedule["cluster"].tolist(), schedule["nodes"].tolist()
    users = schedule["user"].tolist()
    queue_of = schedule["queue"].tolist() if queues else None
    limit = {q.name: q for q in queues.queues} if queues else {}
    queue_cores: dict[str, int] = {}
    user_jobs: dict[tuple[str, int], int] = {}
    events = sorted([(end, 0, job) for job, end in enumerate(schedule["end"].tolist())]
                    + [(start, 1, job) for job, start in enumerate(schedule["start"].tolist())])
    problems: list[str] = []
    for time, kind, job in events:
        cluster = clusters[cluster_of[job]]
        sign = 1 if kind == 1 else -1
        take = ((cluster.cores, cluster.ram_kb, cluster.gpus) if exclusive[job] else (ppn[job], mem[job], gpus[job]))
        listed = nodes_of[job].split(";")
        if len(listed) != nodes_asked[job]:
            problems.append(f"job {job}: {len(listed)} nodes listed, {nodes_asked[job]} asked")
        for name in listed:
            node = (cluster.name, int(name.rsplit("-", 1)[1]))
            state = used[node]
            for k in range(3):
                state[k] += sign * take[k]
            if sign < 0:
                owners[node].discard(job)
                continue
            if owners[node] and (exclusive[job] or any(exclusive[o] for o in owners[node])):
                problems.append(f"t={time}: node {node} shared with an exclusive job (job {job})")
            owners[node].add(job)
            if state[0] > cluster.cores or state[1] > cluster.ram_kb or state[2] > cluster.gpus:
                problems.append(f"t={time}: node {node} over-committed by job {job}: {state}")
        if queues:
            name = queue_of[job]
            queue = limit[name]
            queue_cores[name] = queue_cores.get(name, 0) + sign * nodes_asked[job] * ppn[job]
            key = (name, users[job])
            user_jobs[key] = user_jobs.get(key, 0) + sign
            if sign > 0 and queue_cores[name] > queue.core_limit(machine.cores):
                problems.append(f"t={time}: queue {name} holds {queue_cores[name]} cores")
            if sign > 0 and queue.user_max_jobs and user_jobs[key] > queue.user_max_jobs:
                problems.append(f"t={time}: user {key[1]} runs {user_jobs[key]} jobs in {name}")
        if len(problems) > 20:
            break
    return problems
