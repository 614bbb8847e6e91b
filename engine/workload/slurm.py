"""Slurm ``sacct --parsable2`` dumps as traces.

The first line names the columns (``|``-separated, any subset in any order, case-insensitive;
``--parsable`` dumps with a trailing ``|`` read too); one job or step per line after it. Made with::

    sacct --allusers --parsable2 --allocations --starttime ... --endtime ... \\
      --format=JobID,JobIDRaw,Partition,QOS,Account,User,Group,Submit,Eligible,Start,End,Elapsed,State,\\
NNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,AllocTRES,Timelimit,NodeList

Needed: ``JobID`` (or ``JobIDRaw``), ``Submit`` and ``Start`` with ``End`` or ``Elapsed``.

* Steps (``123.batch``, ``123.extern``, ``123.0``: dumps made without ``--allocations``) are
  skipped, counted. Array elements ``123_4`` and heterogeneous components ``123+0`` are jobs; a
  pending array remainder ``123_[5-9%2]`` counts its elements as never started.
* Jobs that never started (``Start`` ``Unknown``/``None``: cancelled before they started,
  pending when dumped) and jobs without an end (running when dumped) are left out, counted by state.
* Times: ISO ``2024-03-01T08:00:05`` in the cluster's local time, which sacct prints without its
  offset: they are kept as they are (read as if UTC), so calendar dates show the cluster's local
  time; the metadata says so (``TimeZoneString``).
* Runtime ``End - Start``; ``Elapsed`` only in a dump without an End column (counted); a job still
  running (End ``Unknown``, State RUNNING) is left out. Processors: ``NCPUS``/``AllocCPUS``, else
  ``ReqCPUS``, else ``cpu=`` of ``AllocTRES``/``ReqTRES``, else 1 (counted). Nodes: ``NNodes``
  (``AllocNodes``), ppn = processors / nodes rounded up. Memory: ``ReqMem`` with its ``n`` (per node)
  or ``c`` (per CPU) suffix; without one (Slurm >= 21) ``mem=`` of ``ReqTRES`` is the job's total,
  else ReqMem is per node; units K, M (default), G, T. GPUs: ``gres/gpu=N`` (or ``gres/gpu:type=N``)
  of AllocTRES, else ReqTRES. ``Timelimit`` ``[D-]HH:MM:SS``; ``UNLIMITED``/``Partition_Limit``:
  none (cleaning sets it to the runtime, counted). Queue: ``Partition``; user ``User`` (else ``UID``),
  group ``Group`` (else ``GID``), ``Account``, ``QOS``. Hosts: ``NodeList`` (``n[001-004,010]``).
"""

from __future__ import annotations

import gzip
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.workload.accounting import (
    STATUS_CANCELLED,
    STATUS_COMPLETED,
    STATUS_FAILED,
    FieldError,
    Jobs,
    parse_duration,
    parse_size_kb,
    to_workload,
)
from engine.workload.errors import WorkloadError, shown
from engine.workload.model import CleaningReport, Workload
from engine.workload.numbers import MAX_COUNT, whole_number
from engine.workload.swf import ENCODING, _inspect, _open_text
from engine.workload.transforms import Overrun, Oversize

MAX_KEPT_ERRORS = 1000
#: The most hosts one job's NodeList may expand to (``n[1-99999999]`` is refused, not expanded).
MAX_HOSTS = 100_000
#: The most hosts a whole dump's NodeLists may expand to: this many, plus HOSTS_PER_JOB per job read.
#: Without it a 17.8 KB .gz of 2,000 lines naming ``n[1-99999],xN`` took 40 s and 8.2 GB to parse (each
#: line 700 KB of host names); a real 20,000-job dump with one job on ``n[0001-2048]`` needs 60,000.
HOST_BUDGET = 2_000_000
HOSTS_PER_JOB = 64
NEVER = frozenset({"", "unknown", "none"})

