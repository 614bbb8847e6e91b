"""Receiving trace files: a streaming size cap, content hashing, a gzip-bomb cap and cheap checks.

Nothing here stores anything under MEDIA_ROOT: `inspect_upload` works on the temporary file
Django streamed to FILE_UPLOAD_TEMP_DIR and hands back a staged file that the view moves into
place only when every check passed.
"""

from __future__ import annotations

import hashlib
import os
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import IO, Any

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopUpload, TemporaryFileUploadHandler
from django.http import HttpRequest
from django.template.defaultfilters import filesizeformat

from engine.api import check_upload, error_line
from webapp.core.files import disk_full, disk_full_message

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1024 * 1024
MAX_PROBLEMS = 20


class SizeLimitUploadHandler(FileUploadHandler):
    """Counts the bytes of uploaded files while they stream; past the cap it stops the upload.

    The partial temporary file is discarded by Django; the view sees `request.upload_too_large`.
    """

    def handle_raw_input(self, input_data: IO[bytes], META: dict[str, str], content_length: int, boundary: bytes,
                         encoding: str | None = None) -> None:
        self.limit = settings.SCHEDLAB_UPLOAD_MAX_BYTES
        self.received = 0
        self.request.upload_too_large = False
        Path(settings.FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > self.limit:
            self.request.upload_too_large = True
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


class DiskSafeUploadHandler(TemporaryFileUploadHandler):
    """Django's streaming to a temporary file, except that a full disk stops the upload (the partial
    file is deleted) and sets `request.upload_disk_full` for the view's one-line 400, never a 500."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        self._guarded(super().new_file, *args, **kwargs)

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self._guarded(super().receive_data_chunk, raw_data, start)

    def _guarded(self, step: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return step(*args, **kwargs)
        except OSError as e:
            if not disk_full(e):
                raise
            self.request.upload_disk_full = True
            raise StopUpload(connection_reset=False) from None


def upload_refusal(request: HttpRequest) -> tuple[str, int] | None:
    """What the upload handlers refused while the request streamed: (one line, HTTP status)."""
    if getattr(request, "upload_too_large", False):
        return too_large_message(), 413
    if getattr(request, "upload_disk_full", False):
        return disk_full_message(), 400
    return None


def too_large_message() -> str:
    return (
        f"The file is larger than this server accepts ({filesizeformat(settings.SCHEDLAB_UPLOAD_MAX_BYTES)}); "
        "nothing was stored."
    )


class UploadRejected(Exception):
    """The upload failed a check; `problems` are user-facing lines naming file, line and field."""

    def __init__(self, problems: list[str], *, bad_lines_only: bool = False) -> None:
        self.problems = problems[:MAX_PROBLEMS]
        #: every problem is a line that "skip bad lines" would leave out (none is about the whole file)
        self.bad_lines_only = bad_lines_only
        super().__init__("; ".join(self.problems))


@dataclass
class InspectedUpload:
    staged: Path          # temporary file named like its final name, same filesystem as MEDIA_ROOT
    sha256: str
    compressed: bool
    size_bytes: int
    header: dict[str, str] = field(default_factory=dict)
    format: str = "swf"   # swf | metacentrum | aleang | pbs | slurm (engine.workload.loading.trace_format)

    @property
    def relative_name(self) -> str:
        return f"traces/{self.sha256}.swf" + (".gz" if self.compressed else "")

    def discard(self) -> None:
        self.staged.unlink(missing_ok=True)


def hash_and_measure(path: Path, name: str) -> tuple[str, bool]:
    """sha256 of the file; for gzip also decompress as we go and stop past the decompressed cap."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        chunk = f.read(CHUNK)
        if not chunk:
            raise UploadRejected([f"{name}: the file is empty."])
        compressed = chunk[:2] == GZIP_MAGIC
        if not compressed and b"\x00" in chunk[:4096]:
            raise UploadRejected([f"{name}: not a text SWF trace (nor gzip-compressed): binary data at the start."])
        inflater = _Inflater(name) if compressed else None
        while chunk:
            digest.update(chunk)
            if inflater is not None:
                inflater.feed(chunk)
            chunk = f.read(CHUNK)
    if inflater is not None and inflater.total == 0:
        raise UploadRejected([f"{name}: the compressed file is empty."])
    return digest.hexdigest(), compressed


class _Inflater:
    """Decompresses gzip (all members) a chunk at a time, counting output, never keeping it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cap = settings.SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES
        self.total = 0
        self.z = zlib.decompressobj(wbits=47)  # 32 + 15: gzip header, full window

    def feed(self, data: bytes) -> None:
        try:
            while data:
                self.total += len(self.z.decompress(data, CHUNK))
                if self.total > self.cap:
                    raise UploadRejected([
                        f"{self.name}: decompresses to more than {filesizeformat(self.cap)}; "
                        "refused as a possible compression bomb, nothing was stored."
                    ])
                if self.z.eof:  # a new gzip member may follow
                    data = self.z.unused_data
                    self.z = zlib.decompressobj(wbits=47)
                else:
                    data = self.z.unconsumed_tail
        except zlib.error as e:
            raise UploadRejected([f"{self.name}: not a valid gzip file ({e})."]) from None


def inspect_upload(uploaded: TemporaryUploadedFile, name: str, *, skip_bad_lines: bool = False) -> InspectedUpload:
    """Hash, bomb-check and cheaply validate an uploaded trace (SWF, or an extended MetaCentrum/AleaNG
    trace recognised by its content); raises UploadRejected with problems. With ``skip_bad_lines``,
    problems of single lines pass (the parse skips and counts them); a problem of the whole file does not."""
    source = Path(uploaded.temporary_file_path())
    sha, compressed = hash_and_measure(source, name)
    # A hard link named like the final file (the engine tells gzip by name): Django still deletes
    # its temporary file at the end of the request, the staged one lives until stored or discarded.
    staged = source.with_name(f".staged-{sha[:16]}-{os.getpid()}-{id(uploaded)}.swf" + (".gz" if compressed else ""))
    os.link(source, staged)
    inspected = InspectedUpload(staged, sha, compressed, staged.stat().st_size)
    try:
        header, problems, inspected.format = check_upload(str(staged), max_errors=MAX_PROBLEMS)
    except Exception as e:  # the checker itself choked: report, never crash the request
        inspected.discard()
        raise UploadRejected([f"{name}: {error_line(e)}"]) from None
    bad_lines_only = all(getattr(p, "line", None) is not None for p in problems)
    if problems and not (skip_bad_lines and bad_lines_only):
        inspected.discard()
        raise UploadRejected([error_line(p, name=name) for p in problems], bad_lines_only=bad_lines_only)
    inspected.header = {str(k): str(v) for k, v in (header or {}).items()}
    return inspected


def clean_upload_temp(max_age: float | None = None, *, folder: Path | None = None) -> list[Path]:
    """Remove the files of FILE_UPLOAD_TEMP_DIR older than ``max_age`` seconds (default
    SCHEDLAB_UPLOAD_TEMP_MAX_AGE): uploads a killed web process left half-written, staged files it
    never stored. A file being streamed is written to all the time, so it is never that old. Called
    at start-up (webapp.run) and by the periodic check. Returns what was removed."""
    folder = Path(folder or settings.FILE_UPLOAD_TEMP_DIR)
    cutoff = time.time() - (settings.SCHEDLAB_UPLOAD_TEMP_MAX_AGE if max_age is None else max_age)
    removed = []
    for path in folder.glob("*") if folder.is_dir() else ():
        if not _upload_leftover(path.name):
            continue        # not an upload's: the folder may be shared (SCHEDLAB_UPLOAD_TEMP_DIR=/tmp)
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed.append(path)
        except OSError:
            continue        # gone meanwhile, or not ours to remove
    return removed


def _upload_leftover(name: str) -> bool:
    """Django's temporary upload files (``tmpXXXX.upload.swf``) and the staged links of inspect_upload."""
    return ".upload" in name or name.startswith(".staged-")
