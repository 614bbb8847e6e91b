"""Admission at submission: the queue that takes each job, or why none does.

A real PBS or Slurm checks a job against its queue's limits when it is submitted (``qsub``,
``sbatch``), not when it would start: a job that asks for more than its queue allows is refused
then, or moved on by a route queue. So does the simulation (engine.platform.queues documents the
keys): a queue refuses a job whose request exceeds, in this order,

* ``walltime``: its walltime limit (a routing-only queue refuses every job this way);
* ``nodes``: a multi-node job in a single-node queue;
* ``job_cores``: the cores one job may ask for (``job_max_cores``);
* ``queue_cores``: the cores the queue's running jobs may hold together (``max_cores``,
  ``max_share``): such a job could never start there;
* ``user_cores``: the cores one user's running jobs may hold in the queue (``user_max_cores``):
  the same;
* ``memory``: the memory one job may ask for (``job_max_mem``);
* ``pool``: no cluster of the queue's pool can run it (cores, RAM, GPUs per node, nodes, its own
  cluster rules).

A refused job goes to the first queue of ``route_to`` that accepts it (destinations' own
``route_to`` followed depth first, each queue tried once); else it is rejected at submission,
with its own queue's reason. Jobs no cluster of the machine could run whatever the queue are
rejected before (engine.sim.nodes.REJECT_NO_CLUSTER). Everything here is decided once per job,
vectorised over the jobs of each queue, so it costs nothing in the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from engine.platform.limits_text import memory_text, walltime_text
from engine.workload.model import Workload, native_ids

if TYPE_CHECKING:   # (a pool run imports rejected_frame without queue configurations: engine/run.py)
    from engine.platform.queues import Queue, QueueConfig

#: reason codes, in the order they are checked (a job's reason is its own queue's first failed check)
REASONS = ("walltime", "nodes", "job_cores", "queue_cores", "user_cores", "memory", "pool")
WALLTIME, NODES, JOB_CORES, QUEUE_CORES, USER_CORES, MEMORY, POOL = range(len(REASONS))
ACCEPTED = -1


@dataclass(frozen=True)
class JobRequests:
    """What admission reads of each job: requested time, cores, total RAM (KB), nodes, and the
    clusters of the machine that could run its request in any queue (by request class)."""

    requested: np.ndarray          # int64 seconds
    cores: np.ndarray              # int64 (nodes * ppn, or procs)
    ram: np.ndarray                # int64 KB, the job's total
    nodes: np.ndarray              # int64 (0: cores anywhere)
    request_class: np.ndarray      # int64, index into class_clusters
    class_clusters: list[list[int]]


@dataclass
class Admission:
    """Each job's queue after admission (-1: rejected), the queue that refused it (-1: none; a
    routed job's is where it came from) and that queue's reason code (:data:`REASONS`, -1: none)."""

    queue: np.ndarray
    refused_by: np.ndarray
    reason: np.ndarray

    @property
    def rejected(self) -> np.ndarray:
        """Jobs a queue refused that no queue took (not those the machine rejected before: refused_by -1)."""
        return (self.queue < 0) & (self.refused_by >= 0)

    @property
    def routed(self) -> np.ndarray:
        return (self.queue >= 0) & (self.refused_by >= 0)


def admit(config: QueueConfig, queue_of: np.ndarray, jobs: JobRequests, cluster_names: list[str],
          machine_cores: int) -> Admission:
    """Admission of every job assigned to ``queue_of`` (engine.platform.queues.assign_queues)."""
    queues = config.queues
    n = len(queue_of)
    limits = _QueueArrays(queues, cluster_names, machine_cores, jobs.class_clusters)
    final = np.asarray(queue_of, dtype=np.int64).copy()
    reason = limits.first_refusal(final, jobs, np.arange(n))
    refused_by = np.where(reason >= 0, final, -1).astype(np.int64)
    for q in np.unique(final[reason >= 0]).tolist():
        left = np.flatnonzero((reason >= 0) & (final == q))
        for destination in route_order(config, q):
            if not len(left):
                break
            takes = limits.first_refusal(np.full(len(left), destination, np.int64), jobs, left) < 0
            final[left[takes]] = destination
            left = left[~takes]
        final[left] = -1
    return Admission(final, refused_by, reason.astype(np.int64))


def route_order(config: QueueConfig, q: int) -> list[int]:
    """The queues a job ``q`` refuses is offered to, in order: ``q``'s ``route_to``, each
    destination followed by its own ``route_to`` (depth first), every queue once, never ``q``."""
    order: list[int] = []
    seen = {q}

    def visit(queue: Queue) -> None:
        for name in queue.route_to:
            index = config.index(name)
            if index is None or index in seen:
                continue
            seen.add(index)
            order.append(index)
            visit(config.queues[index])
    visit(config.queues[q])
    return order


class _QueueArrays:
    """The queues' limits as arrays (a missing limit is the largest int64), and whether each
    request class fits some cluster of each queue's pool."""

    def __init__(self, queues: tuple[Queue, ...], cluster_names: list[str], machine_cores: int,
                 class_clusters: list[list[int]]) -> None:
        big = np.iinfo(np.int64).max

        def limit(value: float | None) -> int:
            return big if value is None or value == float("inf") else int(value)
        self.walltime = np.array([q.walltime for q in queues], dtype=np.int64)
        self.routing = np.array([q.routing_only for q in queues], dtype=bool)
        self.single = np.array([q.single_node for q in queues], dtype=bool)
        self.job_cores = np.array([limit(q.job_max_cores) for q in queues], dtype=np.int64)
        self.queue_cores = np.array([limit(q.core_limit(machine_cores)) for q in queues], dtype=np.int64)
        self.user_cores = np.array([limit(q.user_max_cores) for q in queues], dtype=np.int64)
        self.memory = np.array([limit(q.job_max_mem) for q in queues], dtype=np.int64)
        index = {name: i for i, name in enumerate(cluster_names)}
        in_pool = np.ones((len(queues), max(len(cluster_names), 1)), dtype=bool)
        for i, q in enumerate(queues):
            if q.pool is not None:
                in_pool[i] = False
                in_pool[i, [index[c] for c in q.pool if c in index]] = True
        #: [class, queue]: some cluster that can run the class is in the queue's pool
        self.pool_fits = np.zeros((len(class_clusters), len(queues)), dtype=bool)
        for k, clusters in enumerate(class_clusters):
            if clusters:
                self.pool_fits[k] = in_pool[:, clusters].any(axis=1)

    def first_refusal(self, queue: np.ndarray, jobs: JobRequests, rows: np.ndarray) -> np.ndarray:
        """For the jobs ``rows`` offered to ``queue`` (one per row): the code of the first check
        the queue refuses them by, -1 where it accepts them."""
        cores, nodes = jobs.cores[rows], jobs.nodes[rows]
        checks = (
            (jobs.requested[rows] > self.walltime[queue]) | self.routing[queue],
            self.single[queue] & (nodes > 1),
            cores > self.job_cores[queue],
            cores > self.queue_cores[queue],
            cores > self.user_cores[queue],
            jobs.ram[rows] > self.memory[queue],
            ~self.pool_fits[jobs.request_class[rows], queue],
        )
        reason = np.full(len(rows), ACCEPTED, dtype=np.int64)
        for code in range(len(checks) - 1, -1, -1):      # the first failed check wins: written last
            reason[checks[code]] = code
        return reason


