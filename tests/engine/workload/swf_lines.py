"""Helpers that write small SWF files for the tests, so each test shows only the lines it is about."""

from __future__ import annotations

import gzip
from pathlib import Path

HEADER = "; Version: 2.2\n; MaxProcs: 64\n;\n"


def job_line(
    job: int = 1,
    submit: int = 0,
    *,
    wait: int = 5,
    run: object = 100,
    alloc: object = 4,
    req_procs: object = 4,
    req_time: object = 200,
    user: int = 1,
    group: int = 1,
    status: int = 1,
    queue: int = 1,
    partition: int = 1,
) -> str:
    """One 18-field SWF job line; keyword names follow what the tests vary."""
    fields = [job, submit, wait, run, alloc, -1, -1, req_procs, req_time, -1, status, user, group,
              -1, queue, partition, -1, -1]
    return " ".join(str(value) for value in fields)


def write_swf(path: Path, lines: list[str], *, header: str = HEADER, gz: bool = False) -> Path:
    """Write header + lines to path, gzip-compressed when gz is true (whatever the name says)."""
    text = header + "".join(line + "\n" for line in lines)
    if gz:
        path.write_bytes(gzip.compress(text.encode("latin-1")))
    else:
        path.write_text(text, encoding="latin-1")
    return path
