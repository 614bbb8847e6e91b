"""Linear multifactor priority: the stock Slurm/Moab scheme the SFS paper starts from (§2.3).

    P(job, now) = weight_size x processors
                + weight_age x minutes eligible (now - submit, capped at max_age)
                + weight_fairshare x fair-share factor (0..1)
                + weight_queue x the queue's priority

Raw units, as Moab's weights use them: one processor of size and one minute of eligible time are
one unit each, so the weights say directly how many minutes of waiting one processor is worth.
Eligible time is the time since submission (the simulator has no holds or dependencies).

- **Fair-share (history based, §2.4)**: usage is processor-seconds of *finished* jobs, decayed with
  a half-life; the factor is Slurm's classic ``2 ** (-usage share / share)`` per account (the job's
  allocation when an allocations file is given, else its user). Shares: an allocation's target
  over the sum of the finite targets; accounts without a target (users, the default allocation)
  get an equal share ``1 / accounts``. Only jobs that ended count, which is the lag the paper
  criticises in history-based fair-share.
- **Queue priority**: ``context["queue_priorities"]`` maps a queue number to its priority (0 if
  absent).

Without fair-share and with unbounded age, every waiting job's age grows at the same rate, so the
order never changes while jobs wait and the queue keeps static keys (cheap). With fair-share or an
age cap the order is recomputed at every scheduling instant.

Presets of the SFS paper's §9: :data:`ELIGIBLE_TIME_DOMINANT` (an hour of waiting outweighs 1,200
processors) and :data:`NODE_COUNT_DOMINANT` (a processor outweighs 20 minutes of waiting).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from engine.platform.allocations import allocations_in
from engine.policies.base import Param
from engine.policies.ordering import WaitingQueue
from engine.policies.registry import Component, register_ordering
from engine.sim.simulator import Simulation

ELIGIBLE_TIME_DOMINANT = {"weight_size": 1.0, "weight_age": 20.0}
NODE_COUNT_DOMINANT = {"weight_size": 20.0, "weight_age": 1.0}

PARAMS = (
    Param("weight_size", "float", 1.0, "priority per processor requested", minimum=0,
          label="size weight", unit="per processor"),
    Param("weight_age", "float", 1.0, "priority per minute eligible in the queue", minimum=0,
          label="age weight", unit="per minute eligible"),
    Param("max_age", "float", math.inf, "hours after which age stops adding priority (inf = never)",
          minimum=0, allow_infinity=True, label="age stops counting after", unit="h"),
    Param("weight_fairshare", "float", 0.0,
          "priority per unit of the history-based fair-share factor (0..1; 0 = off)", minimum=0,
          label="fair-share weight"),
    Param("fairshare_halflife", "float", 168.0, "half-life in hours of past usage in fair-share", minimum=0.001,
          label="fair-share half-life", unit="h"),
    Param("weight_queue", "float", 0.0, "priority per unit of the queue's priority (context queue_priorities)",
          minimum=0, label="queue weight"),
)


class LinearPriorityQueue(WaitingQueue):
    """Waiting jobs by decreasing linear priority, ties by arrival."""

    def __init__(self, sim: Simulation, params: dict[str, Any]) -> None:
        self.weights = {p.name: params.get(p.name, p.default) for p in PARAMS}
        size = np.asarray(sim.size, dtype=np.float64)
        submit_minutes = np.asarray(sim.submit, dtype=np.float64) / 60.0
        w_size, w_age = self.weights["weight_size"], self.weights["weight_age"]
        # the part that does not change while a job waits; age adds w_age x now / 60 to every job
        self.base = (w_size * size + self.weights["weight_queue"] * queue_priorities(sim)).tolist()
        self.aged = (np.asarray(self.base) - w_age * submit_minutes).tolist()
        aged = self.aged
        super().__init__(sim, lambda j: (-aged[j], j))
        self.dynamic = self.weights["weight_fairshare"] > 0 or math.isfinite(self.weights["max_age"])
        self.fairshare = FairShare(sim, self.weights["fairshare_halflife"]) if self.weights["weight_fairshare"] > 0 else None

    def priority(self, job: int) -> float:
        """The job's priority now (what the order uses; for tests and reports)."""
        sim, w = self.sim, self.weights
        age_minutes = (sim.now - sim.submit[job]) / 60.0
        if math.isfinite(w["max_age"]):
            age_minutes = min(age_minutes, w["max_age"] * 60.0)
        value = self.base[job] + w["weight_age"] * age_minutes
        if self.fairshare is not None:
            value += w["weight_fairshare"] * self.fairshare.factor(job)
        return value

    def jobs(self) -> list[int]:
        waiting = super().jobs()
        if not self.dynamic:
            return waiting
        if self.fairshare is not None:
            self.fairshare.update()
        priority = self.priority
        return sorted(waiting, key=lambda j: (-priority(j), j))

    def head(self) -> int:
        return self.jobs()[0] if self.dynamic else super().head()

    def started(self, job: int) -> None:
        if self.fairshare is not None:
            self.fairshare.running.append(job)


def queue_priorities(sim: Simulation) -> np.ndarray:
    """Per job, the priority of its queue from ``context["queue_priorities"]`` (0 if not given)."""
    table = sim.context.get("queue_priorities") or {}
    jobs = sim.workload.jobs
    if not table or "queue" not in jobs:
        return np.zeros(sim.n)
    return np.array([float(table.get(int(q), 0.0)) for q in jobs["queue"].to_numpy()], dtype=np.float64)


class FairShare:
    """Decayed usage of finished jobs per account, and Slurm's classic factor 2^(-usage/share)."""

    def __init__(self, sim: Simulation, halflife_hours: float) -> None:
        self.sim = sim
        self.halflife = halflife_hours * 3600.0
        allocations = allocations_in(sim.context)
        if allocations is not None:
            assigned = allocations.assign(sim.workload.jobs)
            self.account = assigned.index.tolist()
            finite = [t for t in assigned.targets if math.isfinite(t)]
            equal = 1.0 / len(assigned.names)
            total = sum(finite)
            self.share = [t / total if math.isfinite(t) and total > 0 else equal for t in assigned.targets]
        else:
            codes, users = np.unique(np.asarray(sim.user), return_inverse=True)
            self.account = users.tolist()
            self.share = [1.0 / len(codes)] * len(codes)
        self.usage: defaultdict[int, float] = defaultdict(float)
        self.updated = 0
        self.running: list[int] = []

    def update(self) -> None:
        """Decay the usage to now and add the jobs that ended since the last update."""
        sim = self.sim
        now = sim.now
        if now > self.updated:
            decay = 0.5 ** ((now - self.updated) / self.halflife)
            for account in self.usage:
                self.usage[account] *= decay
            self.updated = now
        still = []
        for job in self.running:
            end = sim.end_time[job]
            if end < 0:
                still.append(job)
                continue
            used = sim.size[job] * (end - sim.start_time[job])
            self.usage[self.account[job]] += used * 0.5 ** ((now - end) / self.halflife)
        self.running = still

    def factor(self, job: int) -> float:
        total = sum(self.usage.values())
        if total <= 0:
            return 1.0
        account = self.account[job]
        return 2.0 ** (-(self.usage.get(account, 0.0) / total) / self.share[account])


def linear_priority(sim: Simulation, params: dict) -> WaitingQueue:
    return LinearPriorityQueue(sim, params)


register_ordering(Component("linear", linear_priority, PARAMS,
                            "linear multifactor priority (weights x job size, age, fair-share, queue)"))
