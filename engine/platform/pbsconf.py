"""A PBS / OpenPBS site as its admin configured it: ``qmgr -c 'print server'``, ``sched_config`` and
the fair-share ``resource_group`` tree.

``print server`` is a list of qmgr commands (PBS Professional Reference Guide, "qmgr"):
``create queue NAME``, ``set queue NAME ATTR = VALUE``, ``set queue NAME ATTR += VALUE`` (a list grows:
route_destinations), ``set server ATTR = VALUE``; ``#`` lines are comments. What is read per queue:
queue_type (Execution or Route), enabled/started, priority, route_destinations, resources_max/min/default
(walltime, ncpus, mem, nodect, select), max_run, max_queued, queued_jobs_threshold and the limit forms
``[u:PBS_GENERIC=10]``, ``[u:alice=5]``, ``[o:PBS_ALL=100]``, max_run_res, max_queued_res and
queued_jobs_threshold_res (per resource; the ``pbs`` policy follows ncpus); from_route_only and the
access lists acl_user_enable / acl_users and acl_group_enable / acl_groups (``[+|-]user[@host]``,
``[+|-]group``); and the same limits on the server, and its acl_user_enable / acl_users, managers
and operators. ``sched_config`` is ``key: value [prime|non_prime|all]`` lines (fair_share, strict_ordering,
backfill, fairshare_usage_res, fairshare_decay_time, fairshare_decay_factor, job_sort_key, ...);
``resource_group`` is ``name id parent shares`` lines. Anything not modelled is listed, never dropped.
Every problem is one :class:`WorkloadError` naming the file, the line and the attribute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.workload.accounting import parse_duration
from engine.workload.errors import WorkloadError, shown

#: What held a waiting job, in the words of PBS's job comments ("Not Running: ..."): a max_run (or
#: max_run_res) limit of its queue or of the server, too few CPUs free, strict order (a job before it
#: does not fit), a backfill reservation (it fits now but would delay a top job)
QUEUE_LIMIT, SERVER_LIMIT = "Queue max_run limit reached", "Server max_run limit reached"
RESOURCES, STRICT_ORDER = "Insufficient amount of resource: ncpus", "Job would break strict sorted order"
TOP_JOB = "Job would conflict with reservation or top job"
#: a starving job did not run and backfilling is off: the rest of the cycle's jobs wait (OpenPBS's
#: main_sched_loop, help_starving_jobs without backfill)
STARVING = "Job would conflict with starving job"

#: A limit's scope: user, group, project, overall; "PBS_GENERIC" = each one, "PBS_ALL" = all together.
_LIMIT = re.compile(r"\[\s*([ugpo]):([^=\]\s]+)\s*=\s*(\d{1,15})([kmgtp]?[bw])?\s*\]", re.IGNORECASE)


@dataclass
class Limits:
    """A limit by scope and entity: {("u", "PBS_GENERIC"): 10, ("u", "alice"): 5, ("o", "PBS_ALL"): 100}."""

    values: dict[tuple[str, str], int] = field(default_factory=dict)
    #: a size's unit as written ("gb" of [u:PBS_GENERIC=8gb]: a limit on mem, read and listed, not followed)
    units: dict[tuple[str, str], str] = field(default_factory=dict)

    def generic_user(self) -> int | None:
        return self.values.get(("u", "PBS_GENERIC"))

    def overall(self) -> int | None:
        return self.values.get(("o", "PBS_ALL"))

    def text(self) -> str:
        """As a ``set`` line writes it: ``[u:PBS_GENERIC=10],[u:alice=5]``."""
        return ",".join(f"[{scope}:{who}={n}{self.units.get((scope, who), '')}]" for (scope, who), n in self.values.items())


@dataclass
class PbsQueue:
    name: str
    queue_type: str = "Execution"
    enabled: bool = True
    started: bool = True
    priority: int = 0
    route_destinations: list[str] = field(default_factory=list)
    resources_max: dict[str, str] = field(default_factory=dict)
    resources_min: dict[str, str] = field(default_factory=dict)
    resources_default: dict[str, str] = field(default_factory=dict)
    max_run: Limits = field(default_factory=Limits)
    max_queued: Limits = field(default_factory=Limits)
    max_run_res: dict[str, Limits] = field(default_factory=dict)       # "ncpus" -> limits
    max_queued_res: dict[str, Limits] = field(default_factory=dict)
    queued_jobs_threshold: Limits = field(default_factory=Limits)     # jobs in the 'Q' state
    queued_jobs_threshold_res: dict[str, Limits] = field(default_factory=dict)
    #: access lists (svr_chkque 5a, 5b): followed when their ``_enable`` is True; entries as qmgr
    #: keeps them (``[+|-]user[@host]``, ``[+|-]group``; a lone ``+`` / ``-`` sets the default)
    acl_user_enable: bool = False
    acl_users: list[str] = field(default_factory=list)
    acl_group_enable: bool = False
    acl_groups: list[str] = field(default_factory=list)
    #: only jobs a route queue moves here may enter (svr_chkque 3: a qsub straight to it is refused)
    from_route_only: bool = False
    unmodelled: dict[str, tuple[int, str]] = field(default_factory=dict)
    line: int = 0

    @property
    def is_route(self) -> bool:
        return self.queue_type.lower().startswith("r")

    def max_walltime(self) -> int | None:
        text = self.resources_max.get("walltime")
        return parse_duration(text) if text else None


@dataclass
class PbsServer:
    source: str
    queues: dict[str, PbsQueue] = field(default_factory=dict)
    default_queue: str = ""
    max_run: Limits = field(default_factory=Limits)
    max_queued: Limits = field(default_factory=Limits)
    max_run_res: dict[str, Limits] = field(default_factory=dict)
    max_queued_res: dict[str, Limits] = field(default_factory=dict)
    queued_jobs_threshold: Limits = field(default_factory=Limits)
    queued_jobs_threshold_res: dict[str, Limits] = field(default_factory=dict)
    resources_max: dict[str, str] = field(default_factory=dict)      # a job's bound where its queue sets none
    backfill_depth: int | None = None
    scheduler_iteration: int | None = None
    #: whether the server accrues each job's eligible_time (None: not set, False as in OpenPBS)
    eligible_time_enable: bool | None = None
    #: the server's user access list (checked on every request: svr_chk_owner.c authenticate_user),
    #: and its managers and operators, whom it lets through
    acl_user_enable: bool = False
    acl_users: list[str] = field(default_factory=list)
    managers: list[str] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)
    unmodelled: dict[str, tuple[int, str]] = field(default_factory=dict)
    sched: dict[str, str] = field(default_factory=dict)               # sched_config key -> value
    sched_unmodelled: dict[str, tuple[int, str]] = field(default_factory=dict)
    groups: list[tuple[str, int, str, int]] = field(default_factory=list)   # resource_group: name, id, parent, shares


#: sched_config keys the model reads; the others are listed as not modelled.
SCHED_KEYS = ("fair_share", "strict_ordering", "backfill", "backfill_prime", "fairshare_usage_res",
              "fairshare_decay_time", "fairshare_decay_factor", "fairshare_entity", "job_sort_key",
              "round_robin", "by_queue", "help_starving_jobs", "max_starve", "sort_queues", "unknown_shares")


#: what ``qstat -Qf`` / ``qstat -Bf`` show that is a state, not a setting (skipped when reading them)
QSTAT_STATE = ("total_jobs", "state_count", "hasnodes", "server_state", "server_host", "pbs_version",
               "license_count", "FLicenses", "resources_assigned.")


def qmgr_commands(text: str) -> list[tuple[int, str]]:
    """The file's lines as qmgr commands, one per line (numbered as in the file): ``print server``'s
    as they are, or the same read from ``qstat -Qf`` (and ``qstat -Bf``) output: ``Queue: NAME`` then
    indented ``attr = value`` lines; a value wrapped onto lines starting with a tab is joined back (the
    tab lines become empty), states such as total_jobs become comments."""
    lines = text.splitlines()
    if not _is_qstat(lines):
        return [(n, line.strip()) for n, line in enumerate(lines, start=1)]
    commands: list[tuple[int, str]] = []
    target, last = "", -1          # the queue or server of the lines; the last command a wrapped value goes on
    for n, line in enumerate(lines, start=1):
        body = line.strip()
        head = re.match(r"(Queue|Server):\s*(\S+)$", body)
        if line.startswith("\t") and last >= 0:
            commands[last] = (commands[last][0], commands[last][1] + body)
            body = ""
        elif head:
            target = f"queue {head.group(2)}" if head.group(1) == "Queue" else "server"
            body = f"create queue {head.group(2)}" if head.group(1) == "Queue" else f"# {body}"
        elif body and target and not body.startswith("#"):
            body = f"# {body}" if body.startswith(QSTAT_STATE) else f"set {target} {body}"
        last = len(commands) if body.startswith("set ") else last if not body else -1
        commands.append((n, body))
    return commands


def _is_qstat(lines: list[str]) -> bool:
    """Whether the file is ``qstat -Qf`` / ``-Bf`` output (its first line ``Queue: NAME`` or ``Server: NAME``)."""
    first = next((line.strip() for line in lines if line.strip() and not line.strip().startswith("#")), "")
    return first.startswith(("Queue:", "Server:"))


def print_server_text(text: str) -> str:
    """The file as ``print server`` writes it, line for line: ``qstat -Qf`` output translated (see
    :func:`qmgr_commands`), a print server's text unchanged."""
    if not _is_qstat(text.splitlines()):
        return text
    return "\n".join(command for _, command in qmgr_commands(text)) + "\n"