# --------------------------------------------------------------------------- words and tables


def limit_of(queue: Queue, code: int, machine_cores: int) -> tuple[str, str]:
    """The limit of ``queue`` a job refused for ``code`` exceeds: its configuration key and its value
    in words (``("walltime", "12 h")``, ``("job_max_cores", "1,024")``, ``("single_node", "")``)."""
    if code == WALLTIME:
        if queue.routing_only:
            return "route_to", ", ".join(queue.route_to)
        return "walltime", walltime_text(queue.walltime)
    if code == NODES:
        return "single_node", ""
    if code == JOB_CORES:
        return "job_max_cores", f"{queue.job_max_cores:,}"
    if code == QUEUE_CORES:
        return "max_cores", f"{int(queue.core_limit(machine_cores)):,}"
    if code == USER_CORES:
        return "user_max_cores", f"{queue.user_max_cores:,}"
    if code == MEMORY:
        return "job_max_mem", memory_text(queue.job_max_mem or 0)
    return "pool", ", ".join(queue.pool or ())


#: what jobs refused for each code ask for, in words ({name}: the queue, {key} and {value}: limit_of's)
_PHRASES = {
    WALLTIME: "ask for more than {name}'s {value}",
    NODES: "ask for several nodes, and {name} takes single-node jobs only",
    JOB_CORES: "ask for more than {name}'s {value} cores per job ({key})",
    QUEUE_CORES: "ask for more cores than {name}'s jobs may hold together ({value}: max_cores/max_share)",
    USER_CORES: "ask for more cores than one user may hold in {name} ({value}: {key})",
    MEMORY: "ask for more than {name}'s {value} of memory per job ({key})",
    POOL: "fit no cluster of {name}'s pool ({value})",
}
_ROUTING_PHRASE = "are accepted by none of routing queue {name}'s destinations ({value})"


