"""Fair-share orderings: CPU-time fair-share and MetaCentrum's multi-resource fair-share.

Both order the waiting queue by the owner's recorded usage ``F_u``, lowest first (ties: arrival
order), and compose with every algorithm (``none``, ``easy``, ``conservative``, ...):

* ``fairshare`` (the historical max-min): a job costs ``P_j = its cores``.
* ``mrfs`` (Klusáček & Rudová; JSSPP 2015 paper, formulas 1–2): a job costs
  ``P_j = min over suitable node types m of max(cpu_j/cpu_m, ram_j/ram_m) * cpu_m`` (cpu_m, ram_m
  per node of cluster m; cpu_j, ram_j the job's total cores and RAM). On a homogeneous machine
  without RAM information P_j is the job's cores, the same as ``fairshare``.

``F_u = sum over u's jobs of P_j * runtime_j * S_j``, charged when a job completes (or, with
``charge_running``, continuously while it runs), with ``S_j = speed_m / max_speed`` of the cluster
it ran on when runtimes are speed-scaled (then ``runtime * S`` is the trace's runtime), else 1.
Every ``decay_hours`` (from the first submit) all recorded usage is multiplied by
``decay_factor`` (default ×0.5 every 72 h, as Alea; 0 hours = no decay).

With a queue configuration in ``priority`` mode (the historical setup), queues are traversed by
priority, highest first, and fair-share orders the jobs inside each queue; in ``virtual`` mode (2014)
there is one queue ordered by fair-share and queues only limit (see engine.sim.nodes).

``cycle`` (seconds, default 0) asks for a scheduling pass that long after every pass while jobs
wait and others run, as PBS's periodic scheduling cycle (``scheduler_iteration``, 600 s by
default) does: with ``charge_running`` the order changes as running jobs accrue usage, and a job
can start between events. ``pass_per_end`` runs a pass after each job end even when several end
in the same second: PBS starts a scheduling cycle for each job-end event, and ends that a log's
whole seconds (or a simulation without start latencies) merge into one instant reached the real
server apart. Held against real OpenPBS runs (AleaNG's PBS* traces,
tests/engine/policies/test_pbs_replay.py) fair-share with ``charge_running``, ``cycle=600`` and
``pass_per_end`` reproduces the recorded schedules (rank correlation of start times 0.97-1.00, mean
wait within 5 %).

Every change of a user's recorded usage is kept as (time, user, usage) — the series the dashboard
draws; :func:`priority_series` rebuilds the same series from a schedule.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Callable, Iterator, Mapping
from heapq import merge
from typing import Any

import numpy as np
import pandas as pd

from engine.policies.base import Param
from engine.policies.ordering import WaitingQueue, walk
from engine.policies.registry import Component, Preset, register, register_ordering

HOUR = 3600
DECAY_HOURS = Param("decay_hours", "float", 72.0, "recorded usage decays every this many hours (0 = never)",
                    minimum=0, label="usage decays every", unit="h")
DECAY_FACTOR = Param("decay_factor", "float", 0.5, "recorded usage is multiplied by this at each decay",
                     minimum=0, label="decay factor")
CHARGE_RUNNING = Param("charge_running", "bool", False,
                       "also charge running jobs for the time they have run (default: charged at completion)",
                       label="charge running jobs")
CYCLE = Param("cycle", "int", 0, "while jobs wait and others run, schedule again this many seconds after each "
              "pass (PBS's scheduler_iteration; 0 = only when jobs arrive or end)", minimum=0,
              label="scheduling cycle", unit="s")
PASS_PER_END = Param("pass_per_end", "bool", False,
                     "a scheduling pass after each job end, even when several end in the same second (PBS: a "
                     "cycle per job-end event)", label="a pass per job end")
FAIRSHARE_PARAMS = (DECAY_HOURS, DECAY_FACTOR, CHARGE_RUNNING, CYCLE, PASS_PER_END)


class FairShareAccount:
    """Recorded usage per user with decay; ``series`` keeps every change as (time, user, usage)."""

    def __init__(self, weight: Callable[[int], float], user: list[int], start_time: list[int], *, origin: int,
                 decay_hours: float, decay_factor: float, charge_running: bool) -> None:
        self.weight = weight                      # job -> P_j * S_j (known once the job is placed)
        self.user = user
        self.start_time = start_time
        self.interval = int(decay_hours * HOUR) if decay_hours and math.isfinite(decay_hours) else 0
        self.factor = decay_factor
        self.charge_running = charge_running
        self.next_decay = origin + self.interval if self.interval else math.inf
        self.last_tick = -math.inf
        self.usage: dict[int, float] = {}
        self.rate: dict[int, float] = {}          # charge_running: sum of weights of running jobs
        self.offset: dict[int, float] = {}        # charge_running: sum of weight * charged-until
        self.series: list[tuple[int, int, float]] = []
        #: told of each change of recorded usage: the user, or None when every user's changed (decay)
        self.listener: Callable[[int | None], None] | None = None

    def advance(self, now: int) -> None:
        """Apply every decay due at or before ``now`` (running jobs are charged up to each one first)."""
        while self.next_decay <= now:
            tick = int(self.next_decay)
            if self.charge_running:
                for user, rate in self.rate.items():
                    if rate:
                        self.usage[user] = self.usage.get(user, 0.0) + rate * tick - self.offset[user]
                        self.offset[user] = rate * tick
            for user in self.usage:
                self.usage[user] *= self.factor
                self.series.append((tick, user, self.usage[user]))
            self.last_tick = tick
            if self.listener is not None:
                self.listener(None)
            self.next_decay += self.interval

    def started(self, job: int, now: int) -> None:
        if self.charge_running:
            self.advance(now)
            user, weight = self.user[job], self.weight(job)
            self.rate[user] = self.rate.get(user, 0.0) + weight
            self.offset[user] = self.offset.get(user, 0.0) + weight * now

    def finished(self, job: int, now: int) -> None:
        self.advance(now)
        user, weight = self.user[job], self.weight(job)
        since: float = self.start_time[job]
        if self.charge_running:
            since = max(since, self.last_tick)
            self.rate[user] -= weight
            self.offset[user] -= weight * since
        self.usage[user] = self.usage.get(user, 0.0) + weight * (now - since)
        self.series.append((now, user, self.usage[user]))
        if self.listener is not None:
            self.listener(user)

    def value(self, user: int, now: int) -> float:
        """F_u now (recorded usage, plus running jobs' usage so far with charge_running)."""
        recorded = self.usage.get(user, 0.0)
        if self.charge_running and self.rate.get(user):
            recorded += self.rate[user] * now - self.offset[user]
        return recorded


GroupKey = tuple[int, int]                     # (queue rank, user)
Entry = tuple[int, float, int, GroupKey]      # (queue rank, F_u, first waiting job, group): the order


class FairShareQueue(WaitingQueue):
    """Waiting jobs grouped by (queue rank, user); groups ordered by (queue rank, F_u), jobs by
    arrival (groups of equal priority: arrival order across them).

    The order of the groups is kept sorted between passes and mended where something changed (a
    user's usage, a group's first job, a group appearing or emptying); a decay of every user's
    usage, or usage charged while jobs run, sorts it again. The same order as sorting every pass."""

    def __init__(self, sim: Any, account: FairShareAccount, rank: list[int] | None) -> None:
        super().__init__(sim, lambda j: (j,))
        self.account = account
        self.queue_rank = rank
        self.groups: dict[GroupKey, list[int]] = {}
        self.count = 0
        self.cycle = 0
        self._order: list[Entry] = []
        self._entry: dict[GroupKey, Entry] = {}
        self._dirty: set[GroupKey] = set()
        self._user_keys: dict[int, set[GroupKey]] = {}
        self._resort = True
        account.listener = self._usage_changed
        #: each group's jobs as a linked list of job numbers, for a compiled pass (see :meth:`link`)
        self.links: GroupLinks | None = None

    def link(self) -> GroupLinks:
        """Keep the groups also as linked lists in int64 arrays from now on (before any job is added)."""
        if self.links is None:
            self.links = GroupLinks(self.sim.n)
        return self.links

    def __len__(self) -> int:
        return self.count

    def ready_links(self) -> None:
        """Bring :attr:`links` to the order of this pass (the compiled node-level walk reads it)."""
        self._ordered_groups()

    def _group(self, job: int) -> GroupKey:
        return (self.queue_rank[job] if self.queue_rank is not None else 0, self.sim.user[job])

    def _usage_changed(self, user: int | None) -> None:
        if user is None:
            self._resort = True
        else:
            self._dirty.update(self._user_keys.get(user, ()))

    def add(self, job: int) -> None:
        key = self._group(job)
        members = self.groups.get(key)
        if members is None:
            members = self.groups[key] = []
            self._user_keys.setdefault(key[1], set()).add(key)
        if not members or job < members[0]:
            self._dirty.add(key)
        insort(members, job)
        self.count += 1
        if self.links is not None:
            self.links.add(key, members, job)

    def remove(self, job: int) -> None:
        key = self._group(job)
        members = self.groups[key]
        at = bisect_left(members, job)
        del members[at]
        if self.links is not None:
            self.links.remove(key, job)
        if at == 0:
            self._dirty.add(key)
        if not members:
            del self.groups[key]
            self._user_keys[key[1]].discard(key)
        self.count -= 1

    def _ordered_groups(self) -> list[Entry]:
        """The groups in priority order now (mended or sorted; see the class docstring)."""
        now = self.sim.now
        if self.cycle and self.count and self.sim.running_ends:
            self.sim.wake_at(now + self.cycle)
        self.account.advance(now)
        value = self.account.value
        if self._resort or self.account.charge_running:
            self._order = sorted((rank, value(user, now), members[0], (rank, user))
                                 for (rank, user), members in self.groups.items())
            self._entry = {entry[3]: entry for entry in self._order}
            self._resort = False
            self._dirty.clear()
            if self.links is not None:
                self.links.rebuild(self._order)
        elif self._dirty:
            order, entries, links = self._order, self._entry, self.links
            for key in self._dirty:
                old = entries.pop(key, None)
                if old is not None:
                    at = bisect_left(order, old)
                    del order[at]
                    if links is not None:
                        links.delete(at)
                members = self.groups.get(key)
                if members:
                    entry = entries[key] = (key[0], value(key[1], now), members[0], key)
                    at = bisect_left(order, entry)
                    order.insert(at, entry)
                    if links is not None:
                        links.insert(at, entry)
            self._dirty.clear()
        return self._order

    def jobs(self) -> list[int]:
        return list(self.iter_jobs())

    def iter_jobs(self) -> Iterator[int]:
        """:meth:`jobs` lazily: the order of the groups is fixed when the pass begins, as in
        :meth:`jobs`; a pass may start the job just yielded (see WaitingQueue.iter_jobs)."""
        ordered = list(self._ordered_groups())
        groups = self.groups
        i = 0
        while i < len(ordered):
            first = ordered[i]
            j = i + 1
            while j < len(ordered) and ordered[j][1] == first[1] and ordered[j][0] == first[0]:
                j += 1
            if j == i + 1:
                members = groups.get(first[3])
                k = 0
                while members is not None and k < len(members):
                    job = members[k]
                    yield job
                    if k < len(members) and members[k] == job:
                        k += 1
            else:                                # equal priority: arrival order across users
                yield from merge(*(walk(groups.get(entry[3], []), int) for entry in ordered[i:j]))
            i = j

    def head(self) -> int:
        return self.groups[self._ordered_groups()[0][3]][0]

    def started(self, job: int) -> None:
        self.account.started(job, self.sim.now)

    def extra_columns(self) -> dict[str, Any]:
        weights = np.array([self.account.weight(j) if self.sim.start_time[j] >= 0 else np.nan
                            for j in range(self.sim.n)], dtype=np.float64)
        return {"fairshare_weight": weights}

    def summary(self) -> dict[str, Any]:
        return {"fairshare_final_usage": {str(u): round(v, 3) for u, v in sorted(self.account.usage.items())}}


class GroupLinks:
    """The fair-share groups' jobs (in arrival order) as doubly linked lists in int64 arrays: ``nxt``
    and ``prv`` per job (-1: none), ``first`` per group number (-1: empty); ``number`` gives each
    (queue rank, user) its group number. Adding at the tail and removing anywhere are O(1)."""

    def __init__(self, jobs: int) -> None:
        self.nxt = np.full(max(jobs, 1), -1, dtype=np.int64)
        self.prv = np.full(max(jobs, 1), -1, dtype=np.int64)
        self.first = np.full(max(jobs, 1), -1, dtype=np.int64)
        self.number: dict[GroupKey, int] = {}
        #: FairShareQueue's order of the groups (see :meth:`order`), kept as it is mended
        self.rows = np.zeros((max(jobs, 1) + 1, 3), dtype=np.float64)
        self.size = 0

    def add(self, key: GroupKey, members: list[int], job: int) -> None:
        """``job`` was inserted into ``members`` (sorted)."""
        group = self.number.setdefault(key, len(self.number))
        at = bisect_left(members, job)
        before = members[at - 1] if at else -1
        after = members[at + 1] if at + 1 < len(members) else -1
        self.prv[job], self.nxt[job] = before, after
        if before >= 0:
            self.nxt[before] = job
        else:
            self.first[group] = job
        if after >= 0:
            self.prv[after] = job

    def remove(self, key: GroupKey, job: int) -> None:
        before, after = self.prv[job], self.nxt[job]
        if before >= 0:
            self.nxt[before] = after
        else:
            self.first[self.number[key]] = after
        if after >= 0:
            self.prv[after] = before

    def rebuild(self, ordered: list[Entry]) -> None:
        """The queue's order of groups as rows (queue rank, F_u, group number) of :attr:`rows`."""
        number = self.number
        self.rows[:len(ordered)] = np.array([(e[0], e[1], number[e[3]]) for e in ordered],
                                            dtype=np.float64).reshape(len(ordered), 3)
        self.size = len(ordered)

    def delete(self, at: int) -> None:
        size = self.size
        self.rows[at:size - 1] = self.rows[at + 1:size]
        self.size = size - 1

    def insert(self, at: int, entry: Entry) -> None:
        size = self.size
        self.rows[at + 1:size + 1] = self.rows[at:size]
        self.rows[at] = (entry[0], entry[1], self.number[entry[3]])
        self.size = size + 1

    def order(self) -> np.ndarray:
        """The groups in the queue's order: rows (queue rank, F_u, group number); groups of equal
        (rank, F_u) are one run, their jobs merged by arrival as FairShareQueue.iter_jobs does."""
        return self.rows[:self.size]


# --------------------------------------------------------------------------- penalties


def cpu_penalties(sim: Any) -> np.ndarray:
    """P_j of the CPU-time fair-share: the cores a job asks for."""
    allocator = sim.allocator
    if getattr(allocator, "kind", "") == "nodes":
        return np.array([r.cores for r in allocator.requests], dtype=np.float64)[allocator.class_of]
    return np.asarray(sim.procs, dtype=np.float64)


def multi_resource_penalties(sim: Any) -> np.ndarray:
    """P_j of the multi-resource fair-share (engine.sim.nodes.cluster_choices; queue pools ignored)."""
    allocator = sim.allocator
    if getattr(allocator, "kind", "") != "nodes":
        return np.asarray(sim.procs, dtype=np.float64)
    return np.asarray(allocator.class_penalty, dtype=np.float64)[allocator.class_of]


def speed_factor(sim: Any) -> Callable[[int], float]:
    """job -> S_j (the ran-on cluster's speed / max speed when runtimes are scaled, else 1)."""
    allocator = sim.allocator
    if getattr(allocator, "speed_scaling", False):
        factors = [1.0 / f for f in allocator.factor]
        cluster_of = allocator.cluster_of
        return lambda job: factors[cluster_of[job]]
    return lambda job: 1.0


def _queue_ranks(sim: Any) -> list[int] | None:
    """Priority mode: -priority of each job's queue (so higher priority sorts first); else None."""
    allocator = sim.allocator
    queues = getattr(allocator, "queues", None)
    if queues is None or queues.mode != "priority":
        return None
    priority = [-q.priority for q in queues.queues]
    return [priority[q] for q in allocator.queue_of.tolist()]


def usage_account(sim: Any, params: Mapping[str, Any], penalties: np.ndarray | None = None) -> FairShareAccount:
    """The users' recorded usage of a simulation, told of every job end (``penalties``: P_j per job;
    the CPU-time fair-share's, the cores, when None)."""
    speed = speed_factor(sim)
    penalty = (cpu_penalties(sim) if penalties is None else penalties).tolist()
    account = FairShareAccount(
        lambda job: penalty[job] * speed(job), sim.user, sim.start_time,
        origin=sim.submit[0] if sim.n else 0, decay_hours=params.get("decay_hours", 72.0),
        decay_factor=params.get("decay_factor", 0.5), charge_running=bool(params.get("charge_running", False)))
    sim.finish_listeners.append(lambda job: account.finished(job, sim.now))
    return account


def _fair_share_queue(sim: Any, params: dict, penalties: np.ndarray) -> FairShareQueue:
    account = usage_account(sim, params, penalties)
    queue = FairShareQueue(sim, account, _queue_ranks(sim))
    queue.cycle = int(params.get("cycle", 0))
    sim.pass_per_end = bool(params.get("pass_per_end", False))
    return queue


def cpu_fair_share(sim: Any, params: dict) -> FairShareQueue:
    return _fair_share_queue(sim, params, cpu_penalties(sim))


def multi_resource_fair_share(sim: Any, params: dict) -> FairShareQueue:
    return _fair_share_queue(sim, params, multi_resource_penalties(sim))


# --------------------------------------------------------------------------- the series, from a schedule


def priority_series(schedule: pd.DataFrame, *, decay_hours: float = 72.0, decay_factor: float = 0.5,
                    charge_running: bool = False) -> pd.DataFrame:
    """(time, user, usage) every time a user's recorded fair-share usage changed, rebuilt from a
    schedule with a ``fairshare_weight`` column (P_j * S_j) — the same accounting as during the run."""
    frame = schedule.loc[schedule["start"] >= 0, ["user", "start", "end", "fairshare_weight"]]
    jobs = frame.reset_index(drop=True)
    weight = jobs["fairshare_weight"].to_numpy(dtype=np.float64).tolist()
    user = jobs["user"].to_numpy().tolist()
    start = jobs["start"].to_numpy().tolist()
    origin = int(schedule["submit"].min()) if len(schedule) else 0
    account = FairShareAccount(lambda j: weight[j], user, start, origin=origin, decay_hours=decay_hours,
                               decay_factor=decay_factor, charge_running=charge_running)
    events = sorted([(e, 0, j) for j, e in enumerate(jobs["end"].tolist())]
                    + [(s, 1, j) for j, s in enumerate(start)])
    for time, kind, job in events:
        (account.finished if kind == 0 else account.started)(job, time)
    return pd.DataFrame(account.series, columns=["time", "user", "usage"])


register_ordering(Component("fairshare", cpu_fair_share, FAIRSHARE_PARAMS,
                            "CPU-time fair-share: the user with the lowest decayed CPU time first"))
register_ordering(Component("mrfs", multi_resource_fair_share, FAIRSHARE_PARAMS,
                            "multi-resource fair-share (MetaCentrum 2014): lowest decayed CPU/RAM penalty first"))

for _name, _ordering, _algorithm, _text in (
    ("fairshare-fcfs", "fairshare", "none", "CPU-time fair-share order, no backfilling (historical MetaCentrum)."),
    ("fairshare-easy", "fairshare", "easy", "CPU-time fair-share order with EASY backfilling."),
    ("fairshare-conservative", "fairshare", "conservative", "CPU-time fair-share order with conservative backfilling."),
    ("mrfs-fcfs", "mrfs", "none", "Multi-resource (CPU and RAM) fair-share order, no backfilling."),
    ("mrfs-easy", "mrfs", "easy", "Multi-resource fair-share order with EASY backfilling (MetaCentrum 2014)."),
    ("mrfs-conservative", "mrfs", "conservative", "Multi-resource fair-share order with conservative backfilling."),
):
    register(Preset(_name, _text, _ordering, _algorithm, family="fairshare", paper="metacentrum"))

#: what a real OpenPBS did with fair-share (AleaNG's PBS* runs; tests/engine/policies/test_pbs_replay.py)
PBS_LIKE = {"charge_running": True, "cycle": 600, "pass_per_end": True}
for _name, _algorithm, _text in (
    ("pbs-easy", "easy", ("PBS-like: CPU fair-share charged while jobs run, a scheduling cycle every 600 s and after "
                         "each job end, EASY backfilling (replays AleaNG's real OpenPBS runs: start order rank "
                         "correlation 0.97-1.00, mean wait within 5 %).")),
    ("pbs-strict", "none", ("PBS-like: CPU fair-share charged while jobs run, a scheduling cycle every 600 s and after "
                           "each job end, strict order (no backfilling; replays AleaNG's real OpenPBS strict runs).")),
):
    register(Preset(_name, _text, "fairshare", _algorithm, dict(PBS_LIKE), family="fairshare"))
