"""The schedule check run after every simulation: a run whose schedule breaks a rule fails.

Each check reads the finished schedule (not the simulator's bookkeeping) and the workload and
machine it was simulated on; all are vectorized (a sweep over start and end events for capacity).

- ``jobs``: every job handed to the simulation is in the schedule, started exactly once, or was
  rejected with a counted reason (given + rejected before = scheduled + rejected after).
- ``submit``: no job starts before it was submitted.
- ``runtime``: every job runs its runtime as the workload says, end = start + runtime (a killed job's
  runtime is its requested time; under a policy's time-limit check, engine.sim.timelimit, a job over
  its limit runs until the check due after its start), scaled by its cluster's speed under speed scaling. Time sharing:
  a job runs at most at full speed, so end - start >= runtime (less one second of rounding).
- ``capacity``: the processors held (``alloc``: buddy blocks count whole) never exceed the machine,
  a job holding them on [start, end) (a job of runtime 0 holds none). Where node placement is
  modelled (``cluster``/``nodes`` columns): per node, cores, RAM and GPUs never exceed the node's,
  and no job runs on a cluster outside its availability window. Not checked under time sharing,
  where admitted jobs share processors by design, nor for a recorded run, which replays what a
  real machine did.
- ``reservation`` (EASY): a blocked head job never starts later than its reservation, and its
  reservation never moves later while it stays at the head. Tracked as the run goes by a
  :class:`ReservationWatch` the algorithm reports to (the head, its reservation, and the starts
  from the head): rebuilding the queue's history from the schedule would mean simulating again.
  The promise holds only with jobs ending by their requested time and processors counted (not
  with overruns, nor with buddy blocks, whose reservations may wait for an aligned block): there
  the check says so instead.
"""

from __future__ import annotations

import time
from itertools import chain
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

import numpy as np
import pandas as pd

from engine.sim.simulator import SimulationError
from engine.sim.timelimit import TimeLimitCheck
from engine.workload.model import Workload

OK = "ok"


class InvalidSchedule(SimulationError):
    """A finished schedule broke one of the checks (the message names the check and the jobs)."""


@dataclass
class ReservationWatch:
    """What EASY promised its blocked head job, checked as the run goes.

    The algorithm calls :meth:`blocked` with its blocked head and that job's reservation (the
    shadow time) in every pass that computes one, and :meth:`started` for each job it starts from
    the head of the queue. A job stays *watched* while it stays at the head; a job overtaken at the
    head (another one started from the head first, as other orderings allow) gets a new promise
    when it is head again.
    """

    head: int = -1
    promised: int = 0
    reservations: int = 0
    #: (job, promised, instead, now): "moved" = the reservation moved later, "late" = started later
    broken: list[tuple[str, int, int, int, int]] = field(default_factory=list)

    def blocked(self, job: int, now: int, shadow: int) -> None:
        if job != self.head:
            self.head, self.promised = job, shadow
            self.reservations += 1
            return
        if shadow > self.promised:
            self.broken.append(("moved", job, self.promised, shadow, now))
        self.promised = shadow

    def started(self, job: int, now: int) -> None:
        if job == self.head and now > self.promised:
            self.broken.append(("late", job, self.promised, now, now))
        self.head = -1


@dataclass
class Placement:
    """Where node placement is modelled: the machine, speed scaling, and the cores each job takes on
    each of its nodes (the schedule lists the nodes; a job asking for ``procs`` cores anywhere takes
    a varying number per node, which only the allocator knows)."""

    machine: Any                                   # engine.platform.machines.Machine
    speed_scaling: bool = False
    cores_per_node: Sequence[tuple[int, ...]] | None = None


