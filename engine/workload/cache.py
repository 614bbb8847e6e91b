"""Columnar cache of a cleaned Workload: one .npz holding one array per column plus a JSON blob
(metadata, cleaning report, source, column order and dtypes). Loading needs no parsing, no
pickle, and gives back exactly the frame that was saved."""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from engine.workload.errors import WorkloadError
from engine.workload.model import CleaningReport, Workload

FORMAT = "schedlab-workload-cache"
VERSION = 1
_INFO_KEY = "__info__"


def save(workload: Workload, path: str | Path) -> None:
    """Write the cache atomically: a temporary file in the same folder, then os.replace."""
    target = Path(path)
    columns = list(workload.jobs.columns)
    arrays = {f"col{i}": _storable(workload.jobs[name]) for i, name in enumerate(columns)}
    info = {
        "format": FORMAT,
        "version": VERSION,
        "columns": columns,
        "dtypes": [str(workload.jobs[name].dtype) for name in columns],
        "metadata": workload.metadata,
        "report": workload.report.to_dict(),
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
            if info.get("format") != FORMAT or info.get("version") != VERSION:
                raise WorkloadError(f"not a workload cache of version {VERSION}", file=name)
            data = {column: archive[f"col{i}"] for i, column in enumerate(info["columns"])}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        if isinstance(exc, WorkloadError):
            raise
        raise WorkloadError(f"cannot read the workload cache: {exc}", file=name) from None
    jobs = pd.DataFrame(data, columns=info["columns"]).astype(dict(zip(info["columns"], info["dtypes"])))
    return Workload(
        jobs=jobs,
        metadata=info["metadata"],
        report=CleaningReport.from_dict(info["report"]),
        source=info["source"],
    )


def _storable(column: pd.Series) -> np.ndarray:
    """Numbers and booleans as they are; anything else (text columns of future readers) as a
    fixed-width unicode array, because object arrays would need pickle to load. (A missing value
    in a text column would come back as the text "nan"; the SWF reader produces no text columns.)"""
    if column.dtype.kind in "biuf":
        return column.to_numpy()
    return np.asarray(column.astype(str).to_numpy(), dtype=np.str_)
