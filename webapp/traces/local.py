"""Adding a trace from a file on the server's disk (scripts, the run_study command, benchmarks).

The file is stored exactly as an upload stores it (by content hash under MEDIA_ROOT) and parsed
here, synchronously, by the same task the upload path queues.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from webapp.core.files import media_path
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace
from webapp.traces.uploads import hash_and_measure


def import_local_trace(owner: Any, source: Path, *, name: str = "", shared: bool = False) -> Trace:
    """The owner's ready trace with this file's content (reused if already imported), else a new one."""
    source = Path(source)
    sha, compressed = hash_and_measure(source, source.name)
    existing = Trace.objects.filter(owner=owner, sha256=sha, status=Trace.Status.READY).first()
    if existing is not None:
        return existing
    relative = f"traces/{sha}.swf" + (".gz" if compressed else "")
    target = media_path(relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        shutil.copyfile(source, target)
    trace = Trace.objects.create(owner=owner, name=name or source.name.split(".swf")[0], shared=shared, sha256=sha,
                                 file=relative, original_name=source.name[:255], size_bytes=target.stat().st_size)
    parse_trace(trace.pk)
    trace.refresh_from_db()
    return trace
