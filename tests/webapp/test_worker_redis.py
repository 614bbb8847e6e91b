"""End to end on real services: a real Celery worker on the real Redis parses an uploaded trace
and runs two real simulations, while the test watches the database like the pages do."""

from __future__ import annotations

import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.celery_broker import on_broker
from tests.webapp.conftest import DEMO_SWF, synthetic_swf
from webapp.celery import app
from webapp.experiments.models import Experiment, Run
from webapp.traces.models import Trace

REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture
def redis_worker():
    """The project's Celery app on Redis db 15 with an in-process worker (a thread)."""
    with on_broker(app, REDIS_URL, REDIS_URL, task_ignore_result=False):
        with app.connection_for_write() as conn:
            conn.default_channel.client.ping()  # fails loudly when Redis is not running
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, shutdown_timeout=30):
            yield app


def wait_for(predicate, timeout: float = 120.0):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    runs = [(r.pk, r.status, r.progress, r.attempts, r.error) for r in Run.objects.all()]
    traces = [(t.pk, t.status, t.error) for t in Trace.objects.all()]
    raise AssertionError(f"timed out after {timeout:.0f} s; runs {runs}; traces {traces}")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_upload_parse_and_two_policies_on_a_real_worker(redis_worker, alice_client, tmp_path):
    big = synthetic_swf(tmp_path / "synthetic.swf", jobs=20000)
    response = alice_client.post(reverse("traces:upload"), {"name": "synthetic", "file": SimpleUploadedFile("s.swf", big.read_bytes())})
    assert response.status_code == 302
    trace = wait_for(lambda: Trace.objects.exclude(status="parsing").first())
    assert trace.status == "ready", trace.error

    data = {"trace": trace.pk, "machine_source": "header", "allocation": "count", "seed": "0",
            "policy_fcfs": "on", "policy_easy": "on"}
    assert alice_client.post(reverse("experiments:new"), data).status_code == 302
    experiment = Experiment.objects.get()
    progress_url = reverse("experiments:progress", args=[experiment.pk])
    seen: set[str] = set()

    def finished() -> bool:
        payload = alice_client.get(progress_url).json()
        seen.update(r["status"] for r in payload["runs"])
        return payload["finished"]

    wait_for(finished, timeout=300)
    runs = list(Run.objects.filter(experiment=experiment))
    assert [r.status for r in runs] == ["done", "done"], [r.error for r in runs]
    assert all(r.task_id and r.attempts == 1 and r.summary["jobs"] == 20000 for r in runs)
    assert "running" in seen or "queued" in seen
    csv = alice_client.get(reverse("experiments:run_schedule_csv", args=[runs[1].pk]))
    lines = b"".join(csv.streaming_content).splitlines()
    assert sum(1 for line in lines if not line.startswith(b"#")) == 20001     # the header and a row per job


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_policy_error_fails_the_run_with_its_message(redis_worker, alice, tmp_path):
    from tests.webapp.conftest import make_trace

    trace = make_trace(alice, DEMO_SWF)
    experiment = Experiment.objects.create(owner=alice, name="x", trace=trace, procs=16)
    run = Run.objects.create(experiment=experiment, label="bogus", policy={"preset": "no-such-policy"})
    from webapp.experiments.tasks import run_simulation

    run_simulation.delay(run.pk)
    run = wait_for(lambda: Run.objects.filter(pk=run.pk, status="failed").first())
    assert run.error.startswith("unknown policy 'no-such-policy'")
