"""A Slurm site as its admin configured it: ``slurm.conf`` and the ``sacctmgr -P show qos|assoc`` dumps.

What is read (Slurm 22.05's slurm.conf(5), sacctmgr(1) and the multifactor priority page):

- ``NodeName`` lines (host-list ranges ``n[001-004]``, CPUs, RealMemory in MB, Gres ``gpu:4`` or
  ``gpu:a100:2``, Features), ``NodeName=DEFAULT`` values for the lines after it;
- ``PartitionName`` lines, ``DEFAULT`` too: Nodes (``ALL`` or a host list), MaxTime, DefaultTime,
  MinNodes, MaxNodes, PriorityJobFactor, PriorityTier, ``Priority`` (older spelling: sets both), AllowQOS,
  DenyQOS, AllowAccounts, DenyAccounts, AllowGroups (read; not followed), QOS, Default, State,
  OverTimeLimit; EnforcePartLimits (whether sbatch refuses a job over them or it pends for ever);
- the scheduler: PriorityType and every ``PriorityWeight*`` (``PriorityWeightTRES=CPU=1000,Mem=2000``
  too), PriorityDecayHalfLife, PriorityMaxAge, PriorityCalcPeriod, PriorityFavorSmall, PriorityFlags,
  SchedulerType, SchedulerParameters (bf_interval, bf_resolution, bf_window, bf_max_job_test,
  bf_max_job_user, bf_max_job_part, bf_max_job_user_part, bf_continue, default_queue_depth, sched_interval, ...), SelectType and
  SelectTypeParameters (which resources are consumable);
- every other key, of a NodeName or PartitionName line too, is kept in ``unmodelled`` with its line, so
  nothing is silently dropped (values that are Slurm's defaults, or that no schedule depends on, aside).

Times are written as Slurm writes them: ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``,
``D-HH:MM:SS``; ``UNLIMITED``/``INFINITE`` is ``None``. The sacctmgr dumps are read by header name
(their columns differ between versions and ``format=`` choices). Every problem is one
:class:`WorkloadError` naming the file, the line and the key.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.workload.errors import WorkloadError, shown

#: slurm.conf keys read into the model (lower case); the rest are listed as unmodelled.
PRIORITY_KEYS = ("prioritytype", "prioritydecayhalflife", "prioritymaxage", "prioritycalcperiod",
                 "priorityfavorsmall", "priorityflags", "priorityusageresetperiod")
SCHEDULER_KEYS = ("schedulertype", "schedulerparameters", "selecttype", "selecttypeparameters", "clustername")

#: AccountingStorageEnforce's words (slurm.conf(5); read_config.c _validate_accounting_storage_enforce)
#: and the ACCOUNTING_ENFORCE_* flags each sets ("all": every one but nojobs and nosteps)
ENFORCE_WORDS = {"1": ("associations",), "associations": ("associations",), "2": ("associations", "limits"),
                 "limits": ("associations", "limits"), "safe": ("associations", "limits", "safe"),
                 "wckeys": ("associations", "wckeys"), "qos": ("associations", "qos"),
                 "all": ("associations", "limits", "safe", "wckeys", "qos"), "nojobs": ("nojobs", "nosteps"),
                 "nosteps": ("nosteps",)}
#: the flags no rule here follows, with why (``engine site`` names those set)
ENFORCE_NOT_FOLLOWED = {
    "qos": "a job's QOS must be one its association may use; the recorded jobs ran with theirs",
    "wckeys": "workload characterization keys are not read",
}

#: a partition's State= values (slurm.conf(5))
PARTITION_STATES = ("UP", "DOWN", "DRAIN", "INACTIVE")

#: the keys of NodeName and PartitionName lines read into the model (lower case)
NODE_KEYS = frozenset({"nodename", "cpus", "procs", "boards", "sockets", "socketsperboard", "corespersocket",
                       "threadspercore", "realmemory", "gres", "features", "feature"})
PARTITION_KEYS = frozenset({"partitionname", "nodes", "maxtime", "defaulttime", "minnodes", "maxnodes", "priority",
                            "priorityjobfactor", "prioritytier", "allowqos", "denyqos", "allowaccounts",
                            "denyaccounts", "allowgroups", "qos", "default", "state", "overtimelimit"})
#: other keys of those lines not listed as unmodelled: any value (None: names, addresses, notes) or these
#: values, Slurm's defaults (slurm.conf(5)), under which the key changes no schedule
LINE_KEYS_HARMLESS: dict[str, tuple[str, ...] | None] = {
    "nodeaddr": None, "nodehostname": None, "port": None, "reason": None, "comment": None, "bcastaddr": None,
    "tmpdisk": None, "state": ("unknown", "idle", "up"), "hidden": None, "allowallocnodes": ("all",),
    "oversubscribe": ("no",), "shared": ("no",), "exclusiveuser": ("no",), "lln": ("no",), "rootonly": ("no",),
    "reqresv": ("no",), "disablerootjobs": ("no",), "preemptmode": ("off",), "gracetime": ("0",),
    "maxcpuspernode": ("unlimited",), "maxmempercpu": ("0", "unlimited"), "maxmempernode": ("0", "unlimited"),
    "weight": ("1",), "corespeccount": ("0",), "memspeclimit": ("0",),
}
#: EnforcePartLimits' words (read_config.c parse_part_enforce_type) and what each means here
ENFORCE_PART_LIMITS = {"yes": "ANY", "up": "ANY", "true": "ANY", "1": "ANY", "any": "ANY",
                       "no": "NO", "down": "NO", "false": "NO", "0": "NO", "all": "ALL"}

#: SchedulerParameters Slurm documents, with their defaults (22.05); values in seconds unless named.
SCHEDULER_DEFAULTS: dict[str, int | bool] = {
    "bf_interval": 30, "bf_resolution": 60, "bf_window": 1440,        # bf_window in minutes
    "bf_max_job_test": 500, "bf_max_job_user": 0, "bf_max_job_part": 0, "bf_max_job_user_part": 0, "bf_continue": False,
    "default_queue_depth": 100, "sched_interval": 60, "sched_min_interval": 2,
    "bf_yield_interval": 2_000_000, "bf_busy_nodes": False, "max_sched_time": 0,      # bf_yield_interval: µs
    "batch_sched_delay": 3, "bf_max_job_start": 0, "sched_max_job_start": 0, "partition_job_depth": 0,
    "bf_min_age_reserve": 0, "bf_min_prio_reserve": 0,
}

#: SchedulerParameters read (so a value of the wrong kind is an error) that no rule here follows, with why:
#: listed when set to other than the default
SCHEDULER_NOT_FOLLOWED = {
    "bf_busy_nodes": "which nodes a reservation takes is not chosen here, only when",
    "max_sched_time": "a main scheduler's pass here takes no simulated time, so it never runs out of it",
    "sched_min_interval": "microseconds between two main scheduler's runs: none on this whole-second clock",
    "bf_yield_interval": "a backfill pass here takes no simulated time, so it never yields its locks",
}

#: the TRES PriorityWeightTRES weighs here, in slurmctld's TRES order (the weighted sum is added in it)
PRIORITY_TRES = ("cpu", "mem", "node", "billing", "gres/gpu")
#: PriorityFlags (slurm.conf(5)) the slurm policy follows: the fair-share algorithm, the job size factor
#: relative to the time limit, the factors not normalised; ACCRUE_ALWAYS and CALCULATE_RUNNING change
#: nothing here (a trace's jobs have no dependency, hold or begin time; running jobs' priorities order
#: nothing); the others are listed with why
PRIORITY_FLAGS_FOLLOWED = ("FAIR_TREE", "NO_FAIR_TREE", "SMALL_RELATIVE_TO_TIME", "NO_NORMAL_ALL", "NO_NORMAL_ASSOC",
                           "NO_NORMAL_PART", "NO_NORMAL_QOS", "NO_NORMAL_TRES", "ACCRUE_ALWAYS", "CALCULATE_RUNNING")
PRIORITY_FLAGS_NOT_FOLLOWED = {
    "INCR_ONLY": "a job's priority here falls as well as rises when its fair-share factor does",
    "MAX_TRES": "it changes billing with TRESBillingWeights, which is not modelled",
    "DEPTH_OBLIVIOUS": "classic fair-share's depth-oblivious variant is not computed",
}

#: SchedulerParameters no rule here reads because they change nothing in a replay of a trace, with why
SCHEDULER_NO_EFFECT = {
    "defer": "the replay already runs the main scheduler from the background loop at every submission and "
             "job end, as defer makes slurmctld do; it changes only interactive jobs' immediate tests",
    "max_rpc_cnt": "the controller's RPC load is not modelled", "bf_max_time": "a backfill pass takes no simulated time",
    "bf_yield_sleep": "a backfill pass takes no simulated time", "kill_invalid_depend": "a trace's jobs have no "
    "dependencies", "max_depend_depth": "a trace's jobs have no dependencies",
    "nohold_on_prolog_fail": "prologs are not run", "max_array_tasks": "sacct lists array tasks as jobs",
}

MAX_NODES_DEFINED = 200_000


#: PriorityUsageResetPeriod's calendar periods (priority_multifactor.c _next_reset); NONE and NOW
#: (once at slurmctld's start: nothing to reset in a replay that starts with no usage) reset nothing
USAGE_RESET_PERIODS = ("DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")


def next_usage_reset(period: str, last: int) -> int | None:
    """The Unix time of the usage reset after ``last`` (a reset, or the start), as slurmctld's
    _next_reset computes it from the day of ``last`` (UTC here; slurmctld uses its local time): the
    next midnight, Sunday midnight, first of the next month, of the next quarter (January, April,
    July, October), of the next year. None for a period that resets nothing."""
    day = datetime.fromtimestamp(last, tz=UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "DAILY":
        found = day + timedelta(days=1)
    elif period == "WEEKLY":
        found = day + timedelta(days=7 - (day.isoweekday() % 7))      # (tm_wday: Sunday 0)
    elif period in ("MONTHLY", "QUARTERLY", "YEARLY"):
        month = {"MONTHLY": day.month + 1, "QUARTERLY": 3 * ((day.month - 1) // 3 + 1) + 1, "YEARLY": 13}[period]
        found = day.replace(year=day.year + (month - 1) // 12, month=(month - 1) % 12 + 1, day=1)
    else:
        return None
    return int(found.timestamp())


def slurm_time(text: str) -> int | None:
    """Seconds of a Slurm time limit (``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``,
    ``D-HH:MM:SS``); ``UNLIMITED``/``INFINITE`` -> None. Raises ValueError."""
    value = text.strip()
    if value.lower() in ("unlimited", "infinite", "-1"):
        return None
    match = re.fullmatch(r"(?:(\d{1,6})-)?(\d{1,9})(?::(\d{1,2}))?(?::(\d{1,2}))?", value)
    if not match:
        raise ValueError(f"expected a time like 30, 1:30:00, 2-00:00:00 or UNLIMITED, got {shown(value)}")
    days, a, b, c = match.groups()
    numbers = [int(x) for x in (a, b, c) if x is not None]
    if days is not None:       # D-HH, D-HH:MM, D-HH:MM:SS
        hours, minutes, seconds = (numbers + [0, 0])[:3]
        return int(days) * 86400 + hours * 3600 + minutes * 60 + seconds
    if len(numbers) == 1:      # MM
        return numbers[0] * 60
    if len(numbers) == 2:      # MM:SS
        return numbers[0] * 60 + numbers[1]
    return numbers[0] * 3600 + numbers[1] * 60 + numbers[2]


def shown_time(seconds: int | None) -> str:
    """A time limit as Slurm writes it (``2-00:00:00``, ``UNLIMITED``)."""
    if seconds is None:
        return "UNLIMITED"
    days, rest = divmod(seconds, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


@dataclass
class NodeSet:
    """One NodeName line: its hosts and what each has."""

    names: list[str]
    cpus: int = 1
    real_memory_mb: int = 1
    gres: dict[str, int] = field(default_factory=dict)     # "gpu" -> per node ("gpu:a100" kept as "gpu")
    features: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class Partition:
    """A PartitionName line. ``state``: UP; DOWN (jobs queue, none is started: PartitionDown);
    DRAIN or INACTIVE (sbatch refuses new jobs; jobs queued before a DRAIN still run)."""

    name: str
    nodes: list[str]
    max_time: int | None = None              # seconds; None = UNLIMITED
    default_time: int | None = None
    max_nodes: int | None = None
    min_nodes: int = 0
    priority_job_factor: int = 1
    priority_tier: int = 1
    allow_qos: list[str] = field(default_factory=lambda: ["ALL"])
    deny_qos: list[str] = field(default_factory=list)
    #: AllowAccounts (["ALL"]: every account) and DenyAccounts; Slurm reads DenyAccounts only without AllowAccounts
    allow_accounts: list[str] = field(default_factory=lambda: ["ALL"])
    deny_accounts: list[str] = field(default_factory=list)
    allow_groups: list[str] = field(default_factory=lambda: ["ALL"])
    qos: str = ""                            # the partition QOS, whose limits apply to its jobs
    default: bool = False
    state: str = "UP"
    #: OverTimeLimit of the PartitionName line, seconds; None: UNLIMITED; -1 (not on the line): slurm.conf's
    over_time_limit: int | None = -1
    line: int = 0


@dataclass
class SlurmConf:
    """What slurm.conf says about the machine, its partitions and its scheduler."""

    source: str
    cluster: str = ""
    nodes: list[NodeSet] = field(default_factory=list)
    partitions: dict[str, Partition] = field(default_factory=dict)
    priority_type: str = "priority/basic"
    weights: dict[str, int] = field(default_factory=dict)        # "age", "fairshare", "jobsize", "partition", "qos", "assoc"
    tres_weights: dict[str, float] = field(default_factory=dict)  # PriorityWeightTRES: "cpu" -> weight
    decay_half_life: int | None = 7 * 86400
    max_age: int | None = 7 * 86400
    calc_period: int = 300
    #: OverTimeLimit, seconds (slurm.conf gives minutes) a job may run past its time limit; None: UNLIMITED
    over_time_limit: int | None = 0
    favor_small: bool = False
    priority_flags: list[str] = field(default_factory=list)
    #: PriorityUsageResetPeriod (NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY), with its line
    usage_reset: tuple[str, int] = ("NONE", 0)
    scheduler_type: str = "sched/backfill"
    scheduler: dict[str, int | bool] = field(default_factory=lambda: dict(SCHEDULER_DEFAULTS))
    scheduler_unknown: dict[str, str] = field(default_factory=dict)
    select_type: str = "select/cons_tres"
    select_parameters: list[str] = field(default_factory=list)
    #: AccountingStorageEnforce's flags (ENFORCE_WORDS' values); none = Slurm's default: no association
    #: or QOS limit is enforced (acct_policy returns at once without ACCOUNTING_ENFORCE_LIMITS)
    enforce: frozenset[str] = frozenset()
    #: EnforcePartLimits: NO (Slurm's default: a job over a partition's limits or access lists pends for
    #: ever), ANY or ALL (sbatch refuses it; the same for a job of one partition)
    enforce_part_limits: str = "NO"
    unmodelled: dict[str, tuple[int, str]] = field(default_factory=dict)   # key -> (line, value)

    @property
    def enforce_limits(self) -> bool:
        """AccountingStorageEnforce has limits (or safe, all): association and QOS limits hold jobs."""
        return "limits" in self.enforce

    @property
    def total_cpus(self) -> int:
        return sum(len(n.names) * n.cpus for n in self.nodes)

    @property
    def fair_tree(self) -> bool:
        """Fair Tree is the default fair-share algorithm since 19.05 unless NO_FAIR_TREE is set."""
        return "NO_FAIR_TREE" not in self.priority_flags

    @property
    def memory_consumable(self) -> bool:
        """Whether jobs' memory is allocated (CR_*_Memory): with CR_CPU/CR_Core it is not, and a
        sacct ReqMem of the whole node must not be read as a limit (it would serialise the node)."""
        return any(p.upper().endswith("_MEMORY") for p in self.select_parameters)

    def over_time(self, partition: str) -> int | None:
        """Seconds a job of ``partition`` may run past its time limit (None: no limit): the
        partition's OverTimeLimit, else slurm.conf's (job_mgr.c job_time_limit)."""
        own = self.partitions[partition].over_time_limit if partition in self.partitions else -1
        return self.over_time_limit if own == -1 else own

    def default_partition(self) -> Partition | None:
        return next((p for p in self.partitions.values() if p.default), next(iter(self.partitions.values()), None))


# --------------------------------------------------------------------------- slurm.conf


def read_slurm_conf(path: str | Path, *, name: str | None = None) -> SlurmConf:
    """Read a slurm.conf; raises WorkloadError naming file, line and key."""
    source = name or str(path)
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise WorkloadError(f"cannot read: {e.strerror or e}", file=source) from None
    return parse_slurm_conf(text, source)


def parse_slurm_conf(text: str, source: str = "slurm.conf") -> SlurmConf:
    conf = SlurmConf(source=source)
    node_default: dict[str, str] = {}
    partition_default: dict[str, str] = {}
    defined: dict[str, int] = {}
    for lineno, pairs in _lines(text, source):
        first_key = pairs[0][0].lower()
        if first_key == "nodename":
            values = {k.lower(): v for k, v in pairs}
            _keep_unmodelled(conf, f"NodeName={values['nodename']}", pairs, NODE_KEYS, lineno)
            if values["nodename"].upper() == "DEFAULT":
                node_default.update({k: v for k, v in values.items() if k != "nodename"})
                continue
            nodes = _node_set({**node_default, **values}, lineno, source)
            for host in nodes.names:
                if host in defined:
                    raise WorkloadError(f"node {host} defined again (first on line {defined[host]})",
                                        file=source, line=lineno, field="NodeName")
                defined[host] = lineno
            if len(defined) > MAX_NODES_DEFINED:
                raise WorkloadError(f"more than {MAX_NODES_DEFINED:,} nodes", file=source, line=lineno, field="NodeName")
            conf.nodes.append(nodes)
        elif first_key == "partitionname":
            values = {k.lower(): v for k, v in pairs}
            _keep_unmodelled(conf, f"PartitionName={values['partitionname']}", pairs, PARTITION_KEYS, lineno)
            if values["partitionname"].upper() == "DEFAULT":
                partition_default.update({k: v for k, v in values.items() if k != "partitionname"})
                continue
            partition = _partition({**partition_default, **values}, lineno, source, defined)
            if partition.name in conf.partitions:
                raise WorkloadError(f"partition {partition.name} defined twice", file=source, line=lineno,
                                    field="PartitionName")
            conf.partitions[partition.name] = partition
        else:
            for key, value in pairs:
                _global(conf, key, value, lineno, source)
    if not conf.nodes:
        raise WorkloadError("no NodeName line: the machine is unknown", file=source)
    if not conf.partitions:
        raise WorkloadError("no PartitionName line: no job could run", file=source)
    return conf


def _keep_unmodelled(conf: SlurmConf, label: str, pairs: list[tuple[str, str]], known: frozenset[str],
                     line: int) -> None:
    """The keys of a NodeName or PartitionName line that the model does not read, kept as
    ``"PartitionName=long PreemptMode"`` with their line, unless harmless (:data:`LINE_KEYS_HARMLESS`)."""
    for key, value in pairs:
        lower = key.lower()
        if lower in known:
            continue
        harmless = LINE_KEYS_HARMLESS.get(lower, ())
        if harmless is None or value.lower() in (harmless or ()):
            continue
        conf.unmodelled[f"{label} {key}"] = (line, value)


def _lines(text: str, source: str):
    """(line number, [(key, value), ...]) per non-empty line; comments and quotes as slurm.conf has them."""
    for lineno, raw in enumerate(text.splitlines(), start=1):
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        if body.lower().startswith("include "):
            raise WorkloadError("Include lines are not followed: give the included file's lines in this one",
                                file=source, line=lineno, field="Include")
        pairs = []
        for token in re.findall(r'[^\s=]+=(?:"[^"]*"|\S*)|\S+', body):
            key, sep, value = token.partition("=")
            if not sep:
                raise WorkloadError(f"expected KEY=VALUE, got {shown(token)}", file=source, line=lineno)
            pairs.append((key, value.strip('"')))
        yield lineno, pairs


def expand_hostlist(text: str) -> list[str]:
    """The sacct reader's host-list expansion, imported at first use: every simulate command loads
    the policy families (engine.policies.slurm imports this module) and must not load the Slurm
    reader (tests/engine/test_api_imports.py)."""
    from engine.workload.slurm import expand_hostlist as expand
    return expand(text)


def _node_set(values: dict[str, str], line: int, source: str) -> NodeSet:
    names_text = values["nodename"]
    try:
        names = expand_hostlist(names_text)
    except ValueError as e:
        raise WorkloadError(str(e), file=source, line=line, field="NodeName") from None
    if not names:
        raise WorkloadError("no node names", file=source, line=line, field="NodeName")
    cpus = _count(values, "cpus", line, source) or _count(values, "procs", line, source) or \
        _sockets_times_cores(values, line, source) or 1
    memory = _count(values, "realmemory", line, source) or 1
    gres: dict[str, int] = {}
    for item in filter(None, values.get("gres", "").split(",")):
        parts = item.split(":")
        count = parts[-1].split("(")[0] if len(parts) > 1 else "1"
        if not count.isdigit():
            raise WorkloadError(f"expected NAME[:TYPE]:COUNT, got {shown(item)}", file=source, line=line, field="Gres")
        gres[parts[0]] = gres.get(parts[0], 0) + int(count)
    features = [f for f in values.get("features", values.get("feature", "")).split(",") if f]
    return NodeSet(names, cpus, memory, gres, features, line)


def _sockets_times_cores(values: dict[str, str], line: int, source: str) -> int | None:
    """CPUs from the node's layout when CPUs= is not given: Sockets (else Boards x SocketsPerBoard) x
    CoresPerSocket x ThreadsPerCore, as slurm.conf(5) defaults it."""
    sockets = _count(values, "sockets", line, source) or \
        ((_count(values, "boards", line, source) or 1) * (_count(values, "socketsperboard", line, source) or 0))
    cores = _count(values, "corespersocket", line, source)
    threads = _count(values, "threadspercore", line, source) or 1
    return sockets * cores * threads if sockets and cores else None


def _partition(values: dict[str, str], line: int, source: str, defined: dict[str, int]) -> Partition:
    name = values["partitionname"]
    nodes_text = values.get("nodes", "")
    if nodes_text.upper() == "ALL" or not nodes_text:
        nodes = list(defined)
    else:
        try:
            nodes = expand_hostlist(nodes_text)
        except ValueError as e:
            raise WorkloadError(str(e), file=source, line=line, field="Nodes") from None
        unknown = [n for n in nodes if n not in defined]
        if unknown:
            raise WorkloadError(f"partition {name}: node {unknown[0]} has no NodeName line"
                                + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""),
                                file=source, line=line, field="Nodes")
    partition = Partition(name, nodes, line=line)
    partition.max_time = _time(values, "maxtime", line, source, None)
    partition.default_time = _time(values, "defaulttime", line, source, partition.max_time)
    if partition.max_time is not None and (partition.default_time is None or partition.default_time > partition.max_time):
        partition.default_time = partition.max_time     # slurmctld drops a DefaultTime over MaxTime (read_config.c 777)
    max_nodes = values.get("maxnodes", "UNLIMITED")
    partition.max_nodes = None if max_nodes.upper() in ("UNLIMITED", "INFINITE") else _count(values, "maxnodes", line, source)
    if "priority" in values:         # the older spelling: both factor and tier
        partition.priority_job_factor = partition.priority_tier = _count(values, "priority", line, source) or 0
    if "priorityjobfactor" in values:
        partition.priority_job_factor = _count(values, "priorityjobfactor", line, source) or 0
    if "prioritytier" in values:
        partition.priority_tier = _count(values, "prioritytier", line, source) or 0
    partition.min_nodes = _count(values, "minnodes", line, source) or 0
    partition.allow_qos = [q for q in values.get("allowqos", "ALL").split(",") if q]
    partition.deny_qos = [q for q in values.get("denyqos", "").split(",") if q]
    partition.allow_accounts = [a for a in values.get("allowaccounts", "ALL").split(",") if a]
    partition.deny_accounts = [a for a in values.get("denyaccounts", "").split(",") if a]
    partition.allow_groups = [g for g in values.get("allowgroups", "ALL").split(",") if g]
    partition.qos = values.get("qos", "")
    partition.default = values.get("default", "NO").upper() == "YES"
    partition.state = values.get("state", "UP").upper()
    if "overtimelimit" in values:
        partition.over_time_limit = _over_time(values["overtimelimit"], line, source, "overtimelimit")
    if partition.state not in PARTITION_STATES:
        raise WorkloadError(f"expected one of {', '.join(PARTITION_STATES)}, got {shown(values['state'])}", file=source,
                            line=line, field="State")
    return partition


def _global(conf: SlurmConf, key: str, value: str, line: int, source: str) -> None:
    lower = key.lower()
    if lower.startswith("priorityweight"):
        factor = lower[len("priorityweight"):]
        if factor == "tres":
            conf.tres_weights = _tres(value, line, source, key)
        else:
            conf.weights[factor] = _integer(value, line, source, key)
    elif lower == "prioritytype":
        conf.priority_type = value
    elif lower == "prioritydecayhalflife":
        conf.decay_half_life = _time_value(value, line, source, key)
    elif lower == "prioritymaxage":
        conf.max_age = _time_value(value, line, source, key)
    elif lower == "prioritycalcperiod":
        conf.calc_period = _time_value(value, line, source, key) or 60
    elif lower == "overtimelimit":
        conf.over_time_limit = _over_time(value, line, source, lower)
    elif lower == "priorityfavorsmall":
        conf.favor_small = value.upper() in ("YES", "TRUE", "1")
    elif lower == "priorityflags":
        conf.priority_flags = [f.strip().upper() for f in value.split(",") if f.strip()]
    elif lower == "priorityusageresetperiod":
        conf.usage_reset = (value.strip().upper() or "NONE", line)
    elif lower == "schedulertype":
        conf.scheduler_type = value
    elif lower == "schedulerparameters":
        _scheduler_parameters(conf, value, line, source)
    elif lower == "selecttype":
        conf.select_type = value
    elif lower == "selecttypeparameters":
        conf.select_parameters = [p.strip() for p in value.split(",") if p.strip()]
    elif lower == "clustername":
        conf.cluster = value
    elif lower == "enforcepartlimits":
        if value.strip().lower() not in ENFORCE_PART_LIMITS:
            raise WorkloadError(f"expected NO, ANY or ALL, got {shown(value)}", file=source, line=line, field=key)
        conf.enforce_part_limits = ENFORCE_PART_LIMITS[value.strip().lower()]
    elif lower == "accountingstorageenforce":
        flags: set[str] = set()
        for word in (w.strip().lower() for w in value.split(",") if w.strip()):
            if word not in ENFORCE_WORDS:
                raise WorkloadError(f"unknown AccountingStorageEnforce value {shown(word)} (Slurm's: "
                                    f"{', '.join(w for w in ENFORCE_WORDS if not w.isdigit())})",
                                    file=source, line=line, field=key)
            flags.update(ENFORCE_WORDS[word])
        conf.enforce = frozenset(flags)
    else:
        conf.unmodelled[key] = (line, value)


def _scheduler_parameters(conf: SlurmConf, value: str, line: int, source: str) -> None:
    for item in filter(None, (p.strip() for p in value.split(","))):
        name, sep, setting = item.partition("=")
        name = name.lower()
        default = SCHEDULER_DEFAULTS.get(name)
        if default is None:
            conf.scheduler_unknown[name] = setting
        elif isinstance(default, bool):
            conf.scheduler[name] = True if not sep else setting.lower() not in ("0", "no", "false")
        else:
            conf.scheduler[name] = _integer(setting, line, source, f"SchedulerParameters {name}")


def _tres(value: str, line: int, source: str, key: str) -> dict[str, float]:
    weights = {}
    for item in filter(None, value.split(",")):
        name, sep, number = item.partition("=")
        try:
            weights[name.lower()] = float(number)
        except ValueError:
            raise WorkloadError(f"expected TRES=WEIGHT, got {shown(item)}", file=source, line=line, field=key) from None
    return weights


#: How slurm.conf(5) spells the keys read here (errors name the key as the admin wrote it in the manual).
SPELLING = {k.lower(): k for k in (
    "NodeName", "CPUs", "Procs", "RealMemory", "Boards", "Sockets", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore",
    "Gres", "Features", "PartitionName", "Nodes", "MaxTime", "DefaultTime", "MinNodes", "MaxNodes", "Priority",
    "PriorityJobFactor", "PriorityTier", "OverTimeLimit")}


def _integer(value: str, line: int, source: str, key: str) -> int:
    if not re.fullmatch(r"-?\d{1,15}", value.strip()):
        raise WorkloadError(f"expected a whole number, got {shown(value)}", file=source, line=line,
                            field=SPELLING.get(key, key))
    return int(value)


def _count(values: dict[str, str], key: str, line: int, source: str) -> int | None:
    if key not in values:
        return None
    return _integer(values[key], line, source, key)


def _time_value(value: str, line: int, source: str, key: str) -> int | None:
    try:
        return slurm_time(value)
    except ValueError as e:
        raise WorkloadError(str(e), file=source, line=line, field=SPELLING.get(key, key)) from None


def _over_time(value: str, line: int, source: str, key: str) -> int | None:
    """OverTimeLimit's minutes in seconds; None for UNLIMITED."""
    if value.strip().upper() in ("UNLIMITED", "INFINITE"):
        return None
    return _integer(value, line, source, key) * 60