KEPT_STEPS = "job steps skipped (.batch, .extern, .N)"
REJECT_CANCELLED = "cancelled before it started"
REJECT_PENDING = "pending when dumped (never started)"
REJECT_RUNNING = "running when dumped (no end)"
REJECT_NOT_STARTED = "never started"
REPAIR_ELAPSED = "runtime from Elapsed (no End)"
REPAIR_PROCS_UNKNOWN = "processors unknown: 1"

#: the columns the reader uses (the fast path reads only these)
USED_COLUMNS = frozenset({"jobid", "jobidraw", "partition", "qos", "account", "user", "uid", "group", "gid", "submit",
                          "start", "end", "elapsed", "state", "nnodes", "allocnodes", "ncpus", "alloccpus", "reqcpus",
                          "reqmem", "reqtres", "alloctres", "timelimit", "nodelist"})
_NEVER_TEXTS = ["", "Unknown", "None", "unknown", "none", "UNKNOWN", "NONE"]
_ARRAY_REMAINDER = re.compile(r"^\d+_\[([^\]]*)\]$")
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"


#: formats whose times are the cluster's wall clock read as if UTC (sacct prints no offset): a zone named
#: for such a trace names its clock, the times are not converted into it
WALL_CLOCK_FORMATS = frozenset({"slurm"})
LOCAL_WALL_CLOCK = "the cluster's local time (sacct prints no offset)"

def load_sacct(path: str | Path, *, procs: int | None = None, oversize: Oversize = "reject",
               overrun: Overrun = "kill", skip_bad_lines: bool = False, max_records: int | None = None) -> Workload:
    """Read a ``sacct --parsable2`` dump into a cleaned Workload (see the module docstring)."""
    source = _inspect(path)
    frame = _read_fast(source) if max_records is None else None
    report, errors = CleaningReport(), []
    if frame is None:
        frame, report, errors = _read_rows(source, skip_bad_lines=skip_bad_lines, max_records=max_records)
    jobs = _jobs(frame, source.path, report, skip_bad_lines, errors)
    metadata = {"TimeZoneString": LOCAL_WALL_CLOCK}
    return to_workload(jobs, source=source.path, fmt="slurm", metadata=metadata, procs=procs,
                       oversize=oversize, overrun=overrun)


def check_sacct_head(path: str | Path, *, max_lines: int = 200, max_errors: int = 20) -> list[WorkloadError]:
    """Upload check: the header and the first ``max_lines`` lines; problems name line and field."""
    try:
        source = _inspect(path)
        frame, report, errors = _read_rows(source, skip_bad_lines=True, max_records=max_lines)
        _jobs(frame, source.path, report, True, errors)
    except WorkloadError as error:
        return [error]
    return errors[:max_errors]


# --------------------------------------------------------------------------- lines -> rows


def _read_fast(source) -> pd.DataFrame | None:
    """The whole dump through pandas' C parser (columns lowercased, ``_line`` = the physical line),
    or None when it cannot vouch for it (a ragged or short line, a ``;`` comment): the line-by-line
    reader then finds and names the problem."""
    with _open_text(source) as stream:
        first = next((line for line in stream if line.strip()), "")
    names = [name.strip().lower() for name in first.rstrip("\r\n").split("|")]
    if first.startswith(";") or len(set(names)) != len(names):
        return None                  # a comment or a column named twice: the careful reader says so
    try:
        frame = pd.read_csv(source.path, sep="|", dtype=object, na_filter=False, keep_default_na=False,
                            skip_blank_lines=False, engine="c", encoding=ENCODING,
                            usecols=lambda name: name.strip().lower() in USED_COLUMNS or name.startswith("Unnamed:"),
                            compression="gzip" if source.compressed else None)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeDecodeError, OSError, EOFError):
        return None
    frame.columns = [str(name).strip().lower() for name in frame.columns]
    if frame.shape[1] == 0 or not {"jobid", "jobidraw"} & set(frame.columns):
        return None                  # no usable column: the careful reader names what is missing
    if frame.columns[-1].startswith("unnamed:"):          # --parsable: every line ends with |
        frame = frame.iloc[:, :-1]
    frame["_line"] = np.arange(2, len(frame) + 2)
    first = frame.columns[0]
    blank = frame[first] == ""
    frame = frame.loc[~blank]
    if not {"jobid", "jobidraw"} & set(frame.columns) or frame[first].str.startswith(";").any():
        return None
    if not _every_line_complete(source):
        return None
    try:
        _header(list(frame.columns[:-1]), 1, source.path)
    except WorkloadError:
        return None
    return frame.reset_index(drop=True)


