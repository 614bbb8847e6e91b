"""Deleting a trace while someone uploads the same content (issue 27: 2 of 40 tries broke the
upload): the upload found the file stored and kept it, then the deletion, which had seen no other
trace of that content, removed it. The content lock orders them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from tests.webapp.conftest import DEMO_SWF, make_trace
from webapp.core.files import content_lock
from webapp.traces import services
from webapp.traces.models import Trace
from webapp.traces.services import create_trace, delete_trace
from webapp.traces.uploads import InspectedUpload, hash_and_measure

pytestmark = pytest.mark.django_db(transaction=True)


def staged_upload(tmp_path: Path) -> InspectedUpload:
    """The demo trace as an upload leaves it after its checks: a staged file beside the temporary one."""
    staged = tmp_path / "staged.swf"
    staged.write_bytes(DEMO_SWF.read_bytes())
    sha, compressed = hash_and_measure(staged, "demo.swf")
    return InspectedUpload(staged, sha, compressed, staged.stat().st_size)


def deleting_in_another_thread(trace: Trace) -> threading.Thread:
    def delete() -> None:
        try:
            delete_trace(Trace.objects.get(pk=trace.pk))
        finally:
            connection.close()
    thread = threading.Thread(target=delete)
    thread.start()
    return thread


def test_a_deletion_during_an_upload_of_the_same_content_leaves_the_upload_whole(alice, bob, tmp_path, monkeypatch):
    old = make_trace(alice, name="old", parse=False)
    stored = Path(old.path)
    real_store = services.store_file
    threads = []

    def store_then_let_the_deletion_try(source: Path, relative: str) -> Path:
        target = real_store(source, relative)       # the file exists: the upload keeps it, drops its own
        threads.append(deleting_in_another_thread(old))
        time.sleep(0.3)                             # the deletion's moment: before the upload's row exists
        return target

    monkeypatch.setattr(services, "store_file", store_then_let_the_deletion_try)
    new = create_trace(bob, {"name": "new"}, staged_upload(tmp_path), "demo.swf")
    threads[0].join(10)

    assert not threads[0].is_alive()
    assert not Trace.objects.filter(pk=old.pk).exists()
    assert Trace.objects.filter(pk=new.pk).exists() and stored.exists()
    assert Path(Trace.objects.get(pk=new.pk).path) == stored


def test_many_deletions_and_uploads_of_one_content_in_threads(alice, bob, tmp_path):
    """Uploads and deletions of the same file at once, 12 rounds: every trace left has its file."""
    for round_ in range(12):
        old = make_trace(alice, name=f"old{round_}", parse=False)
        upload = staged_upload(tmp_path)
        results: list[Trace] = []

        def upload_it(upload: InspectedUpload, results: list[Trace]) -> None:
            try:
                results.append(create_trace(bob, {"name": "new"}, upload, "demo.swf"))
            finally:
                connection.close()
        uploader = threading.Thread(target=upload_it, args=(upload, results))
        deleter = deleting_in_another_thread(old)
        uploader.start()
        uploader.join(10)
        deleter.join(10)
        for trace in Trace.objects.all():
            assert Path(trace.path).exists(), f"round {round_}: {trace.name} lost its file"
        Trace.objects.filter(pk__in=[t.pk for t in results]).delete()


def test_the_lock_is_held_by_one_at_a_time(tmp_path):
    order = []

    def hold(name: str) -> None:
        with content_lock("a" * 64):
            order.append(f"{name} in")
            time.sleep(0.1)
            order.append(f"{name} out")
    threads = [threading.Thread(target=hold, args=(n,)) for n in "xy"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order[0][0] == order[1][0] and order[2][0] == order[3][0]