def _shown_over_time(seconds: int | None) -> str:
    return "UNLIMITED" if seconds is None else f"{seconds // 60} min"


def _time(values: dict[str, str], key: str, line: int, source: str, default: int | None) -> int | None:
    return _time_value(values[key], line, source, key) if key in values else default


# --------------------------------------------------------------------------- sacctmgr dumps


@dataclass
class Qos:
    name: str
    priority: int = 0
    max_wall: int | None = None               # MaxWall: per job
    max_jobs_per_user: int | None = None      # MaxJobsPU
    max_jobs_per_account: int | None = None   # MaxJobsPA: running jobs of one account in the QOS
    max_submit_per_account: int | None = None  # MaxSubmitPA
    max_submit_per_user: int | None = None    # MaxSubmitPU
    max_tres_per_user: dict[str, int] = field(default_factory=dict)   # MaxTRESPU
    max_tres_per_job: dict[str, int] = field(default_factory=dict)    # MaxTRES
    max_tres_per_account: dict[str, int] = field(default_factory=dict)   # MaxTRESPA: running jobs of one account
    max_tres_per_node: dict[str, int] = field(default_factory=dict)   # MaxTRESPerNode: a job's TRES / its nodes
    min_tres_per_job: dict[str, int] = field(default_factory=dict)    # MinTRES
    grp_tres: dict[str, int] = field(default_factory=dict)            # GrpTRES
    grp_jobs: int | None = None
    grp_submit: int | None = None             # GrpSubmit: pending + running jobs of the QOS
    max_tres_mins_per_job: dict[str, int] = field(default_factory=dict)   # MaxTRESMins: TRES x time limit (min)
    grp_tres_run_mins: dict[str, int] = field(default_factory=dict)       # GrpTRESRunMins: running jobs' TRES x time left
    grp_tres_mins: dict[str, int] = field(default_factory=dict)           # GrpTRESMins: decayed usage
    grp_wall: int | None = None               # GrpWall: decayed wall-clock usage
    usage_factor: float = 1.0
    flags: list[str] = field(default_factory=list)
    line: int = 0
    #: columns set on this row that no rule follows (title as sacctmgr prints it -> value)
    unmodelled: dict[str, str] = field(default_factory=dict)


