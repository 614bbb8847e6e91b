"""What the accounting-log readers (PBS, Slurm sacct) share: recognising them by content, the
units they write (durations, sizes), and turning their jobs into a cleaned :class:`Workload`.

A reader collects one :class:`Jobs` table (one entry per job that ran, plus counts of the jobs left
out and why) and :func:`to_workload` does the rest the same way for both: jobs numbered 0..n-1 in
submit order (the scheduler's own id kept in the ``jobid`` column), user/group/queue names numbered
(engine.workload.names), the SWF fields written (so the recorded start is the SWF wait field, the
same as for any SWF trace), the node-level columns of the extended traces (``nodes``, ``ppn``,
``mem`` KB per node, ``gpus`` per node, ``exclusive``, ``queue_name``) and the hosts each job ran on
(``exec_hosts``, ``;``-joined), then the usual cleaning (engine.workload.transforms).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from engine.workload.errors import WorkloadError, shown
from engine.workload.lines import first_lines
from engine.workload.model import CleaningReport, Workload
from engine.workload.names import encode_names, name_metadata
from engine.workload.numbers import MAX_MAGNITUDE
from engine.workload.swf import (
    SWF_FIELDS,
    SwfTrace,
    _frame_from_matrix,
)
from engine.workload.timebase import ABSOLUTE
from engine.workload.transforms import Overrun, Oversize, clean

AccountingFormat = Literal["pbs", "slurm"]

PBS_RECORD = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Za-z];")
SLURM_HEADER_KEYS = {"jobid", "jobidraw"}

#: SWF status codes the readers write
STATUS_FAILED, STATUS_COMPLETED, STATUS_CANCELLED = 0, 1, 5


def detect_accounting(path: str | Path, *, max_lines: int = 20) -> AccountingFormat | None:
    """``pbs`` (a ``MM/DD/YYYY HH:MM:SS;T;id;...`` record among the first lines), ``slurm`` (a
    ``|``-separated header naming JobID or JobIDRaw) or None (not an accounting log)."""
    return detect_accounting_lines(first_lines(path, max_lines))


def detect_accounting_lines(lines: list[str]) -> AccountingFormat | None:
    for line in lines:
        if PBS_RECORD.match(line):
            return "pbs"
        if "|" in line and SLURM_HEADER_KEYS & {part.strip().lower() for part in line.split("|")}:
            return "slurm"
    return None


# --------------------------------------------------------------------------- units


class FieldError(ValueError):
    """A value a reader cannot use, and the field (column, attribute) it came from."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field

_DURATION = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(?:(\d+):)?(\d+)(?:\.\d+)?$")


def parse_duration(text: str) -> int:
    """Seconds of ``[D-]HH:MM:SS``, ``HH:MM:SS``, ``MM:SS`` or plain seconds (Slurm, PBS walltime;
    a fraction of a second is dropped). Raises ValueError."""
    match = _DURATION.match(text.strip())
    if not match:
        raise ValueError(f"expected a duration like 01:30:00 or 2-00:00:00, got {shown(text)}")
    days, first, second, last = match.groups()
    if max(len(g or "") for g in match.groups()) > 12:
        raise ValueError(f"duration too long: {shown(text)}")
    parts = [int(p) for p in (first, second) if p is not None] + [int(last)]
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + part
    if len(parts) == 2 and days is not None:     # D-HH:MM
        seconds *= 60
    return seconds + int(days or 0) * 86400


_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([kmgtp]?)(b|w)?$", re.IGNORECASE)
_SIZE_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


def parse_size_kb(text: str, *, default_unit: str = "b") -> int:
    """KB (1024 bytes) of a PBS size (``600mb``, ``307200kb``, ``2gb``, ``10w``; a bare number is in
    ``default_unit``: bytes for PBS, ``m`` (MB) for Slurm). Raises ValueError."""
    match = _SIZE.match(text.strip())
    if not match:
        raise ValueError(f"expected a size like 600mb or 4gb, got {shown(text)}")
    number, prefix, unit = float(match.group(1)), match.group(2).lower(), (match.group(3) or "").lower()
    if not prefix and not unit:
        prefix, unit = (default_unit[:-1], default_unit[-1]) if default_unit.endswith("b") else (default_unit, "b")
    factor = 1024 ** _SIZE_POWER[prefix] * (8 if unit == "w" else 1)
    kb = np.ceil(number * factor / 1024)
    if not kb < MAX_MAGNITUDE:
        raise ValueError(f"size too large: {shown(text)}")
    return int(kb)


def offset_label(seconds: int) -> str:
    """``UTC+01:00`` for 3600."""
    sign = "+" if seconds >= 0 else "-"
    minutes = abs(seconds) // 60
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


# --------------------------------------------------------------------------- jobs -> workload


