"""Simultaneous Fair-Share (Steffen, SC'19 HPCSYSPROS, §4-5) and the priority scheduler it extends.

Both run over any ordering of the waiting queue (normally :mod:`engine.policies.priority`, the
linear multifactor priority) and re-plan at every scheduling instant. The paper's "time slice" is,
in this continuous-time simulator, the instant of the scheduling iteration: occupancy is what runs
at that instant.

``reserve`` (the stock Moab/Slurm scheme the paper compares with):

- **pass 2** - the full waiting list by priority: a job that fits now without delaying the
  reservations made so far starts; the first ``reservation_depth`` jobs that do not fit get a
  reservation (their earliest start, requested times assumed), and the last of them ends the pass;
- **backfill** - any remaining job, by priority, that fits now without delaying a reservation.

``sfs`` adds, before those:

- **pass 1** - the local list holds the jobs of allocations whose occupancy (processors of their
  running jobs) is at or below target; jobs are placed by priority, the allocation's occupancy is
  updated after each placement, and an allocation that goes above target has its remaining jobs
  dropped from the list; the pass ends when nothing more fits or the list is empty. Reservations
  are re-planned at every iteration, in pass 2, so pass 1 fills a hole left by a finished job
  whatever the previous iteration had reserved there -- the paper's §6.2: "the first pass
  scheduling will need to place a job in that space, and that same group's next job will naturally
  fit perfectly". With ``pass1_holds_reservations`` pass 1 may not delay the reservations of the
  previous iteration instead (they count as jobs "scheduled to run" in the time slice): big jobs
  then drain the machine sooner, under-target allocations wait longer.

The schedule gets an ``allocation`` column (from ``context["allocations"]``; without one every job
is in the unbounded ``default`` allocation, and SFS orders by priority alone) and a ``pass``
column: ``1``, ``2`` or ``backfill``.
"""

from __future__ import annotations

import math

import numpy as np

from engine.platform.allocations import allocations_in, no_allocations
from engine.policies.algorithm import Algorithm
from engine.policies.base import Param
from engine.policies.ordering import WaitingQueue
from engine.policies.registry import Component, Preset, register, register_algorithm
from engine.policies.priority import ELIGIBLE_TIME_DOMINANT, NODE_COUNT_DOMINANT
from engine.sim.profile import Profile, running_jobs_profile
from engine.sim.simulator import Simulation

PASS_1, PASS_2, BACKFILL = "1", "2", "backfill"

DEPTH = Param("reservation_depth", "int", 2,
              "jobs that do not fit in pass 2 and get a reservation (the last one ends the pass)",
              minimum=0, allow_infinity=True, label="reservation depth", unit="jobs")
BACKFILL_PARAM = Param("backfill", "bool", True, "run the backfill pass", label="backfill pass")
HOLD = Param("pass1_holds_reservations", "bool", False,
             "pass 1 may not delay the reservations made at the previous iteration (off: the paper's §6.2)",
             label="pass 1 keeps earlier reservations")