@dataclass
class Association:
    cluster: str
    account: str
    user: str = ""                            # "" = the account's own row
    partition: str = ""
    parent: str = ""
    shares: int = 1                           # Share / Fairshare; "parent" -> -1
    max_jobs: int | None = None
    max_submit: int | None = None
    max_wall: int | None = None
    max_tres_per_job: dict[str, int] = field(default_factory=dict)
    max_tres_per_node: dict[str, int] = field(default_factory=dict)   # MaxTRESPerNode
    grp_tres: dict[str, int] = field(default_factory=dict)
    grp_jobs: int | None = None
    grp_submit: int | None = None             # GrpSubmit: pending + running jobs of the association and below
    max_tres_mins_per_job: dict[str, int] = field(default_factory=dict)   # MaxTRESMins
    grp_tres_run_mins: dict[str, int] = field(default_factory=dict)       # GrpTRESRunMins
    grp_tres_mins: dict[str, int] = field(default_factory=dict)           # GrpTRESMins: decayed usage
    grp_wall: int | None = None               # GrpWall: decayed wall-clock usage
    qos: list[str] = field(default_factory=list)
    default_qos: str = ""
    priority: int | None = None               # Priority: the association factor's (PriorityWeightAssoc)
    line: int = 0
    #: columns set on this row that no rule follows (title as sacctmgr prints it -> value)
    unmodelled: dict[str, str] = field(default_factory=dict)


