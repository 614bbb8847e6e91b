"""PBS's rules that both the ``pbs`` policy (engine.policies.pbs, at each cycle of a replay) and the
recorded run's estimated reasons (engine.metrics.sitepending, from a schedule) follow, written once:

* **Routing** (:func:`route`): the execution queue a job submitted to a queue ends in.
* **max_run** (:func:`run_limit_hold`): whether a ``max_run`` or ``max_run_res.ncpus`` of a job's
  queue or of the server holds it now, and PBS's comment then.

Each caller keeps its own counts of the jobs running: (jobs, CPUs) per counter, a counter being
(queue, or None for the server; scope u/g/p/o; the job's user, group or project, "" for o). A limit ``[u:PBS_GENERIC=N]`` holds each
user to N, ``[u:alice=N]`` alice alone, ``[o:PBS_ALL=N]`` all jobs together; the same for groups
(``g``) and projects (``p``). A job is held when starting it would take a counter over its limit.
Checked in this order: the queue's max_run, its max_run_res.ncpus, the server's, the server's
max_run_res.ncpus (the first that holds names the comment).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.platform.pbsconf import QUEUE_LIMIT, SERVER_LIMIT, Limits, PbsQueue, PbsServer
from engine.workload.accounting import parse_duration

#: a limit's scope -> the job's column naming its entity (user, group, project = PBS's Account_Name)
SCOPES = {"u": "user", "g": "group", "p": "account"}
SCOPE_WORDS = {"u": "User", "g": "Group", "p": "Project"}
#: a running-job counter: (queue, or None for the server; scope u/g/p/o; entity, "" for o)
Counter = tuple[str | None, str, str]


def admits(queue: PbsQueue, walltime: int, ncpus: int) -> bool:
    """Whether ``queue``'s resources_min / resources_max let in a job of this walltime and ncpus."""
    for kind, low in (("resources_min", True), ("resources_max", False)):
        limits = getattr(queue, kind)
        for resource, value in ((r, v) for r, v in (("walltime", walltime), ("ncpus", ncpus))):
            text = limits.get(resource)
            if text is None:
                continue
            bound = parse_duration(text) if resource == "walltime" else int(text)
            if (value < bound) if low else (value > bound):
                return False
    return True


def route(server: PbsServer, name: str, walltime: int, ncpus: int) -> str:
    """The execution queue a job submitted to queue ``name`` ends in ("" = the server knows none)."""
    if name not in server.queues:
        name = server.default_queue
    seen: set[str] = set()
    while name in server.queues and server.queues[name].is_route and name not in seen:
        seen.add(name)
        destinations = [d.split("@")[0] for d in server.queues[name].route_destinations]
        admitted = [d for d in destinations if server.queues[d].enabled and admits(server.queues[d], walltime, ncpus)]
        name = admitted[0] if admitted else (destinations[0] if destinations else "")
    return name if name in server.queues else ""


def has_run_limits(server: PbsServer) -> bool:
    """Whether any queue or the server sets a max_run or a max_run_res."""
    targets: list[PbsQueue | PbsServer] = [*server.queues.values(), server]
    return any(t.max_run.values or any(v.values for v in t.max_run_res.values()) for t in targets)


def counters(queue: str, columns: Mapping[str, Sequence[str]], job: int) -> list[Counter]:
    """The running-job counters ``job`` (in execution queue ``queue``) is in: per scope and entity, of
    its queue and of the server. ``columns``: "user", "group", "account" -> each job's name."""
    return [(where, scope, columns[SCOPES[scope]][job] if scope != "o" else "")
            for where in (queue, None) for scope in ("u", "g", "p", "o")]


def run_limit_hold(server: PbsServer, queue: str, columns: Mapping[str, Sequence[str]], job: int, size: int,
                   used: Mapping[Counter, tuple[int, int]]) -> tuple[str, str]:
    """(PBS's comment, QUEUE_LIMIT or SERVER_LIMIT) when a max_run or max_run_res.ncpus of ``job``'s
    queue or of the server holds it (``size`` CPUs; ``used``: (jobs, CPUs) running per counter, a
    missing counter is none), else ("", "")."""
    target = server.queues.get(queue)
    scopes: list[tuple[str, Limits, Limits | None, str | None]] = []
    if target:
        scopes.append(("queue " + target.name, target.max_run, target.max_run_res.get("ncpus"), target.name))
    scopes.append(("server", server.max_run, server.max_run_res.get("ncpus"), None))
    for label, jobs_limit, cores_limit, name in scopes:
        for limits, cores in ((jobs_limit, False), (cores_limit, True)):
            if limits is None or not limits.values:
                continue
            comment = _over(columns, job, size, used, name, limits, cores, label)
            if comment:
                return comment, SERVER_LIMIT if name is None else QUEUE_LIMIT
    return "", ""


def _over(columns: Mapping[str, Sequence[str]], job: int, size: int, used: Mapping[Counter, tuple[int, int]],
          queue: str | None, limits: Limits, cores: bool, label: str) -> str:
    what = "ncpus" if cores else "running job"
    for (scope, who), limit in limits.values.items():
        if scope == "o":
            key: Counter = (queue, "o", "")
            comment = f"{label[0].upper()}{label[1:]} {what} limit has been reached"
        else:
            entity = columns[SCOPES[scope]][job]
            if who != "PBS_GENERIC" and who != entity:
                continue
            key = (queue, scope, entity)
            comment = f"{SCOPE_WORDS[scope]} has reached {label} {what} limit"
        count = used.get(key, (0, 0))
        if count[1 if cores else 0] + (size if cores else 1) > limit:
            return comment
    return ""
