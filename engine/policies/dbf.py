"""Deadline-based backfilling (DBF; N'takpé & Suter, "Don't Hurry be Happy", JSSPP 2017, §4).

Conservative backfilling (:mod:`engine.policies.conservative`, whose profile, reservations,
compression and start rule DBF keeps) in which *deadline jobs* (a ``deadline`` column; see
:mod:`engine.workload.deadlines`) give way to regular jobs as long as they still end in time.
Waiting jobs are in one of two lists:

* **L0**: definitive reservations: regular jobs, and deadline jobs that had to be fixed;
* **L1**: deadline jobs whose tentative reservation may be reconsidered, in submission order.

**A deadline job arrives.** It gets the conservative reservation (the earliest fit after every
reservation, tentative or definitive). If that ends by its deadline (reserved start + requested time
<= deadline) it joins L1; otherwise it is treated as regular from then on: its reservation is given
back and it arrives as a regular job (below), so it may go ahead of L1 jobs. The paper expects only
such jobs to miss their deadline (counted in ``summary()["dbf_first_allocation_misses"]``); but see
step 3: rarely, a job whose first reservation was on time misses too.

**A regular job J_r arrives: Algorithm 1.**

1. Cancel the reservations of L1; L_tmp = [J_r]; reserve J_r; re-reserve L1 in submission order.
2. While an L1 job would end after its deadline, move the first such job (submission order) to
   L_tmp, cancel the reservations of L_tmp and L1, reserve L_tmp in submission order (so the moved
   deadline jobs come before J_r) and then L1 in submission order.
3. The extra step: if a job of L_tmp still ends after its deadline, move every L1 job submitted
   before the last such job (S_max) to L_tmp and re-reserve L_tmp then L1 once more. As in the
   paper, nothing is checked after this: a job left in L1 (or in L_tmp) may now end after its
   deadline (tests/engine/policies/test_dbf.py works such a case by hand).
4. L_tmp joins L0 (its jobs become definitive); jobs whose reservation is now start now (the
   conservative start rule, run by :meth:`schedule`).

Choices where the paper leaves one (stated so results can be read): the deadline test uses the
requested time (``ct_i`` = reserved start + requested time); the loop of step 2 moves the earliest
submitted violator first; when jobs end early, compression moves every waiting job (L0 and L1) to
its earliest fit in queue order, as conservative backfilling does, which never delays a deadline
job; a rebuild (overruns, buddy) re-places every waiting job in queue order. Re-reserving runs in
compiled loops over the profile (:func:`release_all`, :func:`reserve_in_order`).
"""

from __future__ import annotations

from bisect import bisect_left, insort

import numpy as np

from engine.policies.conservative import Conservative
from engine.policies.ordering import WaitingQueue
from engine.policies.registry import (Component, Preset, WorkloadOption, register, register_algorithm,
                                      register_workload_option)
from engine.policies.base import Param
from engine.sim.profile import FOREVER, add, earliest_start, njit
from engine.sim.simulator import Simulation
from engine.workload.deadlines import DEADLINE, assign_deadlines, paper_preprocessing
from engine.workload.model import Workload


#: values of the ``dbf_class`` schedule column
REGULAR, TENTATIVE, FIXED, FIRST_MISS = 0, 1, 2, 3