#: sacctmgr column titles (lower case, as printed by versions 20-23) -> our field names.
_QOS_COLUMNS = {"name": "name", "priority": "priority", "maxwall": "max_wall", "maxjobspu": "max_jobs_per_user",
                "maxjobsperuser": "max_jobs_per_user", "maxsubmitpu": "max_submit_per_user",
                "maxsubmitjobsperuser": "max_submit_per_user", "maxtrespu": "max_tres_per_user",
                "maxtresperuser": "max_tres_per_user", "maxtres": "max_tres_per_job", "maxtresperjob": "max_tres_per_job",
                "grptres": "grp_tres", "grpjobs": "grp_jobs", "usagefactor": "usage_factor", "flags": "flags",
                "maxjobspa": "max_jobs_per_account", "maxjobsperaccount": "max_jobs_per_account",
                "maxsubmitpa": "max_submit_per_account", "maxsubmitjobsperaccount": "max_submit_per_account",
                "grpsubmit": "grp_submit", "grpsubmitjobs": "grp_submit", "maxtresmins": "max_tres_mins_per_job",
                "maxtresminsperjob": "max_tres_mins_per_job", "grptresrunmins": "grp_tres_run_mins",
                "grptresmins": "grp_tres_mins", "grpwall": "grp_wall", "maxtrespa": "max_tres_per_account",
                "maxtresperaccount": "max_tres_per_account", "maxtrespernode": "max_tres_per_node",
                "maxtrespn": "max_tres_per_node", "mintres": "min_tres_per_job", "mintresperjob": "min_tres_per_job"}