def _every_line_complete(source) -> bool:
    """Every non-blank line has as many ``|`` as the header (the C parser would fill a short line's
    missing fields with empty ones, which a dump also writes for empty values)."""
    opener = gzip.open if source.compressed else open
    with opener(source.path, "rb") as stream:
        data = np.frombuffer(stream.read(), dtype=np.uint8)
    if not len(data):
        return False
    from engine.workload import logscan     # imports numba (~0.5 s): only when a dump is read

    pipes, filled = logscan.separators_per_line(data, 124, logscan.BYTE_SPACE)
    return len(np.unique(pipes[filled])) == 1


def _read_rows(source, *, skip_bad_lines: bool, max_records: int | None):
    """The dump line by line: (frame with ``_line``, report, errors)."""
    header: list[str] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    errors: list[WorkloadError] = []
    report = CleaningReport()
    with _open_text(source) as stream:
        for lineno, line in enumerate(stream, start=1):
            if max_records is not None and lineno > max_records:
                break
            text = line.rstrip("\r\n")
            if not text.strip() or text.startswith(";"):
                continue
            fields = text.split("|")
            if header is None:
                header = _header(fields, lineno, source.path)
                continue
            if len(fields) == len(header) + 1 and fields[-1] == "":
                fields.pop()                      # --parsable (not 2) ends every line with |
            if len(fields) != len(header):
                error = WorkloadError(f"line has {len(fields)} fields, the header names {len(header)}",
                                      file=source.path, line=lineno,
                                      field=_title(header[min(len(fields), len(header) - 1)]))
                if not skip_bad_lines:
                    raise error
                report.bad_lines += 1
                if len(errors) < MAX_KEPT_ERRORS:
                    errors.append(error)
                continue
            rows.append(fields)
            lines.append(lineno)
    if header is None:
        raise WorkloadError("no header line naming the sacct columns (JobID|...)", file=source.path)
    frame = pd.DataFrame(rows, columns=header) if rows else pd.DataFrame(columns=header)
    frame["_line"] = lines
    return frame, report, errors


def _header(fields: list[str], lineno: int, path: str) -> list[str]:
    names = [name.strip().lower() for name in fields]
    if names and names[-1] == "":
        names.pop()
    for position, name in enumerate(names):
        if name and name in names[:position]:
            raise WorkloadError(f"the header names {_title(name)} twice", file=path, line=lineno, field=_title(name))
    if not {"jobid", "jobidraw"} & set(names):
        raise WorkloadError("the header names no JobID or JobIDRaw column", file=path, line=lineno, field="JobID")
    for needed in ("submit", "start"):
        if needed not in names:
            raise WorkloadError(f"the header names no {needed.title()} column (needed)", file=path, line=lineno,
                                field=needed.title())
    if "end" not in names and "elapsed" not in names:
        raise WorkloadError("the header names neither End nor Elapsed (one is needed)", file=path, line=lineno,
                            field="End")
    return names


# --------------------------------------------------------------------------- rows -> jobs