def read_print_server(path: str | Path, *, name: str | None = None) -> PbsServer:
    """``qmgr -c 'print server'`` (or the same commands typed by hand), or ``qstat -Qf`` [+ ``qstat -Bf``]."""
    source = name or str(path)
    server = PbsServer(source)
    for lineno, body in qmgr_commands(_text(path, source)):
        if not body or body.startswith("#"):
            continue
        words = body.split(None, 3)
        if words[:2] == ["create", "queue"] and len(words) >= 3:
            queue_name = words[2]
            if queue_name in server.queues:
                raise WorkloadError(f"queue {queue_name} created twice", file=source, line=lineno)
            server.queues[queue_name] = PbsQueue(queue_name, line=lineno)
            if len(words) == 4:      # "create queue q queue_type = Execution"
                _queue_attribute(server.queues[queue_name], words[3], lineno, source)
            continue
        match = re.match(r"set\s+(queue\s+(\S+)|server)\s+(.+)$", body)
        if not match:
            if body.startswith(("create resource", "create node", "set node", "create hook", "set hook",
                                "import hook", "set pbshook", "create pbshook", "import pbshook", "set sched",
                                "create sched")):
                server.unmodelled[body.split("=")[0].strip()[:80]] = (lineno, body)
                continue
            raise WorkloadError(f"expected 'create queue NAME', 'set queue NAME ATTR = VALUE' or 'set server ATTR "
                                f"= VALUE', got {shown(body)}", file=source, line=lineno)
        if match.group(2):
            queue = server.queues.get(match.group(2))
            if queue is None:
                raise WorkloadError(f"queue {match.group(2)} is set before it is created", file=source, line=lineno)
            _queue_attribute(queue, match.group(3), lineno, source)
        else:
            _server_attribute(server, match.group(3), lineno, source)
    if not server.queues:
        raise WorkloadError("no 'create queue' line: no job could run", file=source)
    for queue in server.queues.values():
        for destination in queue.route_destinations:
            if destination.split("@")[0] not in server.queues:
                raise WorkloadError(f"route queue {queue.name} sends jobs to {destination}, which is not created",
                                    file=source, line=queue.line, field="route_destinations")
    if server.default_queue and server.default_queue not in server.queues:
        raise WorkloadError(f"default_queue {server.default_queue} is not created", file=source, field="default_queue")
    return server