_ASSOC_COLUMNS = {"cluster": "cluster", "account": "account", "user": "user", "partition": "partition",
                  "parentname": "parent", "par name": "parent", "share": "shares", "fairshare": "shares",
                  "maxjobs": "max_jobs", "maxsubmit": "max_submit", "maxsubmitjobs": "max_submit",
                  "maxwall": "max_wall", "maxwalldurationperjob": "max_wall", "maxtres": "max_tres_per_job",
                  "grptres": "grp_tres", "grpjobs": "grp_jobs", "qos": "qos", "def qos": "default_qos",
                  "defaultqos": "default_qos", "grpsubmit": "grp_submit", "grpsubmitjobs": "grp_submit",
                  "maxtresmins": "max_tres_mins_per_job", "maxtresminsperjob": "max_tres_mins_per_job",
                  "grptresrunmins": "grp_tres_run_mins", "grptresmins": "grp_tres_mins", "grpwall": "grp_wall",
                  "maxtrespernode": "max_tres_per_node", "maxtrespn": "max_tres_per_node", "priority": "priority"}
#: columns of ``sacctmgr show qos`` / ``show assoc`` that say nothing a rule could follow (ids,
#: descriptions), and the values that are Slurm's defaults: not listed as unmodelled
_INERT_COLUMNS = {"id", "description", "descr", "lft", "rgt", "parentid"}
_DEFAULT_VALUES = {"gracetime": "00:00:00", "preemptmode": "cluster", "preemptexempttime": "", "usagethres": ""}
#: the TRES the limits follow (engine.policies.slurmlimits); others in a limit are listed as not modelled
TRACKED_TRES = ("cpu", "mem", "node", "gres/gpu")
#: the limits written as TRES lists, and sacctmgr's title of each field
TRES_LIMITS = ("max_tres_per_user", "max_tres_per_job", "grp_tres", "max_tres_mins_per_job", "grp_tres_run_mins",
               "grp_tres_mins", "max_tres_per_account", "max_tres_per_node", "min_tres_per_job")