def limit_text(queue: Queue, code: int, machine_cores: int) -> str:
    """The limit a job refused for ``code`` exceeds, as the configuration names it (``walltime 12 h``)."""
    key, value = limit_of(queue, code, machine_cores)
    return f"{key} {value}".rstrip()


def reason_phrase(queue: Queue, code: int, machine_cores: int) -> str:
    """What jobs refused by ``queue`` for ``code`` ask for, in words (``ask for more than q_1d's 12 h``)."""
    key, value = limit_of(queue, code, machine_cores)
    template = _ROUTING_PHRASE if code == WALLTIME and queue.routing_only else _PHRASES[code]
    return template.format(name=queue.name, key=key, value=value)


def admission_table(admission: Admission, config: QueueConfig, users: np.ndarray, user_names: dict[int, str],
                    machine_cores: int) -> dict[str, Any]:
    """The run summary's ``admission`` entry (see engine.api's docstring: Admission)."""
    queues = config.queues
    refused = np.flatnonzero(admission.refused_by >= 0)
    frame = pd.DataFrame({"from": admission.refused_by[refused], "reason": admission.reason[refused],
                          "to": admission.queue[refused], "user": np.asarray(users, dtype=np.int64)[refused]})
    groups = []
    for (source, code, to), rows in frame.groupby(["from", "reason", "to"], sort=True):
        jobs, people = len(rows), rows["user"].nunique()
        outcome = "rejected" if to < 0 else "routed"
        what = "rejected at submission" if to < 0 else f"routed to {queues[to].name}"
        phrase = reason_phrase(queues[source], int(code), machine_cores)
        if jobs == 1:                     # "ask for" -> "asks for", "are" -> "is", "fit" -> "fits"
            verb, _, rest = phrase.partition(" ")
            phrase = f"{'is' if verb == 'are' else verb + 's'} {rest}"
        line = (f"{jobs:,} job{'s' if jobs != 1 else ''} of {people:,} user{'s' if people != 1 else ''} "
                f"{phrase}: {what}")
        groups.append({"queue": queues[source].name, "reason": REASONS[int(code)], "outcome": outcome,
                       "to": queues[to].name if to >= 0 else None, "jobs": jobs, "users": int(people),
                       "line": line})
    groups.sort(key=lambda g: (g["outcome"] != "rejected", -g["jobs"], g["queue"]))
    labels = np.array([user_names.get(int(u), str(int(u))) for u in frame["user"].tolist()], dtype=object)
    per_queue: dict[str, dict[str, int]] = {}
    per_user: dict[str, dict[str, int]] = {}
    for source, to, label in zip(frame["from"].tolist(), frame["to"].tolist(), labels.tolist()):
        key = "rejected" if to < 0 else "routed"
        entry = per_queue.setdefault(queues[source].name, {"rejected": 0, "routed": 0})
        entry[key] += 1
        entry = per_user.setdefault(label, {"rejected": 0, "routed": 0})
        entry[key] += 1
    return {"rejected_total": int(admission.rejected.sum()), "routed_total": int(admission.routed.sum()),
            "groups": groups, "lines": [g["line"] for g in groups],
            "per_queue": dict(sorted(per_queue.items())),
            "per_user": dict(sorted(per_user.items(), key=lambda item: (-sum(item[1].values()), item[0])))}