def _jobs(frame: pd.DataFrame, path: str, report: CleaningReport, skip_bad_lines: bool,
          errors: list[WorkloadError]) -> Jobs:
    jobid = frame["jobid"] if "jobid" in frame else frame["jobidraw"]
    steps = jobid.str.contains(".", regex=False)
    report.keep(KEPT_STEPS, int(steps.sum()))
    frame = frame.loc[~steps].reset_index(drop=True)
    jobid = jobid.loc[~steps].reset_index(drop=True)
    remainder = jobid.str.contains("[", regex=False)
    if remainder.any():
        remainder[remainder] = jobid[remainder].str.match(_ARRAY_REMAINDER)
    report.reject(REJECT_PENDING, sum(_array_size(text) for text in jobid[remainder]))
    frame, jobid = frame.loc[~remainder].reset_index(drop=True), jobid.loc[~remainder].reset_index(drop=True)

    bad = np.zeros(len(frame), dtype=bool)
    problems: list[WorkloadError] = []

    def fail(mask: np.ndarray, column: str, message: str) -> None:
        for row in np.flatnonzero(mask & ~bad)[: MAX_KEPT_ERRORS]:
            value = frame[column].iloc[row]
            problems.append(WorkloadError(f"{message}, got {value[:40]!r}", file=path,
                                          line=int(frame["_line"].iloc[row]), field=_title(column)))
        bad[:] |= mask

    submit = _times(frame, "submit", fail, required=True)
    start = _times(frame, "start", fail)
    end = _times(frame, "end", fail) if "end" in frame else np.full(len(frame), -1)
    elapsed = _durations(frame, "elapsed", fail) if "elapsed" in frame else np.full(len(frame), -1)
    limit = _durations(frame, "timelimit", fail) if "timelimit" in frame else np.full(len(frame), -1)
    ncpus = _integers(frame, ("ncpus", "alloccpus"), fail)
    reqcpus = _integers(frame, ("reqcpus",), fail)
    nnodes = _integers(frame, ("nnodes", "allocnodes"), fail)
    if problems:
        problems.sort(key=lambda e: e.line or 0)
        if not skip_bad_lines:
            raise problems[0]
        report.bad_lines += int(bad.sum())
        errors.extend(problems[: MAX_KEPT_ERRORS - len(errors)])

    state = pd.Series(_mapped(frame["state"].tolist(), lambda text: text.strip().split(" ", 1)[0].upper())
                      if "state" in frame else [""] * len(frame))
    started = ~bad & (start >= 0)
    for reason, mask in ((REJECT_CANCELLED, state == "CANCELLED"), (REJECT_PENDING, state == "PENDING")):
        report.reject(reason, int((~bad & ~started & mask.to_numpy()).sum()))
    other = ~bad & ~started & ~state.isin(["CANCELLED", "PENDING"]).to_numpy()
    report.reject(REJECT_NOT_STARTED, int(other.sum()))
    has_end = "end" in frame
    running = state.isin(["RUNNING", "SUSPENDED", "REQUEUED", "RESIZING"]).to_numpy()
    no_end = started & (running | ((end < 0) if has_end else (elapsed < 0)))
    report.reject(REJECT_RUNNING, int(no_end.sum()))
    keep = started & ~no_end
    runtime = np.where(end >= start, end - start, -1)
    from_elapsed = keep & (runtime < 0)
    report.repair(REPAIR_ELAPSED, int(from_elapsed.sum()))
    runtime = np.where(from_elapsed, elapsed, runtime)

    kept = np.flatnonzero(keep)
    part = frame.iloc[kept]

    def texts(*names: str) -> list[str]:
        for name in names:
            if name in part:
                return _mapped(part[name].tolist(), str.strip)
        return [""] * len(part)

    failures: dict[int, WorkloadError] = {}

    def checked(values: list, rows: list[int] | None = None) -> list:
        """Values that are exceptions become failures of their rows (line and field named), 0 here."""
        if not any(isinstance(value, Exception) for value in set(values)):
            return values
        for row, value in zip(rows if rows is not None else range(len(values)), values):
            if isinstance(value, Exception) and row not in failures:
                failures[row] = WorkloadError(str(value), file=path, line=int(part["_line"].iloc[row]),
                                              field=getattr(value, "field", "ReqMem"))
        return [0 if isinstance(value, Exception) else value for value in values]

    alloc, req = texts("alloctres"), texts("reqtres")
    cpus = np.where(ncpus[kept] > 0, ncpus[kept], reqcpus[kept])
    missing = np.flatnonzero(cpus <= 0).tolist()
    cpus[missing] = checked([_attempt(lambda a=alloc[row], r=req[row]: _tres(a, "cpu", "AllocTRES")  # type: ignore[misc]
                                      or _tres(r, "cpu", "ReqTRES")) for row in missing], missing)
    unknown = cpus <= 0
    report.repair(REPAIR_PROCS_UNKNOWN, int(unknown.sum()))
    cpus = np.where(unknown, 1, cpus)
    nodes = nnodes[kept].copy()
    missing = np.flatnonzero(nodes <= 0).tolist()
    nodes[missing] = checked([_attempt(lambda a=alloc[row], r=req[row]: _tres(a, "node", "AllocTRES")  # type: ignore[misc]
                                       or _tres(r, "node", "ReqTRES")) for row in missing], missing)
    nodes = np.maximum(nodes, 1)
    ppn = -(-cpus // nodes)
    gpus = np.array(checked(_mapped(list(zip(alloc, req)), lambda pair: _attempt(
        lambda: _tres(pair[0], "gres/gpu", "AllocTRES") or _tres(pair[1], "gres/gpu", "ReqTRES")))), dtype=np.int64)
    memories = checked(_mapped(list(zip(texts("reqmem"), req, nodes.tolist(), ppn.tolist())),
                               lambda key: _attempt(lambda: _memory_per_node(*key))))
    nodelists = texts("nodelist")
    _check_host_budget(nodelists, part["_line"].to_numpy(), path)
    hosts = checked(_mapped(nodelists, lambda text: _attempt(lambda: ";".join(expand_hostlist(text)))))
    for row in sorted(failures):
        if not skip_bad_lines:
            raise failures[row]
        if len(errors) < MAX_KEPT_ERRORS:
            errors.append(failures[row])
    report.bad_lines += len(failures)
    good = np.ones(len(part), dtype=bool)
    good[list(failures)] = False
    take = np.flatnonzero(good)
    states = state.to_numpy()[kept]
    report.note_bad_lines(errors)
    jobs = Jobs(report=report)
    jobs.jobid = jobid.to_numpy()[kept][take].astype(str).tolist()
    jobs.order = kept[take].tolist()
    jobs.submit, jobs.start = submit[kept][take].tolist(), start[kept][take].tolist()
    jobs.runtime, jobs.procs, jobs.requested_time = runtime[kept][take].tolist(), cpus[take].tolist(), limit[kept][take].tolist()
    jobs.status = _mapped(states[take].tolist(), _status)
    jobs.user = _taken(texts("user", "uid"), take)
    jobs.group = _taken(texts("group", "gid"), take)
    jobs.account = _taken(texts("account"), take)
    jobs.qos = _taken(texts("qos"), take)
    jobs.queue = _taken(texts("partition"), take)
    jobs.nodes, jobs.ppn = nodes[take].tolist(), ppn[take].tolist()
    jobs.mem = [int(memories[row]) for row in take.tolist()]
    jobs.gpus = (-(-gpus[take] // nodes[take])).tolist()
    jobs.exclusive = [False] * len(take)
    jobs.exec_hosts = _taken(hosts, take)
    jobs.request = _taken(req, take)
    return jobs


def _check_host_budget(nodelists: list[str], lines: np.ndarray, path: str) -> None:
    """Refuse, before expanding them, host lists that would name more than HOST_BUDGET + HOSTS_PER_JOB
    per job in all (the line where the total passes it is named): bounded memory and time."""
    counts = np.array(_mapped(nodelists, count_hosts), dtype=np.int64)
    budget = HOST_BUDGET + HOSTS_PER_JOB * len(nodelists)
    total = np.cumsum(counts)
    if len(total) and total[-1] > budget:
        row = int(np.argmax(total > budget))
        raise WorkloadError(f"the NodeLists name more than {budget:,} hosts in all ({HOST_BUDGET:,} and "
                            f"{HOSTS_PER_JOB} per job); this reader does not expand so many", file=path,
                            line=int(lines[row]), field="NodeList")


def _attempt(function: Callable[[], Any]) -> Any:
    """``function()``, or the ValueError it raised (kept as a value, reported with its row)."""
    try:
        return function()
    except ValueError as exc:
        return exc


def _mapped(values: list, function) -> list:
    """``function`` of each value, computed once per distinct value (dumps repeat a few values a lot)."""
    table = {value: function(value) for value in dict.fromkeys(values)}
    return [table[value] for value in values]


def _taken(values: list, rows: np.ndarray) -> list:
    return values if len(rows) == len(values) else [values[row] for row in rows.tolist()]


def _times(frame: pd.DataFrame, column: str, fail, *, required: bool = False) -> np.ndarray:
    """Epoch seconds of an ISO column (local time read as UTC); -1 for Unknown/None."""
    text = frame[column]
    parsed = pd.to_datetime(text, format=_TIME_FORMAT, errors="coerce")
    never = text.isin(_NEVER_TEXTS).to_numpy()
    bad = parsed.isna().to_numpy() & (~never | required)
    fail(bad, column, "expected a time like 2024-03-01T08:00:05" + (" (needed)" if required else ""))
    seconds = (parsed - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1)
    return np.where(parsed.isna(), -1, seconds.fillna(-1)).astype(np.int64)


def _durations(frame: pd.DataFrame, column: str, fail) -> np.ndarray:
    """Seconds of ``[D-]HH:MM:SS`` / ``MM:SS``; -1 for UNLIMITED, Partition_Limit, empty or INVALID."""
    codes, texts = pd.factorize(frame[column], sort=False)
    seconds = np.full(len(texts) + 1, -1, dtype=np.int64)        # once per distinct text
    wrong = np.zeros(len(texts) + 1, dtype=bool)
    for code, text in enumerate(texts.tolist()):
        stripped = text.strip()
        if stripped.lower() in ("", "unlimited", "partition_limit", "invalid", "unknown", "none"):
            continue
        try:
            seconds[code] = parse_duration(stripped)
        except ValueError:
            wrong[code] = True
    fail(wrong[codes], column, "expected a duration like 01:30:00 or 2-00:00:00")
    return seconds[codes]


def _integers(frame: pd.DataFrame, names: tuple[str, ...], fail) -> np.ndarray:
    """The first of ``names`` the dump has, as integers (0 where empty)."""
    for name in names:
        if name in frame:
            text = frame[name]
            try:
                values = text.astype(np.int64).to_numpy()
            except (ValueError, TypeError, OverflowError):
                values = None
            if values is not None and not ((values < 0) | (values > MAX_COUNT)).any():
                return values
            numbers = [whole_number(text.strip() or "0", maximum=MAX_COUNT) for text in frame[name].tolist()]
            fail(np.array([n is None for n in numbers], dtype=bool), name, f"expected a whole number up to {MAX_COUNT}")
            return np.array([n or 0 for n in numbers], dtype=np.int64)
    return np.zeros(len(frame), dtype=np.int64)


def _text(frame: pd.DataFrame, names: tuple[str, ...]) -> list[str]:
    for name in names:
        if name in frame:
            return frame[name].str.strip().tolist()
    return [""] * len(frame)


def _tres(text: str, key: str, column: str) -> int:
    """The count of ``key`` in a TRES list ``cpu=4,mem=4000M,node=1,gres/gpu=2`` (typed gres summed).
    Raises FieldError (naming ``column``) for a count above MAX_COUNT."""
    total = 0
    for item in str(text).split(","):
        name, _, value = item.partition("=")
        if name == key or name.startswith(key + ":"):
            digits = re.match(r"\d+", value)
            count = whole_number(digits.group(0), maximum=MAX_COUNT) if digits else 0
            if count is None or total + count > MAX_COUNT:
                raise FieldError(column, f"{key} count above {MAX_COUNT} in {shown(text)}")
            total += count
    return total


def _memory_per_node(reqmem: str, reqtres: str, nodes: int, ppn: int) -> int:
    """KB per node from ReqMem (``4000Mn`` per node, ``2000Mc`` per CPU; plain: ReqTRES mem= is the
    job's total, else per node). Raises ValueError."""
    text = str(reqmem).strip()
    if text in ("", "0", "0n", "0c"):
        return 0
    per = text[-1].lower() if text[-1].lower() in "nc" else ""
    value = text[:-1] if per else text
    kb = parse_size_kb(value, default_unit="mb")
    if per == "c":
        return kb * ppn
    if per == "n":
        return kb
    total = next((item.partition("=")[2] for item in str(reqtres).split(",") if item.startswith("mem=")), "")
    return math.ceil(parse_size_kb(total, default_unit="mb") / nodes) if total else kb


def _status(state: str) -> int:
    state = str(state)
    if state == "COMPLETED":
        return STATUS_COMPLETED
    return STATUS_CANCELLED if state == "CANCELLED" else STATUS_FAILED


def _array_size(jobid: str) -> int:
    """Elements of a pending array remainder ``123_[5-9,12%2]`` (5-9 and 12: 6)."""
    match = _ARRAY_REMAINDER.match(jobid)
    body = match.group(1).split("%", 1)[0] if match else ""
    total = 0
    for part in filter(None, body.split(",")):
        low, _, high = part.partition("-")
        step = 1
        if ":" in high:
            high, _, step_text = high.partition(":")
            step = whole_number(step_text, maximum=MAX_COUNT) or 1
        first, last = whole_number(low, maximum=MAX_COUNT), whole_number(high, maximum=MAX_COUNT)
        if first is not None and (not high or last is not None):
            total += max(last - first, 0) // step + 1 if last is not None else 1
    return total


def expand_hostlist(text: str) -> list[str]:
    """Slurm host list ``n[001-003,010],gpu5`` -> ``['n001', 'n002', 'n003', 'n010', 'gpu5']``;
    ``None assigned`` and empty -> []."""
    hosts: list[str] = []
    for part in _host_ranges(text):
        if isinstance(part, str):
            hosts.append(part)
            continue
        prefix, low, first, last, suffix = part
        if len(hosts) + last - first >= MAX_HOSTS:
            raise FieldError("NodeList", f"more than {MAX_HOSTS} hosts in {shown(str(text).strip())}")
        hosts.extend(f"{prefix}{i:0{len(low)}d}{suffix}" for i in range(first, last + 1))
    return list(dict.fromkeys(hosts))


def count_hosts(text: str) -> int:
    """How many names :func:`expand_hostlist` would make of ``text`` (before removing repeats),
    counted without making them."""
    return sum(1 if isinstance(part, str) else max(part[3] - part[2] + 1, 0) for part in _host_ranges(text))


def _host_ranges(text: str) -> Iterator[str | tuple[str, str, int, int, str]]:
    """Each piece of a host list: a name as it is (a plain name, or a bracket that is not a range),
    or a range ``(prefix, low, first, last, suffix)``."""
    text = str(text).strip()
    if not text or text.lower().startswith("none"):
        return
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", text):
        match = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", item)
        if not match:
            yield item
            continue
        prefix, ranges, suffix = match.groups()
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            first, last = whole_number(low), whole_number(high)
            if first is not None and last is not None:
                yield prefix, low, first, last, suffix
            else:
                yield f"{prefix}{low}{suffix}"


_TITLES = {"jobid": "JobID", "jobidraw": "JobIDRaw", "submit": "Submit", "start": "Start", "end": "End",
           "elapsed": "Elapsed", "timelimit": "Timelimit", "ncpus": "NCPUS", "alloccpus": "AllocCPUS",
           "reqcpus": "ReqCPUS", "nnodes": "NNodes", "allocnodes": "AllocNodes", "reqmem": "ReqMem",
           "state": "State", "partition": "Partition", "user": "User", "uid": "UID", "group": "Group",
           "gid": "GID", "account": "Account", "qos": "QOS", "eligible": "Eligible", "reqtres": "ReqTRES",
           "alloctres": "AllocTRES", "nodelist": "NodeList"}


def _title(column: str) -> str:
    """The column's name as sacct spells it."""
    return _TITLES.get(column, column)
