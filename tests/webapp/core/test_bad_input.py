"""No HTTP 500 for bad input (issue 27): each input that answered 500 answers 400 with one line,
and a 500 that remains is logged with its traceback."""

from __future__ import annotations

import errno
import json
import logging
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.test import Client
from django.urls import reverse

from tests.webapp.conftest import DEMO_SWF, make_trace
from webapp.accounts.models import Token
from webapp.allocations.models import AllocationSet
from webapp.experiments.models import Experiment
from webapp.traces.models import Trace

DEEP = ("[" * 100_000 + "]" * 100_000).encode()
DEEP_OBJECT = ('{"a": ' * 100_000 + "1" + "}" * 100_000).encode()


@pytest.fixture
def api(alice) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {Token.issue(alice)}", raise_request_exception=False)


@pytest.fixture
def trace(alice):
    return make_trace(alice)


def one_line_400(response) -> str:
    assert response.status_code == 400, response.content[:300]
    message = response.json()["error"] if response["Content-Type"].startswith("application/json") else ""
    if message:
        assert "\n" not in message and "Traceback" not in message
    return message


def post_json(client: Client, url: str, body: bytes | str):
    return client.post(url, body, content_type="application/json")


@pytest.mark.parametrize("field, value", [
    ("trace", "1e999"), ("trace", "-1e999"), ("trace", str(2**63)), ("trace", "[1]"), ("trace", '{"a": 1}'),
    ("procs", str(2**63)), ("procs", str(2**40)), ("procs", "1e999"), ("seed", str(2**63)), ("seed", str(-2**63 - 1)),
    ("seed", "1e999"), ("load_factor", "1e999"), ("load_factor", "NaN"), ("load_factor", '"x"'), ("days", "[1]"),
    ("policies", '[{"preset": "sorted-masc", "params": {"masc": %s}}]' % (10**400)),
    ("policies", '[{"preset": "sorted-masc", "params": {"masc": %s}}]' % ("9" * 5000)),
    ("policies", '[{"ordering": [1], "algorithm": "easy"}]'), ("policies", "[[1]]"), ("policies", "[1e999]"),
    ("machine", "1e999"), ("allocations", "1e999"), ("sweep", '{"param": "masc", "values": [1e999, [1]]}'),
])
def test_bad_experiment_fields_are_400_with_one_line(api, trace, field, value):
    body = {"trace": trace.pk, "policies": [{"preset": "fcfs"}]}
    text = json.dumps(body)[:-1] + f', "{field}": {value}}}'
    message = one_line_400(post_json(api, reverse("api:experiments"), text))
    assert message
    assert not Experiment.objects.exists()


def test_a_trace_of_1e999_is_400(api, trace):
    assert "trace" in one_line_400(post_json(api, reverse("api:experiments"), '{"trace": 1e999, "policies": ["fcfs"]}'))


@pytest.mark.parametrize("url", ["api:experiments", "api:token", "api:studies"])
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT, b'{"a": ' + b"9" * 5000 + b"}", b"\xff\xfe"],
                         ids=["deep-list", "deep-object", "5000-digits", "not-utf8"])
def test_deep_or_huge_json_is_400(api, url, body):
    assert "JSON" in one_line_400(post_json(api, reverse(url), body))


def test_a_study_of_bad_fields_is_400(api, trace):
    body = json.dumps({"trace": trace.pk, "policies": ["fcfs"], "seed": 2**63, "procs": 2**63})
    one_line_400(post_json(api, reverse("api:studies"), body))


@pytest.mark.parametrize("field, value", [("procs", str(2**63)), ("procs", str(2**40)), ("seed", str(2**63)),
                                          ("seed", "9" * 5000), ("trace", str(2**63))])
def test_the_experiment_form_refuses_huge_numbers(alice, trace, field, value):
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    data = {"trace": trace.pk, "machine_source": "size", "procs": "64", "allocation": "count", "seed": "0",
            "policy_fcfs": "on", field: value}
    response = client.post(reverse("experiments:new"), data)
    assert response.status_code == 400
    assert not Experiment.objects.exists()