def validate(schedule: pd.DataFrame, workload: Workload, capacity: int, *, given: int, rejected_before: int,
             rejected_after: int, shares_processors: bool = False, replayed: bool = False,
             placement: Placement | None = None, watch: ReservationWatch | None = None,
             reservations_promised: str | None = None, limit_check: TimeLimitCheck | None = None) -> dict[str, Any]:
    """Check ``schedule`` (row i = job i of ``workload``); the verdict, or InvalidSchedule naming the
    first failed check.

    ``given``/``rejected_before``: jobs handed to the simulation and those cleaning had rejected;
    ``rejected_after``: every counted rejection after it. ``reservations_promised``: None if EASY's
    reservations must hold in this setting, else why they need not (the check then says so).
    """
    began = time.perf_counter()
    checks: dict[str, str] = {}
    failures: list[str] = []

    def record(name: str, problem: str | None, *, skipped: str | None = None) -> None:
        checks[name] = f"not checked: {skipped}" if skipped else OK if problem is None else problem
        if problem is not None and not skipped:
            failures.append(f"{name}: {problem}")

    ids = schedule["job_id"].to_numpy() if "job_id" in schedule else np.arange(len(schedule))

    def name(rows: np.ndarray, limit: int = 3) -> str:
        shown = ", ".join(str(ids[i]) for i in rows[:limit])
        return f"job{'s' if len(rows) > 1 else ''} {shown}{', …' if len(rows) > limit else ''}"

    record("jobs", _accounting(schedule, workload, given, rejected_before, rejected_after, name))
    if len(schedule) != len(workload.jobs):   # the other checks compare row by row
        raise InvalidSchedule("schedule check failed: " + failures[0])
    start = schedule["start"].to_numpy(np.int64)
    end = schedule["end"].to_numpy(np.int64)
    early = np.flatnonzero(start < schedule["submit"].to_numpy(np.int64))
    record("submit", f"{name(early)} started before submission" if len(early) else None)
    record("runtime", _runtimes(schedule, workload, placement, shares_processors, name, limit_check))
    if shares_processors:
        record("capacity", None, skipped="time sharing shares processors among admitted jobs by design")
    elif replayed:
        record("capacity", None, skipped="a recorded run replays what the real machine did")
    elif placement is not None:
        record("capacity", _node_capacity(schedule, workload, placement, start, end, name)
               or _pool_capacity(start, end, schedule["alloc"].to_numpy(np.int64), capacity))
    else:
        record("capacity", _pool_capacity(start, end, schedule["alloc"].to_numpy(np.int64), capacity))
    if watch is not None:
        problem = _reservations(watch, ids)
        if reservations_promised is not None:
            record("reservation", None, skipped=f"{reservations_promised}"
                                                f"{f' ({problem})' if problem else ''}")
        else:
            record("reservation", problem)
    verdict = {"ok": not failures, "checks": checks, "line": verdict_line(checks),
               "seconds": round(time.perf_counter() - began, 4)}
    if failures:
        raise InvalidSchedule("schedule check failed: " + "; ".join(failures))
    return verdict


def _accounting(schedule: pd.DataFrame, workload: Workload, given: int, rejected_before: int,
                rejected_after: int, name: Any) -> str | None:
    scheduled = len(schedule)
    if scheduled != len(workload.jobs):
        return f"{scheduled} jobs in the schedule for {len(workload.jobs)} simulated"
    if given + rejected_before != scheduled + rejected_after:
        return (f"{given} jobs given (+{rejected_before} rejected by cleaning) but {scheduled} scheduled "
                f"+ {rejected_after} rejected with a reason")
    start, end = schedule["start"].to_numpy(np.int64), schedule["end"].to_numpy(np.int64)
    never = np.flatnonzero((start < 0) | (end < start))
    if len(never):
        return f"{name(never)} never ran"
    if "start_order" in schedule:
        order = schedule["start_order"].to_numpy(np.int64)
        if not np.array_equal(np.sort(order), np.arange(scheduled)):
            return "start order is not one start per job"
    return None


def _runtimes(schedule: pd.DataFrame, workload: Workload, placement: Placement | None, shares: bool,
              name: Any, limit_check: TimeLimitCheck | None = None) -> str | None:
    jobs = workload.jobs
    runtime = jobs["runtime"].to_numpy(np.int64)
    requested = jobs["requested_time"].to_numpy(np.int64)
    killed = jobs["killed"].to_numpy(bool) if "killed" in jobs else np.zeros(len(jobs), bool)
    wrong_kill = np.flatnonzero(killed & (runtime != requested))
    if len(wrong_kill):
        return f"{name(wrong_kill)} killed but not at the requested time"
    if limit_check is not None:
        runtime, killed = _checked(limit_check, schedule["start"].to_numpy(np.int64), runtime, killed)
    if "killed" in schedule and not np.array_equal(schedule["killed"].to_numpy(bool), killed):
        return "the schedule's killed flags are not the workload's"
    if placement is not None and placement.speed_scaling:
        runtime = _scaled(runtime, schedule, placement.machine)
    took = schedule["end"].to_numpy(np.int64) - schedule["start"].to_numpy(np.int64)
    if shares:
        wrong = np.flatnonzero(took < runtime - 1)
        return f"{name(wrong)} ran faster than full speed" if len(wrong) else None
    wrong = np.flatnonzero(took != runtime)
    if len(wrong):
        i = wrong[0]
        return f"{name(wrong)} ran {took[i]} s instead of {runtime[i]} s"
    return None