class DeadlineBackfilling(Conservative):
    """``dbf``: conservative backfilling whose deadline jobs make way for regular ones."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        jobs = sim.workload.jobs
        deadline = jobs[DEADLINE].to_numpy(dtype=np.float64) if DEADLINE in jobs else np.full(sim.n, np.nan)
        #: deadline of each job while it is in L1, FOREVER otherwise (regular or fixed in L0)
        self.limit = np.where(np.isnan(deadline), FOREVER, np.nan_to_num(deadline, nan=0)).astype(np.int64)
        self.has_deadline = ~np.isnan(deadline)
        self.tentative: list[int] = []   # L1, in submission order (job number = arrival rank)
        self.first_misses = 0            # deadline jobs whose first reservation missed the deadline
        self.rounds = 0                  # Algorithm 1 runs with a non-empty L1
        self.fixed = 0                   # deadline jobs moved from L1 to L0 by Algorithm 1
        self.extra_steps = 0             # times the extra step (lines 22-35) ran
        #: what became of each job, for the schedule's ``dbf_class`` column (see extra_columns)
        self.job_class = np.where(self.has_deadline, TENTATIVE, REGULAR).astype(np.int8)
        self._first_seq: dict[tuple[int, int], int] = {}   # (job, start) -> seq of its first reservation there

    # arrivals ----------------------------------------------------------------------------------
    def on_submit(self, job: int) -> None:
        self.enqueue(job)
        self.profile.advance(self.sim.now)
        if self.has_deadline[job]:
            self._place(job)
            if self.reserved[job] + self.estimate[job] <= self.limit[job]:
                insort(self.tentative, job)
                return
            self.first_misses += 1
            self.job_class[job] = FIRST_MISS
            self._cancel([job])
            self.limit[job] = FOREVER   # treated as regular from now on
        self.arrive_regular(job)

    def arrive_regular(self, job: int) -> None:
        """Algorithm 1 for the regular job ``job`` (see the module docstring)."""
        l1 = self.tentative
        if not l1:
            self._place(job)
            return
        self.rounds += 1
        self._cancel(l1)
        self._reserve_in_order([job])
        self._reserve_in_order(l1)
        tmp = [job]
        while True:
            late = self._first_late(l1)
            if late is None:
                break
            moved = l1.pop(late)
            insort(tmp, moved)
            self._cancel(tmp + l1)
            self._reserve_in_order(tmp)
            self._reserve_in_order(l1)
        late_in_tmp = [j for j in tmp if self.reserved[j] + self.estimate[j] > self.limit[j]]
        if late_in_tmp:   # the extra step: S_max = the last submission among the late jobs of L_tmp
            self.extra_steps += 1
            s_max = max(self.sim.submit[j] for j in late_in_tmp)
            submit = self.sim.submit
            earlier = [j for j in l1 if submit[j] < s_max]
            if earlier:
                keep = [j for j in l1 if submit[j] >= s_max]
                self._cancel(tmp + l1)
                tmp = sorted(tmp + earlier)
                l1[:] = keep
                self._reserve_in_order(tmp)
                self._reserve_in_order(l1)
        for fixed in tmp:   # L_tmp joins L0: definitive from now on
            if self.limit[fixed] != FOREVER:
                self.fixed += 1
                self.job_class[fixed] = FIXED
                self.limit[fixed] = FOREVER

    # reservations ------------------------------------------------------------------------------
    def _first_late(self, jobs: list[int]) -> int | None:
        """Position in ``jobs`` of the first one reserved to end after its deadline."""
        index = np.asarray(jobs, dtype=np.int64)
        late = np.flatnonzero(self.reserved[index] + self.estimate[index] > self.limit[index])
        return int(late[0]) if len(late) else None

    def _cancel(self, jobs: list[int]) -> None:
        profile = self.profile
        profile.make_room(2 * len(jobs))
        profile.length = release_all(profile.times, profile.free, profile.length,
                                     np.asarray(jobs, dtype=np.int64), self.reserved, self.estimate, self.size)

    def _reserve_in_order(self, jobs: list[int]) -> None:
        """Reserve ``jobs`` one after the other at their earliest fit (their reservations must
        have been cancelled), and note when each falls due."""
        profile = self.profile
        index = np.asarray(jobs, dtype=np.int64)
        before = self.reserved[index]
        profile.make_room(2 * len(jobs))
        profile.length = reserve_in_order(profile.times, profile.free, profile.length, index,
                                          self.reserved, self.estimate, self.size, self.sim.now)
        after = self.reserved[index]
        for q in np.flatnonzero(after != before).tolist():   # unchanged ones are already due then
            self._note(jobs[q], int(after[q]))

    # starts ------------------------------------------------------------------------------------
    def start(self, job: int) -> None:
        if self.limit[job] != FOREVER:   # started from L1
            l1 = self.tentative
            del l1[bisect_left(l1, job)]
        super().start(job)

    # when jobs fall due --------------------------------------------------------------------------
    # Here a job may come back to a start it held before (Algorithm 1 cancels and re-reserves);
    # jobs due at one instant then start in the order of the *first* reservation at that start
    # since the last rebuild, as they always have.
    #
    # The simulator is also woken at every reservation: Algorithm 1 moves deadline jobs later without
    # compressing, so a reservation may begin where no job ends or arrives any more (conservative's
    # fixpoint argument does not hold here); without the wake-up such a job would start late, or
    # never if the machine went idle.
    def _note(self, job: int, start: int) -> None:
        super()._note(job, start)
        self.seq[job] = self._first_seq.setdefault((job, start), int(self.seq[job]))
        self.sim.wake_at(start)

    def moved(self, moves: np.ndarray) -> None:
        first, seq, wake_at = self._first_seq, self.seq, self.sim.wake_at
        for job, new in moves.tolist():
            seq[job] = first.setdefault((job, new), int(seq[job]))
            wake_at(new)

    def rebuild(self) -> None:
        self._first_seq.clear()
        super().rebuild()

    # reporting ---------------------------------------------------------------------------------
    def extra_columns(self) -> dict[str, np.ndarray]:
        """``dbf_class``: 0 regular; 1 deadline job that started from L1; 2 deadline job fixed in L0
        by Algorithm 1; 3 deadline job whose first reservation missed its deadline (treated as
        regular). With jobs killed at their requested time, class 3 can miss, and classes 1-2 only in the
        rare case left after the extra step (see the module docstring)."""
        return {"dbf_class": self.job_class.copy()}

    def summary(self) -> dict[str, int]:
        return {"dbf_first_allocation_misses": self.first_misses, "dbf_rounds": self.rounds,
                "dbf_fixed": self.fixed, "dbf_extra_steps": self.extra_steps}


@njit(cache=True)
def release_all(times, free, length, jobs, reserved, estimate, size):
    """Give back the reservations of ``jobs``. Needs room for 2 × len(jobs) more steps."""
    for q in range(len(jobs)):
        job = jobs[q]
        length = add(times, free, length, reserved[job], reserved[job] + estimate[job], size[job])
    return length


@njit(cache=True)
def reserve_in_order(times, free, length, jobs, reserved, estimate, size, now):
    """Reserve each of ``jobs`` in turn at its earliest fit from ``now``; updates ``reserved``.
    Needs room for 2 × len(jobs) more steps."""
    for q in range(len(jobs)):
        job = jobs[q]
        duration, n = estimate[job], size[job]
        start = earliest_start(times, free, length, now, duration, n, FOREVER, 0, 0, 0)
        length = add(times, free, length, start, start + duration, -n)
        reserved[job] = start
    return length


def _deadline_scenario(workload: Workload, fraction: float, seed: int) -> Workload:
    return assign_deadlines(workload, float(fraction), seed=seed)


def _paper_preprocessing(workload: Workload, drop: bool, seed: int) -> Workload:
    return paper_preprocessing(workload) if drop else workload


DEADLINE_FRACTION = Param(
    "deadline_fraction", "float", 0.0,
    "share of jobs (0-1, seeded pick) made deadline jobs with deadline = submit + max(24 h, 10 × requested "
    "time); applies to the workload, so every policy sees the same deadline jobs", minimum=0.0,
    label="share of jobs with a deadline", unit="0-1")

DROP_INTERACTIVE = Param(
    "drop_interactive", "bool", False,
    "the DBF paper's trace preparation: remove the jobs of queues the trace header names interactive "
    "(negative runtimes/processors are always dropped and jobs stopped at their walltime)",
    label="drop interactive jobs")

register_algorithm(Component("dbf", DeadlineBackfilling, (), "deadline-based backfilling"))
register_workload_option(WorkloadOption(DROP_INTERACTIVE, _paper_preprocessing))
register_workload_option(WorkloadOption(DEADLINE_FRACTION, _deadline_scenario, read_by=frozenset({"dbf"})))
register(Preset("dbf", "FCFS with deadline-based backfilling: conservative, but deadline jobs give way to regular "
                "ones while they still end by their deadline (set deadline_fraction).", "fcfs", "dbf",
                family="deadlines", paper="dbf"))
