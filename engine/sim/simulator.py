"""The discrete-event loop: integer seconds, deterministic, policies see requests only.

At one instant the simulator first ends every job due then (completions and kills, in the order
they started), then submits every job arriving then (in trace order), then asks the policy what to
start. Policies read the public state of :class:`Simulation` and call :meth:`Simulation.start`.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, insort
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Any, Protocol

import numpy as np
import pandas as pd

from engine.sim import poolloop
from engine.sim.allocation import CountAllocator, make_allocator
from engine.sim.schedule_csv import write_schedule_csv
from engine.sim.timelimit import TimeLimitCheck
from engine.workload.model import Workload, native_ids
from engine.workload.names import names_of

#: The schedule CSV begins with these columns, in this order (a stable contract).
SCHEDULE_COLUMNS = ("job_id", "user", "submit", "start", "end", "procs", "requested_time", "runtime", "wait", "killed")
EXTRA_COLUMNS = ("alloc", "group", "queue", "partition", "start_order")
#: from this many jobs on, a policy the compiled loop can run runs there (Simulation.worth_compiling):
#: the Python loop takes some 10-20 µs a job under FCFS and EASY, loading numba about 0.6 s
COMPILED_FROM_JOBS = 30_000


class Cancelled(Exception):
    """The caller's should_stop() asked the simulation to stop."""


class SimulationError(RuntimeError):
    """The simulation cannot go on (a policy left jobs waiting on an idle machine, ...)."""


class JobsStuck(SimulationError):
    """Jobs still wait on an idle machine and nothing is left to happen: the policy never starts
    them. The run's last-resort check (engine.run words it for people: which jobs, their queues,
    what holds them, when)."""

    def __init__(self, waiting: int, at: float) -> None:
        super().__init__(f"{waiting} jobs still wait with the machine idle at t={at:g}: the policy never starts them")
        self.waiting, self.at = waiting, at


class InvalidStart(SimulationError):
    """A policy asked to start a job that cannot start now: not yet submitted, already started, or
    without room. Checked at the start itself (a second start would leave no trace in the schedule
    for engine.sim.validate to find); worded as that check words its failures."""


