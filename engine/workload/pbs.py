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
import gzip
import mmap
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

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
from engine.workload.lines import first_lines
from engine.workload.model import JOBID_SUFFIX, CleaningReport, Workload
from engine.workload.numbers import MAX_COUNT, MAX_MAGNITUDE, whole_number
from engine.workload.swf import _STREAM_ERRORS, ENCODING, _inspect, _open_text
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

    def skip(self, error: WorkloadError, skip_bad_lines: bool) -> None:
        """Count a bad line and keep its error (the first few), or raise it without --skip-bad-lines."""
        if not skip_bad_lines:
            raise error
        self.bad_lines += 1
        if len(self.errors) < MAX_KEPT_ERRORS:
            self.errors.append(error)
    offset: int | None = None
    #: parsed once per distinct value: requests, walltimes, host lists
    requests: dict[tuple, tuple] = field(default_factory=dict)
    durations: dict[str, int] = field(default_factory=dict)
    hosts: dict[tuple, str] = field(default_factory=dict)


def load_pbs(path: str | Path, *, procs: int | None = None, oversize: Oversize = "reject",
             overrun: Overrun = "kill", skip_bad_lines: bool = False, max_records: int | None = None,
             careful: bool = False) -> Workload:
    """Read a PBS/OpenPBS/Torque accounting log into a cleaned Workload (see the module docstring).

    Bad records raise :class:`WorkloadError` naming file, line and field, unless ``skip_bad_lines``
    (then they are counted in the report's ``bad_lines``). ``max_records``: stop after that many
    lines (the upload check reads the head of a file). A whole log is read by compiled passes over
    its bytes (engine.workload.logscan) with every unusual record, job and value left to the
    line-by-line reader; ``careful`` reads it all line by line (the reference: the same jobs,
    errors and counts, slower)."""
    source = _inspect(path)
    data = None if careful or max_records is not None else _whole_file(source)
    if data is None:
        jobs, offset = _read_careful(source, skip_bad_lines=skip_bad_lines, max_records=max_records)
    else:
        jobs, offset = _read_fast(data, source.path, skip_bad_lines=skip_bad_lines)
    metadata: dict = {}
    if offset is not None:
        metadata.update(TimeZone=str(offset), TimeZoneString=offset_label(offset))
    suffix = server_suffix(path)
    if suffix:
        metadata[JOBID_SUFFIX] = suffix
    return to_workload(jobs, source=source.path, fmt="pbs", metadata=metadata, procs=procs,
                       oversize=oversize, overrun=overrun)


def server_suffix(path: str | Path) -> str:
    """The server part of the log's job ids (``.server`` of ``112461.server``), from its first job
    record: the ``jobid`` column keeps the number, the schedule's ``native_id`` the whole id
    (engine.workload.model.native_ids). Empty when the first records carry none."""
    for line in first_lines(path, 20):
        parts = line.split(";", 3)
        if len(parts) == 4 and parts[1] in JOB_TYPES:
            number, dot, server = parts[2].partition(".")
            return f".{server}" if dot and server else ""
    return ""


def _read_careful(source, *, skip_bad_lines: bool, max_records: int | None) -> tuple[Jobs, int | None]:
    """The line-by-line reader: records by job, then each job in order."""
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
    jobs.report.note_bad_lines(scan.errors)
    return jobs, scan.offset


def _whole_file(source) -> bytes | mmap.mmap | None:
    """The file's bytes (gzip: decompressed); None when the stream is damaged (the line-by-line
    reader then names the line where it broke)."""
    try:
        if source.compressed:
            with gzip.open(source.path, "rb") as stream:
                return stream.read()
        with open(source.path, "rb") as raw:
            return mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ)   # read as the passes touch it
    except (ValueError, *_STREAM_ERRORS):                                  # ValueError: an empty file
        return None


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
    limit = max_records if max_records is not None else -1
    with _open_text(source) as stream:
        for lineno, line in enumerate(stream, start=1):
            if lineno == limit + 1:
                break
            try:
                record = _line_record(line, lineno, source.path)
            except WorkloadError as error:
                scan.skip(error, skip_bad_lines)
                continue
            if record is not None:
                _apply(scan, lineno, *record)
    return scan