def test_an_allocations_field_over_csvs_limit_is_a_form_error(alice):
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    text = "allocation,members,award,period_days,target_factor,target\n" + "a" * 140_000 + ",user:1,100,30,1,0.5\n"
    response = client.post(reverse("allocations:new"), {"name": "long", "text": text})
    assert response.status_code == 400
    assert "line 2" in response.content.decode()
    assert not AllocationSet.objects.exists()


def test_an_unexpected_500_is_logged_with_its_traceback(api, monkeypatch, caplog):
    """What no check foresaw still answers 500, and django.request logs it with the traceback."""
    def broken(*args, **kwargs):
        raise RuntimeError("something nobody foresaw")
    monkeypatch.setattr("webapp.api.views.experiment_arguments", broken)
    request_log = logging.getLogger("django.request")     # it does not propagate: its own console handler
    request_log.addHandler(caplog.handler)
    try:
        response = post_json(api, reverse("api:experiments"), '{"trace": 1, "policies": ["fcfs"]}')
    finally:
        request_log.removeHandler(caplog.handler)
    assert response.status_code == 500
    record = next(r for r in caplog.records if r.name == "django.request")
    assert record.exc_info and "something nobody foresaw" in str(record.exc_info[1])


def test_the_logging_settings_send_500s_and_celery_to_the_console(settings):
    loggers = settings.LOGGING["loggers"]
    assert "console" in loggers["django.request"]["handlers"] and loggers["django.request"]["level"] == "ERROR"
    assert "console" in loggers["celery"]["handlers"]
    assert any(isinstance(h, logging.StreamHandler) for h in logging.getLogger("django.request").handlers)


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def _nothing_stored(settings) -> bool:
    files = [p for root in (settings.MEDIA_ROOT, settings.FILE_UPLOAD_TEMP_DIR) for p in Path(root).rglob("*")
             if p.is_file()]
    return not Trace.objects.exists() and files == []


@pytest.mark.parametrize("url", ["traces:upload", "api:traces"])
def test_an_upload_on_a_full_disk_while_streaming_is_400(alice, url, monkeypatch, settings):
    """The temporary file cannot be written: the upload stops, the partial file goes."""
    monkeypatch.setattr(TemporaryFileUploadHandler, "receive_data_chunk", _disk_full)
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.issue(alice)}", raise_request_exception=False)
    client.force_login(alice)
    response = client.post(reverse(url), {"name": "x", "file": SimpleUploadedFile("demo.swf", DEMO_SWF.read_bytes())})
    assert response.status_code == 400
    assert "disk is full" in response.content.decode()
    assert _nothing_stored(settings)


@pytest.mark.parametrize("url", ["traces:upload", "api:traces"])
def test_an_upload_on_a_full_disk_while_storing_is_400(alice, url, monkeypatch, settings):
    """The checked file cannot be moved into place: one line, nothing half-stored."""
    monkeypatch.setattr("webapp.traces.services.store_file", _disk_full)
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.issue(alice)}", raise_request_exception=False)
    client.force_login(alice)
    response = client.post(reverse(url), {"name": "x", "file": SimpleUploadedFile("demo.swf", DEMO_SWF.read_bytes())})
    assert response.status_code == 400
    assert "disk is full" in response.content.decode() and "\n" not in response.content.decode().strip()
    assert _nothing_stored(settings)


@pytest.mark.parametrize("field, value", [
    ("param_sorted-masc_masc", str(10**400)), ("param_sorted-masc_masc", "1e999"), ("param_sfs_weight_age", "1e999"),
    ("param_sfs_weight_age", "nan"), ("workload_deadline_fraction", "1e999"), ("sweep_values", "1e999, [1]"),
])
def test_the_experiment_form_refuses_huge_parameters(alice, trace, field, value):
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    data = {"trace": trace.pk, "machine_source": "size", "procs": "64", "allocation": "count", "seed": "0",
            "policy_sorted-masc": "on", "policy_sfs": "on", "sweep_param": "masc" if field == "sweep_values" else "",
            field: value}
    response = client.post(reverse("experiments:new"), data)
    assert response.status_code in (302, 400)
    if response.status_code == 302:     # accepted: then as the value it means (inf where infinity is allowed)
        assert Experiment.objects.exists()
