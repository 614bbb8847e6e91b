"""Files under MEDIA_ROOT: content-addressed storage and atomic writes."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings


def media_path(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


@contextmanager
def content_lock(sha256: str) -> Iterator[None]:
    """Held while a content-addressed file is stored with its row, or a row is deleted with its file:
    an upload of the same content and a deletion never interleave (the deletion saw no other row, then
    the upload kept the existing file, then the deletion removed it: 2 of 40 tries broke the upload).
    An flock on a file per content hash: every process of one host (make run; compose's services share
    the media volume on one host)."""
    folder = Path(settings.DATA_DIR) / "locks"      # beside MEDIA_ROOT, never counted as anyone's files
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{sha256[:64]}.lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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


def disk_full(error: BaseException) -> bool:
    """Whether an error says the disk (or the user's disk quota) is full, as OSError or as SQLite's
    "database or disk is full"."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return "disk is full" in str(error) or "No space left" in str(error)


def disk_full_message() -> str:
    return "The server's disk is full: nothing was stored. Try again later, or tell the server's admin."