_TITLES = {"max_tres_per_user": "MaxTRESPU", "max_tres_per_job": "MaxTRES", "grp_tres": "GrpTRES",
           "max_tres_mins_per_job": "MaxTRESMins", "grp_tres_run_mins": "GrpTRESRunMins", "grp_tres_mins": "GrpTRESMins",
           "max_wall": "MaxWall", "grp_wall": "GrpWall", "usage_factor": "UsageFactor", "max_tres_per_account": "MaxTRESPA",
           "max_tres_per_node": "MaxTRESPerNode", "min_tres_per_job": "MinTRES"}
#: the TRES MaxTRESPerNode follows (a job's TRES / its nodes; node per node has no reason in Slurm 22.05)
TRACKED_TRES_PER_NODE = ("cpu", "mem", "gres/gpu")
#: the QOS flags the limits follow (sacctmgr's spelling): OverPartQOS puts the job's QOS before its
#: partition's, PartitionTimeLimit and PartitionMaxNodes let its jobs past their partition's MaxTime
#: and MaxNodes (acct_policy_set_qos_order, job_mgr.c _part_access_check), DenyOnLimit has sbatch
#: refuse a job over a QOS or association limit (acct_policy_validate's strict_checking)
QOS_FLAGS_FOLLOWED = ("OverPartQOS", "PartitionTimeLimit", "PartitionMaxNodes", "PartitionMinNodes", "DenyOnLimit")
_FOLLOWED_LOWER = {flag.lower() for flag in QOS_FLAGS_FOLLOWED}


def has_flag(qos: Qos, flag: str) -> bool:
    """Whether the QOS has the flag (sacctmgr prints them in any case)."""
    return any(f.lower() == flag.lower() for f in qos.flags)


#: limits read but not followed, with why (``engine site`` lists them when set), of a QOS and of
#: an association (none now: GrpTRESMins and GrpWall are, engine.policies.slurmlimits keeps the
#: decayed usage per QOS and association, of each TRES followed and of wall-clock time; so is a
#: QOS's UsageFactor, which multiplies its jobs' usage and GrpTRESRunMins seconds)
NOT_FOLLOWED: dict[str, dict[str, str]] = {"QOS": {}, "association": {}}


def _unmodelled(title: str, value: str) -> bool:
    lower = title.lower()
    return bool(value) and lower not in _INERT_COLUMNS and _DEFAULT_VALUES.get(lower) != value


def untracked_tres(site: SlurmSite) -> list[tuple[str, str, str]]:
    """(which QOS or association, limit, ``tres=count``) for each TRES in a QOS or association
    limit that no rule follows (billing, typed gres, licenses...: cpu, mem, node, gres/gpu are)."""
    found = []
    items: list[tuple[str, Any, tuple[str, ...]]] = [
        (f"QOS {q.name}", q, ("max_tres_per_user", "max_tres_per_job", "grp_tres", "max_tres_mins_per_job",
                              "grp_tres_run_mins", "grp_tres_mins", "max_tres_per_account", "max_tres_per_node",
                              "min_tres_per_job"))
        for q in site.qos.values()]
    items += [(f"association {a.account}{'/' + a.user if a.user else ''}", a,
               ("max_tres_per_job", "grp_tres", "max_tres_mins_per_job", "grp_tres_run_mins", "grp_tres_mins",
                "max_tres_per_node"))
              for a in site.associations]
    for who, item, keys in items:
        for key in keys:
            tracked = TRACKED_TRES_PER_NODE if key == "max_tres_per_node" else TRACKED_TRES
            for tres, count in getattr(item, key).items():
                if tres not in tracked:
                    found.append((who, _TITLES[key], f"{tres}={count}"))
    return found


def not_followed(site: SlurmSite) -> list[str]:
    """The limits set in the dumps that are read but no rule follows, each with why (:data:`NOT_FOLLOWED`)."""
    found = []
    items: list[tuple[str, Any]] = [(f"QOS {q.name}", q) for q in site.qos.values()]
    items += [(f"association {a.account}{'/' + a.user if a.user else ''}", a) for a in site.associations]
    for who, item in items:
        for key, why in NOT_FOLLOWED[who.split()[0]].items():
            value = getattr(item, key)
            if value in (None, {}):
                continue
            text = (shown_time(value) if key == "grp_wall" else ",".join(f"{k}={v}" for k, v in value.items())
                    if isinstance(value, dict) else f"{value:g}")
            found.append(f"{who} {_TITLES[key]}={text} (not followed: {why})")
    return found


def read_qos(path: str | Path, *, name: str | None = None) -> dict[str, Qos]:
    """``sacctmgr -P show qos`` (any format= columns; Name is needed)."""
    source = name or str(path)
    rows, unknown = _table(path, source, _QOS_COLUMNS, required=("name",))
    result: dict[str, Qos] = {}
    for line, row in rows:
        qos = Qos(row["name"], line=line)
        for key, text in row.items():
            if key.startswith(_RAW):
                if _unmodelled(key[len(_RAW):], text):
                    qos.unmodelled[key[len(_RAW):]] = text
                continue
            _set_limit(qos, key, text, line, source)
        result[qos.name] = qos
    return result


def read_associations(path: str | Path, *, name: str | None = None) -> list[Association]:
    """``sacctmgr -P show assoc`` (any format= columns; Account is needed)."""
    source = name or str(path)
    rows, unknown = _table(path, source, _ASSOC_COLUMNS, required=("account",))
    result = []
    for line, row in rows:
        assoc = Association(row.get("cluster", ""), row["account"], line=line)
        for key, text in row.items():
            if key.startswith(_RAW):
                if _unmodelled(key[len(_RAW):], text):
                    assoc.unmodelled[key[len(_RAW):]] = text
                continue
            if key == "shares":
                assoc.shares = -1 if text.lower() == "parent" else _limit_integer(text, line, source, key) or 1
            else:
                _set_limit(assoc, key, text, line, source)
        result.append(assoc)
    return result


#: prefix of a row's cells under columns no field takes (the title as printed follows it)
_RAW = "raw:"


def _table(path: str | Path, source: str, columns: dict[str, str], *, required: tuple[str, ...]):
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise WorkloadError(f"cannot read: {e.strerror or e}", file=source) from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise WorkloadError("empty: expected the output of sacctmgr -P show ...", file=source)
    header_line, header = lines[0]
    raw_titles = [t.strip() for t in header.rstrip("|").split("|")]
    titles = [t.lower() for t in raw_titles]
    if len(titles) < 2:
        raise WorkloadError("expected a header of |-separated column names (sacctmgr -P)", file=source,
                            line=header_line)
    names = [columns.get(t) for t in titles]
    for need in required:
        if need not in names:
            raise WorkloadError(f"no {need.title()} column (the header names {', '.join(titles)})", file=source,
                                line=header_line)
    unknown = sorted(t for t, n in zip(titles, names) if n is None)
    rows = []
    for number, text in lines[1:]:
        cells = text.rstrip("|").split("|") if header.endswith("|") else text.split("|")
        if len(cells) != len(titles):
            raise WorkloadError(f"{len(cells)} fields where the header has {len(titles)}", file=source, line=number)
        row = {n: c.strip() for n, c in zip(names, cells) if n is not None}
        row.update({_RAW + t: c.strip() for t, n, c in zip(raw_titles, names, cells) if n is None})
        rows.append((number, row))
    return rows, unknown


