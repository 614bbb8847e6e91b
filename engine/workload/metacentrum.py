"""Extended SWF traces with node-level requests: MetaCentrum's "augmented" SWF and AleaNG's SWF.

Which format a file is in is decided from its **content** (first job lines), never its name:

* ``metacentrum``: 21 fields — the 18 SWF fields, then ``{host,host,…}`` (allocated host ids, one
  per core), the queue **name**, and the Torque nodespec (``-l nodes=``), e.g.
  ``… {1129,…} q_2w 1:ppn=12``. Submit times are absolute epochs; requested memory (field 10)
  is in **bytes** in the published traces (``wagap-2013.swf``): the unit is an explicit option
  (``memory_unit``), reported in the metadata, never guessed.
* ``aleang``: 21 fields — 18 SWF fields, then total GPUs, soft walltime (ignored, as AleaNG does)
  and ``partition[:excl][:NODESxPPN]``; memory in KB; submit relative to ``; UnixStartTime``.
* ``swf``: 18 fields (read by :mod:`engine.workload.swf`).

Nodespec grammar (see :func:`parse_nodespec`): ``chunk ('+' chunk)*``, ``chunk := [N | host]
(':' token)*``, tokens ``ppn=P`` (or ``ncpus=P``), ``cl_X`` (only cluster X), ``^cl_X`` /
``cl_X=False`` (never cluster X), ``host=H`` / a bare host name ``zewura19.cerit-sc.cz`` (only
that host's cluster), ``^H`` (excluded host: recorded, not enforced), ``mem=3gb``, ``gpu=G`` /
``ngpus=G``, any token suffixed ``#excl`` (exclusive nodes), anything else a property
(``x86_64``, ``brno``, ``nfs4``, ``infiniband``, ``nodecpus80``…), matched against cluster
properties only when the machine description names it.

Approximations, each counted in the cleaning report when it applies:
* several ``+`` chunks become one: total nodes × the largest ppn (Alea drops such specs to 1 node);
* a spec without ``ppn``: N nodes × procs/N cores (rounded up); without a node count: 1 node;
* ``ppn=1.5`` is cut at the dot (as Alea does);
* when N × ppn differs from the trace's processor count, the nodespec wins.

Unknown values: memory ``-1``, ``0`` or ``1`` (the trace writes unknown fields as 1) means "no
memory request"; fields 6, 7, 11, 13–18 are placeholders and ignored; field 17 is never read as a
DAG edge.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from engine.platform.hosts import HOST_NAME as _HOST
from engine.workload.errors import WorkloadError, shown
from engine.workload.lines import first_lines
from engine.workload.model import CleaningReport, Workload
from engine.workload.numbers import MAX_COUNT, MAX_MAGNITUDE, whole_number
from engine.workload.swf import (
    _EIGHTEEN_NUMBERS,
    _INT64_LIMIT,
    SWF_FIELDS,
    SwfTrace,
    _frame_from_matrix,
    _inspect,
    _open_text,
    _to_number,
    check_head,
    parse_header,
    plain_values,
)
from engine.workload.transforms import Overrun, Oversize, clean

TraceFormat = Literal["swf", "metacentrum", "aleang"]
MemoryUnit = Literal["bytes", "KB", "MB", "GB"]
MEMORY_UNITS: dict[str, float] = {"bytes": 1 / 1024, "KB": 1.0, "MB": 1024.0, "GB": 1024.0 ** 2}
DEFAULT_MEMORY_UNIT: dict[str, str] = {"metacentrum": "bytes", "aleang": "KB"}
EXTENDED_FIELDS = 21
#: a memory value at or below this is "unknown" (traces write -1, 0 or the placeholder 1)
UNKNOWN_MEMORY = 1

#: Columns the extended readers add to the workload (after the canonical and SWF extra ones).
NODE_COLUMNS = ("nodes", "ppn", "mem", "gpus", "exclusive", "queue_name", "clusters", "exclude", "hosts",
                "properties", "nodespec", "exec_hosts")
#: the distinct hosts a job really ran on, ``;``-joined in the order first seen ("" when the format
#: does not record them), as the accounting-log readers write it; see :func:`exec_hosts_text`
EXEC_HOSTS = "exec_hosts"

REPAIR_CHUNKS = "nodespec with several '+' chunks: total nodes x largest ppn"
REPAIR_NO_PPN = "nodespec without ppn: procs spread over its nodes"
REPAIR_NO_NODES = "nodespec without a node count: 1 node"
REPAIR_FRACTION = "fractional ppn cut at the dot"
REPAIR_PROCS = "processors set to nodes x ppn from the nodespec"
KEPT_EXCLUDED_HOST = "excluded host (^host) recorded, not enforced"
KEPT_MEMORY_FROM_SPEC = "memory taken from the nodespec mem= (field 10 unknown)"



# --------------------------------------------------------------------------- nodespec


@dataclass(frozen=True)
class NodeSpec:
    """A parsed Torque nodespec. ``nodes``/``ppn`` are None where the spec does not say."""

    nodes: int | None = None
    ppn: int | None = None
    chunks: int = 1
    exclusive: bool = False
    clusters: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    excluded_hosts: tuple[str, ...] = ()
    mem_kb: int = 0
    gpus: int = 0
    properties: tuple[str, ...] = ()
    fractional_ppn: bool = False


@lru_cache(maxsize=65536)
def parse_nodespec(spec: str) -> NodeSpec:
    """Parse a Torque ``-l nodes=`` value (grammar in the module docstring). Raises ValueError."""
    text = spec.strip()
    if not text:
        raise ValueError("empty nodespec")
    chunks = text.split("+")
    counts: list[int | None] = []
    ppns: list[int | None] = []
    exclusive = fractional = False
    clusters: list[str] = []
    exclude: list[str] = []
    hosts: list[str] = []
    excluded_hosts: list[str] = []
    properties: list[str] = []
    mem_kb = gpus = 0
    for chunk in chunks:
        tokens = [t for t in chunk.split(":") if t != ""]
        if not tokens:
            raise ValueError(f"empty chunk in {shown(spec, 80)}")
        count: int | None = None
        ppn: int | None = None
        for position, raw in enumerate(tokens):
            token = raw
            if "#" in token:
                token, _, flag = token.partition("#")
                if "excl" in flag:
                    exclusive = True
                if not token:
                    continue
            lowered = token.lower()
            if position == 0 and token.isdigit():
                count = _count(token, "node count", spec)
            elif lowered.startswith(("ppn=", "ncpus=")):
                value = token.split("=", 1)[1]
                ppn = _count(value.split(".", 1)[0], "ppn", spec)
                fractional |= "." in value
            elif lowered.startswith(("gpu=", "ngpus=", "gpus=")):
                gpus = max(gpus, _count(token.split("=", 1)[1], "gpu count", spec, minimum=0))
            elif lowered.startswith("mem="):
                mem_kb = max(mem_kb, _size_kb(token[4:], spec))
            elif lowered.startswith("^cl_"):
                exclude.append(token[4:])
            elif lowered.startswith("cl_"):
                name, _, value = token[3:].partition("=")
                (exclude if value.lower() in ("false", "0", "no") else clusters).append(name)
            elif lowered.startswith("host="):
                hosts.append(_short_host(token[5:]))
            elif token.startswith("^"):
                excluded_hosts.append(_short_host(token[1:]))
            elif _looks_like_host(token):
                hosts.append(_short_host(token))
            else:
                properties.append(token)
        counts.append(count)
        ppns.append(ppn)
    known_counts = [c for c in counts if c is not None]
    known_ppns = [p for p in ppns if p is not None]
    if sum(c if c is not None else 1 for c in counts) > MAX_COUNT:
        raise ValueError(f"more than {MAX_COUNT} nodes in {shown(spec, 80)}")
    return NodeSpec(
        nodes=sum(c if c is not None else 1 for c in counts) if known_counts else None,
        ppn=max(known_ppns) if known_ppns else None,
        chunks=len(chunks), exclusive=exclusive,
        clusters=tuple(dict.fromkeys(clusters)), exclude=tuple(dict.fromkeys(exclude)),
        hosts=tuple(dict.fromkeys(hosts)), excluded_hosts=tuple(dict.fromkeys(excluded_hosts)),
        mem_kb=mem_kb, gpus=gpus, properties=tuple(dict.fromkeys(properties)), fractional_ppn=fractional,
    )


def _count(text: str, what: str, spec: str, *, minimum: int = 1) -> int:
    """A nodespec count: ASCII digits, at least ``minimum``, at most MAX_COUNT."""
    value = whole_number(text, maximum=MAX_COUNT)
    if value is None or value < minimum:
        raise ValueError(f"{what} must be an integer from {minimum} to {MAX_COUNT} in {shown(spec, 80)}, "
                         f"got {shown(text)}")
    return value


def _looks_like_host(token: str) -> bool:
    """A bare host name with its domain, such as ``zewura19.cerit-sc.cz`` (letters, digits, a dot)."""
    return "." in token and bool(_HOST.match(token))


def _short_host(name: str) -> str:
    return name.split(".", 1)[0]


_SIZE_UNITS = {"b": 1 / 1024, "kb": 1, "mb": 1024, "gb": 1024 ** 2, "tb": 1024 ** 3, "": 1 / 1024}


def _size_kb(text: str, spec: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?b?)", text.strip().lower())
    kb = float(match.group(1)) * _SIZE_UNITS[match.group(2)] if match else math.nan
    if not kb < MAX_MAGNITUDE:      # also false for nan (no match)
        raise ValueError(f"mem must look like 3gb or 500mb in {shown(spec, 80)}, got {shown(text)}")
    return round(kb)


# --------------------------------------------------------------------------- detection


def detect_format(path: str | Path, *, max_lines: int = 50) -> TraceFormat:
    """``metacentrum``, ``aleang`` or ``swf``, from the first job lines of the file."""
    return detect_format_of_lines(first_lines(path, max_lines, skip=_column_names))


def detect_format_of_lines(lines: list[str]) -> TraceFormat:
    for line in lines:
        fields = line.split()
        if len(fields) == EXTENDED_FIELDS:
            if fields[18].startswith("{"):
                return "metacentrum"
            if _to_number(fields[18]) is not None and _to_number(fields[20]) is None:
                return "aleang"
        return "swf"
    return "swf"


def _column_names(line: str) -> bool:
    """A line of column names (``id submit ...``), not a job."""
    return line.split()[0].lower().startswith("id")


# --------------------------------------------------------------------------- reading


@dataclass
class ExtendedTrace:
    """The 18 SWF fields (as an :class:`SwfTrace`) plus the node-level columns, row-aligned."""

    swf: SwfTrace
    nodes: pd.DataFrame
    format: str
    memory_unit: str
    report: CleaningReport = field(default_factory=CleaningReport)


def read_extended(path: str | Path, *, memory_unit: str | None = None, memory_per: str = "node",
                  skip_bad_lines: bool = False, trace_format: str | None = None,
                  careful: bool = False) -> ExtendedTrace:
    """Read a MetaCentrum-augmented or AleaNG trace (format from the content unless given).

    ``memory_unit``: unit of the requested-memory field (bytes, KB, MB, GB); default: bytes for
    MetaCentrum, KB for AleaNG (the published traces' units). ``memory_per``: ``node`` (Alea's
    reading) or ``job`` (divided by the job's nodes). ``careful``: read line by line even where the
    block reader could (the reference it is tested against).
    """
    fmt = trace_format or detect_format(path)
    if fmt not in ("metacentrum", "aleang"):
        raise WorkloadError("not an extended trace: the job lines have 18 fields (plain SWF)", file=str(path))
    unit = memory_unit or DEFAULT_MEMORY_UNIT[fmt]
    if unit not in MEMORY_UNITS:
        raise WorkloadError(f"memory unit must be one of {', '.join(MEMORY_UNITS)}, got {unit!r}", file=str(path))
    if memory_per not in ("node", "job"):
        raise WorkloadError(f"memory_per must be node or job, got {memory_per!r}", file=str(path))
    source = _inspect(path)
    header: list[str] = []
    report = CleaningReport()
    bad = 0
    errors: list[WorkloadError] = []
    fast = _read_plain_metacentrum(source, header) if fmt == "metacentrum" and not careful else None
    if fast is not None:
        matrix, extra = fast
    else:
        header.clear()
        matrix, extra, bad, errors = _read_line_by_line(source, fmt, header, skip_bad_lines)
    metadata = parse_header(header)
    if fmt == "aleang" and "UnixStartTime" in metadata:
        offset = _to_number(metadata["UnixStartTime"].split()[0]) or 0
        matrix[:, 1] += offset
        metadata["TimeBase"] = "absolute (UnixStartTime added)"
    swf = SwfTrace(jobs=_frame_from_matrix(matrix), metadata=metadata, source=source.path, bad_lines=bad,
                   bad_line_errors=errors)
    nodes = _node_columns(extra, swf.jobs["allocated_procs"].to_numpy(), fmt, unit, memory_per, report)
    return ExtendedTrace(swf, nodes, fmt, unit, report)


def _read_line_by_line(source, fmt: str, header: list[str],
                       skip_bad_lines: bool) -> tuple[np.ndarray, list[tuple], int, list[WorkloadError]]:
    """The careful reader: each line parsed and checked on its own, a bad one raised (or skipped and
    counted), naming its line and field."""
    numeric: list[list[float]] = []
    extra: list[tuple] = []
    bad = 0
    errors: list[WorkloadError] = []
    for result in _parsed_lines(source, fmt, header):
        if isinstance(result, WorkloadError):
            if not skip_bad_lines:
                raise result
            bad += 1
            if len(errors) < 1000:
                errors.append(result)
            continue
        numeric.append(result[0])
        extra.append(result[1])
    if not numeric:
        raise WorkloadError(f"no jobs: {'all ' + str(bad) + ' job lines are bad' if bad else 'the file has no job lines'}",
                            file=source.path)
    return np.asarray(numeric, dtype=np.float64), extra, bad, errors


def _read_plain_metacentrum(source, header: list[str]) -> tuple[np.ndarray, list[tuple]] | None:
    """What :func:`_read_line_by_line` reads from a MetaCentrum trace without a single bad line, with
    the numbers of many lines checked by one regular expression and converted at once (the
    line-by-line reader spent ~16 us a line, most of it there); None at the first line that is
    not plain (the careful reader then names it). ``header`` gets the ``;`` lines before the jobs."""
    try:
        with _open_text(source) as stream:
            return _plain_lines(stream, header)
    except WorkloadError:   # a broken stream: the careful reader names it, or a bad line before it
        return None


def _plain_lines(stream, header: list[str]) -> tuple[np.ndarray, list[tuple]] | None:
    """The block reader's pass over the lines of an open trace (see _read_plain_metacentrum)."""
    blocks: list[np.ndarray] = []
    extra: list[tuple] = []
    heads: list[str] = []
    for _, stripped in _job_lines(stream, header):
        fields = stripped.split()
        if len(fields) != EXTENDED_FIELDS:
            return None
        hosts = fields[18]
        if not (hosts.startswith("{") and hosts.endswith("}")):
            return None
        try:
            spec = parse_nodespec(fields[20])
        except ValueError:
            return None
        heads.append(" ".join(fields[:len(SWF_FIELDS)]))
        extra.append((fields[19], spec, fields[20], exec_hosts_text(hosts[1:-1].split(","))))
        if len(heads) == _PLAIN_BLOCK:
            if not _plain_block(heads, blocks):
                return None
            heads = []
    if heads and not _plain_block(heads, blocks):
        return None
    if not blocks:
        return None
    return np.concatenate(blocks), extra


#: job lines whose numbers are checked and converted together (bounds the text held at once)
_PLAIN_BLOCK = 65_536
#: a character no plain decimal number has (exponents, "+", names)
_NOT_DECIMAL = re.compile(r"[^0-9. \n-]")


def _plain_block(heads: list[str], blocks: list[np.ndarray]) -> bool:
    """Append the (len(heads), 18) values of ``heads`` (each 18 fields joined by single spaces) to
    ``blocks`` if every line is what :func:`plain_values` accepts; False otherwise.

    Text of digits, dots, minus signs and single spaces only is checked by ``float`` itself: over
    these characters it accepts exactly the numbers plain_values' expression does (optional sign,
    digits with at most one dot, a digit at least). Anything else is checked line by line."""
    text = " ".join(heads)
    if _NOT_DECIMAL.search(text) and not all(map(_EIGHTEEN_NUMBERS.fullmatch, heads)):
        return False
    try:
        numbers = list(map(float, text.split()))       # Python's float, as plain_values reads
    except ValueError:
        return False
    values = np.array(numbers, dtype=np.float64).reshape(len(heads), len(SWF_FIELDS))
    if not np.abs(values).max() < _INT64_LIMIT:
        return False
    blocks.append(values)
    return True


def _parsed_lines(source, fmt: str, header: list[str]):
    """Each job line parsed as (SWF values, node-level row), or the WorkloadError naming it; the
    ``;`` lines before the first job are appended to ``header``."""
    parse = _parse_metacentrum_line if fmt == "metacentrum" else _parse_aleang_line
    with _open_text(source) as stream:      # a broken stream raises, even when skipping bad lines
        for lineno, stripped in _job_lines(stream, header):
            try:
                yield parse(stripped.split(), lineno, source.path)
            except WorkloadError as error:
                yield error


def _job_lines(stream, header: list[str]):
    """(line number, stripped text) of each job line; the ``;`` lines before the first job are
    appended to ``header``, empty lines and later comments skipped."""
    jobs_seen = False
    for lineno, line in enumerate(stream, start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            if not jobs_seen:
                header.append(line)
            continue
        jobs_seen = True
        yield lineno, stripped


def _parse_common(fields: list[str], lineno: int, path: str, fmt: str) -> list[float]:
    if len(fields) != EXTENDED_FIELDS:
        missing = "nodespec" if len(fields) < EXTENDED_FIELDS else "line"
        raise WorkloadError(f"line has {len(fields)} fields, expected {EXTENDED_FIELDS} ({fmt} format)",
                            file=path, line=lineno, field=missing)
    plain = plain_values(fields)
    if plain is not None:
        return plain
    values = []
    for name, text in zip(SWF_FIELDS, fields):
        value = _to_number(text)
        if value is None:
            raise WorkloadError(f"expected a number, got {shown(text)}", file=path, line=lineno, field=name)
        values.append(value)
    return values


def _parse_metacentrum_line(fields: list[str], lineno: int, path: str) -> tuple[list[float], tuple]:
    values = _parse_common(fields, lineno, path, "MetaCentrum")
    hosts = fields[18]
    if not (hosts.startswith("{") and hosts.endswith("}")):
        raise WorkloadError(f"expected the allocated hosts as {{id,id,...}}, got {hosts[:40]!r}", file=path,
                            line=lineno, field="hosts")
    try:
        spec = parse_nodespec(fields[20])
    except ValueError as exc:
        raise WorkloadError(str(exc), file=path, line=lineno, field="nodespec") from None
    return values, (fields[19], spec, fields[20], exec_hosts_text(hosts[1:-1].split(",")))


def exec_hosts_text(hosts: list[str]) -> str:
    """The distinct hosts of one entry per allocated core (``{1129,1129,1130}`` -> ``1129;1130``)."""
    distinct = dict.fromkeys(hosts)     # (in order of first appearance; no generator per entry)
    distinct.pop("", None)
    return ";".join(distinct)


def _parse_aleang_line(fields: list[str], lineno: int, path: str) -> tuple[list[float], tuple]:
    values = _parse_common(fields, lineno, path, "AleaNG")
    gpus = _to_number(fields[18])
    if gpus is None or not 0 <= gpus <= MAX_COUNT:
        raise WorkloadError(f"expected the total GPUs (an integer from 0 to {MAX_COUNT}), got {shown(fields[18])}", file=path,
                            line=lineno, field="gpus")
    parts = fields[20].split(":")
    partition, exclusive, nodes, ppn = parts[0], "excl" in parts[1:], None, None
    for part in parts[1:]:
        count, _, per = part.partition("x")
        if min(whole_number(count, maximum=MAX_COUNT) or 0, whole_number(per, maximum=MAX_COUNT) or 0) >= 1:
            nodes, ppn = int(count), int(per)
        elif part != "excl":
            raise WorkloadError(f"expected partition[:excl][:NODESxPPN] (NODES and PPN from 1 to {MAX_COUNT}), "
                                f"got {shown(fields[20], 60)}", file=path,
                                line=lineno, field="partition")
    properties = () if partition == "all" else (partition,)
    per_node = int(gpus) // nodes if nodes else int(gpus)
    spec = NodeSpec(nodes=nodes, ppn=ppn, exclusive=exclusive, properties=properties, gpus=per_node)
    queue = fields[14]
    return values, (queue, spec, fields[20], "")


def _node_columns(rows: list[tuple], procs: np.ndarray, fmt: str, unit: str, memory_per: str,
                  report: CleaningReport) -> pd.DataFrame:
    """nodes, ppn, gpus, exclusive, cluster rules, properties from the specs; procs repaired to nodes x ppn.

    Worked out once per distinct spec (traces repeat a few hundred specs), then spread over the rows."""
    codes = np.empty(len(rows), dtype=np.int64)
    distinct: dict[NodeSpec, int] = {}
    for i, row in enumerate(rows):
        codes[i] = distinct.setdefault(row[1], len(distinct))
    specs = list(distinct)

    def per_spec(value, dtype=np.int64) -> np.ndarray:
        return np.array([value(spec) for spec in specs], dtype=dtype)[codes]

    def texts(value) -> list[str]:
        return np.array([";".join(value(spec)) for spec in specs], dtype=object)[codes].tolist()

    p = np.maximum(procs.astype(np.int64), 1)
    spec_nodes = per_spec(lambda spec: -1 if spec.nodes is None else spec.nodes)
    spec_ppn = per_spec(lambda spec: -1 if spec.ppn is None else spec.ppn)
    neither = (spec_nodes < 0) & (spec_ppn < 0) & (fmt == "aleang")     # AleaNG: CPUs x 1-CPU chunks
    no_nodes = (spec_nodes < 0) & ~neither                                # 1 node
    no_ppn = (spec_nodes >= 0) & (spec_ppn < 0)                           # procs spread over the nodes
    nodes = np.where(neither, p, np.where(no_nodes, 1, spec_nodes))
    spread = np.maximum(-(-p // np.maximum(spec_nodes, 1)), 1)
    ppn = np.where(neither, 1, np.where(spec_ppn > 0, spec_ppn, np.where(no_nodes, p, spread)))
    counts = {
        REPAIR_CHUNKS: per_spec(lambda spec: spec.chunks > 1, bool),
        REPAIR_FRACTION: per_spec(lambda spec: spec.fractional_ppn, bool),
        KEPT_EXCLUDED_HOST: per_spec(lambda spec: bool(spec.excluded_hosts), bool),
        REPAIR_NO_NODES: no_nodes, REPAIR_NO_PPN: no_ppn,
    }
    for reason in (REPAIR_CHUNKS, REPAIR_NO_PPN, REPAIR_NO_NODES, REPAIR_FRACTION, KEPT_EXCLUDED_HOST):
        (report.keep if reason == KEPT_EXCLUDED_HOST else report.repair)(reason, int(counts[reason].sum()))
    return pd.DataFrame({
        "nodes": nodes, "ppn": ppn, "spec_mem": per_spec(lambda spec: spec.mem_kb),
        "gpus": per_spec(lambda spec: spec.gpus), "exclusive": per_spec(lambda spec: spec.exclusive, bool),
        "queue_name": [row[0] for row in rows], "clusters": texts(lambda spec: spec.clusters),
        "exclude": texts(lambda spec: spec.exclude), "hosts": texts(lambda spec: spec.hosts),
        "properties": texts(lambda spec: spec.properties), "nodespec": [row[2] for row in rows],
        EXEC_HOSTS: [row[3] for row in rows],
    })


def load_extended(path: str | Path, *, procs: int | None = None, oversize: Oversize = "reject",
                  overrun: Overrun = "kill", skip_bad_lines: bool = False, memory_unit: str | None = None,
                  memory_per: str = "node", trace_format: str | None = None) -> Workload:
    """Read and clean an extended trace into a Workload with the :data:`NODE_COLUMNS`.

    ``procs`` bounds a job's processors (cleaning's oversize rule); without it no job is too
    large here — the machine description decides later which jobs fit (see engine.sim.nodes).
    """
    trace = read_extended(path, memory_unit=memory_unit, memory_per=memory_per, skip_bad_lines=skip_bad_lines,
                          trace_format=trace_format)
    raw, extra = trace.swf.jobs, trace.nodes
    spec_procs = extra["nodes"].to_numpy() * extra["ppn"].to_numpy()
    changed = spec_procs != raw["allocated_procs"].to_numpy()
    trace.report.repair(REPAIR_PROCS, int(changed.sum()))
    raw["allocated_procs"] = spec_procs
    memory = _memory_kb(raw["requested_memory"].to_numpy(), trace.memory_unit)
    from_spec = (memory == 0) & (extra["spec_mem"].to_numpy() > 0)
    trace.report.keep(KEPT_MEMORY_FROM_SPEC, int(from_spec.sum()))
    memory = np.where(from_spec, extra["spec_mem"].to_numpy(), memory)
    if memory_per == "job":
        memory = np.ceil(memory / np.maximum(extra["nodes"].to_numpy(), 1)).astype(np.int64)
    extra = extra.drop(columns=["spec_mem"])
    extra.insert(2, "mem", memory.astype(np.int64))
    size = int(procs) if procs is not None else max(int(spec_procs.max()), 1)
    workload = clean(trace.swf, machine_procs=size, oversize=oversize, overrun=overrun, extra=extra)
    report = workload.report
    for kind in ("repaired", "kept"):
        for reason, count in getattr(trace.report, kind).items():
            getattr(report, kind)[reason] = getattr(report, kind).get(reason, 0) + count
    names = sorted(set(workload.jobs["queue_name"]))
    codes = {name: code for code, name in enumerate(names)}
    workload.jobs["queue"] = workload.jobs["queue_name"].map(codes).astype(np.int64)
    workload.metadata["queue_names"] = {str(code): name for name, code in codes.items()}
    workload.metadata.update({"format": trace.format, "memory_unit": trace.memory_unit, "memory_per": memory_per})
    if procs is None:
        workload.metadata["procs"] = size
        workload.metadata["procs_note"] = "largest job (an extended trace's machine comes from a machine description)"
    return workload


def _memory_kb(values: np.ndarray, unit: str) -> np.ndarray:
    """Requested memory in KB; -1, 0 and the placeholder 1 mean no request (0)."""
    known = values > UNKNOWN_MEMORY
    kb = np.minimum(np.ceil(values * MEMORY_UNITS[unit]), MAX_MAGNITUDE)   # GB-sized units could pass int64
    return np.where(known, kb, 0).astype(np.int64)


def check_extended_head(path: str | Path, *, max_lines: int = 200,
                        max_errors: int = 20) -> tuple[dict[str, str], list[WorkloadError], str]:
    """Cheap upload checks of an extended trace: (header metadata, problems, format). Never raises."""
    try:
        source = _inspect(path)
        lines = first_lines(path, 50, skip=_column_names)
    except WorkloadError as error:
        return {}, [error], "swf"
    fmt = detect_format_of_lines(lines)
    header: list[str] = []
    errors: list[WorkloadError] = []
    seen = 0
    try:
        for result in _parsed_lines(source, fmt, header):
            seen += 1
            if isinstance(result, WorkloadError):
                errors.append(result)
            if seen >= max_lines or len(errors) >= max_errors:
                break
    except WorkloadError as error:      # the stream itself is corrupt
        errors.append(error)
    if not seen and not errors:
        errors.append(WorkloadError("no jobs: the file has no job lines", file=source.path))
    return parse_header(header), errors, fmt


def describe_requests(workload: Workload) -> dict:
    """What an extended trace asks for beyond SWF: format, memory unit, queues, nodes, ppn, RAM, GPUs."""
    jobs = workload.jobs
    mem_gib = jobs["mem"].to_numpy(dtype=np.float64) / 1024 ** 2
    known = mem_gib[mem_gib > 0]
    return {
        "format": workload.metadata.get("format"),
        "memory_unit": workload.metadata.get("memory_unit"),
        "memory_per": workload.metadata.get("memory_per"),
        "queues": {str(k): int(v) for k, v in jobs["queue_name"].value_counts().sort_index().items()},
        "multi_node_jobs": int((jobs["nodes"] > 1).sum()),
        "max_nodes": int(jobs["nodes"].max()) if len(jobs) else 0,
        "max_ppn": int(jobs["ppn"].max()) if len(jobs) else 0,
        "exclusive_jobs": int(jobs["exclusive"].sum()),
        "gpu_jobs": int((jobs["gpus"] > 0).sum()),
        "with_memory_request": len(known),
        "memory_gib_per_node": {"median": round(float(np.median(known)), 3), "max": round(float(known.max()), 3)}
        if len(known) else None,
        "cluster_rules": int(((jobs["clusters"] != "") | (jobs["exclude"] != "")).sum()),
    }


def check_trace_head(path: str | Path, *, max_lines: int = 200,
                     max_errors: int = 20) -> tuple[dict[str, str], list[WorkloadError], str]:
    """Cheap upload checks of any trace the engine reads (format from the content): plain SWF via
    :func:`engine.workload.swf.check_head`, extended ones via :func:`check_extended_head`.
    Returns (header metadata, problems, format); never raises for bad content."""
    try:
        fmt = detect_format(path)
    except (WorkloadError, OSError, EOFError, ValueError):
        fmt = "swf"          # let the SWF checks describe what is wrong with the file
    if fmt == "swf":
        header, problems = check_head(path, max_lines=max_lines, max_errors=max_errors)
        return header, problems, fmt
    return check_extended_head(path, max_lines=max_lines, max_errors=max_errors)