def _line_record(line: str, lineno: int, path: str) -> tuple[str, str, str, str] | None:
    """(job key, type, date, message) of a job record line; None for a line read past (blank,
    comment, a record type that is not a job's); type ``[]`` for a job array's parent."""
    parts = line.split(";", 3)
    kind = parts[1] if len(parts) == 4 else ""
    date = parts[0]
    if kind in ("S", "E", "Q") and len(date) == 19 and date[2] == "/" and date[5] == "/":   # quickly
        key = parts[2].partition(".")[0]
        if key.isdigit():
            return key, kind, date, parts[3]
    if not line.strip() or line.startswith(";"):
        return None
    return _record(line, lineno, path)


def _apply(scan: _Scan, lineno: int, key: str, kind: str, date: str, message: str) -> None:
    """One job record's effect on its job."""
    if kind == "[]":
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


def _record(line: str, lineno: int, path: str) -> tuple[str, str, str, str] | None:
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
        return None
    key = jobid.partition(".")[0]
    if not key.isdigit():
        match = _JOBID.match(jobid)
        if not match:
            raise WorkloadError(f"expected a job id such as 123.server or 123[4].server, got {jobid[:40]!r}",
                                file=path, line=lineno, field="jobid")
        key = match.group(0)
        if match.group(2) == "" and key.endswith("[]"):
            return key, "[]", date, message
    return key, kind, date, message


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
    walltime = attrs.get("Resource_List.walltime")
    if not walltime:
        limit = -1
    elif walltime in scan.durations:
        limit = scan.durations[walltime]
    else:
        limit = scan.durations[walltime] = _duration(attrs, "Resource_List.walltime", where)
    jobs.jobid.append(jobid)            # nothing below raises: a bad job adds no row
    jobs.order.append(job.order)
    jobs.submit.append(submit)
    jobs.start.append(start)
    jobs.runtime.append(runtime)
    jobs.procs.append(request.procs)
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


# --------------------------------------------------------------------------- the fast path


#: record type -> the code of an event in the fast path's tables
_KIND_CODES = {"Q": 1, "S": 2, "T": 2, "E": 3, "R": 4, "D": 5, "A": 6}
_KEY_INDEX = {name: i for i, name in enumerate(USED_KEYS)}
_BIG = np.iinfo(np.int64).max


@dataclass
class _Lines:
    """The log's bytes and line spans (engine.workload.logscan.split_lines)."""

    data: bytes | mmap.mmap
    starts: np.ndarray
    ends: np.ndarray
    terminated: np.ndarray

    def text(self, index: int) -> str:
        """Line ``index`` (0-based) as the text reader yields it."""
        end = "\n" if self.terminated[index] else ""
        return self.data[int(self.starts[index]):int(self.ends[index])].decode(ENCODING) + end


def _read_fast(data: bytes | mmap.mmap, path: str, *, skip_bad_lines: bool) -> tuple[Jobs, int | None]:
    """:func:`_read_careful`'s result from compiled passes (module logscan) for the common records,
    jobs and values; everything else goes through the same per-line and per-job code in order."""
    from engine.workload import logscan as kernels     # imports numba (~0.5 s): only when a log is read

    buf = np.frombuffer(data, dtype=np.uint8)
    starts, ends, terminated = kernels.split_lines(buf)
    kind, key, message = kernels.classify(buf, starts, ends, kernels.WHITESPACE)
    lines = _Lines(data, starts, ends, terminated)
    scan = _Scan()
    names: dict[str, int] = {}                 # job keys that are not plain numbers -> ids below 0
    slow_lines, slow_keys, slow_kinds = _slow_records(np.flatnonzero(kind == 0), lines, path, scan, names,
                                                      skip_bad_lines=skip_bad_lines)
    fast = np.flatnonzero((kind > 0) & (kind != kernels.READ_PAST))
    event_line = np.concatenate([fast, np.asarray(slow_lines, dtype=np.int64)])
    event_key = np.concatenate([key[fast], np.asarray(slow_keys, dtype=np.int64)])
    event_kind = np.concatenate([kind[fast].astype(np.int64), np.asarray(slow_kinds, dtype=np.int64)])
    table = _job_table(event_line, event_key, event_kind)
    jobs = Jobs()
    jobs.report.bad_lines = scan.bad_lines
    jobs.report.keep(KEPT_ARRAY_PARENT, len(scan.array_parents))
    rows = _FastRows(table, names)
    rows.reject_unended(jobs.report)
    simple = rows.read_simple(data, buf, kernels, message, ends, kind, path)
    rows.collect(jobs, simple, lines, path, scan, skip_bad_lines=skip_bad_lines)
    jobs.report.note_bad_lines(scan.errors)
    return jobs, scan.offset


