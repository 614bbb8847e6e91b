"""Files under MEDIA_ROOT: content-addressed storage and atomic writes."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from django.conf import settings


def media_path(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


def store_file(source: Path, relative: str) -> Path:
    """Move `source` to MEDIA_ROOT/relative atomically; if that file already exists (same content
    hash), keep the existing one and drop `source`."""
    target = media_path(relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        source.unlink(missing_ok=True)
        return target
    try:
        os.replace(source, target)
    except OSError:  # another filesystem: copy next to the target, then rename
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        os.close(fd)
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        source.unlink(missing_ok=True)
    return target


def replace_dir(build: Path, target: Path) -> None:
    """Put a finished directory in place of `target` (which may exist from an earlier attempt)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        os.replace(target, old)
        os.replace(build, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(build, target)
