"""Creating traces: shared by the upload page, the JSON API and generated scenarios."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from engine.api import declared_procs
from webapp.core.files import content_lock, media_path, store_file
from webapp.core.tasks import enqueue
from webapp.quotas.services import check_disk, file_size
from webapp.traces.models import REMOVED_MESSAGE, Trace
from webapp.traces.tasks import parse_trace
from webapp.traces.uploads import InspectedUpload


def upload_options(data: dict) -> dict[str, str]:
    """The upload's reading options, kept beside the header so every later parse reads the file the
    same way (Trace.cleaning)."""
    options = {}
    if data.get("memory_unit"):
        options["memory_unit"] = data["memory_unit"]
    if data.get("skip_bad_lines"):
        options["skip_bad_lines"] = "yes"
    return options


def create_trace(user: Any, data: dict, inspected: InspectedUpload, original_name: str) -> Trace:
    """Store the checked file by content hash, create the row, parse in the background.
    QuotaExceeded (nothing stored) when the user's disk quota has no room for it."""
    with content_lock(inspected.sha256):     # never between a deletion's check and its unlink
        return _store_and_create(user, data, inspected, original_name)


def _store_and_create(user: Any, data: dict, inspected: InspectedUpload, original_name: str) -> Trace:
    machines = data.get("machines") or {}     # the machine description uploaded with it (the form read it)
    try:
        check_disk(user, inspected.size_bytes)
        store_file(inspected.staged, inspected.relative_name)
        with transaction.atomic():
            trace = Trace.objects.create(
                owner=user, name=data["name"], description=data.get("description", ""),
                shared=bool(data.get("shared")), sha256=inspected.sha256, file=inspected.relative_name,
                original_name=original_name[:255], size_bytes=inspected.size_bytes,
                procs=data.get("procs") or machines.get("cores") or declared_procs(inspected.header),
                machine_name=machines.get("name", ""), machine_text=machines.get("text", ""),
                format=inspected.format,
                time_zone=data.get("time_zone") or "",
                header={**inspected.header, **upload_options(data)}, parse_sent_at=timezone.now(),
            )
            enqueue(parse_trace, trace.pk)
    except BaseException:
        inspected.discard()
        if not Trace.objects.filter(sha256=inspected.sha256).exists():
            media_path(inspected.relative_name).unlink(missing_ok=True)
        raise
    return trace


def disk_bytes_of(user: Any) -> int:
    """The user's uploaded traces and their parsed caches, in bytes (webapp.quotas meter)."""
    return sum(file_size(t.path) + sum(file_size(c) for c in t.path.parent.glob(f"{t.sha256}-p*.npz"))
               for t in Trace.objects.filter(owner=user).exclude(status=Trace.Status.REMOVED).only("file", "sha256"))


def delete_trace(trace: Trace) -> None:
    """Delete the row, and its file and caches unless another row holds the same content; under the
    content's lock, so an upload of the same file meanwhile keeps its file."""
    with content_lock(trace.sha256):
        trace.delete()          # first: an experiment made meanwhile protects the row and its files
        trace.delete_files()


def remove_trace(trace: Trace) -> None:
    """The owner deletes a trace that experiments or previews (theirs or others') used: those keep their
    results and show "removed by its owner"; the row stays for them as a tombstone (private, listed
    nowhere, nothing computed from it again), the file and caches go unless another trace holds them."""
    with content_lock(trace.sha256):
        Trace.objects.filter(pk=trace.pk).update(status=Trace.Status.REMOVED, shared=False, cache="",
                                                 error=REMOVED_MESSAGE)
        trace.status = Trace.Status.REMOVED
        trace.delete_files()