def rejection_reasons(admission: Admission, config: QueueConfig) -> dict[str, int]:
    """Rejected jobs counted by ``<queue>: <reason>`` (what the summary's ``rejected`` adds)."""
    rows = np.flatnonzero(admission.rejected)
    counts: dict[str, int] = {}
    if len(rows):
        pairs, numbers = np.unique(np.stack([admission.refused_by[rows], admission.reason[rows]], axis=1), axis=0,
                                   return_counts=True)
        for (q, code), count in zip(pairs.tolist(), numbers.tolist()):
            label = f"refused at submission by queue {config.queues[q].name} ({REASONS[code]})"
            counts[label] = counts.get(label, 0) + count
    return counts


#: the columns of :func:`rejected_frame`, in order (``native_id`` and ``user_name`` where the trace has them)
REJECTED_COLUMNS = ("job_id", "native_id", "user", "user_name", "submit", "procs", "requested_time", "queue",
                    "reason", "limit")
MACHINE = "machine"


def rejected_frame(jobs: pd.DataFrame, rows: np.ndarray, metadata: dict[str, Any], *,
                   admission: Admission | None = None, config: QueueConfig | None = None,
                   machine_cores: int = 0, machine_limit: str = "no cluster can run its request") -> pd.DataFrame:
    """One row per job of ``rows`` (positions in ``jobs``) rejected at submission: its ids, user,
    request, the queue that refused it and why (``reason`` one of :data:`REASONS`, or ``machine``:
    no cluster of the machine can ever run it; ``limit`` the limit it exceeds as the configuration
    names it, e.g. ``walltime 12 h``)."""
    from engine.workload.names import names_of
    rows = np.asarray(rows, dtype=np.int64)
    frame = pd.DataFrame({"job_id": jobs["job_id"].to_numpy()[rows]})
    native = native_ids(Workload(jobs, metadata))
    if native is not None:
        frame["native_id"] = np.asarray(native, dtype=object)[rows]
    users = jobs["user"].to_numpy(np.int64)[rows] if "user" in jobs else np.full(len(rows), -1, np.int64)
    frame["user"] = users
    user_names = names_of(metadata, "user")
    if user_names:
        frame["user_name"] = [user_names.get(u, "") for u in users.tolist()]
    for column in ("submit", "procs", "requested_time"):
        frame[column] = jobs[column].to_numpy(np.int64)[rows]
    queue, reason, limit = [], [], []
    for row in rows.tolist():
        source = admission.refused_by[row] if admission is not None else -1
        if source < 0 or config is None:
            queue.append("")
            reason.append(MACHINE)
            limit.append(machine_limit)
        else:
            code = int(admission.reason[row])        # type: ignore[union-attr]
            queue.append(config.queues[source].name)
            reason.append(REASONS[code])
            limit.append(limit_text(config.queues[source], code, machine_cores))
    frame["queue"], frame["reason"], frame["limit"] = queue, reason, limit
    return frame