@dataclass
class Jobs:
    """What a reader collected: one list entry per job that ran (row-aligned lists) and the report
    of what it left out or repaired. Times are Unix epochs; -1 = unknown."""

    jobid: list[str] = field(default_factory=list)
    order: list[float] = field(default_factory=list)          # tie-break among equal submits
    submit: list[int] = field(default_factory=list)
    start: list[int] = field(default_factory=list)
    runtime: list[int] = field(default_factory=list)
    procs: list[int] = field(default_factory=list)
    requested_time: list[int] = field(default_factory=list)
    status: list[int] = field(default_factory=list)
    user: list[str] = field(default_factory=list)
    group: list[str] = field(default_factory=list)
    account: list[str] = field(default_factory=list)
    queue: list[str] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)             # 0 = spread anywhere (no node shape)
    ppn: list[int] = field(default_factory=list)
    mem: list[int] = field(default_factory=list)               # KB per node (per job when nodes=0)
    gpus: list[int] = field(default_factory=list)              # per node (per job when nodes=0)
    exclusive: list[bool] = field(default_factory=list)
    exec_hosts: list[str] = field(default_factory=list)
    request: list[str] = field(default_factory=list)           # the request as written (select, ...)
    qos: list[str] = field(default_factory=list)               # Slurm's QOS ([] = the reader has none)
    report: CleaningReport = field(default_factory=CleaningReport)

    def __len__(self) -> int:
        return len(self.submit)


def to_workload(jobs: Jobs, *, source: str, fmt: AccountingFormat, metadata: dict, procs: int | None,
                oversize: Oversize, overrun: Overrun) -> Workload:
    """Number, encode and clean the jobs a reader collected (see the module docstring)."""
    if not len(jobs):
        left_out = jobs.report.total_rejected
        detail = f" ({left_out} left out: {', '.join(jobs.report.rejected)})" if left_out else ""
        raise WorkloadError(f"no jobs that ran in this {fmt} log{detail}", file=source)
    n = len(jobs)
    submit = np.asarray(jobs.submit, dtype=np.int64)
    order = np.lexsort((np.asarray(jobs.order, dtype=np.float64), submit))
    start = np.asarray(jobs.start, dtype=np.int64)
    users, user_names = encode_names(jobs.user)
    groups, group_names = encode_names(jobs.group)
    queues, queue_names = encode_names(jobs.queue)
    procs_column = np.asarray(jobs.procs, dtype=np.int64)
    columns = {
        "job_number": np.empty(n, dtype=np.int64), "submit_time": submit,
        "wait_time": np.where(start >= 0, start - submit, -1), "run_time": np.asarray(jobs.runtime, dtype=np.int64),
        "allocated_procs": procs_column, "avg_cpu_time": np.full(n, -1), "used_memory": np.full(n, -1),
        "requested_procs": procs_column, "requested_time": np.asarray(jobs.requested_time, dtype=np.int64),
        "requested_memory": np.full(n, -1), "status": np.asarray(jobs.status, dtype=np.int64),
        "user_id": users, "group_id": groups, "executable": np.full(n, -1), "queue": queues,
        "partition": np.full(n, -1), "preceding_job": np.full(n, -1), "think_time": np.full(n, -1),
    }
    columns["job_number"][order] = np.arange(n)
    matrix = np.column_stack([np.asarray(columns[name], dtype=np.float64) for name in SWF_FIELDS])
    trace = SwfTrace(jobs=_frame_from_matrix(matrix), metadata={}, source=source,
                     names={"user": user_names, "group": group_names, "queue": queue_names})
    extra = pd.DataFrame({
        "nodes": np.asarray(jobs.nodes, dtype=np.int64), "ppn": np.asarray(jobs.ppn, dtype=np.int64),
        "mem": np.asarray(jobs.mem, dtype=np.int64), "gpus": np.asarray(jobs.gpus, dtype=np.int64),
        "exclusive": np.asarray(jobs.exclusive, dtype=bool), "queue_name": jobs.queue,
        "clusters": "", "exclude": "", "hosts": "", "properties": "", "nodespec": jobs.request,
        "jobid": jobs.jobid, "account": jobs.account, "exec_hosts": jobs.exec_hosts,
        "qos": jobs.qos if len(jobs.qos) == n else [""] * n,
    })
    size = int(procs) if procs is not None else max(int(procs_column.max()), 1)
    workload = clean(trace, machine_procs=size, oversize=oversize, overrun=overrun, extra=extra)
    merge_reports(workload.report, jobs.report)
    workload.metadata.update(metadata)
    workload.metadata.update(name_metadata({"user": user_names, "group": group_names, "queue": queue_names}))
    workload.metadata.update({"format": fmt, "UnixStartTime": int(submit.min()), "TimeBase": ABSOLUTE})
    if procs is None:
        workload.metadata["procs"] = size
        workload.metadata["procs_note"] = "largest job (an accounting log does not state the machine size)"
    return workload


def merge_reports(into: CleaningReport, other: CleaningReport) -> None:
    """Add ``other``'s counts to ``into`` (the reader's to cleaning's)."""
    for reason, count in other.rejected.items():
        into.reject(reason, count)
    for reason, count in other.repaired.items():
        into.repair(reason, count)
    for reason, count in other.kept.items():
        into.keep(reason, count)
    into.bad_lines += other.bad_lines
    into.keep_examples(other.bad_line_examples)
