"""Columnar cache of a cleaned Workload: one .npz holding one array per column plus a JSON blob
(metadata, cleaning report, source, column order and dtypes). Loading needs no parsing, no
pickle, and gives back exactly the frame that was saved.

A text column is stored as codes into its distinct values, and those values as one UTF-8 buffer
with the character offset where each ends: its size follows the text, not the widest row (version
1 stored fixed-width unicode, so one job on ``n[0001-2048]`` made a 20,000-job sacct dump a 990 MB
cache; it is 1-2 MB now). Version 1 files still load.

:func:`read_through` is the parse cache of the command line: a trace read once is kept in a folder
under a name made of its content, the reading options and the engine's source, so the next run
of the same file (under any name) loads it instead of parsing it (HPC2N-2002: 0.57 -> 0.05 s of
CPU). The folder holds at most $SCHEDLAB_PARSE_CACHE_MB megabytes (2048): the least recently used
entries go first. Only a workload the .npz gives back exactly is kept (numeric columns and text without
missing values, a default index, metadata and report that JSON keeps as they are); any other is
read every time."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from engine import numba_cache
from engine.workload.errors import WorkloadError
from engine.workload.model import CleaningReport, Workload

FORMAT = "schedlab-workload-cache"
VERSION = 2
#: versions :func:`load` reads (1: text columns as fixed-width unicode arrays)
READABLE_VERSIONS = (1, 2)
_INFO_KEY = "__info__"
#: what the parse cache may hold unless $SCHEDLAB_PARSE_CACHE_MB says otherwise (HPC2N-2002: 23 MB)
DEFAULT_LIMIT_MB = 2048


def save(workload: Workload, path: str | Path) -> None:
    """Write the cache atomically: a temporary file in the same folder, then os.replace."""
    target = Path(path)
    columns = list(workload.jobs.columns)
    arrays: dict[str, np.ndarray] = {}
    for i, name in enumerate(columns):
        arrays.update(_storable(f"col{i}", workload.jobs[name]))
    info = {
        "format": FORMAT,
        "version": VERSION,
        "columns": columns,
        "dtypes": [str(workload.jobs[name].dtype) for name in columns],
        "metadata": workload.metadata,
        "report": workload.report.to_dict(),
        "rejected_submits": workload.report.rejected_submits,
        "source": workload.source,
    }
    arrays[_INFO_KEY] = np.frombuffer(json.dumps(info).encode("utf-8"), dtype=np.uint8)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **arrays)  # type: ignore[arg-type]  # numpy's stub takes allow_pickle for **kwds
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load(path: str | Path) -> Workload:
    """Read a cache written by :func:`save`."""
    name = str(path)
    try:
        with np.load(name, allow_pickle=False) as archive:
            info = json.loads(archive[_INFO_KEY].tobytes().decode("utf-8"))
            if info.get("format") != FORMAT or info.get("version") not in READABLE_VERSIONS:
                raise WorkloadError(f"not a workload cache of version {VERSION}", file=name)
            data = {column: _restored(archive, f"col{i}") for i, column in enumerate(info["columns"])}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        if isinstance(exc, WorkloadError):
            raise
        raise WorkloadError(f"cannot read the workload cache: {exc}", file=name) from None
    jobs = pd.DataFrame(data, columns=info["columns"]).astype(dict(zip(info["columns"], info["dtypes"])))
    report = CleaningReport.from_dict(info["report"])
    report.rejected_submits = {str(k): [int(t) for t in v] for k, v in (info.get("rejected_submits") or {}).items()}
    return Workload(jobs=jobs, metadata=info["metadata"], report=report, source=info["source"])


def _storable(key: str, column: pd.Series) -> dict[str, np.ndarray]:
    """Numbers and booleans as they are; anything else (text) as codes into its distinct values,
    those values as one UTF-8 buffer and the character offset where each ends (object arrays would
    need pickle to load). A missing text value would come back as the text "nan" (keeps_exactly
    says so)."""
    if column.dtype.kind in "biuf":
        return {key: column.to_numpy()}
    codes, distinct = pd.factorize(column.astype(str), sort=False)
    values = [str(value) for value in distinct]
    ends = np.cumsum([len(value) for value in values], dtype=np.int64)
    text = np.frombuffer("".join(values).encode("utf-8"), dtype=np.uint8)
    small = np.int32 if len(values) < 2**31 else np.int64
    return {key: codes.astype(small, copy=False), f"{key}.text": text, f"{key}.ends": ends}


def _restored(archive: Mapping[str, np.ndarray], key: str) -> np.ndarray:
    """One column as :func:`_storable` kept it: an array of numbers, of fixed-width text (version
    1), or of Python strings rebuilt from codes and the buffer of distinct values."""
    if f"{key}.text" not in archive:
        return archive[key]
    text = archive[f"{key}.text"].tobytes().decode("utf-8")
    ends = archive[f"{key}.ends"].tolist()
    starts = [0, *ends[:-1]]
    distinct = np.array([text[start:end] for start, end in zip(starts, ends)] or [""], dtype=object)
    return distinct[archive[key]]


def read_through(path: str | Path, options: Mapping[str, object], read: Callable[[], Workload],
                 folder: str | Path) -> Workload:
    """The workload of ``path`` read with ``options``: from ``folder`` if a run kept it there, else
    ``read()``, kept there for the next run when the cache gives it back exactly. ``source`` is
    ``path`` as given either way. A folder that cannot be written leaves the cache out."""
    key = cache_key(path, options)
    kept = Path(folder) / f"{key}.npz"
    if kept.is_file():
        try:
            workload = replace(load(kept), source=str(path))
        except WorkloadError:
            pass    # a damaged or foreign file: read the trace and write it again
        else:
            _touch(kept)
            return workload
    workload = read()
    if keeps_exactly(workload):
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            save(workload, kept)
            prune(kept.parent, size_limit(), keep=kept)
        except OSError:
            pass
    return workload


def size_limit() -> int:
    """Bytes the parse cache may hold: $SCHEDLAB_PARSE_CACHE_MB megabytes (default 2048)."""
    try:
        megabytes = float(os.environ.get("SCHEDLAB_PARSE_CACHE_MB", DEFAULT_LIMIT_MB))
    except ValueError:
        megabytes = DEFAULT_LIMIT_MB
    return int(max(megabytes, 0) * 1024 * 1024)


def prune(folder: str | Path, limit: int, *, keep: Path | None = None) -> list[Path]:
    """Remove the least recently used kept workloads of ``folder`` (``*.npz``, by modification
    time: a load touches its file) until they hold at most ``limit`` bytes; ``keep`` (the one just
    written) stays. Returns what was removed. Files that vanish meanwhile (another run pruning
    the same folder) are skipped."""
    entries = []
    for entry in Path(folder).glob("*.npz"):
        try:
            status = entry.stat()
        except OSError:
            continue
        entries.append((status.st_mtime_ns, entry.name, entry, status.st_size))
    total = sum(size for *_, size in entries)
    removed = []
    for _, _, entry, size in sorted(entries):
        if total <= limit:
            break
        if keep is not None and entry == keep:
            continue
        try:
            entry.unlink()
        except OSError:
            continue
        total -= size
        removed.append(entry)
    return removed


def _touch(path: Path) -> None:
    """Mark a kept workload as just used (pruning removes the least recently used first)."""
    try:
        os.utime(path)
    except OSError:
        pass


def cache_key(path: str | Path, options: Mapping[str, object]) -> str:
    """A hash of the file's bytes, the reading options, this cache's format and the engine's source
    (a change to a reader or to cleaning makes every kept workload stale)."""
    digest = hashlib.sha256(f"{FORMAT} {VERSION} {numba_cache.source_key()}".encode())
    digest.update(json.dumps(dict(options), sort_keys=True, default=str).encode())
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()[:32]


def keeps_exactly(workload: Workload) -> bool:
    """Whether :func:`save` then :func:`load` gives this workload back as it is."""
    jobs = workload.jobs
    plain = all(_kept_exactly(jobs[name]) for name in jobs.columns)
    named = all(isinstance(name, str) for name in jobs.columns)
    report = workload.report.to_dict()
    try:
        same_json = json.loads(json.dumps([workload.metadata, report])) == [workload.metadata, report]
    except (TypeError, ValueError):
        return False
    return plain and named and same_json and jobs.index.equals(pd.RangeIndex(len(jobs)))


def _kept_exactly(column: pd.Series) -> bool:
    """Numbers and booleans; text of pandas' string dtype (an extended trace's queue names, nodespecs)
    without missing values."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype):
        return dtype.kind in "biuf"
    if isinstance(dtype, pd.StringDtype) and str(dtype) == "str":
        return not column.isna().any()
    return False


def default_folder() -> Path | None:
    """Where the command line keeps parsed traces: $SCHEDLAB_PARSE_CACHE (``off``: nowhere), else
    schedlab-parse in the user's cache folder."""
    chosen = os.environ.get("SCHEDLAB_PARSE_CACHE")
    if chosen:
        return None if chosen.lower() in ("off", "0", "no", "false") else Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "schedlab-parse"