def _slow_records(indexes: np.ndarray, lines: _Lines, path: str, scan: _Scan, names: dict[str, int], *,
                  skip_bad_lines: bool) -> tuple[list[int], list[int], list[int]]:
    """The lines the kernels left out, read as the line-by-line reader reads them, in order: their
    job records as (line index, job id number, event code); errors raised or counted the same way."""
    found: tuple[list[int], list[int], list[int]] = ([], [], [])
    for index in indexes.tolist():
        try:
            record = _line_record(lines.text(index), index + 1, path)
        except WorkloadError as error:
            scan.skip(error, skip_bad_lines)
            continue
        if record is None:
            continue
        jobkey, kind = record[0], record[1]
        if kind == "[]":
            scan.array_parents.add(jobkey)
            continue
        found[0].append(index)
        found[1].append(_key_number(jobkey, names))
        found[2].append(_KIND_CODES[kind])
    return found


def _key_number(jobkey: str, names: dict[str, int]) -> int:
    """A job key as the kernels number it (ASCII digits, no leading zero, up to 18), else an id < 0."""
    if jobkey.isascii() and jobkey.isdigit() and len(jobkey) <= 18 and (jobkey[0] != "0" or jobkey == "0"):
        return int(jobkey)
    return names.setdefault(jobkey, -1 - len(names))


@dataclass
class _JobTable:
    """Per job, in the order jobs first appear: its key number and the line index (-1: none) of its
    first Q, its counting S/T (after the last R), its last E; D/A seen; R count."""

    key: np.ndarray
    queued: np.ndarray
    started: np.ndarray
    ended: np.ndarray
    deleted: np.ndarray
    aborted: np.ndarray
    reruns: np.ndarray


def _job_table(line: np.ndarray, key: np.ndarray, kind: np.ndarray) -> _JobTable:
    """What :func:`_apply` builds record by record, from all records at once."""
    keys, job = np.unique(key, return_inverse=True)
    count = len(keys)
    first = np.full(count, _BIG, dtype=np.int64)
    np.minimum.at(first, job, line)
    order = np.argsort(first, kind="stable")
    position = np.empty(count, dtype=np.int64)
    position[order] = np.arange(count)
    job = position[job]

    def first_of(code: int) -> np.ndarray:
        found = np.full(count, _BIG, dtype=np.int64)
        mask = kind == code
        np.minimum.at(found, job[mask], line[mask])
        return np.where(found == _BIG, -1, found)

    def last_of(code: int) -> np.ndarray:
        found = np.full(count, -1, dtype=np.int64)
        mask = kind == code
        np.maximum.at(found, job[mask], line[mask])
        return found

    started, rerun = last_of(2), last_of(4)
    return _JobTable(key=keys[order], queued=first_of(1), started=np.where(started > rerun, started, -1),
                     ended=last_of(3), deleted=np.bincount(job[kind == 5], minlength=count) > 0,
                     aborted=np.bincount(job[kind == 6], minlength=count) > 0,
                     reruns=np.bincount(job[kind == 4], minlength=count))


_EPOCH_KEYS = ("ctime", "qtime", "start", "end")
#: read as numbers, or only by the line-by-line reader: not numbered by value
_UNREAD_KEYS = (*_EPOCH_KEYS, "resources_used.walltime")
_NAME_BYTES = np.frombuffer("".join(USED_KEYS).encode("ascii"), dtype=np.uint8)
_NAME_STARTS = np.cumsum([0] + [len(name) for name in USED_KEYS]).astype(np.int64)
_FIELDS = ("jobid", "order", "submit", "start", "runtime", "procs", "requested_time", "status", "user", "group",
           "account", "queue", "nodes", "ppn", "mem", "gpus", "exclusive", "exec_hosts", "request")


@dataclass
class _Simple:
    """The jobs read from their E record alone, by compiled passes: positions and Jobs fields."""

    positions: np.ndarray
    fields: dict[str, np.ndarray]               # Jobs' fields, and "combo": the distinct request's number


