"""PBS's rules that both the ``pbs`` policy (engine.policies.pbs, at each cycle of a replay) and the
recorded run's estimated reasons (engine.metrics.sitepending, from a schedule) follow, written once:

* **Routing** (:func:`route`): the execution queue a job submitted to a queue ends in.
* **Admission** (:func:`refusal`): whether the server refuses a job at submission: the server's
  acl_users, or for its queue (disabled, from_route_only, its acl_users / acl_groups, or its
  resources_min / resources_max, or the server's resources_max, not admitting the job's walltime or
  ncpus), or because no destination of its route queue takes it.
* **Access lists** (:func:`acl_allows`): OpenPBS's acl_check on a job's user (acl_users) and group
  (acl_groups).
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

from engine.platform.pbsconf import QUEUE_LIMIT, SERVER_LIMIT, Limits, PbsQueue, PbsServer, acl_name
from engine.workload.accounting import parse_duration

#: a limit's scope -> the job's column naming its entity (user, group, project = PBS's Account_Name)
SCOPES = {"u": "user", "g": "group", "p": "account"}
SCOPE_WORDS = {"u": "User", "g": "Group", "p": "Project"}
#: a running-job counter: (queue, or None for the server; scope u/g/p/o; entity, "" for o)
Counter = tuple[str | None, str, str]


def admits(queue: PbsQueue, walltime: int, ncpus: int) -> bool:
    """Whether ``queue``'s resources_min / resources_max let in a job of this walltime and ncpus."""
    return not _violated(queue.resources_min, queue.resources_max, {}, walltime, ncpus)


#: the server's messages (OpenPBS pbs_messages.c): PBSE_EXCQRESC, PBSE_QUNOENB, PBSE_ROUTEREJ, PBSE_PERM
#: (msg_perm, "Unauthorized Request " there: qsub prints it with a trailing space), PBSE_QACESS
RESOURCE_LIMITS_MESSAGE = "Job violates queue and/or server resource limits"
NOT_ENABLED_MESSAGE = "Queue is not enabled"
ROUTE_REJECTED_MESSAGE = "Job rejected by all possible destinations"
PERMISSION_MESSAGE = "Unauthorized Request"
ROUTE_ONLY_MESSAGE = "Access to queue is denied"


def acl_allows(entries: Sequence[str], name: str) -> bool:
    """Whether an access list lets ``name`` (a job's user, or its group) in, as OpenPBS's acl_check
    (attr_fn_acl.c) does: the entries in their kept order (pbsconf sorts them as set_allacl does), the
    first naming ``name`` decides: refused when written ``-name``, else let in; a lone ``+`` (``-``) makes
    the answer for a name no entry names yes (no); an empty list, or none of these, refuses. A user
    entry ``user@host`` names ``user`` (user_match; PBS matches the host too, against the job owner's
    submission host, which the accounting log does not keep: such an entry is taken as naming the
    user whatever the host). A group entry names the group: PBS's gacl_match asks whether the job's
    user is in that group in the server host's group database (getgrouplist); the log has only the
    job's group, so here the entry must be the job's group."""
    allowed = False
    for entry in entries:
        if entry in ("+", "-"):
            allowed = entry == "+"
        elif name and acl_name(entry) == name:
            return not entry.startswith("-")
    return allowed


def _acl_text(entries: Sequence[str]) -> str:
    return ",".join(entries) if entries else "(empty: nobody)"


def acl_refusal(server: PbsServer, name: str, user: str | None, group: str | None, *, routed: bool = False) -> tuple[str, str]:
    """(the server's message, the setting) when queue ``name``'s from_route_only or access lists refuse
    a job of this user and group, else ("", ""); ``routed``: the job comes from a route queue
    (svr_chkque's mtype MOVE_TYPE_Route, which from_route_only lets in; qsub's is MOVE_TYPE_Move).
    svr_chkque's order: 3. from_route_only (PBSE_QACESS), 5a. acl_users with acl_user_enable, 5b.
    acl_groups with acl_group_enable (PBSE_PERM). ``user`` / ``group`` None: that list is not followed
    (a caller without the jobs' names)."""
    queue = server.queues.get(name)
    if queue is None:
        return "", ""
    if queue.from_route_only and not routed:
        return ROUTE_ONLY_MESSAGE, f"queue {name} from_route_only = True"
    if queue.acl_user_enable and user is not None and not acl_allows(queue.acl_users, user):
        return PERMISSION_MESSAGE, f"queue {name} acl_users = {_acl_text(queue.acl_users)}"
    if queue.acl_group_enable and group is not None and not acl_allows(queue.acl_groups, group):
        return PERMISSION_MESSAGE, f"queue {name} acl_groups = {_acl_text(queue.acl_groups)}"
    return "", ""


def server_acl_refusal(server: PbsServer, user: str | None) -> tuple[str, str]:
    """(PBSE_PERM's message, the setting) when the server's acl_users (with acl_user_enable) refuses
    ``user``'s requests, qsub's first, else ("", ""). As OpenPBS's authenticate_user (svr_chk_owner.c):
    checked on every request, before any queue's; a user the list does not let in passes still when
    the server's managers or operators name him (svr_get_privilege)."""
    if not server.acl_user_enable or user is None or acl_allows(server.acl_users, user):
        return "", ""
    if any(acl_allows(entries, user) for entries in (server.managers, server.operators)):
        return "", ""
    return PERMISSION_MESSAGE, f"server acl_users = {_acl_text(server.acl_users)}"


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


