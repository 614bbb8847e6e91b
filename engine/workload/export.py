"""Any trace the engine reads, written back as SWF (18 fields) or extended SWF (MetaCentrum's 21).

What is written is the *cleaned* workload (what every simulation sees): job numbers, submit times,
the recorded wait (-1 where unknown), runtime, processors, requested time, status, and user / group
/ queue as numbers (the names are in the header as ``; UserNames: 1=alice 2=bob``, ``; QueueNames:
...``). Submit times: in SWF, seconds from the header's ``UnixStartTime`` as the format says (a
trace whose times are epochs is written relative to its first submit, so no reader adds the start
twice); in extended SWF, Unix epochs and no ``UnixStartTime`` (MetaCentrum's own convention).
Extended SWF adds the hosts each job ran on ``{h1,h2}``, the queue name and a nodespec ``N:ppn=P``
(``1:ppn=P`` for a job that may spread anywhere, P its processors), and writes requested memory in
bytes per node (MetaCentrum's unit).
Reading the file back gives the same jobs (tests/engine/workload/test_export.py).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from engine.workload.model import Workload
from engine.workload.names import NAME_KEYS, names_of
from engine.workload.swf import SWF_FIELDS
from engine.workload.timebase import epoch_origin

HEADER_KEYS = ("TimeZone", "TimeZoneString", "UnixStartTime")


def write_swf(workload: Workload, target: str | Path | IO[str], *, extended: bool = False) -> None:
    """Write ``workload`` as SWF (or extended SWF) to a path or a text stream."""
    if isinstance(target, (str, Path)):
        with open(target, "w", encoding="utf-8") as stream:
            write_swf(workload, stream, extended=extended)
        return
    for line in header_lines(workload, extended=extended):
        target.write(line + "\n")
    frame = swf_frame(workload, extended=extended)
    frame.to_csv(target, sep=" ", header=False, index=False)


def swf_text(workload: Workload, *, extended: bool = False) -> str:
    """The SWF file as a string (for a download)."""
    buffer = io.StringIO()
    write_swf(workload, buffer, extended=extended)
    return buffer.getvalue()


def header_lines(workload: Workload, *, extended: bool) -> list[str]:
    metadata = workload.metadata
    jobs = workload.jobs
    source = metadata.get("format", "swf")
    lines = ["; Version: 2.2",
             f"; Conversion: SchedLab, from the {source} trace {Path(workload.source).name or '(unnamed)'}",
             (f"; Note: {'extended SWF (MetaCentrum 21 fields: hosts, queue name, nodespec)' if extended else 'SWF'};"
              + (" submit times are Unix epochs" if extended else " submit times count from UnixStartTime")),
             f"; MaxJobs: {len(jobs)}", f"; MaxProcs: {metadata.get('procs', int(jobs['procs'].max()) if len(jobs) else 0)}"]
    start = written_origin(workload, extended=extended)
    for key in HEADER_KEYS:
        value = start if key == "UnixStartTime" else metadata.get(key)
        if value not in (None, "", 0):
            lines.append(f"; {key}: {value}")
    for column, key in NAME_KEYS.items():
        names = names_of(metadata, column)
        if names:
            pairs = " ".join(f"{number}={name}" for number, name in sorted(names.items()))
            lines.append(f"; {key.title().replace('_', '')}: {pairs}")
    return lines + [";"]


def written_origin(workload: Workload, *, extended: bool) -> int | None:
    """The ``UnixStartTime`` the file says its submit times count from (None: none written): in SWF
    the trace's own start, its first submit when its times are epochs; extended SWF has epochs."""
    jobs = workload.jobs
    first = int(jobs["submit"].min()) if len(jobs) else None
    origin = epoch_origin(workload.metadata, first)
    if extended or origin is None:
        return None
    return origin if origin > 0 else first


def written_submits(workload: Workload, *, extended: bool) -> np.ndarray:
    """Submit times as the file holds them: from :func:`written_origin` in SWF, epochs in extended SWF."""
    submit = workload.jobs["submit"].to_numpy(dtype=np.int64)
    origin = epoch_origin(workload.metadata, int(submit.min()) if len(submit) else None)
    if origin is None:                     # no calendar: the trace's own seconds
        return submit
    epochs = submit + origin
    written = written_origin(workload, extended=extended)
    return epochs if written is None else epochs - written


def swf_frame(workload: Workload, *, extended: bool = False) -> pd.DataFrame:
    """The job lines as a frame of SWF_FIELDS (and the three extended fields)."""
    jobs = workload.jobs
    n = len(jobs)

    def column(name: str, default: int = -1) -> np.ndarray:
        return jobs[name].to_numpy(dtype=np.int64) if name in jobs else np.full(n, default, dtype=np.int64)

    procs = jobs["procs"].to_numpy(dtype=np.int64)
    nodes = column("nodes", 0)
    mem_kb = column("mem", 0)
    if extended:
        memory = np.where(mem_kb > 0, mem_kb * 1024, -1)                       # bytes per node
    else:
        total_kb = mem_kb * np.maximum(nodes, 1)
        memory = np.where(mem_kb > 0, np.ceil(total_kb / np.maximum(procs, 1)), -1).astype(np.int64)  # KB per processor
    frame = pd.DataFrame({
        "job_number": jobs["job_id"].to_numpy(dtype=np.int64),
        "submit_time": written_submits(workload, extended=extended),
        "wait_time": column("wait_trace"), "run_time": jobs["runtime"].to_numpy(dtype=np.int64),
        "allocated_procs": procs, "avg_cpu_time": -1, "used_memory": -1, "requested_procs": procs,
        "requested_time": jobs["requested_time"].to_numpy(dtype=np.int64), "requested_memory": memory,
        "status": column("status", 1), "user_id": column("user"), "group_id": column("group"),
        "executable": column("executable"), "queue": column("queue"), "partition": column("partition"),
        "preceding_job": -1, "think_time": -1,
    }, columns=list(SWF_FIELDS))
    if extended:
        frame["hosts"] = _hosts(jobs)
        frame["queue_name"] = _queue_names(workload)
        ppn = column("ppn", 0)
        frame["nodespec"] = [f"{n}:ppn={p}" if n > 0 and p > 0 else f"1:ppn={c}"
                             for n, p, c in zip(nodes.tolist(), ppn.tolist(), procs.tolist())]
    return frame


def _hosts(jobs: pd.DataFrame) -> list[str]:
    column = "exec_hosts" if "exec_hosts" in jobs else None
    if column is None:
        return ["{}"] * len(jobs)
    return ["{" + ",".join(h for h in str(text).split(";") if h) + "}" for text in jobs[column].tolist()]


def _queue_names(workload: Workload) -> list[str]:
    jobs = workload.jobs
    if "queue_name" in jobs:
        return [str(name) or "-" for name in jobs["queue_name"].tolist()]
    names = names_of(workload.metadata, "queue")
    return [names.get(q, str(q)) for q in jobs["queue"].tolist()]