class PriorityReservations(Algorithm):
    """``reserve``: pass 2 (reservation depth D) and the backfill pass, re-planned every instant."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        self.depth = params.get("reservation_depth", DEPTH.default)
        self.backfill = params.get("backfill", True)
        self.hold = params.get("pass1_holds_reservations", False)
        self.assigned = (allocations_in(sim.context) or no_allocations()).assign(sim.workload.jobs)
        self.allocation_of: list[int] = self.assigned.index.tolist()
        self.target: list[float] = list(self.assigned.targets)
        #: processors in use now, per allocation
        self.occupancy: list[int] = [0] * len(self.target)
        self.started_by: list[str] = [""] * sim.n
        #: (job, start) reservations made by the last pass 2
        self.reservations: list[tuple[int, int]] = []

    # bookkeeping -----------------------------------------------------------------------------
    def on_finish(self, job: int) -> None:
        self.occupancy[self.allocation_of[job]] -= self.sim.size[job]

    def start_in(self, job: int, pass_name: str, profile: Profile | None) -> None:
        sim = self.sim
        self.start(job)
        self.occupancy[self.allocation_of[job]] += sim.size[job]
        self.started_by[job] = pass_name
        if profile is not None:
            profile.reserve(sim.now, sim.now + sim.estimate[job], sim.size[job])

    def fits_now(self, job: int, profile: Profile | None) -> bool:
        """Whether ``job`` can start now without delaying any reservation in ``profile``."""
        sim = self.sim
        if not sim.fits(job):
            return False
        if profile is None:   # no reservation: free processors only grow as running jobs end
            return True
        now = sim.now
        return profile.earliest_start(now, sim.estimate[job], sim.size[job], before=now + 1) is not None

    # the passes --------------------------------------------------------------------------------
    def schedule(self) -> None:
        self.first_pass()
        profile, self.reservations = self.second_pass()
        if self.backfill and len(self.queue) and self.sim.free:
            self.backfill_pass(profile)

    def first_pass(self) -> None:
        """No pass 1 in the stock scheme."""

    def second_pass(self) -> tuple[Profile | None, list[tuple[int, int]]]:
        sim, depth = self.sim, self.depth
        profile: Profile | None = None
        reserved: list[tuple[int, int]] = []
        for job in self.queue.jobs():
            if self.queue.may_start(job) and self.fits_now(job, profile):
                self.start_in(job, PASS_2, profile)
                continue
            if len(reserved) >= depth:
                break
            if profile is None:
                profile = running_jobs_profile(self.sim)
            start = profile.earliest_start(sim.now, sim.estimate[job], sim.size[job])
            assert start is not None   # every job fits the empty machine eventually
            profile.reserve(start, start + sim.estimate[job], sim.size[job])
            reserved.append((job, start))
            if len(reserved) >= depth:
                break
        return profile, reserved

    def backfill_pass(self, profile: Profile | None) -> None:
        sim, queue = self.sim, self.queue
        for job in queue.jobs():
            if not sim.free:
                return
            if sim.size[job] <= sim.free and queue.may_start(job) and self.fits_now(job, profile):
                self.start_in(job, BACKFILL, profile)

    # results ------------------------------------------------------------------------------------
    def extra_columns(self) -> dict[str, np.ndarray]:
        return {"allocation": self.assigned.labels(), "pass": np.asarray(self.started_by, dtype=object)}

    def summary(self) -> dict:
        passes = {name: self.started_by.count(name) for name in (PASS_1, PASS_2, BACKFILL)}
        return {"unmapped_jobs": self.assigned.unmapped, "started_by_pass": passes,
                "allocation_targets": {n: (t if math.isfinite(t) else None)
                                       for n, t in zip(self.assigned.names, self.target)}}


class SimultaneousFairShare(PriorityReservations):
    """``sfs``: pass 1 over the allocations at or below target, then pass 2 and backfill."""

    def first_pass(self) -> None:
        sim, queue = self.sim, self.queue
        occupancy, target, allocation_of = self.occupancy, self.target, self.allocation_of
        held = [(job, start) for job, start in self.reservations if sim.start_time[job] < 0] if self.hold else []
        profile: Profile | None = None
        if held:
            profile = running_jobs_profile(self.sim)
            for job, start in held:
                profile.reserve(start, start + sim.estimate[job], sim.size[job])
        held_start = dict(held)
        for job in queue.jobs():
            if not sim.free:
                return
            allocation = allocation_of[job]
            if occupancy[allocation] > target[allocation] or sim.size[job] > sim.free or not queue.may_start(job):
                continue
            own = held_start.get(job)
            if own is not None and profile is not None:   # (a held job's reservation is in the profile)
                self.start_held(job, own, profile)
            elif self.fits_now(job, profile):
                self.start_in(job, PASS_1, profile)

    def start_held(self, job: int, own: int, profile: Profile) -> None:
        """Start the held ``job`` if it fits now, its own reservation (from ``own``) not standing in its way."""
        sim = self.sim
        profile.release(own, own + sim.estimate[job], sim.size[job])
        if self.fits_now(job, profile):
            self.start_in(job, PASS_1, profile)
        else:
            profile.reserve(own, own + sim.estimate[job], sim.size[job])


register_algorithm(Component(
    "reserve", PriorityReservations, (DEPTH, BACKFILL_PARAM),
    "priority order; the first D jobs that do not fit get reservations; then backfill (Moab/Slurm stock)"))
register_algorithm(Component(
    "sfs", SimultaneousFairShare, (DEPTH, BACKFILL_PARAM, HOLD),
    "Simultaneous Fair-Share: pass 1 over allocations at or below target, pass 2 with reservation "
    "depth D, backfill; the paper's time slice is the instant of each scheduling iteration"))

_AGE = "eligible time dominant (an hour eligible outweighs 1,200 processors)"
_SIZE = "node count dominant (a processor outweighs 20 minutes eligible)"
for _preset in (
    Preset("sfs", "Simultaneous Fair-Share over linear priority (SFS paper §4); needs --allocations for "
           "targets; the time slice is the instant of each scheduling iteration.", "linear", "sfs",
           family="allocations", paper="sfs"),
    Preset("linear-age", f"Linear priority, {_AGE}, reservation depth 2 and backfill (SFS paper §9.3.1).",
           "linear", "reserve", dict(ELIGIBLE_TIME_DOMINANT), family="allocations", paper="sfs"),
    Preset("linear-size", f"Linear priority, {_SIZE}, reservation depth 2 and backfill (SFS paper §9.3.2).",
           "linear", "reserve", dict(NODE_COUNT_DOMINANT), family="allocations", paper="sfs"),
    Preset("sfs-age", f"Simultaneous Fair-Share, {_AGE} (SFS paper §9.3.3).", "linear", "sfs",
           dict(ELIGIBLE_TIME_DOMINANT), family="allocations", paper="sfs"),
    Preset("sfs-size", f"Simultaneous Fair-Share, {_SIZE} (SFS paper §9.3.4).", "linear", "sfs",
           dict(NODE_COUNT_DOMINANT), family="allocations", paper="sfs"),
):
    register(_preset)