def refusal(server: PbsServer, name: str, walltime: int, ncpus: int, user: str | None = None,
            group: str | None = None) -> tuple[str, str]:
    """(the server's message, the setting) when it refuses at submission a job submitted to queue
    ``name`` (unknown: the default queue) with this walltime and ncpus, by this user of this group,
    else ("", ""). The server's acl_users first (:func:`server_acl_refusal`); then as OpenPBS's
    svr_chkque: any queue, route or execution, refuses it when disabled, when from_route_only (the
    job is submitted straight to it), when its acl_users / acl_groups refuse the user / group
    (:func:`acl_refusal`), or when the job breaks its resources_min / resources_max (or the server's
    resources_max); a route queue also when every destination refuses it for good (job_route's
    default_router: a destination's access lists and resource limits refuse for good, local_move's
    should_retry_route, and the next destination is tried; a disabled one only for now, so the job
    would wait in the route queue: taken here as refused too). The job-count limits (max_queued,
    ...) are the policy's, checked after the access lists and before the resource limits
    (svr_chkque's order: :func:`admission` says which comes first). ``user`` / ``group`` None: the
    access lists are not followed."""
    return admission(server, name, walltime, ncpus, user, group)[:2]


def admission(server: PbsServer, name: str, walltime: int, ncpus: int, user: str | None = None,
              group: str | None = None) -> tuple[str, str, bool]:
    """:func:`refusal`, and whether the refusal stands whatever the job's counts against max_queued
    (the policy's, which svr_chkque checks after its access lists and before its resource bounds): so
    for the server's acl_users, a disabled queue, from_route_only and the access lists, and for a
    route queue every destination of which refuses the job for good (one over its max_queued would
    refuse only for now, and refuse for good when tried again); not for a queue's own resource
    bounds, which a count limit met first overrules."""
    found = server_acl_refusal(server, user)
    if found[0]:
        return found[0], found[1], True
    return _refusal(server, name if name in server.queues else server.default_queue, walltime, ncpus, set(), user,
                    group)


def _refusal(server: PbsServer, name: str, walltime: int, ncpus: int, seen: set[str], user: str | None,
             group: str | None) -> tuple[str, str, bool]:
    queue = server.queues.get(name)
    if queue is None:
        return "", "", False
    if not queue.enabled:              # (svr_chkque checks every queue type's enabled)
        return NOT_ENABLED_MESSAGE, f"queue {name} enabled = False", True
    message, setting = acl_refusal(server, name, user, group, routed=bool(seen))
    if message:
        return message, setting, True
    broken = _violated(queue.resources_min, queue.resources_max, server.resources_max, walltime, ncpus)
    if broken:
        where = "" if broken.startswith("server") else f"queue {name} "
        return RESOURCE_LIMITS_MESSAGE, where + broken, False
    if not queue.is_route:
        return "", "", False
    reasons = []
    for destination in (d.split("@")[0] for d in queue.route_destinations):
        message, setting, _ = (_refusal(server, destination, walltime, ncpus, seen | {name}, user, group)
                               if destination not in seen and destination != name
                               else (ROUTE_REJECTED_MESSAGE, f"{destination} routes back", False))
        if not message:
            return "", "", False
        reasons.append(setting)
    # every destination refuses for good: whatever a destination's counts say for now (a full one is
    # tried again later, and refuses then), default_router ends with PBSE_ROUTEREJ
    return ROUTE_REJECTED_MESSAGE, f"route queue {name}: " + "; ".join(reasons or ["no route_destinations"]), True


def takes(server: PbsServer, name: str, walltime: int, ncpus: int, user: str | None = None,
          group: str | None = None) -> bool:
    """Whether destination ``name`` of a route queue takes the job for good: enabled, its
    access lists (from_route_only lets a routed job in) and bounds admitting it."""
    queue = server.queues.get(name)
    return (queue is not None and queue.enabled and not acl_refusal(server, name, user, group, routed=True)[0]
            and admits(queue, walltime, ncpus))


def destinations(server: PbsServer, name: str, walltime: int, ncpus: int, user: str | None = None,
                 group: str | None = None) -> list[str]:
    """The execution queues a job submitted to route queue ``name`` may end in, in the order job_route
    tries them (route queues followed down, enabled ones whose access lists and bounds admit the job:
    :func:`takes`); [] for an execution queue."""
    found: list[str] = []
    seen: set[str] = set()

    def walk(queue_name: str) -> None:
        queue = server.queues.get(queue_name)
        if queue is None or queue_name in seen or not queue.is_route:
            return
        seen.add(queue_name)
        for destination in (d.split("@")[0] for d in queue.route_destinations):
            target = server.queues.get(destination)
            if target is None or not takes(server, destination, walltime, ncpus, user, group):
                continue
            if target.is_route:
                walk(destination)
            elif destination not in found:
                found.append(destination)

    walk(name if name in server.queues else server.default_queue)
    return found


def route(server: PbsServer, name: str, walltime: int, ncpus: int, user: str | None = None,
          group: str | None = None) -> str:
    """The execution queue a job submitted to queue ``name`` ends in ("" = the server knows none): the
    first destination that :func:`takes` it (a user and group of None: the access lists not followed)."""
    if name not in server.queues:
        name = server.default_queue
    seen: set[str] = set()
    while name in server.queues and server.queues[name].is_route and name not in seen:
        seen.add(name)
        destinations = [d.split("@")[0] for d in server.queues[name].route_destinations]
        admitted = [d for d in destinations if takes(server, d, walltime, ncpus, user, group)]
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