def _set_limit(target: Any, key: str, text: str, line: int, source: str) -> None:
    if key in ("name", "cluster", "account", "user", "partition", "parent", "default_qos"):
        setattr(target, key, text)
    elif key in ("qos", "flags"):
        setattr(target, key, [t for t in text.split(",") if t])
    elif key == "usage_factor":
        try:
            setattr(target, key, float(text) if text else 1.0)
        except ValueError:
            raise WorkloadError(f"expected a number, got {shown(text)}", file=source, line=line, field="UsageFactor") from None
    elif key in ("max_wall", "grp_wall"):
        try:
            setattr(target, key, slurm_time(text) if text else None)
        except ValueError as e:
            raise WorkloadError(str(e), file=source, line=line, field=_TITLES[key]) from None
    elif key in TRES_LIMITS:
        setattr(target, key, tres_counts(text, line, source, _TITLES[key]))
    else:
        setattr(target, key, _limit_integer(text, line, source, key))


def _limit_integer(text: str, line: int, source: str, key: str) -> int | None:
    if not text:
        return None
    return _integer(text, line, source, key)


_MB_PER = {"": 1, "M": 1, "G": 1024, "T": 1024 ** 2, "P": 1024 ** 3}


def tres_counts(text: str, line: int = 0, source: str = "", key: str = "TRES") -> dict[str, int]:
    """``cpu=100,mem=10G,node=2,gres/gpu=4`` -> counts (mem in MB)."""
    counts = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        match = re.fullmatch(r"(\d{1,15})([KMGTP]?)", value.strip(), re.IGNORECASE)
        if not match:
            raise WorkloadError(f"expected NAME=COUNT, got {shown(item)}", file=source, line=line or None, field=key)
        number, unit = int(match.group(1)), match.group(2).upper()
        if name.lower() == "mem":     # in MB, as sacctmgr prints it without a unit
            number = -(-number // 1024) if unit == "K" else number * _MB_PER[unit]
        counts[name.lower()] = number
    return counts


# --------------------------------------------------------------------------- what was understood


@dataclass
class SlurmSite:
    conf: SlurmConf
    qos: dict[str, Qos] = field(default_factory=dict)
    associations: list[Association] = field(default_factory=list)


def read_slurm_site(conf: str | Path, *, qos: str | Path | None = None, assoc: str | Path | None = None) -> SlurmSite:
    site = SlurmSite(read_slurm_conf(conf))
    if qos is not None:
        site.qos = read_qos(qos)
    if assoc is not None:
        site.associations = read_associations(assoc)
    check_slurm_site(site)
    return site


def check_slurm_site(site: SlurmSite) -> None:
    """Every QOS a partition names is in the QOS dump (when one is given)."""
    for partition in site.conf.partitions.values():
        for name in ([partition.qos] if partition.qos else []) + [q for q in partition.allow_qos if q != "ALL"]:
            if site.qos and name not in site.qos:
                raise WorkloadError(f"partition {partition.name} names QOS {name}, which the QOS dump does not have",
                                    file=site.conf.source, line=partition.line, field="QOS")


def describe_site(site: SlurmSite, *, with_keys: bool = True) -> list[str]:
    """What SchedLab understood, as lines for a person (``python -m engine site``); the last line lists the
    keys read but not used (:func:`unmodelled_keys`, :func:`unfollowed_keys`), left out without ``with_keys``."""
    conf = site.conf
    lines = [f"{conf.source}: cluster {conf.cluster or '(unnamed)'}, {sum(len(n.names) for n in conf.nodes):,} nodes, "
             f"{conf.total_cpus:,} CPUs"]
    for nodes in conf.nodes:
        extra = "".join(f", {n} {c}/node" for n, c in nodes.gres.items())
        lines.append(f"  nodes {_few(nodes.names)}: {nodes.cpus} CPUs, {nodes.real_memory_mb:,} MB{extra}"
                     + (f", features {','.join(nodes.features)}" if nodes.features else ""))
    lines.append("partitions (by PriorityTier, then PriorityJobFactor):")
    for p in sorted(conf.partitions.values(), key=lambda p: (-p.priority_tier, -p.priority_job_factor, p.name)):
        lines.append(f"  {p.name}{' (default)' if p.default else ''}: {len(p.nodes)} nodes, MaxTime {shown_time(p.max_time)}, "
                     f"DefaultTime {shown_time(p.default_time)}, MaxNodes {p.max_nodes or 'UNLIMITED'}, "
                     f"tier {p.priority_tier}, factor {p.priority_job_factor}"
                     + (f", MinNodes {p.min_nodes}" if p.min_nodes > 1 else "")
                     + (f", QOS {p.qos}" if p.qos else "") + _access_shown(p)
                     + ("" if p.state == "UP" else f", state {p.state}")
                     + ("" if p.over_time_limit == -1 else f", OverTimeLimit {_shown_over_time(p.over_time_limit)}"))
    lines.append("partition limits and access lists (EnforcePartLimits "
                 + ("NO): a job over MaxTime, MinNodes or MaxNodes, or of an account or QOS the partition does "
                    "not allow, pends for ever (PartitionTimeLimit, PartitionNodeLimit, AccountNotAllowed, QOSNotAllowed)"
                    if conf.enforce_part_limits == "NO" else
                    f"{conf.enforce_part_limits}): sbatch refuses a job over MaxTime, MinNodes or MaxNodes, or of an "
                    "account or QOS the partition does not allow"))
    lines.append(f"time limits: a job past its limit is killed at slurmctld's next time-limit check (every 30 s) once "
                 f"OverTimeLimit ({_shown_over_time(conf.over_time_limit)}) has passed too")
    lines.append(f"priority: {conf.priority_type}, weights "
                 + (", ".join(f"{k} {v:,}" for k, v in sorted(conf.weights.items())) or "none")
                 + (f", TRES {conf.tres_weights}" if conf.tres_weights else "")
                 + f"; half-life {shown_time(conf.decay_half_life)}, max age {shown_time(conf.max_age)}, "
                 f"recalculated every {shown_time(conf.calc_period)}; favor small {'yes' if conf.favor_small else 'no'}; "
                 f"fair-share {'Fair Tree' if conf.fair_tree else 'classic'}"
                 + (f"; flags {','.join(conf.priority_flags)}" if conf.priority_flags else "")
                 + (f"; usage reset {conf.usage_reset[0]} (UTC, from the trace's dates)"
                    if conf.usage_reset[0] in USAGE_RESET_PERIODS else ""))
    params = ", ".join(f"{k}={v}" for k, v in conf.scheduler.items() if v != SCHEDULER_DEFAULTS.get(k))
    lines.append(f"scheduler: {conf.scheduler_type} ({params or 'defaults'}); {conf.select_type} "
                 f"{','.join(conf.select_parameters) or ''}; memory {'is' if conf.memory_consumable else 'is not'} consumable")
    enforced = ",".join(sorted(conf.enforce)) or "not set"
    lines.append(f"limits: AccountingStorageEnforce {enforced}: association and QOS limits "
                 + ("enforced, each where the hierarchy first sets it (partition QOS, job QOS — the other way "
                    "round with OverPartQOS —, the user's association, its accounts up to root), partition "
                    "MaxTime/MaxNodes besides" if conf.enforce_limits else
                    "NOT enforced (without limits, safe or all Slurm checks none; partition MaxTime/MaxNodes are)")
                 + ("; safe: a job starts only if it can run to its time limit within GrpTRESMins and GrpWall"
                    if "safe" in conf.enforce else "")
                 + ("; a job of a user without an association under its account is refused"
                    if "associations" in conf.enforce and site.associations else ""))
    for qos in site.qos.values():
        limits = _limits(qos, ("max_wall", "max_jobs_per_user", "max_submit_per_user", "max_jobs_per_account",
                               "max_submit_per_account", "max_tres_per_user", "max_tres_per_job", "grp_tres",
                               "grp_jobs", "grp_submit", "max_tres_mins_per_job", "grp_tres_run_mins",
                               "grp_tres_mins", "grp_wall", "max_tres_per_account", "max_tres_per_node",
                               "min_tres_per_job"))
        lines.append(f"  QOS {qos.name}: priority {qos.priority}" + (f", {limits}" if limits else "")
                     + (f", usage factor {qos.usage_factor:g}" if qos.usage_factor != 1.0 else "")
                     + (f", flags {','.join(qos.flags)}" if qos.flags else ""))
    for assoc in site.associations:
        who = f"{assoc.account}/{assoc.user}" if assoc.user else assoc.account
        limits = _limits(assoc, ("max_jobs", "max_submit", "max_wall", "max_tres_per_job", "grp_tres", "grp_jobs",
                                 "grp_submit", "max_tres_mins_per_job", "grp_tres_run_mins", "grp_tres_mins",
                                 "grp_wall", "max_tres_per_node"))
        lines.append(f"  association {who}{'@' + assoc.partition if assoc.partition else ''}: "
                     f"shares {'parent' if assoc.shares < 0 else assoc.shares}"
                     + (f", priority {assoc.priority}" if assoc.priority is not None else "") + (f", {limits}" if limits else "")
                     + (f", QOS {','.join(assoc.qos)}" if assoc.qos else ""))
    if with_keys:
        unknown = unmodelled_keys(site) + unfollowed_keys(site)
        lines.append("not modelled (read, not used): " + (", ".join(unknown) if unknown else "nothing"))
    return lines


def _access_shown(p: Partition) -> str:
    """A partition's access lists as its PartitionName line sets them (only those not ALL / empty)."""
    lists = [("AllowQOS", p.allow_qos, ["ALL"]), ("DenyQOS", p.deny_qos, []), ("AllowAccounts", p.allow_accounts, ["ALL"]),
             ("DenyAccounts", p.deny_accounts, []), ("AllowGroups", p.allow_groups, ["ALL"])]
    return "".join(f", {key} {','.join(values)}" for key, values, default in lists if values != default)


def unmodelled_keys(site: SlurmSite) -> list[str]:
    """The keys set in the files that SchedLab has no model of (read, not used), each naming its line."""
    conf = site.conf
    unknown = [f"{k} (line {line})" for k, (line, _) in conf.unmodelled.items()]
    unknown += [f"SchedulerParameters {k}" + (f" (no effect here: {SCHEDULER_NO_EFFECT[k]})" if k in SCHEDULER_NO_EFFECT else "")
                for k in conf.scheduler_unknown]
    unknown += [f"QOS {q.name} {k}={v} (qos line {q.line})" for q in site.qos.values() for k, v in q.unmodelled.items()]
    unknown += [f"association {a.account}{'/' + a.user if a.user else ''} {k}={v} (assoc line {a.line})"
                for a in site.associations for k, v in a.unmodelled.items()]
    return unknown


def unfollowed_keys(site: SlurmSite) -> list[str]:
    """The scheduling settings that are read and understood but that no rule here follows, each with why
    (bf_continue, a TRES other than cpu/mem/node/gpu, a QOS flag, an
    AccountingStorageEnforce flag): the replay differs from the site's Slurm wherever they matter."""
    conf = site.conf
    unknown = [f"SchedulerParameters {key}={conf.scheduler[key]} (not followed: {why})"
               for key, why in SCHEDULER_NOT_FOLLOWED.items() if conf.scheduler.get(key) != SCHEDULER_DEFAULTS[key]]
    if conf.scheduler.get("bf_continue"):
        unknown.append("SchedulerParameters bf_continue (no effect: Slurm 22.05 reads it only after a backfill pass "
                       "has yielded its locks, every bf_yield_interval of the pass's own run time, to go on rather "
                       "than stop when jobs or nodes changed meanwhile (backfill.c _yield_locks); a pass here takes "
                       "no simulated time, so it never yields)")
    unknown += [f"{what} {key} {value} (of TRES only cpu, mem, node, gres/gpu are followed; of "
                "MaxTRESPerNode cpu, mem, gres/gpu)"
                for what, key, value in untracked_tres(site)]
    unknown += not_followed(site)
    if conf.usage_reset[0] not in (*USAGE_RESET_PERIODS, "NONE", "NOW"):
        unknown.append(f"PriorityUsageResetPeriod {conf.usage_reset[0]} (line {conf.usage_reset[1]}; not followed: "
                       f"not one of NONE, NOW, {', '.join(USAGE_RESET_PERIODS)})")
    unknown += [f"QOS {q.name} Flags {flag} (not followed: of the flags only {', '.join(QOS_FLAGS_FOLLOWED)} are)"
                for q in site.qos.values() for flag in q.flags if flag.lower() not in _FOLLOWED_LOWER]
    unknown += [f"AccountingStorageEnforce {flag} (not followed: {why})" for flag, why in ENFORCE_NOT_FOLLOWED.items()
                if flag in conf.enforce]
    unknown += [f"PriorityWeightTRES {tres}={weight:g} (not followed: of TRES only {', '.join(PRIORITY_TRES)} are weighed)"
                for tres, weight in conf.tres_weights.items() if tres not in PRIORITY_TRES and weight]
    unknown += [f"PriorityFlags {flag} (not followed: "
                + PRIORITY_FLAGS_NOT_FOLLOWED.get(flag, "not a flag Slurm 22.05 documents") + ")"
                for flag in conf.priority_flags if flag not in PRIORITY_FLAGS_FOLLOWED]
    unknown += [f"PartitionName={p.name} AllowGroups={','.join(p.allow_groups)} (line {p.line}; not followed: Slurm "
                "checks every group of the job's user, and sacct gives only the job's own)"
                for p in conf.partitions.values() if p.allow_groups != ["ALL"]]
    return unknown


def _few(names: list[str]) -> str:
    return ",".join(names) if len(names) <= 4 else f"{names[0]}..{names[-1]} ({len(names):,})"


def _limits(item: Any, keys: tuple[str, ...]) -> str:
    parts = []
    for key in keys:
        value = getattr(item, key)
        if value in (None, {}, []):
            continue
        text = shown_time(value) if key in ("max_wall", "grp_wall") else (",".join(f"{k}={v}" for k, v in value.items())
                                                            if isinstance(value, dict) else str(value))
        parts.append(f"{key} {text}")
    return ", ".join(parts)