def _assignment(text: str, line: int, source: str) -> tuple[str, str, str]:
    match = re.match(r"([A-Za-z_][\w.]*)\s*(\+=|-=|=)\s*(.*)$", text.strip())
    if not match:
        raise WorkloadError(f"expected ATTR = VALUE, got {shown(text)}", file=source, line=line)
    name, op, value = match.groups()
    return name, op, value.strip().strip('"')


def _queue_attribute(queue: PbsQueue, text: str, line: int, source: str) -> None:
    name, op, value = _assignment(text, line, source)
    lower = name.lower()
    if lower == "queue_type":
        if value.lower() not in ("execution", "e", "route", "r"):
            raise WorkloadError(f"expected Execution or Route, got {shown(value)}", file=source, line=line, field=name)
        queue.queue_type = "Route" if value.lower().startswith("r") else "Execution"
    elif lower in ("enabled", "started"):
        setattr(queue, lower, _boolean(value, line, source, name))
    elif lower == "priority":
        queue.priority = _integer(value, line, source, name)
    elif lower == "route_destinations":
        items = [v.strip() for v in value.split(",") if v.strip()]
        queue.route_destinations = queue.route_destinations + items if op == "+=" else items
    elif lower.startswith(("resources_max.", "resources_min.", "resources_default.")):
        kind, resource = lower.split(".", 1)
        _check_resource(resource, value, line, source, name)
        getattr(queue, kind)[resource] = value
    elif lower in ("acl_user_enable", "acl_group_enable", "from_route_only"):
        setattr(queue, lower, _boolean(value, line, source, name))
    elif lower in ("acl_users", "acl_groups"):
        setattr(queue, lower, _acl(getattr(queue, lower), op, value, line, source, name))
    elif not _limit_attribute(queue, lower, op, value, line, source, name):
        queue.unmodelled[name] = (line, value)


