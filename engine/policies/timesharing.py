"""Time sharing (the Paragon paper's TSS, §5.3) as an algorithm with its own event loop.

The paper states the scheme in three sentences; every choice SchedLab makes to turn it into a
simulation is listed in :data:`DESCRIPTION` (shown by ``python -m engine policies`` and in the web
form) and implemented in :class:`engine.sim.timesharing.TimeSharingSimulation`.
"""

from __future__ import annotations

from typing import Any

from engine.policies.algorithm import Algorithm
from engine.policies.registry import Component, Preset, register, register_algorithm
from engine.sim.timesharing import TimeSharingSimulation

DESCRIPTION = (
    "Time sharing (Paragon paper §5.3, TSS): gang scheduling in which admitted jobs share the "
    "processors. Admission: jobs are taken in queue order (submit order for the preset); the head "
    "job is admitted only if that raises machine utilization at that instant, i.e. only while the "
    "admitted jobs hold fewer than all N processors (a job on the whole machine keeps every other "
    "job waiting); the head blocks the jobs behind it. Shares: while admitted jobs hold D > N "
    "processors, every admitted job progresses at the rate N/D (equal time slices for every gang, "
    "all processors always busy: perfect packing of gangs into time slots); at D <= N every job "
    "runs at full speed. Since D < N before an admission, D < 2N and no job runs slower than half "
    "speed. No context-switch cost; memory is assumed sufficient for every admitted job; which "
    "processors a job occupies is not modelled (buddy allocation still rounds its size up). "
    "Jobs end after their real runtime of full-speed work; estimates are not used. Times are exact "
    "inside the simulation and reported rounded to the nearest second."
)


class TimeSharing(Algorithm):
    """Admit the head of the queue while doing so raises the machine's utilization."""

    sim: TimeSharingSimulation

    def schedule(self) -> None:
        queue, sim = self.queue, self.sim
        while len(queue):
            head = queue.head()
            if not queue.may_start(head) or not sim.raises_utilization(head):
                return
            self.start(head)

    def summary(self) -> dict[str, Any]:
        sim = self.sim
        return {
            "timesharing_peak_demand": sim.peak_demand / sim.capacity,
            "timesharing_slowed_jobs": sim.slowed_jobs(),
        }


register_algorithm(Component("timesharing", TimeSharing, (), "time sharing: admit the head while it raises "
                             "utilization; admitted jobs progress at rate min(1, N/D)",
                             simulation=TimeSharingSimulation))
register(Preset("tss", DESCRIPTION, "fcfs", "timesharing", family="timesharing", paper="paragon"))