class _FastRows:
    """The jobs of a :class:`_JobTable` made into :class:`Jobs` rows, in job order: the common ones
    from compiled passes, the others by :func:`_collect` (see :func:`_read_fast`)."""

    def __init__(self, table: _JobTable, names: dict[str, int]) -> None:
        self.table = table
        self.named = {number: name for name, number in names.items()}
        self.events: list[tuple[int, int, str, str, int]] = []     # (position, seq, kind, reason, count)

    def jobids(self, positions: np.ndarray) -> np.ndarray:
        """:meth:`jobid` of many jobs at once."""
        keys = self.table.key[positions]
        ids = keys.astype(str).astype(object)
        for index in np.flatnonzero(keys < 0).tolist():
            ids[index] = self.named[int(keys[index])]
        return ids

    def jobid(self, position: int) -> str:
        number = int(self.table.key[position])
        return str(number) if number >= 0 else self.named[number]

    def count(self, kind: str, reason: str, mask: np.ndarray, seq: int = 0) -> None:
        """``reason`` for every job in ``mask`` (by position), at its first position."""
        where = np.flatnonzero(mask)
        if len(where):
            self.events.append((int(where[0]), seq, kind, reason, len(where)))

    def reject_unended(self, report: CleaningReport) -> None:
        t = self.table
        unstarted = (t.ended < 0) & (t.started < 0)
        self.count("reject", REJECT_DELETED, unstarted & t.deleted)
        self.count("reject", REJECT_ABORTED, unstarted & ~t.deleted & t.aborted)
        self.count("reject", REJECT_NEVER_STARTED, unstarted & ~t.deleted & ~t.aborted)
        self.count("reject", REJECT_NO_END, (t.ended < 0) & (t.started >= 0))

    def read_simple(self, data: bytes | mmap.mmap, buf: np.ndarray, kernels: Any, message: np.ndarray,
                    line_ends: np.ndarray, kind: np.ndarray, path: str) -> _Simple:
        t = self.table
        ended = np.flatnonzero(t.ended >= 0)
        ended = ended[kind[t.ended[ended]] == 3]                   # an E record the kernels read
        e_line = t.ended[ended]
        spans, careful = kernels.attribute_spans(buf, message[e_line], line_ends[e_line], _NAME_BYTES,
                                                 _NAME_STARTS, kernels.WHITESPACE)
        begin = {name: spans[0, i] for name, i in _KEY_INDEX.items()}
        end = {name: spans[1, i] for name, i in _KEY_INDEX.items()}
        present = {name: begin[name] >= 0 for name in USED_KEYS}
        filled = {name: end[name] > begin[name] for name in USED_KEYS}
        number = {name: kernels.plain_numbers(buf, begin[name], end[name]) for name in _EPOCH_KEYS}
        submit = np.where(filled["ctime"], number["ctime"][0], number["qtime"][0])
        ok = ~careful & np.where(filled["ctime"], number["ctime"][1], filled["qtime"] & number["qtime"][1])
        start, finish = number["start"][0], number["end"][0]
        ok &= number["start"][1] & number["end"][1] & (finish >= start)
        ok &= (t.queued[ended] < 0) | (present["user"] & present["queue"] & present["ctime"])
        codes, values = {}, {}
        begin["exec_vnode"] = np.where(filled["exec_host"], -1, begin["exec_vnode"])   # read only without exec_host
        begin["project"] = np.where(present["account"], -1, begin["project"])         # only without account
        for name in USED_KEYS:
            if name not in _UNREAD_KEYS:
                codes[name], first = kernels.factorize(buf, begin[name], end[name])
                values[name] = [data[begin[name][i]:end[name][i]].decode(ENCODING) for i in first.tolist()]
        fields: dict[str, np.ndarray] = {}
        request_ok = self._requests(codes, values, fields, path)
        ok &= request_ok
        limits, limit_ok = _per_value(codes["Resource_List.walltime"], values["Resource_List.walltime"],
                                      lambda v: parse_duration(v) if v else -1, -1)
        ok &= limit_ok
        self.simple_ok = ok
        keep = np.flatnonzero(ok)
        fields = {name: column[keep] for name, column in fields.items()}
        positions = ended[keep]
        fields["order"] = positions
        fields["submit"], fields["start"] = submit[keep], start[keep]
        fields["runtime"] = (finish - start)[keep]
        fields["requested_time"] = limits[keep]
        exit_code = codes["Exit_status"][keep]
        exit_zero = np.array([v == "0" for v in values["Exit_status"]] + [True], dtype=bool)[exit_code]
        fields["status"] = np.where(t.deleted[positions], STATUS_CANCELLED,
                                    np.where(exit_zero, STATUS_COMPLETED, STATUS_FAILED))
        fields["user"] = _strings(codes["user"][keep], [v.split("@", 1)[0] for v in values["user"]])
        fields["group"] = _strings(codes["group"][keep], values["group"])
        account = np.where(present["account"][keep], 0, 1)
        fields["account"] = np.where(account == 0, _strings(codes["account"][keep], values["account"]),
                                     _strings(codes["project"][keep], values["project"]))
        fields["queue"] = _strings(codes["queue"][keep], values["queue"])
        fields["exec_hosts"] = _hosts(codes["exec_host"][keep], values["exec_host"],
                                      codes["exec_vnode"][keep], values["exec_vnode"])
        fields["jobid"] = self.jobids(positions)
        return _Simple(positions, fields)

    def collect(self, jobs: Jobs, simple: _Simple, lines: _Lines, path: str, scan: _Scan, *,
                skip_bad_lines: bool) -> None:
        """Every ended job into ``jobs`` in job order: the simple ones as read, the others (and the
        simple ones met while the log's time zone is still unknown: the first sets it, as in
        :func:`_collect`) one by one through :func:`_collect`."""
        t = self.table
        ended = np.flatnonzero(t.ended >= 0)
        is_simple = np.zeros(len(t.key), dtype=bool)
        is_simple[simple.positions] = True
        careful = [int(p) for p in ended[~is_simple[ended]]]
        simple_order = simple.positions.tolist()
        done: list[int] = []                                # positions read one by one, in order
        one_by_one = Jobs()
        c = s = 0
        while c < len(careful) or (scan.offset is None and s < len(simple_order)):
            take_simple = scan.offset is None and s < len(simple_order) and \
                (c >= len(careful) or simple_order[s] < careful[c])
            position = simple_order[s] if take_simple else careful[c]
            s, c = (s + 1, c) if take_simple else (s, c + 1)
            rows_before = len(one_by_one)
            report = one_by_one.report = CleaningReport()
            try:
                _collect(self.jobid(position), self.job(position, lines, path), one_by_one, path, scan)
            except WorkloadError as error:
                if not skip_bad_lines:
                    raise
                jobs.report.bad_lines += 1
                scan.errors.append(error)
            if take_simple:
                is_simple[position] = False
            if len(one_by_one) > rows_before:
                done.append(position)
            self.events.extend((position, seq, kind, reason, count)
                               for kind, counts in (("reject", report.rejected), ("repair", report.repaired),
                                                    ("keep", report.kept))
                               for seq, (reason, count) in enumerate(counts.items()))
        still = is_simple[simple.positions]
        final = simple.positions[still]
        self.count("keep", KEPT_RERUN, np.isin(np.arange(len(t.key)), final[t.reruns[final] > 0]))
        combo = simple.fields["combo"][still]
        for index, reasons in enumerate(self.combo_repairs):
            where = final[combo == index] if reasons else final[:0]
            for seq, reason in enumerate(reasons if len(where) else ()):
                self.events.append((int(where[0]), 10 + seq, "repair", reason, len(where)))
        _merge_rows(jobs, simple, still, one_by_one, done)
        self._apply_counts(jobs.report)

    def _requests(self, codes: dict, values: dict, fields: dict, path: str) -> np.ndarray:
        """The request fields of every candidate job, computed once per distinct request."""
        combo = np.zeros(len(codes["user"]), dtype=np.int64)
        size = 1
        for name in REQUEST_KEYS:
            width = len(values[name]) + 1
            if size * width >= 2**62:                                # numbered densely again: no overflow
                combo = np.unique(combo, return_inverse=True)[1]
                size = int(combo.max()) + 1 if len(combo) else 1
            combo = combo * width + codes[name] + 1
            size *= width
        _, first, combo = np.unique(combo, return_index=True, return_inverse=True)
        results, good, repairs = [], [], []
        for index in first.tolist():
            attrs = {name: values[name][codes[name][index]] for name in REQUEST_KEYS if codes[name][index] >= 0}
            request, reasons = _independent_request(attrs, path)
            results.append(request)
            good.append(request is not None)
            repairs.append(reasons)
        self.combo_repairs = repairs
        good_of = np.array(good, dtype=bool)
        blank = Request(0, 0, 0, 0, 0, False, "")
        made = [r or blank for r in results]
        for name in ("procs", "nodes", "ppn", "mem", "gpus"):
            fields[name] = np.array([getattr(r, name) for r in made], dtype=np.int64)[combo]
        fields["exclusive"] = np.array([r.exclusive for r in made], dtype=bool)[combo]
        fields["request"] = np.array([r.text for r in made], dtype=object)[combo]
        fields["combo"] = combo
        return good_of[combo]

    def job(self, position: int, lines: _Lines, path: str) -> _Job:
        """The :class:`_Job` the line-by-line reader would have built."""
        t = self.table

        def entry(index: int) -> tuple[int, str, str] | None:
            if index < 0:
                return None
            record = _line_record(lines.text(index), index + 1, path)
            assert record is not None                      # a line that gave a job record before
            return index + 1, record[2], record[3]

        return _Job(order=position, queued=entry(int(t.queued[position])), started=entry(int(t.started[position])),
                    ended=entry(int(t.ended[position])), deleted=bool(t.deleted[position]),
                    aborted=bool(t.aborted[position]), reruns=int(t.reruns[position]))

    def _apply_counts(self, report: CleaningReport) -> None:
        """The counts in the order the line-by-line reader first met each reason."""
        for _, _, kind, reason, count in sorted(self.events, key=lambda e: (e[0], e[1])):
            getattr(report, kind)(reason, count)