def _server_attribute(server: PbsServer, text: str, line: int, source: str) -> None:
    name, op, value = _assignment(text, line, source)
    lower = name.lower()
    if lower == "default_queue":
        server.default_queue = value
    elif lower.startswith("resources_max."):
        resource = lower.split(".", 1)[1]
        _check_resource(resource, value, line, source, name)
        server.resources_max[resource] = value
    elif _limit_attribute(server, lower, op, value, line, source, name):
        pass
    elif lower in ("backfill_depth", "scheduler_iteration"):
        setattr(server, lower, _integer(value, line, source, name))
    elif lower == "eligible_time_enable":
        server.eligible_time_enable = _boolean(value, line, source, name)
    elif lower == "acl_user_enable":
        server.acl_user_enable = _boolean(value, line, source, name)
    elif lower in ("acl_users", "managers", "operators"):
        setattr(server, lower, _acl(getattr(server, lower), op, value, line, source, name))
    else:
        server.unmodelled[name] = (line, value)


def acl_name(entry: str) -> str:
    """An access-list entry without its ``+`` / ``-`` and ``@host``: the user or group it names."""
    return (entry[1:] if entry[:1] in ("+", "-") else entry).split("@", 1)[0]


def _acl(before: list[str], op: str, value: str, line: int, source: str, name: str) -> list[str]:
    """An access list after ``=`` / ``+=`` / ``-=`` VALUE (entries split at commas), kept as OpenPBS keeps
    it (attr_fn_acl.c set_allacl): sorted by the user or group name, ``+`` / ``-`` and ``@host`` aside
    (user_order, group_order; a new entry goes after the ones naming the same: the order among
    ``user@host`` entries of one user is the file's here, not host_order's); an entry given twice is
    refused, as qmgr does (PBSE_DUPLIST); ``-=`` takes off the entries written the same."""
    given = [v.strip() for v in value.split(",") if v.strip()]
    if op == "-=":
        return [entry for entry in before if entry not in given]
    kept = before if op == "+=" else []
    twice = next((entry for n, entry in enumerate(given) if entry in kept or entry in given[:n]), None)
    if twice is not None:
        raise WorkloadError(f"{shown(twice)} is in the list twice (qmgr refuses it: duplicate entries)", file=source,
                            line=line, field=name)
    return sorted(kept + given, key=acl_name)


#: the limit attributes of a queue or the server: of counts of jobs, and of a resource's sum (``NAME.resource``)
COUNT_LIMITS = ("max_run", "max_queued", "queued_jobs_threshold")
RESOURCE_LIMITS = ("max_run_res", "max_queued_res", "queued_jobs_threshold_res")
#: the resource the ``pbs`` policy's resource limits follow (the others are listed as not modelled)
FOLLOWED_RESOURCE = "ncpus"