class Pacer:
    """What every event loop does after each instant: report progress about 200 times a run and
    ask ``should_stop()`` every 16 instants (Cancelled if it says so). The callback throttles
    itself (the web checks the database about once a second); asking often keeps cancelling
    prompt under policies whose decisions take long (plan-based annealing)."""

    def __init__(self, n: int, progress: Callable[[float], None] | None,
                 should_stop: Callable[[], bool] | None) -> None:
        self.n, self.progress, self.should_stop = n, progress, should_stop
        self.report_every = max(n // 200, 1)
        self.next_report = self.report_every
        self.instants = 0

    def tick(self, finished: int, t: float) -> None:
        self.instants += 1
        if finished >= self.next_report:
            self.next_report = finished + self.report_every
            if self.progress is not None:
                self.progress(finished / self.n)
        if self.should_stop is not None and self.instants % 16 == 0 and self.should_stop():
            raise Cancelled(f"cancelled at t={t} after {finished} of {self.n} jobs")

    def chunk_done(self, finished: int, t: float) -> None:
        """After a chunk of a compiled loop (it pauses when ``finished`` reaches :attr:`next_report`)."""
        if finished >= self.next_report:
            self.next_report = finished + self.report_every
            if self.progress is not None:
                self.progress(finished / self.n)
        if self.should_stop is not None and self.should_stop():
            raise Cancelled(f"cancelled at t={t} after {finished} of {self.n} jobs")

    def done(self) -> None:
        if self.progress is not None:
            self.progress(1.0)


class Scheduler(Protocol):
    """What the simulator asks of a policy.

    Optionally a scheduler also has ``extra_columns() -> dict[str, array]`` (columns appended to
    the schedule, e.g. which pass started a job) and ``summary() -> dict`` (figures added to the
    run's summary, e.g. decision times).
    """

    def on_submit(self, job: int) -> None: ...
    def on_finish(self, job: int) -> None: ...
    def schedule(self) -> None: ...


class CompiledScheduler(Protocol):
    """A scheduler that the compiled loop (engine.sim.poolloop) can run instead, when it says so:
    ``compiled_algorithm()`` is its poolloop algorithm code, or None (then the Python loop runs it);
    ``queue.rank`` is its queue order; ``watch`` an optional ReservationWatch (EASY).

    A scheduler may instead have a compiled loop of its own: ``compiled_loop()`` is a function the
    simulator calls with the run's :class:`Pacer` in place of its loop (it leaves the simulation in
    the state :meth:`Simulation.run` would), or None (conservative backfilling,
    engine.policies.conservative). Such a scheduler's Python path calls kernels too, so its loop runs
    at any size (see :meth:`Simulation.worth_compiling`)."""

    queue: Any
    watch: Any

    def compiled_algorithm(self) -> int | None: ...


class Simulation:
    """State a policy may read: time, jobs' requests, free processors, running jobs' expected ends.

    Jobs are integers 0..n-1 in arrival order (the workload's row order), so a job's number is
    also its arrival rank.
    """

    #: run policies that can be compiled with the compiled loop: None = when worth it (worth_compiling)
    compiled: bool | None = None

    def __init__(self, workload: Workload, capacity: int, *, allocation: str = "count",
                 exact_estimates: bool = False, context: Mapping[str, Any] | None = None,
                 allocator: Any = None) -> None:
        jobs = workload.jobs
        self.workload = workload
        #: extra inputs some policies need (allocations, queue configuration, ...), by name
        self.context: Mapping[str, Any] = context or {}
        self.capacity = int(capacity)
        #: a given allocator object (e.g. engine.sim.nodes.NodeAllocator) replaces the named rule
        self.allocator = allocator if allocator is not None else make_allocator(allocation, self.capacity)
        self.n = len(jobs)
        self.submit: list[int] = jobs["submit"].astype("int64").tolist()
        self.runtime: list[int] = jobs["runtime"].astype("int64").tolist()
        requested = jobs["runtime"] if exact_estimates else jobs["requested_time"]
        #: what policies believe a job will take (>= 1 s so every job occupies its processors)
        self.estimate: list[int] = np.maximum(requested.astype("int64").to_numpy(), 1).tolist()
        self.procs: list[int] = jobs["procs"].astype("int64").tolist()
        #: processors each job holds (a pool of processors counted: what it asks for)
        self.size: list[int] = (list(self.procs) if type(self.allocator) is CountAllocator
                                else [self.allocator.size_for(p) for p in self.procs])
        self.user: list[int] = jobs["user"].astype("int64").tolist() if "user" in jobs else [-1] * self.n
        self.now = 0
        self.start_time = [-1] * self.n
        self.end_time = [-1] * self.n
        self.start_order = [-1] * self.n
        self.started = 0
        self.finished = 0
        #: running jobs as sorted (expected end, job); expected end = start + estimate
        self.running_ends: list[tuple[int, int]] = []
        self._completions: list[tuple[int, int, int]] = []
        #: called with each job as it ends (e.g. fair-share accounting), before the policy hears of it
        self.finish_listeners: list[Callable[[int], None]] = []
        #: times the policy is asked again although nothing ends or arrives (availability changes), latest first
        self.wakeups: list[int] = []
        #: a scheduling pass after each job end, even when several end in the same second (PBS runs a
        #: cycle per job-end event; a log's whole seconds merge ends a real server saw apart); set by policies
        self.pass_per_end = False
        #: jobs the policy refused at their submission (a site's limits: engine.policies.slurmlimits),
        #: job -> (reason, the limit as the site writes it); engine.run lists them as rejected
        self.refused: dict[int, tuple[str, str]] = {}
        #: a controller's periodic time-limit check (engine.sim.timelimit), set by a policy that follows
        #: one: a job over its limit runs until the check kills it; None: each job runs its runtime
        self.limit_check: TimeLimitCheck | None = None
        #: jobs the limit check killed
        self.check_killed: set[int] = set()
        if allocator is not None:
            self._bind_allocator(allocator)

    def _bind_allocator(self, allocator: Any) -> None:
        """A job-aware allocator answers ``fits(job)`` itself (it reads the job's node-level request)."""
        allocator.bind(self)
        if hasattr(allocator, "fits_job"):
            self.fits = allocator.fits_job  # type: ignore[method-assign]
        self.wakeups = sorted(getattr(allocator, "wakeup_times", list)(), reverse=True)

    # -- what policies call ------------------------------------------------------------------
    def fits(self, job: int) -> bool:
        return self.allocator.fits(self.size[job])

    @property
    def free(self) -> int:
        return self.allocator.free

    def expected_end(self, job: int) -> int:
        return self.start_time[job] + self.estimate[job]

    def wake_at(self, t: int) -> None:
        """Ask for a scheduling pass at time ``t`` even if nothing ends or arrives then (a policy
        that plans starts in the future, e.g. at a reservation, calls this)."""
        if t > self.now and t not in self.wakeups:
            insort(self.wakeups, t, key=lambda x: -x)   # kept in descending order, soonest last

    def start(self, job: int) -> None:
        """Start ``job`` now: it must have been submitted, not have started yet, and fit (else
        :class:`InvalidStart`, naming the job and the rule, and the run fails)."""
        now = self.now
        if self.start_time[job] >= 0 or now < self.submit[job]:
            raise InvalidStart(self._refusal(job))
        try:
            self.allocator.allocate(job, self.size[job])
        except RuntimeError:       # the allocator's "no room" (its message names the job by number)
            raise InvalidStart(f"schedule check failed: capacity: {self.job_name(job)} started at t={now} on "
                               f"{self.size[job]} processors with {self.free} free of {self.capacity} "
                               "(it does not fit now)") from None
        self.start_time[job] = now
        self.start_order[job] = self.started
        if self.limit_check is not None:
            self.runtime[job], killed = self.limit_check.runtime(job, now, self.runtime[job])
            if killed:
                self.check_killed.add(job)
        heappush(self._completions, (now + self.runtime[job], self.started, job))
        self.started += 1
        insort(self.running_ends, (now + self.estimate[job], job))

    def refuse(self, job: int, reason: str, limit: str) -> None:
        """Refuse the just-submitted ``job``: it never runs (the policy keeps it out of its queue)
        and the run lists it as rejected at submission with ``reason`` and ``limit``."""
        if self.start_time[job] >= 0 or self.now < self.submit[job]:
            raise InvalidStart(self._refusal(job))
        self.refused[job] = (reason, limit)

    def job_name(self, job: int) -> str:
        """The job as its trace names it ("job 4711"), for messages."""
        jobs = self.workload.jobs
        return f"job {jobs['job_id'].iat[job] if 'job_id' in jobs else job}"

    def _refusal(self, job: int) -> str:
        if self.start_time[job] >= 0:
            return (f"schedule check failed: jobs: {self.job_name(job)} started twice (at t={self.start_time[job]} "
                    f"and again at t={self.now})")
        return (f"schedule check failed: submit: {self.job_name(job)} started at t={self.now}, before its "
                f"submission at t={self.submit[job]}")

    def stuck(self) -> JobsStuck:
        """The error of a run left with jobs waiting on an idle machine, nothing more to come: the
        policy never starts them (each one fits the empty machine, larger ones are rejected before).
        engine.run words it for people (engine/stuck.py: which jobs, their queues, what holds them,
        when)."""
        return JobsStuck(self.n - self.started - len(self.refused), self.now)

    # -- the loop ------------------------------------------------------------------------------
    def run(self, scheduler: Scheduler, *, progress: Callable[[float], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> None:
        algorithm = getattr(scheduler, "compiled_algorithm", lambda: None)()
        own_loop = getattr(scheduler, "compiled_loop", lambda: None)()
        if own_loop is not None and self.runs_plainly() and self.worth_compiling(numba_anyway=True):
            own_loop(Pacer(self.n, progress, should_stop))
            return
        if algorithm is not None and self.runs_plainly() and self.worth_compiling():
            self.run_compiled(algorithm, scheduler, Pacer(self.n, progress, should_stop))  # type: ignore[arg-type]
            return
        submit, n = self.submit, self.n
        completions = self._completions
        next_job = 0
        pacer = Pacer(n, progress, should_stop)
        wakeups = self.wakeups
        on_wakeup = getattr(self.allocator, "on_wakeup", lambda: None)
        pass_per_end = self.pass_per_end
        refused = self.refused
        while next_job < n or completions or (wakeups and self.started + len(refused) < n):
            t = completions[0][0] if completions else submit[next_job] if next_job < n else wakeups[-1]
            if next_job < n and submit[next_job] < t:
                t = submit[next_job]
            if wakeups:
                if wakeups[-1] < t:
                    t = wakeups[-1]
                while wakeups and wakeups[-1] <= t:
                    wakeups.pop()
                    on_wakeup()
            self.now = t
            while completions and completions[0][0] == t:
                job = heappop(completions)[2]
                self._finish(job)
                scheduler.on_finish(job)
                if pass_per_end and completions and completions[0][0] == t:
                    scheduler.schedule()
            while next_job < n and submit[next_job] == t:
                scheduler.on_submit(next_job)
                next_job += 1
            scheduler.schedule()
            if not completions and next_job == n and self.started + len(refused) < n and not wakeups:
                raise self.stuck()
            pacer.tick(self.finished, t)
        pacer.done()

    def worth_compiling(self, numba_anyway: bool = False) -> bool:
        """Whether the compiled loop pays for loading numba (about 0.6 s the first time in a process):
        from :data:`COMPILED_FROM_JOBS` jobs on, or once numba is loaded anyway, or always when the
        policy's Python path loads it too (``numba_anyway``: its own kernels, as conservative's);
        ``compiled`` (a class attribute, for tests) True or False decides instead."""
        if self.compiled is not None:
            return self.compiled
        return numba_anyway or self.n >= COMPILED_FROM_JOBS or "numba" in sys.modules

    def runs_plainly(self) -> bool:
        """Whether this run is one the compiled loop makes exactly: nothing started yet, a pool of
        processors counted (no placement, no availability changes), no listener of ends, no
        subclass of the loop."""
        return (type(self) is Simulation and type(self.allocator) is CountAllocator and not self.finish_listeners
                and not self.wakeups and "fits" not in self.__dict__ and self.started == 0 and self.now == 0
                and self.limit_check is None)

    def run_compiled(self, algorithm: int, scheduler: CompiledScheduler, pacer: Pacer) -> None:
        """The loop of :meth:`run` for ``scheduler``, compiled (engine.sim.poolloop): the same schedule."""
        int64 = np.int64
        loop = poolloop.PoolState(np.asarray(self.submit, int64), np.asarray(self.runtime, int64),
                                  np.asarray(self.estimate, int64), np.asarray(self.size, int64),
                                  scheduler.queue.rank, self.capacity)
        watch = getattr(scheduler, "watch", None)
        while True:
            outcome = loop.run(algorithm, watch is not None, pacer.next_report)
            if watch is not None:
                watch.broken.extend(loop.take_broken())
            if outcome != poolloop.PAUSED:
                break
            pacer.chunk_done(loop[poolloop.FINISHED], loop[poolloop.NOW])
        self.now, self.started, self.finished = loop[poolloop.NOW], loop[poolloop.STARTED], loop[poolloop.FINISHED]
        self.allocator.free = loop[poolloop.FREE]
        self.start_time, self.end_time = loop.start_time.tolist(), loop.end_time.tolist()
        self.start_order = loop.start_order.tolist()
        if watch is not None:
            watch.head, watch.promised = loop[poolloop.WATCH_HEAD], loop[poolloop.WATCH_PROMISED]
            watch.reservations = loop[poolloop.RESERVATIONS]
        if outcome == poolloop.STUCK:
            raise self.stuck()
        pacer.done()

    def _finish(self, job: int) -> None:
        self.allocator.release(job, self.size[job])
        for listener in self.finish_listeners:
            listener(job)
        self.end_time[job] = self.now
        entry = (self.expected_end(job), job)
        del self.running_ends[bisect_left(self.running_ends, entry)]
        self.finished += 1


@dataclass
class SimResult:
    """A per-job schedule plus what produced it."""

    schedule: pd.DataFrame
    capacity: int
    meta: dict[str, Any] = field(default_factory=dict)
    #: the jobs rejected at submission (by the machine or, with queues, by admission), one row each
    #: (engine.sim.admission.REJECTED_COLUMNS); None where the run did not say
    rejected_jobs: pd.DataFrame | None = None

    def to_csv(self, path: str) -> None:
        """The schedule as CSV; ``deadline`` in whole seconds, empty for regular jobs."""
        write_schedule_csv(self.schedule, path)


def schedule_frame(sim: Simulation, workload: Workload) -> pd.DataFrame:
    jobs = workload.jobs
    start = np.asarray(sim.start_time, dtype=np.int64)
    end = np.asarray(sim.end_time, dtype=np.int64)
    submit = jobs["submit"].to_numpy(dtype=np.int64)

    def column(name: str, default: int = -1) -> np.ndarray:
        return jobs[name].to_numpy() if name in jobs else np.full(len(jobs), default, dtype=np.int64)

    frame = pd.DataFrame({
        "job_id": column("job_id"),
        "user": column("user"),
        "submit": submit,
        "start": start,
        "end": end,
        "procs": jobs["procs"].to_numpy(dtype=np.int64),
        "requested_time": jobs["requested_time"].to_numpy(dtype=np.int64),
        "runtime": np.asarray(sim.runtime, dtype=np.int64),
        "wait": start - submit,
        "killed": column("killed", 0).astype(bool) | np.isin(np.arange(len(jobs)), list(sim.check_killed)),
        "alloc": np.asarray(sim.size, dtype=np.int64),
        "group": column("group"),
        "queue": column("queue"),
        "partition": column("partition"),
        "start_order": np.asarray(sim.start_order, dtype=np.int64),
    })
    native = native_ids(workload)
    if native is not None:
        frame["native_id"] = native
    return with_user_names(frame, workload.metadata)


def with_user_names(frame: pd.DataFrame, metadata: Mapping[str, Any]) -> pd.DataFrame:
    """The schedule with a ``user_name`` column where the trace named its users (engine.workload.names)."""
    names = names_of(metadata, "user")
    if names:
        frame["user_name"] = frame["user"].map(names).fillna("").astype(str).to_numpy()
    return frame
