"""POST /api/traces/ (multipart: file, name) → {id, status}; GET /api/traces/{id}/ → status, summary."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.webapp.conftest import DEMO_SWF
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace

pytestmark = pytest.mark.django_db


def test_upload_then_poll_until_ready(api):
    response = api.post("/api/traces/", {"name": "demo", "file": SimpleUploadedFile("demo.swf", DEMO_SWF.read_bytes())})
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "parsing"
    parse_trace(body["id"])
    detail = api.get(f"/api/traces/{body['id']}/").json()
    assert detail["status"] == "ready" and detail["summary"]["jobs"] > 0 and detail["procs"] == 16


def test_a_bad_file_is_a_json_error_naming_the_line(api):
    response = api.post("/api/traces/", {"name": "bad", "file": SimpleUploadedFile("bad.swf", b"1 2 3\n")})
    assert response.status_code == 400
    assert response.json()["error"].startswith("bad.swf, line 1") and not Trace.objects.exists()


def test_too_big_is_413(api, settings):
    settings.SCHEDLAB_UPLOAD_MAX_BYTES = 100
    response = api.post("/api/traces/", {"name": "big", "file": SimpleUploadedFile("big.swf", DEMO_SWF.read_bytes())})
    assert response.status_code == 413 and "larger than this server accepts" in response.json()["error"]


def test_another_users_trace_is_not_found(api, bob):
    from tests.webapp.conftest import make_trace

    bobs = make_trace(bob)
    assert api.get(f"/api/traces/{bobs.pk}/").json() == {"error": "not found"}
