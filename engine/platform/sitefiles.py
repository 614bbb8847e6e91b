"""A Slurm or PBS site's configuration files as texts: read them (each problem one line naming the file,
line and key), list the keys admins change most and write a change into a copy of the texts, leaving
every other line as the site wrote it (issue 24 §4: the preview's proposal is an edited copy).

Slurm: ``slurm.conf``, ``qos`` (``sacctmgr -P show qos``), ``assoc`` (``sacctmgr -P show assoc``).
PBS: ``print server`` (``qmgr -c 'print server'``), ``sched_config``, ``resource_group``.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.platform.pbsconf import (
    PbsQueue,
    PbsServer,
    describe_pbs_site,
    pbs_unfollowed_keys,
    pbs_unmodelled_keys,
    read_print_server,
    read_resource_group,
    read_sched_config,
)
from engine.platform.slurmconf import (
    SCHEDULER_DEFAULTS,
    SlurmSite,
    check_slurm_site,
    describe_site,
    parse_slurm_conf,
    read_associations,
    read_qos,
    shown_time,
    unfollowed_keys,
    unmodelled_keys,
)
from engine.workload.errors import WorkloadError

SLURM, PBS = "slurm", "pbs"
#: the files of a site of each kind, the first required
FILES = {SLURM: ("slurm.conf", "qos", "assoc"), PBS: ("print server", "sched_config", "resource_group")}
#: slurm.conf's priority weights and the SchedulerParameters the form offers
WEIGHTS = ("PriorityWeightAge", "PriorityWeightFairshare", "PriorityWeightJobSize", "PriorityWeightPartition",
           "PriorityWeightQOS")
SCHEDULER = ("bf_interval", "bf_max_job_test", "bf_window", "bf_resolution", "bf_max_job_user", "bf_max_job_part",
             "bf_continue", "default_queue_depth", "sched_interval")
#: QOS limits the form offers: sacctmgr's column -> the Qos attribute
QOS_LIMITS = {"MaxJobsPU": "max_jobs_per_user", "MaxSubmitPU": "max_submit_per_user", "GrpSubmit": "grp_submit",
              "MaxWall": "max_wall"}
PBS_QUEUE = ("resources_max.walltime", "max_run", "max_run_res.ncpus", "max_queued", "priority")
PBS_SCHED = ("fair_share", "strict_ordering", "round_robin", "by_queue", "help_starving_jobs", "max_starve")
#: the form's keys a preview may sweep: those that take a number, a time or a limit (not yes/no)
SWEEPABLE = frozenset(("MaxTime", *QOS_LIMITS, *WEIGHTS, *(name for name in SCHEDULER if name != "bf_continue"),
                       *PBS_QUEUE, "backfill_depth", "max_starve"))


@dataclass(frozen=True)
class Key:
    """One value the form edits: the file, the scope (a partition, QOS or queue; "" = the file's own),
    the key and its value now as the file writes it ("" = not set)."""

    file: str
    scope: str
    key: str
    value: str

    @property
    def label(self) -> str:
        return f"{self.scope} {self.key}" if self.scope else self.key


def site_from_texts(kind: str, texts: dict[str, str]) -> SlurmSite | PbsServer:
    """The site the texts describe (missing or empty optional files are left out)."""
    if kind not in FILES:
        raise WorkloadError(f"a site is slurm or pbs, not {kind!r}")
    first = FILES[kind][0]
    if not texts.get(first, "").strip():
        raise WorkloadError(f"the {first} file is needed", file=first)
    with tempfile.TemporaryDirectory(prefix="schedlab-site-") as folder:
        paths = {}
        for index, name in enumerate(FILES[kind]):
            if texts.get(name, "").strip():
                paths[name] = Path(folder) / f"{index}.txt"
                paths[name].write_text(texts[name], encoding="utf-8")
        if kind == SLURM:
            site = SlurmSite(parse_slurm_conf(texts[first], first))
            if "qos" in paths:
                site.qos = read_qos(paths["qos"], name="qos")
            if "assoc" in paths:
                site.associations = read_associations(paths["assoc"], name="assoc")
            check_slurm_site(site)
            return site
        server = read_print_server(paths[first], name=first)
        if "sched_config" in paths:
            read_sched_config(server, paths["sched_config"], name="sched_config")
        if "resource_group" in paths:
            read_resource_group(server, paths["resource_group"], name="resource_group")
        return server


@dataclass(frozen=True)
class SiteReading:
    """What SchedLab understood of a site's files, as ``python -m engine site`` prints it, in parts: the
    description's lines (nodes, partitions or queues, priority, scheduler, limits, QOS, associations;
    a line indented by two spaces belongs to the one above), whether QOS and association limits hold
    (Slurm's AccountingStorageEnforce without limits/safe/all: none does, as in Slurm; PBS: always),
    the settings read and understood that no rule follows, and the keys outside the model."""

    lines: list[str]
    limits_enforced: bool
    unfollowed: list[str]
    unmodelled: list[str]


def site_reading(site: SlurmSite | PbsServer) -> SiteReading:
    """The :class:`SiteReading` of a site (the same lists ``describe_site`` / ``describe_pbs_site`` print)."""
    if isinstance(site, SlurmSite):
        return SiteReading(describe_site(site, with_keys=False), site.conf.enforce_limits, unfollowed_keys(site),
                           unmodelled_keys(site))
    return SiteReading(describe_pbs_site(site, with_keys=False), True, pbs_unfollowed_keys(site),
                       pbs_unmodelled_keys(site))


def common_keys(site: SlurmSite | PbsServer) -> list[Key]:
    """The keys the preview's form offers, with the site's values."""
    if isinstance(site, SlurmSite):
        conf = site.conf
        keys = [Key("slurm.conf", name, "MaxTime", shown_time(p.max_time)) for name, p in conf.partitions.items()]
        keys += [Key("qos", name, column, _qos_value(q, attribute))
                 for name, q in site.qos.items() for column, attribute in QOS_LIMITS.items()]
        keys += [Key("slurm.conf", "", w, str(conf.weights.get(w[len("PriorityWeight"):].lower(), 0))) for w in WEIGHTS]
        for name in SCHEDULER:
            value = conf.scheduler.get(name, SCHEDULER_DEFAULTS.get(name))
            keys.append(Key("slurm.conf", "", name, ("yes" if value else "no") if isinstance(value, bool) else str(value)))
        return keys
    keys = []
    for queue in site.queues.values():
        if queue.is_route:
            continue
        keys += [Key("print server", queue.name, "resources_max.walltime", queue.resources_max.get("walltime", "")),
                 Key("print server", queue.name, "max_run", queue.max_run.text()),
                 Key("print server", queue.name, "max_run_res.ncpus", _ncpus_limit(queue)),
                 Key("print server", queue.name, "max_queued", queue.max_queued.text()),
                 Key("print server", queue.name, "priority", str(queue.priority))]
    keys += [Key("print server", "", "max_run", site.max_run.text()),         # the server's, beside backfill_depth
             Key("print server", "", "max_run_res.ncpus", _ncpus_limit(site))]
    keys.append(Key("print server", "", "backfill_depth", "" if site.backfill_depth is None else str(site.backfill_depth)))
    keys.append(Key("print server", "", "eligible_time_enable",
                    "" if site.eligible_time_enable is None else str(site.eligible_time_enable)))
    keys += [Key("sched_config", "", name, site.sched.get(name, "")) for name in PBS_SCHED]
    return keys


def _ncpus_limit(target: PbsQueue | PbsServer) -> str:
    """A queue's or the server's max_run_res.ncpus as a set line writes it ("" = not set)."""
    limits = target.max_run_res.get("ncpus")
    return limits.text() if limits is not None else ""


def sweepable_keys(site: SlurmSite | PbsServer) -> list[Key]:
    """The common keys a sweep may take values of (SWEEPABLE), in the form's order."""
    return [key for key in common_keys(site) if key.key in SWEEPABLE]


def sweep_key(site: SlurmSite | PbsServer, label: str) -> Key:
    """The sweepable key labelled ``label`` (``bf_max_job_test``, ``long MaxTime``, ``workq max_run``),
    or WorkloadError naming those there are."""
    keys = sweepable_keys(site)
    for key in keys:
        if key.label.lower() == label.strip().lower():
            return key
    raise WorkloadError(f"no key {label.strip()!r} to sweep; the site's are: {', '.join(k.label for k in keys)}",
                        field="sweep")


def split_values(text: str) -> list[str]:
    """ "1-00:00:00, 2-00:00:00" -> the values as the file writes them; commas inside [...] (a PBS
    limit's ``[u:PBS_GENERIC=2],[o:PBS_ALL=10]``) or quotes stay in their value; repeats dropped."""
    values: list[str] = []
    part, depth, quoted = "", 0, False
    for char in text + ",":
        if char == '"':
            quoted = not quoted
        elif char == "[" and not quoted:
            depth += 1
        elif char == "]" and not quoted:
            depth = max(depth - 1, 0)
        if char in ",;\n" and depth == 0 and not quoted:
            if part.strip() and part.strip() not in values:
                values.append(part.strip())
            part = ""
        else:
            part += char
    return values


def _qos_value(qos: object, attribute: str) -> str:
    value = getattr(qos, attribute)
    if value is None:
        return ""
    return shown_time(value) if attribute == "max_wall" else str(value)


def with_change(texts: dict[str, str], key: Key, value: str) -> dict[str, str]:
    """A copy of ``texts`` with ``key`` set to ``value`` ("" = removed, the default applies)."""
    value = value.strip()
    changed = dict(texts)
    text = texts.get(key.file, "")
    if key.file == "slurm.conf":
        if key.scope:
            changed[key.file] = _set_partition(text, key.scope, key.key, value)
        elif key.key in SCHEDULER_DEFAULTS:
            changed[key.file] = _set_scheduler_parameter(text, key.key, value)
        else:
            changed[key.file] = _set_line(text, key.key, value)
    elif key.file in ("qos", "assoc"):
        changed[key.file] = _set_cell(text, key.file, key.scope, key.key, value)
    elif key.file == "print server":
        changed[key.file] = _set_qmgr(text, key.scope, key.key, value)
    elif key.file == "sched_config":
        changed[key.file] = _set_sched(text, key.key, value)
    else:
        raise WorkloadError(f"no such file {key.file!r}")
    return changed


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _joined(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _set_token(line: str, key: str, value: str) -> str | None:
    """``line`` with its ``key=...`` token set (None when the line has no such token)."""
    pattern = re.compile(rf'(?i)(^|\s){re.escape(key)}=("[^"]*"|\S*)')
    if not pattern.search(line):
        return None
    if not value:
        return pattern.sub("", line, count=1)
    return pattern.sub(lambda m: f"{m.group(1)}{key}={value}", line, count=1)


def _set_partition(text: str, partition: str, key: str, value: str) -> str:
    lines = _lines(text)
    for i, line in enumerate(lines):
        body = line.split("#", 1)[0]
        if re.match(rf"(?i)\s*PartitionName={re.escape(partition)}(\s|$)", body):
            changed = _set_token(body, key, value)
            lines[i] = (changed if changed is not None else f"{body.rstrip()} {key}={value}" if value else body).rstrip()
            return _joined(lines)
    raise WorkloadError(f"no PartitionName={partition} line", file="slurm.conf", field=key)


def _set_line(text: str, key: str, value: str) -> str:
    lines = _lines(text)
    for i, line in enumerate(lines):
        if re.match(rf"(?i)\s*{re.escape(key)}=", line):
            if value:
                lines[i] = f"{key}={value}"
            else:
                del lines[i]
            return _joined(lines)
    return _joined(lines + ([f"{key}={value}"] if value else []))


def _set_scheduler_parameter(text: str, key: str, value: str) -> str:
    lines = _lines(text)
    boolean = isinstance(SCHEDULER_DEFAULTS.get(key), bool)
    item = "" if not value or (boolean and value.lower() in ("no", "false", "0")) else key if boolean else f"{key}={value}"
    for i, line in enumerate(lines):
        match = re.match(r"(?i)\s*SchedulerParameters=(\S*)", line)
        if match:
            items = [p for p in match.group(1).split(",") if p and p.split("=")[0].lower() != key.lower()]
            old = [p for p in match.group(1).split(",") if p.split("=")[0].lower() == key.lower()]
            at = match.group(1).split(",").index(old[0]) if old else len(items)
            if item:
                items.insert(at, item)
            lines[i] = f"SchedulerParameters={','.join(items)}"
            return _joined(lines)
    return _joined(lines + ([f"SchedulerParameters={item}"] if item else []))


def _set_cell(text: str, file: str, name: str, column: str, value: str) -> str:
    lines = _lines(text)
    header = next((i for i, line in enumerate(lines) if line.strip()), None)
    if header is None:
        raise WorkloadError("the file is empty", file=file)
    columns = [c.strip().lower() for c in lines[header].split("|")]
    if column.lower() not in columns or "name" not in columns and "account" not in columns:
        raise WorkloadError(f"no {column} column", file=file, line=header + 1, field=column)
    at, key = columns.index(column.lower()), columns.index("name") if "name" in columns else columns.index("account")
    for i in range(header + 1, len(lines)):
        cells = lines[i].split("|")
        if len(cells) > max(at, key) and cells[key].strip() == name:
            cells[at] = value
            lines[i] = "|".join(cells)
            return _joined(lines)
    raise WorkloadError(f"no row named {name}", file=file, field=column)


def _set_qmgr(text: str, queue: str, attribute: str, value: str) -> str:
    """``set queue|server ... ATTR = value`` in place of its ``=`` line; its ``+=`` / ``-=`` lines go (print
    server writes a limit of several entries as ``= [u:PBS_GENERIC=10]`` then ``+= [u:alice=5]``; the
    form's value is the whole limit)."""
    lines = _lines(text)
    target = f"queue {queue}" if queue else "server"
    head = rf"\s*set\s+{re.escape(target)}\s+{re.escape(attribute)}\s*"
    pattern, adding = re.compile(head + "="), re.compile(head + "[+-]=")
    lines = [line for line in lines if not adding.match(line)]
    last = None
    for i, line in enumerate(lines):
        if pattern.match(line):
            if value:
                lines[i] = f"set {target} {attribute} = {value}"
            else:
                del lines[i]
            return _joined(lines)
        if re.match(rf"\s*(create|set)\s+{re.escape(target)}(\s|$)", line):
            last = i
    if value:
        lines.insert(len(lines) if last is None else last + 1, f"set {target} {attribute} = {value}")
    return _joined(lines)


def _set_sched(text: str, key: str, value: str) -> str:
    """Every ``key:`` line (by_queue has one for prime and one for non-prime time) becomes one for ALL."""
    lines = _lines(text)
    found = [i for i, line in enumerate(lines) if re.match(rf"\s*{re.escape(key)}\s*:", line)]
    new = [f"{key}: {value}\tALL"] if value else []
    if not found:
        return _joined(lines + new)
    lines[found[0]:found[0] + 1] = new
    return _joined([line for i, line in enumerate(lines) if i not in found[1:]] if new else
                   [line for i, line in enumerate(lines) if i + 1 not in found[1:]])