def _independent_request(attrs: dict[str, str], path: str) -> tuple[Request | None, tuple[str, ...]]:
    """A distinct request's :class:`Request` and its repairs, or None when it is bad, too large or
    depends on the job's hosts (those jobs are read one by one)."""
    where = {"file": path, "line": 0}
    try:
        repairs = CleaningReport()
        request = _request(attrs, where, repairs)
        if request != _request({**attrs, "exec_host": "h/0+h/1+h/2"}, where, CleaningReport()):
            return None, ()
    except WorkloadError:
        return None, ()
    if max(request.procs, request.nodes, request.ppn, request.gpus) > MAX_COUNT or request.mem > MAX_MAGNITUDE:
        return None, ()
    return request, tuple(repairs.repaired)


def _per_value(codes: np.ndarray, values: list[str], read: Any, absent: int) -> tuple[np.ndarray, np.ndarray]:
    """``read(value)`` of every job's value (``absent`` where it has none), and False where it fails."""
    results, good = [], []
    for value in values:
        try:
            results.append(read(value))
            good.append(True)
        except ValueError:
            results.append(absent)
            good.append(False)
    return (np.array(results + [absent], dtype=np.int64)[codes], np.array(good + [True], dtype=bool)[codes])


def _strings(codes: np.ndarray, values: list[str]) -> np.ndarray:
    """Each job's value ("" where it has none)."""
    return np.array(values + [""], dtype=object)[codes]


