"""Deliberately naive FCFS, EASY and conservative backfilling, to hold the engine to, job by job.

Written from the textbook (Mu'alem & Feitelson 2001) and the README's "Time and ties", sharing no
code with the engine: plain lists, sums recomputed from scratch, no profile structure, no pruning,
nothing cached. Slow on purpose, so that it is easy to read and to believe.

The rules followed (the engine's documented ones):

- integer seconds; at one instant running jobs end first, then jobs arriving then join the queue
  in trace order, then the policy decides; a job of runtime 0 ends at the instant it starts, and
  the policy decides again at that instant;
- the queue is in arrival order (FCFS), or sorted by ``key(job, now)`` when given, at the start
  of every decision; the machine is one pool of ``capacity`` processors;
- a job's *estimate* is its requested time (its runtime with ``exact=True``), at least 1 s: a
  running job is expected to end at start + estimate, and a reservation holds a job's processors
  for its estimate;
- runtimes never exceed requests (cleaning kills jobs at their requested time).

EASY: start jobs from the head while they fit; for the blocked head, the *shadow time* is the
earliest expected end at which it fits once every running job expected to end by then has ended,
and the *extra* processors are those left over then; a later job starts now if it fits and either
ends by the shadow time or fits in the extra processors (which it then uses up).

Conservative: an arriving job is reserved at the earliest time its processors are free for its
estimate, given the running jobs and every reservation made before; a job starts when its
reservation comes; whenever a running job has ended before its expected end, the waiting jobs in
queue order each move to their earliest start if that is earlier, in rounds until no job moves.
Reservation starts are events of their own here (the engine relies on them coinciding with ends).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: a queue order: key(job index, now) -> sort key (it ends with the job index, so ties go by arrival)
Key = Callable[[int, int], Any]


@dataclass(frozen=True)
class Job:
    submit: int
    runtime: int
    requested: int
    procs: int


def estimate(job: Job, exact: bool) -> int:
    return max(job.runtime if exact else job.requested, 1)


def fcfs(jobs: list[Job], capacity: int, *, exact: bool = False, key: Key | None = None) -> list[int]:
    """Start time of every job under FCFS without backfilling: jobs start in queue order while the
    head fits (``exact`` changes nothing: no decision reads an estimate)."""
    start: list[int | None] = [None] * len(jobs)

    def decide(now: int, waiting: list[int], running: list[int]) -> None:
        while waiting and jobs[waiting[0]].procs <= capacity - sum(jobs[j].procs for j in running):
            start[waiting[0]] = now
            running.append(waiting.pop(0))

    _simulate(jobs, decide, start, key=key)
    return start  # type: ignore[return-value]


def easy(jobs: list[Job], capacity: int, *, exact: bool = False, key: Key | None = None) -> list[int]:
    """Start time of every job under FCFS + EASY backfilling."""
    start: list[int | None] = [None] * len(jobs)

    def decide(now: int, waiting: list[int], running: list[int]) -> None:
        def free() -> int:
            return capacity - sum(jobs[j].procs for j in running)

        def run(j: int) -> None:
            start[j] = now
            running.append(j)
            waiting.remove(j)

        while waiting and jobs[waiting[0]].procs <= free():
            run(waiting[0])
        if not waiting:
            return
        head = waiting[0]
        expected = {j: max(start[j] + estimate(jobs[j], exact), now + 1) for j in running}
        shadow, extra = None, 0
        for t in sorted(set(expected.values())):
            available = free() + sum(jobs[j].procs for j in running if expected[j] <= t)
            if available >= jobs[head].procs:
                shadow, extra = t, available - jobs[head].procs
                break
        assert shadow is not None, "the head never fits"
        for j in list(waiting[1:]):
            if jobs[j].procs > free():
                continue
            if now + estimate(jobs[j], exact) <= shadow:
                run(j)
            elif jobs[j].procs <= extra:
                run(j)
                extra -= jobs[j].procs

    _simulate(jobs, decide, start, key=key)
    return start  # type: ignore[return-value]


def conservative(jobs: list[Job], capacity: int, *, exact: bool = False, key: Key | None = None) -> list[int]:
    """Start time of every job under FCFS + conservative backfilling."""
    start: list[int | None] = [None] * len(jobs)
    reserved: dict[int, int] = {}

    def free_steps(now: int, running: list[int], but: int) -> list[tuple[int, int]]:
        """(t, processors free from t to the next t) from now on: the running jobs until their
        expected ends and every reservation but ``but``'s."""
        held = [(now, start[r] + estimate(jobs[r], exact), jobs[r].procs) for r in running]
        held += [(s, s + estimate(jobs[w], exact), jobs[w].procs) for w, s in reserved.items() if w != but]
        change = {now: 0}
        for begin, end, procs in held:
            change[begin] = change.get(begin, 0) - procs
            change[end] = change.get(end, 0) + procs
        steps, free = [], capacity
        for t in sorted(change):
            free += change[t]
            steps.append((t, free))
        return steps

    def earliest(j: int, now: int, running: list[int]) -> int:
        """Earliest t >= now at which job j's processors are free for its whole estimate."""
        duration, need = estimate(jobs[j], exact), jobs[j].procs
        steps = free_steps(now, running, j)
        for i, (t, _) in enumerate(steps):
            if all(free >= need for u, free in steps[i:] if u < t + duration):
                return t
        raise AssertionError("a job never fits")

    def arrive(j: int, now: int, running: list[int]) -> None:
        reserved[j] = earliest(j, now, running)

    def decide(now: int, waiting: list[int], running: list[int], ended_early: bool) -> None:
        moved = ended_early
        while moved:
            moved = False
            for j in waiting:
                if reserved[j] > now:
                    new = earliest(j, now, running)
                    assert new <= reserved[j], "a reservation moved later"
                    if new < reserved[j]:
                        reserved[j], moved = new, True
        for j in list(waiting):
            assert reserved[j] >= now, "a reservation passed by unnoticed"
            if reserved[j] == now:
                assert sum(jobs[r].procs for r in running) + jobs[j].procs <= capacity
                start[j] = now
                running.append(j)
                waiting.remove(j)
                del reserved[j]

    def wake_ups() -> list[int]:
        return list(reserved.values())

    _simulate(jobs, decide, start, arrive=arrive, wake_ups=wake_ups, exact=exact, tell_early_ends=True, key=key)
    return start  # type: ignore[return-value]


