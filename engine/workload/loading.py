"""One call from a trace file to a cleaned Workload, with the machine size settled on the way."""

from __future__ import annotations

import re
from pathlib import Path

from engine.workload import metacentrum
from engine.workload.accounting import detect_accounting
from engine.workload.errors import WorkloadError
from engine.workload.model import Workload
from engine.workload.numbers import MAX_COUNT, whole_number
from engine.workload.swf import read_header, read_swf
from engine.workload.transforms import Overrun, Oversize, clean

_LEADING_INTEGER = re.compile(r"^\s*(\d+)")


def load_workload(
    path: str | Path,
    *,
    procs: int | None = None,
    oversize: Oversize = "reject",
    overrun: Overrun = "kill",
    skip_bad_lines: bool = False,
    memory_unit: str | None = None,
) -> Workload:
    """Read and clean an SWF trace. The machine size is ``procs`` if given, else the header's
    MaxProcs, else its MaxNodes; ``Workload.metadata["procs"]`` records the size used.

    Extended traces (MetaCentrum's 21-field SWF, AleaNG's), recognised by their content, go to
    :func:`engine.workload.metacentrum.load_extended` (``memory_unit`` applies to them only);
    accounting logs (PBS/Torque, Slurm sacct) to :mod:`engine.workload.pbs` / :mod:`engine.workload.slurm`."""
    kind = detect_accounting(path)
    if kind is not None:
        from engine.workload import pbs, slurm     # only for accounting logs (imported at first use: 0.04 s of start-up)
        reader = pbs.load_pbs if kind == "pbs" else slurm.load_sacct
        return reader(path, procs=procs, oversize=oversize, overrun=overrun, skip_bad_lines=skip_bad_lines)
    if metacentrum.detect_format(path) != "swf":
        return metacentrum.load_extended(path, procs=procs, oversize=oversize, overrun=overrun,
                                         skip_bad_lines=skip_bad_lines, memory_unit=memory_unit)
    # The size is settled from the header before the full read, so a missing size fails fast.
    header = {} if procs is not None else read_header(path)
    size = machine_size(header, procs, source=str(path))
    trace = read_swf(path, skip_bad_lines=skip_bad_lines)
    return clean(trace, machine_procs=size, oversize=oversize, overrun=overrun)


def machine_size(metadata: dict[str, str], procs: int | None = None, *, source: str | None = None) -> int:
    """procs if given, else the leading integer of MaxProcs (which may read "1664 (72,1368,224)"),
    else of MaxNodes. A header value that is not a positive integer counts as absent."""
    if procs is not None:
        if isinstance(procs, bool) or not isinstance(procs, int) or not 0 < procs <= MAX_COUNT:
            raise WorkloadError(f"machine size must be a whole number from 1 to {MAX_COUNT}, got {procs!r}",
                                file=source)
        return procs
    for key in ("MaxProcs", "MaxNodes"):
        size = header_integer(metadata.get(key))
        if size:
            return size
    given = [key for key in ("MaxProcs", "MaxNodes") if key in metadata]
    what = f"its {' and '.join(given)} header is not a whole number from 1 to {MAX_COUNT}" if given else \
        "the trace has no MaxProcs or MaxNodes header"
    raise WorkloadError(f"machine size unknown: {what}; give --procs", file=source, field=given[0] if given else None)


def header_integer(value: str | None) -> int | None:
    """The positive integer a header value starts with (at most MAX_COUNT), or None."""
    match = _LEADING_INTEGER.match(value or "")
    size = whole_number(match.group(1), maximum=MAX_COUNT) if match else None
    return size or None


def trace_format(path: str | Path) -> str:
    """``pbs``, ``slurm``, ``metacentrum``, ``aleang`` or ``swf``, from the content."""
    return detect_accounting(path) or metacentrum.detect_format(path)


def check_trace_head(path: str | Path, *, max_lines: int = 200,
                     max_errors: int = 20) -> tuple[dict[str, str], list[WorkloadError], str]:
    """Cheap upload checks of any trace the engine reads, format from the content: accounting logs
    (their first ``max_lines`` records), extended and plain SWF (engine.workload.metacentrum).
    Returns (header metadata, problems naming line and field, format); never raises for bad content."""
    try:
        kind = detect_accounting(path)
    except (WorkloadError, OSError, EOFError, ValueError):
        kind = None
    if kind in ("pbs", "slurm"):
        from engine.workload import pbs, slurm     # only for accounting logs (see load_workload)
    if kind == "pbs":
        return {}, pbs.check_pbs_head(path, max_lines=max_lines, max_errors=max_errors), kind
    if kind == "slurm":
        return {}, slurm.check_sacct_head(path, max_lines=max_lines, max_errors=max_errors), kind
    return metacentrum.check_trace_head(path, max_lines=max_lines, max_errors=max_errors)