def _checked(check: TimeLimitCheck, start: np.ndarray, runtime: np.ndarray,
             killed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each job's runtime and killed flag under the time-limit check, from its start in the schedule."""
    ran = [check.runtime(job, int(s), int(r)) for job, (s, r) in enumerate(zip(start.tolist(), runtime.tolist()))]
    return (np.array([r for r, _ in ran], dtype=np.int64).reshape(-1),
            killed | np.array([k for _, k in ran], dtype=bool).reshape(-1))


def _scaled(seconds: np.ndarray, schedule: pd.DataFrame, machine: Any) -> np.ndarray:
    """Seconds on each job's cluster: ceil(seconds x fastest speed / the cluster's speed)."""
    top = machine.max_speed
    factor = {c.name: top / c.speed for c in machine.clusters}
    per_job = schedule["cluster"].map(factor).fillna(1.0).to_numpy(np.float64)
    return np.where(per_job == 1.0, seconds, np.ceil(seconds * per_job)).astype(np.int64)


def _peaks(times: np.ndarray, deltas: np.ndarray, keys: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sweep: at each event (sorted by key, time, releases first), the running sum of ``deltas``
    within its key. Returns (order, level after each event)."""
    sort_keys = (deltas, times) if keys is None else (deltas, times, keys)
    order = np.lexsort(sort_keys)
    # every key's events sum to 0, so one running sum over all keys restarts at 0 for each key
    return order, np.cumsum(deltas[order])


def _pool_capacity(start: np.ndarray, end: np.ndarray, alloc: np.ndarray, capacity: int) -> str | None:
    """The most processors held at once, over the events sorted by time, releases first at an instant:
    ends listed before starts, so one stable sort by time puts them so. (Within an instant the order
    of the starts does not change the peak, nor where it is first reached: the level only grows.)"""
    holds = end > start
    times = np.concatenate([end[holds], start[holds]])
    deltas = np.concatenate([-alloc[holds], alloc[holds]])
    order = np.argsort(times, kind="stable")
    busy = np.cumsum(deltas[order])
    if len(busy) and busy.max() > capacity:
        at = int(times[order][busy.argmax()])
        return f"{int(busy.max())} processors in use at t={at} on a machine of {capacity}"
    return None


def _node_capacity(schedule: pd.DataFrame, workload: Workload, placement: Placement, start: np.ndarray,
                   end: np.ndarray, name: Any) -> str | None:
    """Cores, RAM and GPUs per node, and availability windows, from the ``cluster``/``nodes`` columns."""
    machine = placement.machine
    clusters = {c.name: c for c in machine.clusters}
    index, first = {}, 0
    for c in machine.clusters:
        index[c.name] = first
        first += c.nodes
    node_cores = np.concatenate([[c.cores] * c.nodes for c in machine.clusters]).astype(np.int64)
    node_ram = np.concatenate([[c.ram_kb] * c.nodes for c in machine.clusters]).astype(np.int64)
    node_gpus = np.concatenate([[c.gpus] * c.nodes for c in machine.clusters]).astype(np.int64)
    cluster = schedule["cluster"].astype(str).to_numpy()
    unknown = ~np.isin(cluster, list(clusters))
    if unknown.any():
        return f"{name(np.flatnonzero(unknown))} on no cluster of the machine"
    windows = _windows(cluster, clusters, start, end, workload, placement, name)
    if windows:
        return windows
    # each row's node names (split at ";"): joined, the rows' names are one split, in order
    texts = schedule["nodes"].astype(str).tolist()
    counts = np.fromiter((text.count(";") + 1 for text in texts), np.int64, len(texts))
    names = ";".join(texts).split(";") if texts else []
    row = np.repeat(np.arange(len(schedule)), counts)
    global_node = _node_numbers(names, clusters, index)
    if (global_node < 0).any():
        return f"{name(np.unique(row[global_node < 0]))} on a node the machine does not have"
    if placement.cores_per_node is not None:
        cores = np.fromiter(chain.from_iterable(placement.cores_per_node), np.int64)
        if len(cores) != len(row):
            return "the cores taken per node do not match the schedule's nodes"
    else:
        cores = _request_column(workload, "ppn")[row]
    # a request for cores anywhere (nodes = 0) holds only its cores on nodes (engine.sim.nodes)
    anywhere = (_request_column(workload, "nodes") == 0)[row]
    exclusive = _request_column(workload, "exclusive", bool)[row] & ~anywhere
    cores = np.where(exclusive, node_cores[global_node], cores)
    ram = np.where(exclusive, node_ram[global_node], np.where(anywhere, 0, _request_column(workload, "mem")[row]))
    gpus = np.where(exclusive, node_gpus[global_node], np.where(anywhere, 0, _request_column(workload, "gpus")[row]))
    holds = (end > start)[row]
    node, s, e = global_node[holds], start[row][holds], end[row][holds]
    for what, amount, limit in (("cores", cores[holds], node_cores), ("RAM", ram[holds], node_ram),
                                ("GPUs", gpus[holds], node_gpus)):
        if what == "RAM":   # RAM is not modelled on nodes that state none
            modelled = node_ram[node] > 0
            node_, s_, e_, amount = node[modelled], s[modelled], e[modelled], amount[modelled]
        else:
            node_, s_, e_ = node, s, e
        if not len(node_):
            continue
        times = np.concatenate([s_, e_])
        deltas = np.concatenate([amount, -amount])
        keys = np.concatenate([node_, node_])
        order, level = _peaks(times, deltas, keys)
        over = level > limit[keys[order]]
        if over.any():
            k = int(np.flatnonzero(over)[0])
            n = int(keys[order][k])
            return (f"{int(level[k])} {what} in use on node {_node_name(n, machine)} at t={int(times[order][k])}, "
                    f"which has {int(limit[n])}")
    return None


def _windows(cluster: np.ndarray, clusters: dict, start: np.ndarray, end: np.ndarray, workload: Workload,
             placement: Placement, name: Any) -> str | None:
    windowed = [c for c in clusters.values() if c.available_from is not None or c.available_to is not None]
    for c in windowed:
        on = np.flatnonzero(cluster == c.name)
        low = c.available_from if c.available_from is not None else -2 ** 62
        high = c.available_to if c.available_to is not None else 2 ** 62
        outside = on[(start[on] < low) | (end[on] > high)]
        if len(outside):
            return f"{name(outside)} ran on {c.name} outside its availability window"
    return None


def _node_numbers(names: list[str], clusters: dict, index: dict) -> np.ndarray:
    """``<cluster>-<i>`` -> the node's number over the whole machine (-1 if there is no such node)."""
    codes, uniques = pd.factorize(pd.Series(names, dtype=object))
    numbers = np.empty(len(uniques), dtype=np.int64)
    for k, text in enumerate(uniques):
        cluster, _, i = str(text).rpartition("-")
        ok = cluster in clusters and i.isdigit() and int(i) < clusters[cluster].nodes
        numbers[k] = index[cluster] + int(i) if ok else -1
    return numbers[codes] if len(codes) else np.zeros(0, np.int64)


def _node_name(number: int, machine: Any) -> str:
    for c in machine.clusters:
        if number < c.nodes:
            return f"{c.name}-{number}"
        number -= c.nodes
    return str(number)


def _request_column(workload: Workload, column: str, dtype: type = np.int64) -> np.ndarray:
    jobs = workload.jobs
    return jobs[column].to_numpy(dtype) if column in jobs else np.zeros(len(jobs), dtype)


def _reservations(watch: ReservationWatch, ids: np.ndarray) -> str | None:
    if not watch.broken:
        return None
    kind, job, promised, instead, now = watch.broken[0]
    what = (f"reservation moved from t={promised} to t={instead} at t={now}" if kind == "moved"
            else f"started at t={instead}, after its reservation at t={promised}")
    more = f" ({len(watch.broken) - 1} more)" if len(watch.broken) > 1 else ""
    return f"EASY's head job {ids[job]}: {what}{more}"


def reservation_caveat(allocation: str, runtime: Sequence[int], estimate: Sequence[int]) -> str | None:
    """None if EASY's reservations must hold in this setting, else why they need not."""
    if allocation == "buddy":
        return "under buddy allocation a reservation may wait for an aligned block (as documented)"
    over = int(np.count_nonzero(np.asarray(runtime, dtype=np.int64) > np.asarray(estimate, dtype=np.int64)))
    if over:
        return f"{over} jobs run past their requested time (overruns allowed), so reservations may slip"
    return None


def verdict_line(checks: dict[str, str]) -> str:
    """One line for people: "schedule checked: jobs, submit, runtime, capacity; not checked: …"."""
    passed, skipped, failed = [], [], []
    for name, result in checks.items():
        if result == OK:
            passed.append(name)
        elif result.startswith("not checked: "):
            skipped.append(f"{name} ({result.removeprefix('not checked: ')})")
        else:
            failed.append(f"{name}: {result}")
    line = "schedule checked: " + ", ".join(passed)
    if skipped:
        line += "; not checked: " + "; ".join(skipped)
    if failed:
        line += "; failed: " + "; ".join(failed)
    return line
