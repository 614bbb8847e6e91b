"""The recorded run: the schedule as it happened, replayed from the trace's recorded start times.

Nothing is decided: each job starts at its recorded start and runs its (cleaned) runtime, so the
same jobs, metrics, plots and downloads as a simulated run describe what really happened. The
machine is not enforced (a real machine has outages, reservations and epilogues a trace does not
record, so its starts may overlap more than the stated size allows); where the trace names the
hosts a job ran on (PBS exec_host, sacct NodeList), the schedule's ``nodes`` and ``cluster`` say so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine.platform.hosts import host_cluster
from engine.sim.simulator import Pacer, Simulation
from engine.workload.names import names_of
from engine.workload.recorded import recorded_starts


class RecordedSimulation(Simulation):
    """A Simulation whose run() replays the recorded starts instead of asking a policy."""

    #: simulate() keeps only the jobs with a recorded start and no machine description for these
    replays = True

    def run(self, scheduler: Any, *, progress: Callable[[float], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> None:
        start = recorded_starts(self.workload)
        if (start < 0).any():
            raise ValueError("the recorded run needs a recorded start for every job (filter them first)")
        runtime = np.asarray(self.runtime, dtype=np.int64)
        order = np.lexsort((np.arange(self.n), start))
        rank = np.empty(self.n, dtype=np.int64)
        rank[order] = np.arange(self.n)
        self.start_time = start.tolist()
        self.end_time = (start + runtime).tolist()
        self.start_order = rank.tolist()
        self.started = self.finished = self.n
        self.now = int((start + runtime).max()) if self.n else 0
        Pacer(max(self.n, 1), progress, should_stop).done()


class RecordedScheduler:
    """The policy object of the recorded run: decides nothing; adds where the jobs ran."""

    def __init__(self, sim: Simulation, queue: Any = None, params: dict | None = None) -> None:
        self.sim = sim

    def on_submit(self, job: int) -> None:
        pass

    def on_finish(self, job: int) -> None:
        pass

    def schedule(self) -> None:
        pass

    def extra_columns(self) -> dict[str, Any]:
        """``queue`` by name where the trace names its queues; ``cluster`` and ``nodes`` where it
        records the hosts a job ran on."""
        workload = self.sim.workload
        jobs, columns = workload.jobs, {}
        queues = names_of(workload.metadata, "queue")
        if queues:
            columns["queue"] = [queues.get(q, str(q)) for q in jobs["queue"].tolist()]
        if "exec_hosts" in jobs:
            hosts = jobs["exec_hosts"].astype(str).tolist()
            columns.update(cluster=[recorded_cluster(h) for h in hosts], nodes=hosts)
        return columns

    def summary(self) -> dict[str, Any]:
        return {"recorded": True}


def recorded_cluster(hosts: str) -> str:
    """The cluster(s) of a ``;``-joined host list: ``zewura3;zewura4`` -> ``zewura``."""
    clusters = dict.fromkeys(host_cluster(h) for h in hosts.split(";") if h)
    return "+".join(clusters)
