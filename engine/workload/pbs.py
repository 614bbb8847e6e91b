"""PBS Professional / OpenPBS / Torque accounting logs as traces.

One record per line, ``MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value key=value ...``, the date in the
server's local time, the times inside (``ctime``, ``qtime``, ``etime``, ``start``, ``end``) Unix
epochs. Values holding spaces are quoted with ``"`` (or ``'`` when they hold a ``"``). Lines
starting with ``;`` are comments (the header SchedLab's samples carry).

Records used, per job (the job id before the first ``.``: ``123``, ``123[4]`` for an array sub-job;
the ``123[]`` array parent is not a job and is skipped, counted):

* ``Q`` queued, ``S`` started (a job may start several times; the last start counts), ``E`` ended
  (carries everything), ``R`` rerun (the run before is discarded, counted), ``D`` deleted and ``A``
  aborted (a job deleted or aborted before any start is left out, counted), ``T`` restarted from a
  checkpoint (like S). Other types (``L`` licenses, ``B``/``F``/``K``/``k``/``U``/``Y`` reservations,
  ``M`` moved, ``C`` checkpoint, ``a`` alter, ``s``/``z``/``r``/``u``/``c``/``e`` updates, ``P``/``p``
  provisioning) are read past.
* Submit: ``ctime`` (creation; ``qtime`` is reset when a routing queue moves the job, so it would hide
  part of the wait), else ``qtime``, else the Q record's date.
* Start: the ``start=`` of the E record, else of the last S record, else that record's date.
  Runtime: ``end - start`` (what the job held its hosts for), else ``resources_used.walltime``
  (counted). A job that started but has no E record (still running when the log ends) is left out.
* Request: ``Resource_List.ncpus``, else the ``select`` chunks (``2:ncpus=1:mem=300mb+1:ncpus=8``),
  else Torque's ``nodes=2:ppn=4``, else ``nodect``, else the hosts in ``exec_host``, else 1
  (counted). ``walltime``, ``mem`` (total; per node below), ``ngpus``, ``place=...excl...``.
* Node shape: Torque's ``nodes`` and ``place=scatter``/``excl`` selects are whole chunks per node
  (nodes = chunks, ppn = the largest chunk's ncpus; unequal chunks counted); ``place=pack`` is one
  node; ``place=free`` (PBS's default) lets chunks share nodes, so the job is cores anywhere
  (nodes 0).
* Hosts it ran on: ``exec_host`` (``h1/0+h1/1``, Torque ``h1/0-3``, PBS ``h1/0*2``), else
  ``exec_vnode`` (``(h1:ncpus=1)+(h2[0]:ncpus=2)``).
* The log's time zone: the offset between a record's local date and the epoch it carries, rounded
  to a quarter hour; kept in the metadata (``TimeZone`` in seconds, ``TimeZoneString``).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.workload.accounting import (
    STATUS_CANCELLED,
    STATUS_COMPLETED,
    STATUS_FAILED,
    Jobs,
    offset_label,
    parse_duration,
    parse_size_kb,
    to_workload,
)
from engine.workload.errors import WorkloadError, shown
from engine.workload.model import CleaningReport, Workload
from engine.workload.numbers import MAX_COUNT, MAX_MAGNITUDE, whole_number
from engine.workload.swf import _inspect, _open_text
from engine.workload.transforms import Overrun, Oversize

JOB_TYPES = frozenset("QSERDAT")
MAX_KEPT_ERRORS = 1000

REJECT_DELETED = "deleted before it started (PBS D record)"
REJECT_ABORTED = "aborted before it started (PBS A record)"
REJECT_NEVER_STARTED = "never started in the log (no S record)"
REJECT_NO_END = "no end record (running when the log ends)"
KEPT_ARRAY_PARENT = "job array parent records (its sub-jobs are the jobs)"
KEPT_RERUN = "rerun: the run before the last start discarded (PBS R record)"
REPAIR_RUNTIME_USED = "runtime from resources_used.walltime (no start/end times)"
REPAIR_PROCS_UNKNOWN = "processors unknown: 1"
REPAIR_UNEQUAL_CHUNKS = "select chunks of unequal ncpus: chunks x the largest ncpus per node"
REPAIR_SUBMIT_FROM_DATE = "submit time from the Q record's date (no ctime/qtime)"

_JOBID = re.compile(r"^(\d+)(?:\[(\d*)\])?")
_DATE = re.compile(r"^(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d)$")


@dataclass(slots=True)
class _Job:
    """The records of one job seen so far: (line, message) of the last of each kind."""

    order: int
    queued: tuple[int, str, str] | None = None      # (line, date, message)
    started: tuple[int, str, str] | None = None
    ended: tuple[int, str, str] | None = None
    deleted: bool = False
    aborted: bool = False
    reruns: int = 0


@dataclass
class _Scan:
    jobs: dict[str, _Job] = field(default_factory=dict)
    array_parents: set[str] = field(default_factory=set)
    bad_lines: int = 0
    errors: list[WorkloadError] = field(default_factory=list)
    offset: int | None = None
    #: parsed once per distinct value: requests, walltimes, host lists
    requests: dict[tuple, tuple] = field(default_factory=dict)
    durations: dict[str, int] = field(default_factory=dict)
    hosts: dict[tuple, str] = field(default_factory=dict)


def load_pbs(path: str | Path, *, procs: int | None = None, oversize: Oversize = "reject",
             overrun: Overrun = "kill", skip_bad_lines: bool = False, max_records: int | None = None) -> Workload:
    """Read a PBS/OpenPBS/Torque accounting log into a cleaned Workload (see the module docstring).

    Bad records raise :class:`WorkloadError` naming file, line and field, unless ``skip_bad_lines``
    (then they are counted in the report's ``bad_lines``). ``max_records``: stop after that many
    lines (the upload check reads the head of a file)."""
    source = _inspect(path)
    scan = _scan(source, skip_bad_lines=skip_bad_lines, max_records=max_records)
    jobs = Jobs()
    jobs.report.bad_lines = scan.bad_lines
    jobs.report.keep(KEPT_ARRAY_PARENT, len(scan.array_parents))
    for jobid, job in scan.jobs.items():
        try:
            _collect(jobid, job, jobs, source.path, scan)
        except WorkloadError as error:
            if not skip_bad_lines:
                raise
            jobs.report.bad_lines += 1
            scan.errors.append(error)
    metadata: dict = {}
    if scan.offset is not None:
        metadata.update(TimeZone=str(scan.offset), TimeZoneString=offset_label(scan.offset))
    return to_workload(jobs, source=source.path, fmt="pbs", metadata=metadata, procs=procs,
                       oversize=oversize, overrun=overrun)


def check_pbs_head(path: str | Path, *, max_lines: int = 200, max_errors: int = 20) -> list[WorkloadError]:
    """Upload check: the first ``max_lines`` lines read as records; problems name line and field."""
    try:
        source = _inspect(path)
        scan = _scan(source, skip_bad_lines=True, max_records=max_lines)
    except WorkloadError as error:
        return [error]
    errors = scan.errors[:max_errors]
    if not errors and not scan.jobs:
        errors.append(WorkloadError("no job records in the first lines", file=source.path))
    return errors


# --------------------------------------------------------------------------- pass 1: records by job


def _scan(source, *, skip_bad_lines: bool, max_records: int | None) -> _Scan:
    scan = _Scan()
    jobs = scan.jobs
    limit = max_records if max_records is not None else -1
    with _open_text(source) as stream:
        for lineno, line in enumerate(stream, start=1):
            if lineno == limit + 1:
                break
            parts = line.split(";", 3)
            kind = parts[1] if len(parts) == 4 else ""
            date = parts[0]
            if kind in ("S", "E", "Q") and len(date) == 19 and date[2] == "/" and date[5] == "/":   # quickly
                key = parts[2].partition(".")[0]
                if key.isdigit():
                    job = jobs.get(key)
                    if job is None:
                        job = jobs[key] = _Job(order=len(jobs))
                    entry = (lineno, date, parts[3])
                    if kind == "E":
                        job.ended = entry
                    elif kind == "S":
                        job.started = entry
                    elif job.queued is None:
                        job.queued = entry
                    continue
            if not line.strip() or line.startswith(";"):
                continue
            try:
                _record(line, lineno, source.path, scan)
            except WorkloadError as error:
                if not skip_bad_lines:
                    raise
                scan.bad_lines += 1
                if len(scan.errors) < MAX_KEPT_ERRORS:
                    scan.errors.append(error)
    return scan


def _record(line: str, lineno: int, path: str, scan: _Scan) -> None:
    parts = line.rstrip("\r\n").split(";", 3)
    if len(parts) < 4:
        raise WorkloadError("expected a record DATE;TYPE;JOBID;MESSAGE", file=path, line=lineno, field="record")
    date, kind, jobid, message = parts
    if len(date) != 19 or date[2] != "/" or date[5] != "/" or date[10] != " ":
        raise WorkloadError(f"expected the date as MM/DD/YYYY HH:MM:SS, got {date[:30]!r}", file=path, line=lineno,
                            field="date")
    if len(kind) != 1 or not kind.isalpha():
        raise WorkloadError(f"expected a one-letter record type, got {kind[:20]!r}", file=path, line=lineno,
                            field="type")
    if kind not in JOB_TYPES:
        return
    key = jobid.partition(".")[0]
    if not key.isdigit():
        match = _JOBID.match(jobid)
        if not match:
            raise WorkloadError(f"expected a job id such as 123.server or 123[4].server, got {jobid[:40]!r}",
                                file=path, line=lineno, field="jobid")
        key = match.group(0)
        if match.group(2) == "" and key.endswith("[]"):
            scan.array_parents.add(key)
            return
    job = scan.jobs.get(key)
    if job is None:
        job = scan.jobs[key] = _Job(order=len(scan.jobs))
    entry = (lineno, date, message)
    if kind == "Q":
        job.queued = job.queued or entry
    elif kind in "ST":
        job.started = entry
    elif kind == "E":
        job.ended = entry
    elif kind == "R":
        job.reruns += 1
        job.started = None
    elif kind == "D":
        job.deleted = True
    elif kind == "A":
        job.aborted = True


# --------------------------------------------------------------------------- pass 2: one job each


def attributes(message: str) -> dict[str, str]:
    """``key=value`` pairs of a record's message; quoted values (with spaces) kept whole, unquoted."""
    if '"' not in message and "'" not in message:
        pairs = {}
        for token in message.split():
            key, sep, value = token.partition("=")
            if sep:
                pairs[key] = value
        return pairs
    return {key: value[1:-1] if value[:1] in "\"'" else value for key, value in _PAIR.findall(message)}


_PAIR = re.compile(r"""(\S+?)=("[^"]*"|'[^']*'|\S*)""")

#: the attributes the reader uses; the E record's others (resources_used.cput, session, ...) are skipped
USED_KEYS = ("user", "group", "account", "project", "queue", "ctime", "qtime", "start", "end", "exec_host",
             "exec_vnode", "Exit_status", "resources_used.walltime", "resources_used.ncpus",
             *(f"Resource_List.{name}" for name in ("select", "nodes", "ncpus", "nodect", "mem", "ngpus",
                                                   "walltime", "place")))
_USED = frozenset(USED_KEYS)
#: with these from the E record, the Q record adds nothing
_COMPLETE_KEYS = frozenset({"user", "queue", "ctime"})


def used_attributes(message: str) -> dict[str, str]:
    """The attributes of a message (at least the :data:`USED_KEYS`); a quoted value
    (``jobname="my job"``) is kept whole, without its quotes."""
    pairs = dict([token.split("=", 1) for token in message.split() if "=" in token])
    if '"' not in message and "'" not in message:
        return pairs
    for value in pairs.values():
        if value[:1] in ('"', "'") and (len(value) < 2 or value[-1] != value[0]):
            return _quoted_attributes(message)          # a quoted value with spaces: the careful way
    return {key: value[1:-1] if value[:1] in ('"', "'") else value for key, value in pairs.items()}


def _quoted_attributes(message: str) -> dict[str, str]:
    pairs = {}
    tokens = message.split()
    i, n = 0, len(tokens)
    while i < n:
        key, sep, value = tokens[i].partition("=")
        i += 1
        if not sep:
            continue
        if value[:1] in ('"', "'"):
            quote = value[0]
            while (len(value) < 2 or value[-1] != quote) and i < n:
                value += " " + tokens[i]
                i += 1
            value = value[1:-1] if len(value) >= 2 and value[-1] == quote else value[1:]
        if key in _USED:
            pairs[key] = value
    return pairs


def _collect(jobid: str, job: _Job, jobs: Jobs, path: str, scan: _Scan) -> None:
    """Add one job to ``jobs`` or count why it is left out."""
    report = jobs.report
    if job.started is None and job.ended is None:
        report.reject(REJECT_DELETED if job.deleted else REJECT_ABORTED if job.aborted else REJECT_NEVER_STARTED, 1)
        return
    if job.ended is None:
        report.reject(REJECT_NO_END, 1)
        return
    report.keep(KEPT_RERUN, min(job.reruns, 1))
    lineno, date, message = job.ended
    attrs = used_attributes(message)
    if job.started is not None and "start" not in attrs:
        attrs["start"] = used_attributes(job.started[2]).get("start", "")
    if job.queued is not None and not _COMPLETE_KEYS <= attrs.keys():
        for key, value in used_attributes(job.queued[2]).items():
            attrs.setdefault(key, value)
    where: dict[str, Any] = {"file": path, "line": lineno}
    submit = _epoch(attrs, ("ctime", "qtime"), where)
    if submit < 0:
        if job.queued is None:
            raise WorkloadError("no ctime, qtime or Q record: the submit time is unknown", field="ctime", **where)
        submit = _local_epoch(job.queued[1], job.queued[0], path) - (scan.offset or 0)
        report.repair(REPAIR_SUBMIT_FROM_DATE, 1)
    start = _epoch(attrs, ("start",), where)
    if start < 0 and job.started is not None:
        start = _local_epoch(job.started[1], job.started[0], path) - (scan.offset or 0)
    end = _epoch(attrs, ("end",), where)
    if scan.offset is None and end >= 0:
        scan.offset = _zone_offset(_local_epoch(date, lineno, path), end)
    if start >= 0 and end >= start:
        runtime = end - start
    elif "resources_used.walltime" in attrs:
        runtime = _duration(attrs, "resources_used.walltime", where)
        report.repair(REPAIR_RUNTIME_USED, 1)
    else:
        runtime = -1
    request = _cached_request(attrs, where, report, scan)
    if max(request.procs, request.nodes, request.ppn, request.gpus) > MAX_COUNT or request.mem > MAX_MAGNITUDE:
        raise WorkloadError(f"the request adds up to more than {MAX_COUNT} processors, nodes or GPUs "
                            f"(or {MAX_MAGNITUDE} KB)", field="Resource_List", **where)
    jobs.jobid.append(jobid)
    jobs.order.append(job.order)
    jobs.submit.append(submit)
    jobs.start.append(start)
    jobs.runtime.append(runtime)
    jobs.procs.append(request.procs)
    walltime = attrs.get("Resource_List.walltime")
    if not walltime:
        limit = -1
    elif walltime in scan.durations:
        limit = scan.durations[walltime]
    else:
        limit = scan.durations[walltime] = _duration(attrs, "Resource_List.walltime", where)
    jobs.requested_time.append(limit)
    jobs.status.append(_status(attrs, job.deleted))
    jobs.user.append(attrs.get("user", "").split("@", 1)[0])
    jobs.group.append(attrs.get("group", ""))
    jobs.account.append(attrs.get("account", attrs.get("project", "")))
    jobs.queue.append(attrs.get("queue", ""))
    jobs.nodes.append(request.nodes)
    jobs.ppn.append(request.ppn)
    jobs.mem.append(request.mem)
    jobs.gpus.append(request.gpus)
    jobs.exclusive.append(request.exclusive)
    host_key = (attrs.get("exec_host"), attrs.get("exec_vnode"))
    hosts = scan.hosts.get(host_key)
    if hosts is None:
        hosts = scan.hosts[host_key] = ";".join(exec_hosts(attrs))
    jobs.exec_hosts.append(hosts)
    jobs.request.append(request.text)


@dataclass
class Request:
    procs: int
    nodes: int
    ppn: int
    mem: int          # KB per node (per job when nodes = 0)
    gpus: int         # per node (per job when nodes = 0)
    exclusive: bool
    text: str


#: the attributes a request is computed from (engine.workload.pbs._request), in a cache key
REQUEST_KEYS = ("Resource_List.select", "Resource_List.nodes", "Resource_List.ncpus", "Resource_List.nodect",
                "Resource_List.mem", "Resource_List.ngpus", "Resource_List.place", "resources_used.ncpus")


def _cached_request(attrs: dict[str, str], where: dict, report: CleaningReport, scan: _Scan) -> Request:
    """_request, computed once per distinct request (logs repeat a few requests a lot); the repairs
    are counted for every job."""
    key = tuple(attrs.get(name) for name in REQUEST_KEYS)
    cached = scan.requests.get(key)
    if cached is None:
        repairs = CleaningReport()
        request = _request(attrs, where, repairs)
        if "exec_host" in attrs and request.procs == _slots(attrs) and not any(key[2:4]) and not key[0]:
            for reason, count in repairs.repaired.items():     # depends on exec_host: not cached
                report.repair(reason, count)
            return request
        cached = scan.requests[key] = (request, tuple(repairs.repaired))
    request, repaired = cached
    for reason in repaired:
        report.repair(reason, 1)
    return request


def _request(attrs: dict[str, str], where: dict, report: CleaningReport) -> Request:
    """Processors, node shape, memory and GPUs asked for (see the module docstring)."""
    place = attrs.get("Resource_List.place", "")
    exclusive = "excl" in place
    total_mem = _size(attrs, "Resource_List.mem", where)
    gpus = _int(attrs, "Resource_List.ngpus", where)
    chunks: list[tuple[int, int, int, int]] = []          # (count, ncpus, mem KB, ngpus) per chunk
    text = ""
    if "Resource_List.select" in attrs:
        text = attrs["Resource_List.select"]
        chunks = _select(text, where)
    elif "Resource_List.nodes" in attrs:
        text = attrs["Resource_List.nodes"]
        chunks = _torque_nodes(text, where)
    ncpus = _int(attrs, "Resource_List.ncpus", where)
    chunk_cpus = sum(count * cpus for count, cpus, _, _ in chunks)
    procs = ncpus or chunk_cpus or _int(attrs, "Resource_List.nodect", where) \
        or _int(attrs, "resources_used.ncpus", where) or _slots(attrs)
    if procs <= 0:
        procs = 1
        report.repair(REPAIR_PROCS_UNKNOWN, 1)
    count = sum(c for c, _, _, _ in chunks)
    per_node = max((cpus for _, cpus, _, _ in chunks), default=0)
    chunk_mem = max((mem for _, _, mem, _ in chunks), default=0)
    chunk_gpus = max((g for _, _, _, g in chunks), default=0)
    torque = "Resource_List.select" not in attrs and "Resource_List.nodes" in attrs
    if chunks and (torque or "scatter" in place or exclusive):
        if len({cpus for _, cpus, _, _ in chunks}) > 1:
            report.repair(REPAIR_UNEQUAL_CHUNKS, 1)
        mem = chunk_mem or (total_mem // max(count, 1) if total_mem else 0)
        return Request(procs, count, max(per_node, 1), mem, chunk_gpus or (gpus // max(count, 1)), exclusive, text)
    if chunks and "pack" in place:
        return Request(procs, 1, procs, total_mem or chunk_mem * count, gpus or chunk_gpus * count, exclusive, text)
    return Request(procs, 0, 0, total_mem or chunk_mem * count, gpus or chunk_gpus * count, exclusive, text)


def _select(text: str, where: dict) -> list[tuple[int, int, int, int]]:
    """``2:ncpus=1:mem=300mb+1:ncpus=8:ngpus=1`` -> [(2, 1, 307200, 0), (1, 8, 0, 1)]."""
    chunks = []
    for chunk in text.split("+"):
        tokens = chunk.split(":")
        count: int | None = 1
        if tokens and tokens[0][:1].isdigit():
            count = whole_number(tokens.pop(0), maximum=MAX_COUNT)
        values = dict(token.partition("=")[::2] for token in tokens if "=" in token)
        try:
            ncpus = whole_number(values.get("ncpus", "1"), maximum=MAX_COUNT)
            mem = parse_size_kb(values["mem"]) if "mem" in values else 0
            ngpus = whole_number(values.get("ngpus", "0"), maximum=MAX_COUNT)
        except ValueError as exc:
            raise WorkloadError(f"cannot read the select chunk {shown(chunk)}: {exc}", field="Resource_List.select",
                                **where) from None
        if not count or ncpus is None or ngpus is None:
            raise WorkloadError(f"a chunk needs a count from 1 and ncpus, ngpus from 0 to {MAX_COUNT}, "
                                f"got {shown(chunk)}", field="Resource_List.select", **where)
        chunks.append((count, ncpus, mem, ngpus))
    return chunks


def _torque_nodes(text: str, where: dict) -> list[tuple[int, int, int, int]]:
    """Torque ``nodes=2:ppn=4+1:ppn=2`` (or a host name, or ``nodes=3``) -> chunks."""
    chunks = []
    for chunk in text.split("+"):
        tokens = chunk.split(":")
        count = whole_number(tokens[0], maximum=MAX_COUNT) if tokens[0][:1].isdigit() else 1
        ppn: int | None = 1
        for token in tokens[1:]:
            key, _, value = token.partition("=")
            if key in ("ppn", "ncpus"):
                ppn = whole_number(value, maximum=MAX_COUNT)
        if count is None or ppn is None:
            raise WorkloadError(f"node counts and ppn must be whole numbers up to {MAX_COUNT} in {shown(text)}",
                                field="Resource_List.nodes", **where)
        chunks.append((count, ppn, 0, 0))
    return chunks


def exec_hosts(attrs: dict[str, str]) -> list[str]:
    """The distinct hosts a job ran on, in order, short names (``torque2``)."""
    text = attrs.get("exec_host")
    if text:
        names = [part.split("/", 1)[0] for part in text.split("+")]
    elif attrs.get("exec_vnode"):
        names = [part.strip("()").split(":", 1)[0].split("[", 1)[0] for part in attrs["exec_vnode"].split("+")]
    else:
        return []
    return list(dict.fromkeys(name.split(".", 1)[0] for name in names if name))


def _slots(attrs: dict[str, str]) -> int:
    """Cores in ``exec_host``: ``h/0+h/1`` = 2, Torque ``h/0-3`` = 4, PBS ``h/0*2`` = 2."""
    text = attrs.get("exec_host", "")
    total = 0
    for part in filter(None, text.split("+")):
        slot = part.partition("/")[2]
        times = whole_number(slot.rpartition("*")[2], maximum=MAX_COUNT) if "*" in slot else None
        low, _, high = slot.partition("-")
        first, last = whole_number(low, maximum=MAX_COUNT), whole_number(high, maximum=MAX_COUNT)
        if times is not None:
            total += times
        elif "-" in slot:
            total += last - first + 1 if first is not None and last is not None and last >= first else 1
        else:
            total += sum(1 for _ in slot.split(",")) if slot else 1
    return min(total, MAX_COUNT)


def _status(attrs: dict[str, str], deleted: bool) -> int:
    if deleted:
        return STATUS_CANCELLED
    return STATUS_COMPLETED if attrs.get("Exit_status", "0") == "0" else STATUS_FAILED


def _epoch(attrs: dict[str, str], keys: tuple[str, ...], where: dict) -> int:
    for key in keys:
        value = attrs.get(key)
        if value:
            seconds = whole_number(value)
            if seconds is None:
                raise WorkloadError(f"expected Unix epoch seconds, got {shown(value)}", field=key, **where)
            return seconds
    return -1


def _int(attrs: dict[str, str], key: str, where: dict) -> int:
    value = attrs.get(key)
    if not value:
        return 0
    number = whole_number(value, maximum=MAX_COUNT)
    if number is None:
        raise WorkloadError(f"expected a whole number up to {MAX_COUNT}, got {shown(value)}", field=key, **where)
    return number


def _size(attrs: dict[str, str], key: str, where: dict) -> int:
    value = attrs.get(key)
    if not value:
        return 0
    try:
        return parse_size_kb(value)
    except ValueError as exc:
        raise WorkloadError(str(exc), field=key, **where) from None


def _duration(attrs: dict[str, str], key: str, where: dict) -> int:
    try:
        return parse_duration(attrs[key])
    except ValueError as exc:
        raise WorkloadError(str(exc), field=key, **where) from None


def _local_epoch(date: str, lineno: int, path: str) -> int:
    """The record's local date as if it were UTC (the offset is applied by the caller)."""
    match = _DATE.match(date)
    if not match:
        raise WorkloadError(f"expected the date as MM/DD/YYYY HH:MM:SS, got {date!r}", file=path, line=lineno,
                            field="date")
    month, day, year, hour, minute, second = (int(g) for g in match.groups())
    try:
        return calendar.timegm((year, month, day, hour, minute, second))
    except (ValueError, OverflowError):
        raise WorkloadError(f"not a valid date: {date!r}", file=path, line=lineno, field="date") from None


def _zone_offset(local_as_utc: int, epoch: int) -> int:
    """The server's offset from UTC, rounded to a quarter hour."""
    return round((local_as_utc - epoch) / 900.0) * 900
