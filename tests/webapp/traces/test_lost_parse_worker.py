"""A parse whose real Celery worker is killed (kill -9) in the middle, on the real Redis: the periodic
check leaves it alone while the parse could still be running, sends it again once when it is overdue
(a re-started worker then parses it), fails it with a "Parse again" button the second time, and the
button's parse finishes on a re-started worker.

The workers (``celery worker --pool solo``: the worker process is the one parsing) share this test's
database (SQLite, or PostgreSQL in test_postgres.py's subset) and media directory
(tests/webapp/real_workers.py). Redis db 11 (SCHEDLAB_TEST_PARSE_REDIS_URL to change it), emptied
first. Never skipped: when Redis is down this test fails. The in-process cases of the same check are
in test_lost_parse.py.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from tests.webapp.conftest import SHARED_SWF, make_trace
from tests.webapp.real_workers import worker_cluster
from webapp.studies.cluster import LocalCluster
from webapp.traces.models import Trace
from webapp.traces.tasks import PARSE_LOST, parse_trace, reconcile_parsing

REDIS_URL = os.environ.get("SCHEDLAB_TEST_PARSE_REDIS_URL", "redis://127.0.0.1:6379/11")
#: 232,562 jobs: seconds of parsing, so a kill as soon as the parse has started lands in its middle
BIG = SHARED_SWF / "SDSC-BLUE-2000-4.2-cln.swf.gz"
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cluster(tmp_path) -> Iterator[LocalCluster]:
    with worker_cluster(tmp_path, REDIS_URL) as rig:
        yield rig


def wait_for(what: str, condition, timeout: float = 180):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}: {Trace.objects.values('status', 'error').first()}")


def row(trace: Trace) -> Trace:
    return Trace.objects.get(pk=trace.pk)


def kill_mid_parse(cluster: LocalCluster, name: str, trace: Trace) -> None:
    """Start a quick worker, wait until it has begun parsing `trace`, kill -9 it there."""
    cluster.start_worker(name, "quick")
    wait_for(f"{name} to start parsing", lambda: row(trace).parse_started_at is not None)
    cluster.kill_worker(name, signal.SIGKILL)
    after = row(trace)
    assert after.status == "parsing" and after.parse_started_at is not None, "the kill came after the parse"
    assert reconcile_parsing() == {"resent": 0, "failed": 0}  # within its time limit: it might still parse


def overdue(trace: Trace) -> None:
    """The periodic check, as it runs once the parse time limit and the grace have passed."""
    past = timezone.now() - timedelta(seconds=settings.SCHEDLAB_PARSE_TIME_LIMIT + 30
                                      + settings.SCHEDLAB_RUN_STALE_SECONDS + 5)
    Trace.objects.filter(pk=trace.pk).update(parse_started_at=past)


def test_a_parse_whose_worker_is_killed_twice_fails_with_parse_again_which_a_restarted_worker_finishes(
        cluster, alice, alice_client):
    trace = make_trace(alice, BIG, name="blue", parse=False)
    Trace.objects.filter(pk=trace.pk).update(parse_sent_at=timezone.now())
    parse_trace.delay(trace.pk)

    kill_mid_parse(cluster, "first", trace)
    overdue(trace)
    assert reconcile_parsing() == {"resent": 1, "failed": 0}
    assert row(trace).parse_resends == 1 and row(trace).parse_started_at is None

    kill_mid_parse(cluster, "second", trace)  # the message sent again is taken by a re-started worker
    overdue(trace)
    assert reconcile_parsing() == {"resent": 0, "failed": 1}
    failed = row(trace)
    assert failed.status == "invalid" and failed.error == PARSE_LOST
    page = alice_client.get(trace.get_absolute_url()).content.decode()
    assert "Parse again" in page and "lost twice" in page

    assert alice_client.post(reverse("traces:parse_again", args=[trace.pk])).status_code == 302
    cluster.start_worker("third", "quick")
    wait_for("the parse to finish", lambda: row(trace).status != "parsing", timeout=300)
    done = row(trace)
    assert done.status == "ready", done.error
    assert done.summary["jobs"] == 232_562 and done.parse_resends == 0
    assert reconcile_parsing() == {"resent": 0, "failed": 0}


def test_a_parse_sent_again_after_its_worker_was_killed_is_finished_by_a_restarted_worker(cluster, alice):
    trace = make_trace(alice, BIG, name="blue", parse=False)
    Trace.objects.filter(pk=trace.pk).update(parse_sent_at=timezone.now())
    parse_trace.delay(trace.pk)

    kill_mid_parse(cluster, "first", trace)
    overdue(trace)
    assert reconcile_parsing() == {"resent": 1, "failed": 0}
    cluster.start_worker("second", "quick")
    wait_for("the parse to finish", lambda: row(trace).status != "parsing", timeout=300)
    done = row(trace)
    assert done.status == "ready" and done.summary["jobs"] == 232_562 and done.parse_resends == 1, done.error
    # the worker logs the task's success just after it returns
    wait_for("the second worker's log line", lambda: cluster.tasks_done_by("second", "parse_trace") == 1, timeout=30)
    assert cluster.tasks_done_by("first", "parse_trace") == 0
