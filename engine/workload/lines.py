"""The first data lines of a trace file (plain or gzip): what the readers look at to tell its format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.workload.swf import _inspect, _open_text


def first_lines(path: str | Path, count: int, *, skip: Callable[[str], bool] | None = None) -> list[str]:
    """The first ``count`` lines, stripped, that are not blank, not ``;`` comments and not ``skip``
    (given a stripped line)."""
    lines: list[str] = []
    with _open_text(_inspect(path)) as stream:
        for line in stream:
            stripped = line.strip()
            if not stripped or stripped.startswith(";") or (skip is not None and skip(stripped)):
                continue
            lines.append(stripped)
            if len(lines) >= count:
                break
    return lines
