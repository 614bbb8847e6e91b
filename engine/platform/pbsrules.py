"""PBS's rules that both the ``pbs`` policy (engine.policies.pbs, at each cycle of a replay) and the
recorded run's estimated reasons (engine.metrics.sitepending, from a schedule) follow, written once:

* **Routing** (:func:`route`): the execution queue a job submitted to a queue ends in.
* **Admission** (:func:`refusal`): whether the server refuses a job at submission for its queue
  (disabled, or its resources_min / resources_max, or the server's resources_max, not admitting the
  job's walltime or ncpus), or because no destination of its route queue takes it.
* **max_run** (:func:`run_limit_hold`): whether a ``max_run`` or ``max_run_res.ncpus`` of a job's
  queue or of the server holds it now, and PBS's comment then.

Each caller keeps its own counts of the jobs running: (jobs, CPUs) per counter, a counter being
(queue, or None for the server; scope u/g/p/o; the job's user, group or project, "" for o). A limit ``[u:PBS_GENERIC=N]`` holds each
user to N, ``[u:alice=N]`` alice alone, ``[o:PBS_ALL=N]`` all jobs together; the same for groups
(``g``) and projects (``p``); an entity's own limit replaces the generic one (alice with ``[u:alice=20]``
is not held by ``[u:PBS_GENERIC=10]``: OpenPBS's limits.cpp "ignore a generic limit", and the server's
check_single_entity_ct). A job is held when starting it would take a counter over its limit.
Checked in the scheduler's order (OpenPBS limits.cpp, check_limits' limfuncs table): the queue's
max_run, the server's max_run, the queue's max_run_res.ncpus, the server's max_run_res.ncpus, each
by group, project, overall, then user (the first that holds names the comment). At submission the
server checks its max_queued limits overall, user, group, project (svr_func.c
check_entity_ct_limit_max; engine.policies.pbs).
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
    return not _violated(queue.resources_min, queue.resources_max, {}, walltime, ncpus)


#: the server's messages (OpenPBS pbs_messages.c): PBSE_EXCQRESC, PBSE_QUNOENB, PBSE_ROUTEREJ
RESOURCE_LIMITS_MESSAGE = "Job violates queue and/or server resource limits"
NOT_ENABLED_MESSAGE = "Queue is not enabled"
ROUTE_REJECTED_MESSAGE = "Job rejected by all possible destinations"


def _violated(low: Mapping[str, str], high: Mapping[str, str], server_high: Mapping[str, str], walltime: int,
              ncpus: int) -> str:
    """The first bound a job of this walltime and ncpus breaks, as "resources_max.walltime = 01:00:00"
    ("server " before it when the server's), else "". A queue's resources_max replaces the server's for
    the same resource (OpenPBS chk_svr_resc_limit)."""
    for resource, value in (("walltime", walltime), ("ncpus", ncpus)):
        bounds = [("resources_min", low.get(resource), True), ("resources_max", high.get(resource), False)]
        if high.get(resource) is None and server_high.get(resource) is not None:
            bounds.append(("server resources_max", server_high[resource], False))
        for kind, text, is_low in bounds:
            if text is None:
                continue
            bound = parse_duration(text) if resource == "walltime" else int(text)
            if (value < bound) if is_low else (value > bound):
                return f"{kind}.{resource} = {text}"
    return ""


def refusal(server: PbsServer, name: str, walltime: int, ncpus: int) -> tuple[str, str]:
    """(the server's message, the setting) when it refuses at submission a job submitted to queue
    ``name`` (unknown: the default queue) with this walltime and ncpus, else ("", ""). As OpenPBS's
    svr_chkque: any queue, route or execution, refuses it when disabled, or when the job breaks its
    resources_min / resources_max (or the server's resources_max); a route queue also when
    every destination refuses it for good (job_route's default_router: a destination's resource
    limits refuse for good; a disabled one only for now, so the job would wait in the route queue:
    taken here as refused too). The job-count limits (max_queued, ...) are the policy's, checked
    before the resource limits (svr_chkque's order)."""
    return _refusal(server, name if name in server.queues else server.default_queue, walltime, ncpus, set())


def _refusal(server: PbsServer, name: str, walltime: int, ncpus: int, seen: set[str]) -> tuple[str, str]:
    queue = server.queues.get(name)
    if queue is None:
        return "", ""
    if not queue.enabled:              # (svr_chkque checks every queue type's enabled)
        return NOT_ENABLED_MESSAGE, f"queue {name} enabled = False"
    broken = _violated(queue.resources_min, queue.resources_max, server.resources_max, walltime, ncpus)
    if broken:
        where = "" if broken.startswith("server") else f"queue {name} "
        return RESOURCE_LIMITS_MESSAGE, where + broken
    if not queue.is_route:
        return "", ""
    reasons = []
    for destination in (d.split("@")[0] for d in queue.route_destinations):
        message, setting = (_refusal(server, destination, walltime, ncpus, seen | {name}) if destination not in seen
                            and destination != name else (ROUTE_REJECTED_MESSAGE, f"{destination} routes back"))
        if not message:
            return "", ""
        reasons.append(setting)
    return ROUTE_REJECTED_MESSAGE, f"route queue {name}: " + "; ".join(reasons or ["no route_destinations"])


def destinations(server: PbsServer, name: str, walltime: int, ncpus: int) -> list[str]:
    """The execution queues a job submitted to route queue ``name`` may end in, in the order job_route
    tries them (route queues followed down, enabled ones whose bounds admit the job); [] for an
    execution queue."""
    found: list[str] = []
    seen: set[str] = set()

    def walk(queue_name: str) -> None:
        queue = server.queues.get(queue_name)
        if queue is None or queue_name in seen or not queue.is_route:
            return
        seen.add(queue_name)
        for destination in (d.split("@")[0] for d in queue.route_destinations):
            target = server.queues.get(destination)
            if target is None or not target.enabled or not admits(target, walltime, ncpus):
                continue
            if target.is_route:
                walk(destination)
            elif destination not in found:
                found.append(destination)

    walk(name if name in server.queues else server.default_queue)
    return found


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
    comment, category, _ = _held_by(server, queue, columns, job, size, used)
    return comment, category


def never_runs(server: PbsServer, queue: str, columns: Mapping[str, Sequence[str]], job: int,
               size: int) -> tuple[str, str]:
    """(PBS's comment, the limit as print server writes it) when a max_run or max_run_res.ncpus holds
    ``job`` even with nothing else running (a limit of 0 jobs, or of fewer CPUs than it asks): PBS
    keeps such a job queued for ever; else ("", "")."""
    comment, _, setting = _held_by(server, queue, columns, job, size, {})
    return comment, setting


def _held_by(server: PbsServer, queue: str, columns: Mapping[str, Sequence[str]], job: int, size: int,
             used: Mapping[Counter, tuple[int, int]]) -> tuple[str, str, str]:
    """(comment, QUEUE_LIMIT or SERVER_LIMIT, the limit as print server writes it) of the first limit
    that holds ``job``, else ("", "", "")."""
    target = server.queues.get(queue)
    scopes: list[tuple[str, Limits, Limits | None, str | None]] = []
    if target:
        scopes.append(("queue " + target.name, target.max_run, target.max_run_res.get("ncpus"), target.name))
    scopes.append(("server", server.max_run, server.max_run_res.get("ncpus"), None))
    for cores in (False, True):         # limfuncs: every max_run (queue, server), then every max_run_res
        for label, jobs_limit, cores_limit, name in scopes:
            limits = cores_limit if cores else jobs_limit
            if limits is None or not limits.values:
                continue
            comment, limit = _over(columns, job, size, used, name, limits, cores, label)
            if comment:
                setting = f"{label} {'max_run_res.ncpus' if cores else 'max_run'} = {limit}"
                return comment, SERVER_LIMIT if name is None else QUEUE_LIMIT, setting
    return "", "", ""


def applicable(limits: Limits, scope: str, entity: str) -> tuple[str, int] | None:
    """The limit of ``limits`` that holds ``entity`` (of scope u/g/p; "" for o) and whom it names:
    its own if set, else the generic one (an entity's own limit replaces the generic: OpenPBS's
    check_server_max_user_run and check_single_entity_ct), else None."""
    if scope == "o":
        found = limits.values.get(("o", "PBS_ALL"))
        return None if found is None else ("PBS_ALL", found)
    for who in (entity, "PBS_GENERIC"):
        if (scope, who) in limits.values:
            return who, limits.values[(scope, who)]
    return None


def _over(columns: Mapping[str, Sequence[str]], job: int, size: int, used: Mapping[Counter, tuple[int, int]],
          queue: str | None, limits: Limits, cores: bool, label: str) -> tuple[str, str]:
    """(PBS's comment, the entry "[u:PBS_GENERIC=2]") of the first entry of ``limits`` that holds ``job``."""
    what = "ncpus" if cores else "running job"
    for scope in ("g", "p", "o", "u"):           # limfuncs: group, project, overall, then user
        entity = columns[SCOPES[scope]][job] if scope != "o" else ""
        found = applicable(limits, scope, entity)
        if found is None:
            continue
        if scope == "o":
            comment = f"{label[0].upper()}{label[1:]} {what} limit has been reached"
        else:
            comment = f"{SCOPE_WORDS[scope]} has reached {label} {what} limit"
        count = used.get((queue, scope, entity), (0, 0))
        if count[1 if cores else 0] + (size if cores else 1) > found[1]:
            return comment, f"[{scope}:{found[0]}={found[1]}]"
    return "", ""