def _limit_attribute(target: PbsQueue | PbsServer, lower: str, op: str, value: str, line: int, source: str,
                     name: str) -> bool:
    """Read a limit attribute of a queue or the server; False if ``lower`` is none. ``+=`` adds entries
    to the limits already set and ``-=`` takes them off: print server writes a limit of several entries
    as ``max_run = [u:PBS_GENERIC=10]`` then ``max_run += [u:alice=5]`` (qmgr.c splits the value at
    its commas)."""
    kind, _, resource = lower.partition(".")
    if lower in COUNT_LIMITS:
        before = getattr(target, lower)
    elif kind in RESOURCE_LIMITS and resource:
        before = getattr(target, kind).get(resource, Limits())
    else:
        return False
    given = _limits(value, line, source, name, sized=bool(resource) and resource != FOLLOWED_RESOURCE)
    if op == "+=":
        given = Limits({**before.values, **given.values}, {**before.units, **given.units})
    elif op == "-=":
        given = Limits({k: v for k, v in before.values.items() if k not in given.values},
                       {k: v for k, v in before.units.items() if k not in given.values})
    if lower in COUNT_LIMITS:
        setattr(target, lower, given)
    else:
        getattr(target, kind)[resource] = given
    return True


def _limit_texts(target: PbsQueue | PbsServer) -> list[str]:
    """The limits set on a queue or the server, as print server writes them."""
    parts = [f"{kind} {getattr(target, kind).text()}" for kind in COUNT_LIMITS if getattr(target, kind).values]
    return parts + [f"{kind}.{resource} {limits.text()}" for kind in RESOURCE_LIMITS
                    for resource, limits in getattr(target, kind).items()]


def _limits(value: str, line: int, source: str, name: str, *, sized: bool = False) -> Limits:
    """``[u:PBS_GENERIC=10],[u:alice=5]`` (the new form) or a plain number (the old, a server-wide cap);
    ``sized``: a limit on a resource with units (mem: ``[u:PBS_GENERIC=8gb]``)."""
    if re.fullmatch(r"\d{1,15}", value):
        return Limits({("o", "PBS_ALL"): int(value)})
    found = _LIMIT.findall(value)
    rest = _LIMIT.sub("", value).replace(",", "").strip()
    if not found or rest or (not sized and any(unit for *_, unit in found)):
        example = "[u:PBS_GENERIC=8gb]" if sized else "[u:PBS_GENERIC=10]"
        raise WorkloadError(f"expected a limit like {example}, got {shown(value)}", file=source, line=line, field=name)
    return Limits({(scope, who): int(n) for scope, who, n, _ in found},
                  {(scope, who): unit.lower() for scope, who, _, unit in found if unit})


def _check_resource(resource: str, value: str, line: int, source: str, name: str) -> None:
    try:
        if resource in ("walltime", "cput"):
            parse_duration(value)
        elif resource in ("ncpus", "nodect", "ngpus", "mpiprocs"):
            _integer(value, line, source, name)
    except ValueError as e:
        raise WorkloadError(str(e), file=source, line=line, field=name) from None


def _boolean(value: str, line: int, source: str, name: str) -> bool:
    if value.lower() in ("true", "t", "1", "y", "yes"):
        return True
    if value.lower() in ("false", "f", "0", "n", "no"):
        return False
    raise WorkloadError(f"expected True or False, got {shown(value)}", file=source, line=line, field=name)


def _integer(value: str, line: int, source: str, name: str) -> int:
    if not re.fullmatch(r"-?\d{1,15}", value):
        raise WorkloadError(f"expected a whole number, got {shown(value)}", file=source, line=line, field=name)
    return int(value)