def _hosts(host_codes: np.ndarray, hosts: list[str], vnode_codes: np.ndarray, vnodes: list[str]) -> np.ndarray:
    """Each job's hosts as :func:`exec_hosts` lists them, ``;``-joined, once per distinct pair."""
    pair = (host_codes + 1) * (len(vnodes) + 1) + vnode_codes + 1
    distinct, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    joined = []
    for index in first.tolist():
        attrs = {}
        if host_codes[index] >= 0:
            attrs["exec_host"] = hosts[host_codes[index]]
        if vnode_codes[index] >= 0:
            attrs["exec_vnode"] = vnodes[vnode_codes[index]]
        joined.append(";".join(exec_hosts(attrs)))
    return np.array(joined, dtype=object)[inverse] if len(distinct) else np.zeros(0, dtype=object)


def _merge_rows(jobs: Jobs, simple: _Simple, still: np.ndarray, one_by_one: Jobs, done: list[int]) -> None:
    """The simple rows and the rows read one by one, in job order, into ``jobs``."""
    positions = np.concatenate([simple.positions[still], np.asarray(done, dtype=np.int64)])
    order = np.argsort(positions, kind="stable")
    for name in _FIELDS:
        read = simple.fields[name][still]
        other = np.asarray(getattr(one_by_one, name), dtype=read.dtype if read.dtype != object else object)
        column = np.concatenate([read, other])[order]
        setattr(jobs, name, column.tolist())