def _simulate(jobs: list[Job], decide, start: list[int | None], *, arrive=None, wake_ups=None,  # noqa: ANN001
              exact: bool = False, tell_early_ends: bool = False, key: Key | None = None) -> None:
    """The event loop: the next instant is the soonest end, arrival (or wake-up); at it, ends, then
    arrivals in trace order, then ``decide``; repeated at the same instant while jobs of runtime
    0 started by the last decision end then."""
    waiting: list[int] = []
    running: list[int] = []
    arrived = 0
    order = sorted(range(len(jobs)), key=lambda j: jobs[j].submit)   # stable: trace order on ties
    while arrived < len(jobs) or waiting or running:
        times = [start[j] + jobs[j].runtime for j in running]
        if arrived < len(jobs):
            times.append(jobs[order[arrived]].submit)
        if wake_ups is not None:
            times += wake_ups()
        now = min(times)
        ended = [j for j in running if start[j] + jobs[j].runtime == now]
        early = any(now < start[j] + estimate(jobs[j], exact) for j in ended)
        running[:] = [j for j in running if j not in ended]
        while arrived < len(jobs) and jobs[order[arrived]].submit == now:
            j = order[arrived]
            waiting.append(j)
            if arrive is not None:
                arrive(j, now, running)
            arrived += 1
        if key is not None:
            waiting.sort(key=lambda j: key(j, now))
        if tell_early_ends:
            decide(now, waiting, running, early)
        else:
            decide(now, waiting, running)
