"""Uploading an SWF trace: stored by content hash, parsed in the background, summary shown."""

from __future__ import annotations

import gzip

import pytest
from django.urls import reverse

from tests.webapp.conftest import DEMO_SWF
from webapp.traces.models import Trace

pytestmark = pytest.mark.django_db


def upload(client, content: bytes, filename: str = "demo.swf", **fields):  # noqa: ANN001, ANN201
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = {"name": "Demo", "description": "", **fields, "file": SimpleUploadedFile(filename, content)}
    return client.post(reverse("traces:upload"), data)


def test_it_stores_the_file_by_content_hash_and_parses_it(alice_client, media_root, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = upload(alice_client, DEMO_SWF.read_bytes(), filename="../../etc/passwd.swf")
    trace = Trace.objects.get()
    assert response.status_code == 302 and response.url == trace.get_absolute_url()
    assert trace.status == "parsing" and len(callbacks) == 1
    assert [p.name for p in (media_root / "traces").iterdir()] == [f"{trace.sha256}.swf"]
    assert trace.original_name == "passwd.swf"  # Django strips the path; never used as one anyway

    from webapp.traces.tasks import parse_trace

    parse_trace(trace.pk)  # what the queued task does
    trace.refresh_from_db()
    assert trace.status == "ready", trace.error
    assert trace.summary["jobs"] > 0 and trace.procs == 16
    assert trace.cache_path.exists()
    page = alice_client.get(trace.get_absolute_url())
    assert b"Cleaning report" in page.content and b'id="trace-plots"' in page.content


def test_it_accepts_gzip(alice_client, media_root):
    response = upload(alice_client, gzip.compress(DEMO_SWF.read_bytes()), filename="demo.swf.gz")
    trace = Trace.objects.get()
    assert response.status_code == 302
    assert trace.file == f"traces/{trace.sha256}.swf.gz"
    assert trace.path.read_bytes()[:2] == b"\x1f\x8b"


def test_it_shares_one_file_between_identical_uploads(alice_client, bob_client, media_root):
    upload(alice_client, DEMO_SWF.read_bytes())
    upload(bob_client, DEMO_SWF.read_bytes())
    assert Trace.objects.count() == 2
    assert len(list((media_root / "traces").iterdir())) == 1


def test_it_asks_for_the_machine_size_when_the_header_has_none(alice_client, media_root):
    headerless = b"".join(line + b"\n" for line in DEMO_SWF.read_bytes().splitlines() if not line.startswith(b";"))
    response = upload(alice_client, headerless)
    assert response.status_code == 400
    assert b"has no MaxProcs or MaxNodes" in response.content
    assert not Trace.objects.exists()

    response = upload(alice_client, headerless, procs="16")
    assert response.status_code == 302
    assert Trace.objects.get().procs == 16