def _text(path: str | Path, source: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise WorkloadError(f"cannot read: {e.strerror or e}", file=source) from None


def read_sched_config(server: PbsServer, path: str | Path, *, name: str | None = None) -> None:
    """``sched_config``: ``key: value [prime|non_prime|all|none]`` lines into ``server.sched``."""
    source = name or str(path)
    for lineno, raw in enumerate(_text(path, source).splitlines(), start=1):
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        key, sep, value = body.partition(":")
        if not sep or not key.strip():
            raise WorkloadError(f"expected 'key: value [prime|non_prime|all]', got {shown(body)}", file=source, line=lineno)
        key, value = key.strip(), value.strip()
        words = value.rsplit(None, 1)
        if len(words) == 2 and words[1].lower() in ("prime", "non_prime", "all", "none"):
            value = words[0]
        value = value.strip('"')
        if key in ("fairshare_decay_time", "max_starve"):
            try:
                parse_duration(value)
            except ValueError as e:
                raise WorkloadError(str(e), file=source, line=lineno, field=key) from None
        if key in ("fairshare_decay_factor",):
            try:
                factor = float(value)
            except ValueError:
                factor = -1.0
            if not 0 < factor < 1:
                raise WorkloadError(f"expected a number between 0 and 1, got {shown(value)}", file=source, line=lineno,
                                    field=key)
        if key == "job_sort_key":        # several lines make one list
            value = f"{server.sched[key]}; {value}" if key in server.sched else value
        if key in SCHED_KEYS:
            server.sched[key] = value
        else:
            server.sched_unmodelled[key] = (lineno, value)


def read_resource_group(server: PbsServer, path: str | Path, *, name: str | None = None) -> None:
    """The fair-share tree: ``name id parent shares`` per line (parent ``root`` at the top)."""
    source = name or str(path)
    seen: dict[str, int] = {"root": 0}
    for lineno, raw in enumerate(_text(path, source).splitlines(), start=1):
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        words = body.split()
        if len(words) != 4:
            raise WorkloadError(f"expected 'name id parent shares', got {shown(body)}", file=source, line=lineno)
        entity, ident, parent, shares = words
        for label, text in (("id", ident), ("shares", shares)):
            if not re.fullmatch(r"\d{1,15}", text):
                raise WorkloadError(f"expected a whole number, got {shown(text)}", file=source, line=lineno, field=label)
        if parent not in seen:
            raise WorkloadError(f"parent {parent} is not defined above this line", file=source, line=lineno,
                                field="parent")
        if entity in seen:
            raise WorkloadError(f"{entity} is defined twice", file=source, line=lineno, field="name")
        seen[entity] = lineno
        server.groups.append((entity, int(ident), parent, int(shares)))


def read_pbs_site(print_server: str | Path, *, sched_config: str | Path | None = None,
                  resource_group: str | Path | None = None) -> PbsServer:
    server = read_print_server(print_server)
    if sched_config is not None:
        read_sched_config(server, sched_config)
    if resource_group is not None:
        read_resource_group(server, resource_group)
    return server


def describe_pbs_site(server: PbsServer, *, with_keys: bool = True) -> list[str]:
    """What SchedLab understood, as lines for a person (``python -m engine site --pbs-server``); the last line
    lists the keys read but not used (:func:`pbs_unmodelled_keys`, :func:`pbs_unfollowed_keys`), left out
    without ``with_keys``."""
    lines = [f"{server.source}: {len(server.queues)} queues, default {server.default_queue or '(none)'}"]
    for queue in sorted(server.queues.values(), key=lambda q: (-q.priority, q.name)):
        if queue.is_route:
            access = "; ".join(_access_texts(queue))
            lines.append(f"  {queue.name} (route) -> {', '.join(queue.route_destinations) or 'nowhere'}"
                         + (f"; {access}" if access else ""))
            continue
        parts = [f"priority {queue.priority}"]
        parts += [f"max {k} {v}" for k, v in queue.resources_max.items()]
        parts += [f"min {k} {v}" for k, v in queue.resources_min.items()]
        parts += [f"default {k} {v}" for k, v in queue.resources_default.items()]
        parts += _limit_texts(queue)
        parts += _access_texts(queue)
        state = "" if queue.enabled and queue.started else " (disabled)" if not queue.enabled else " (stopped)"
        lines.append(f"  {queue.name}{state}: " + ", ".join(parts))
    server_limits = [f"max {k} {v}" for k, v in server.resources_max.items()] + _limit_texts(server)
    server_limits += [f"backfill_depth {server.backfill_depth}"] if server.backfill_depth is not None else []
    lines.append("server: " + (", ".join(server_limits) or "no limits"))
    if server.acl_user_enable:
        passing = ",".join(server.managers + server.operators)
        lines.append(f"server acl_users {','.join(server.acl_users) or '(empty)'}: a user it does not let in is refused "
                     "at qsub (Unauthorized Request)" + (f" unless managers / operators name him ({passing})" if passing else ""))
    elif server.acl_users:
        lines.append(f"server acl_users {','.join(server.acl_users)}: acl_user_enable not True, not checked")
    if server.acl_user_enable or any(q.acl_user_enable or q.acl_group_enable for q in server.queues.values()):
        lines.append("access lists: followed as OpenPBS's acl_check: the first entry naming the job's user (acl_users) or "
                     "group (acl_groups) decides, -name refusing; a lone + or - is the answer for the others, else "
                     "refused. A user@host entry is taken as naming the user from any host (the log keeps no "
                     "submission host); a group entry must be the job's group as the log gives it (PBS checks the "
                     "user's group list on the server host)")
    if server.sched:
        lines.append("scheduler: " + ", ".join(f"{k} {v}" for k, v in server.sched.items()))
    lines.append("starving jobs: " + starving_text(server))
    if server.groups:
        lines.append("fair-share tree: " + ", ".join(f"{n} ({shares} under {parent})" for n, _, parent, shares in server.groups))
    if with_keys:
        unknown = pbs_unmodelled_keys(server) + pbs_unfollowed_keys(server)
        lines.append("not modelled (read, not used): " + (", ".join(unknown) if unknown else "nothing"))
    return lines


def _access_texts(queue: PbsQueue) -> list[str]:
    """What a queue's from_route_only and access lists do, for a person."""
    parts = ["from_route_only: a qsub straight to it is refused (Access to queue is denied)"] if queue.from_route_only else []
    for kind, enable in (("acl_users", queue.acl_user_enable), ("acl_groups", queue.acl_group_enable)):
        entries = ",".join(getattr(queue, kind)) or "(empty: nobody)"
        if enable:
            parts.append(f"{kind} {entries} (followed: a {kind[4:-1]} it does not let in is refused, Unauthorized Request)")
        elif getattr(queue, kind):
            parts.append(f"{kind} {entries} (acl_{kind[4:-1]}_enable not True: not checked)")
    return parts


def pbs_unmodelled_keys(server: PbsServer) -> list[str]:
    """The attributes set in the files that SchedLab has no model of (read, not used), each naming its line."""
    unknown = [f"{k} (line {line})" for k, (line, _) in server.unmodelled.items()]
    unknown += [f"queue {q.name} {k} (line {line})" for q in server.queues.values() for k, (line, _) in q.unmodelled.items()]
    unknown += [f"sched_config {k} (line {line})" for k, (line, _) in server.sched_unmodelled.items()]
    return unknown


#: a job's resources the admission checks (engine.platform.pbsrules.refusal) and the policy replays
CHECKED_RESOURCES = ("walltime", "ncpus")
#: fairshare_usage_res values the policy's processor-seconds stand for (cput: a log's jobs as if busy)
FAIRSHARE_USAGE = ("cput", "ncpus*walltime", "walltime*ncpus")


def sched_true(server: PbsServer, key: str, default: bool) -> bool:
    """A sched_config switch (``default`` when the file does not set it)."""
    value = server.sched.get(key)
    return default if value is None else value.strip().lower() in ("true", "t", "1", "yes", "y")


def pbs_unfollowed_keys(server: PbsServer) -> list[str]:
    """The settings read and understood that no rule here follows, each with why: limits on a resource
    other than ncpus, bounds on resources other than walltime and ncpus, a queue's resources_default
    and started = False, and sched_config's backfill_prime, sort_queues and a fairshare_usage_res
    other than processor time."""
    targets: list[PbsQueue | PbsServer] = [*server.queues.values(), server]
    found = [f"{_owner(target)} {kind}.{resource} (of resources only {FOLLOWED_RESOURCE} is followed)"
             for target in targets for kind in RESOURCE_LIMITS for resource in getattr(target, kind)
             if resource != FOLLOWED_RESOURCE]
    found += [f"{_owner(target)} {kind}.{resource} (a job's {' and '.join(CHECKED_RESOURCES)} are checked against the "
              f"bounds, not its {resource})" for target in targets
              for kind in ("resources_min", "resources_max") for resource in getattr(target, kind, {})
              if resource not in CHECKED_RESOURCES]
    found += [f"queue {q.name} resources_default.{resource} (the log's Resource_List already has the default the "
              "server gave; a changed default changes no job here)" for q in server.queues.values()
              for resource in q.resources_default]
    found += [f"queue {q.name} started = False (its jobs run here)" for q in server.queues.values()
              if not q.started and not q.is_route]
    sched = server.sched
    found += [f"sched_config {key} {sched[key]} (not followed)" for key in ("backfill_prime", "sort_queues") if key in sched]
    usage = sched.get("fairshare_usage_res", "cput").replace(" ", "").lower()
    if usage not in FAIRSHARE_USAGE:
        found.append(f"sched_config fairshare_usage_res {sched['fairshare_usage_res']} (usage here is processor time: "
                     "ncpus x walltime)")
    return found


def help_starving_jobs(server: PbsServer) -> bool:
    """sched_config's help_starving_jobs; off when the line is absent (OpenPBS 20's config(): prime_hsv
    = non_prime_hsv = 0; the sched_config it ships sets it true ALL)."""
    return sched_true(server, "help_starving_jobs", False)


def max_starve(server: PbsServer) -> int:
    """sched_config's max_starve in seconds; 0 when the line is absent (OpenPBS 20's config():
    max_starve = 0, so with help_starving_jobs on a job starves once it has waited at all; the
    sched_config OpenPBS ships sets 24:00:00)."""
    text = server.sched.get("max_starve")
    return parse_duration(text) if text else 0


#: OpenPBS's default preempt_queue_prio: a queue of this priority or more is an express queue
PREEMPT_QUEUE_PRIO = 150


def express_priority(server: PbsServer) -> int | None:
    """The queue priority from which a queue is an express queue, its jobs in the express_queue
    preemption class (ordered before the normal class's, starving or not), or None when the
    scheduler does not preempt (preemptive_sched absent or false: OpenPBS 20 then sets no job's
    preemption priority and every job is of one class). preempt_queue_prio: sched_config's line
    (PBS Professional's older place), a ``set sched`` or ``set server`` line, else 150."""
    value = server.sched_unmodelled.get("preemptive_sched", (0, "false"))[1]
    if value.strip().lower() not in ("true", "t", "1", "yes", "y"):
        return None
    for found in (server.sched_unmodelled.get("preempt_queue_prio"), server.unmodelled.get("set sched preempt_queue_prio"),
                  server.unmodelled.get("preempt_queue_prio")):
        text = found[1].split("=")[-1].strip() if found else ""
        if re.fullmatch(r"-?\d{1,15}", text):
            return int(text)
    return PREEMPT_QUEUE_PRIO


def starving_text(server: PbsServer) -> str:
    """What SchedLab follows of help_starving_jobs, max_starve and eligible_time_enable, for a person."""
    if not help_starving_jobs(server):
        said = "false" if "help_starving_jobs" in server.sched else "not set (off)"
        return f"help_starving_jobs {said}: no job is starving"
    limit = max_starve(server)
    given = server.sched.get("max_starve")
    wait = ("its eligible_time (eligible_time_enable True: the time no user, group or project limit held it)"
            if server.eligible_time_enable else "the time since its submission (eligible_time_enable not True)")
    express = express_priority(server)
    before = f" after the express queues' jobs (priority >= {express})" if express is not None else ""
    where = ("each first in its own queue (fair_share with preemptive_sched)"
             if sched_true(server, "fair_share", False) and express is not None and sched_true(server, "by_queue", True)
             and not sched_true(server, "round_robin", False) else "ahead of the other jobs of their class")
    return (f"help_starving_jobs true, max_starve {given or 'not set'} ({limit} s): a job is starving when "
            f"{wait} is over {limit} s; starving jobs go{before} {where}, longest starving first, and one that "
            f"cannot run gets a reservation while backfill_depth allows, even without strict_ordering (without "
            f"backfilling it stops the cycle); as PBS Professional and OpenPBS up to 20.0 do: OpenPBS 22.05 and later "
            f"ignore these lines (--set help_starving_jobs=false replays such a site)")


def _owner(target: PbsQueue | PbsServer) -> str:
    return f"queue {target.name}" if isinstance(target, PbsQueue) else "server"
