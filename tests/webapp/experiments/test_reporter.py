"""Progress reaches the database at most about once a second; a cancel is noticed within a second."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.db.models import QuerySet
from django.utils import timezone

from tests.webapp.conftest import make_experiment
from webapp.experiments.models import Run
from webapp.experiments.tasks import Reporter

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(alice, demo_trace) -> Run:
    run = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get()
    Run.objects.filter(pk=run.pk).update(status="running")
    return run


def test_progress_is_throttled(running, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr("webapp.core.progress.time.monotonic", lambda: clock[0])
    reporter = Reporter(running.pk)
    reporter.progress(0.1)
    assert Run.objects.get(pk=running.pk).progress == 0.1
    clock[0] += 0.5
    reporter.progress(0.2)
    assert Run.objects.get(pk=running.pk).progress == 0.1
    clock[0] += 0.6
    reporter.progress(0.3)
    assert Run.objects.get(pk=running.pk).progress == 0.3


def test_should_stop_sees_a_cancel_request(running, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr("webapp.core.progress.time.monotonic", lambda: clock[0])
    reporter = Reporter(running.pk)
    clock[0] += 1.1
    assert reporter.should_stop() is False
    Run.objects.filter(pk=running.pk).update(cancel_requested=True)
    assert reporter.should_stop() is False  # checked at most once a second
    clock[0] += 1.1
    assert reporter.should_stop() is True


@pytest.mark.django_db(transaction=True)  # the lease thread has a connection of its own: it must see the row
def test_lease_is_renewed_while_no_callback_comes(alice, demo_trace, monkeypatch):
    """Loading a big trace or writing its schedule calls nothing back: the lease thread keeps the
    heartbeat fresh meanwhile, so the reconcile step does not take the run for a lost worker's."""
    run = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get()
    old = timezone.now() - timedelta(minutes=10)
    Run.objects.filter(pk=run.pk).update(status="running", heartbeat_at=old)
    monkeypatch.setattr("webapp.core.progress.HEARTBEAT_SECONDS", 0.05)
    reporter = Reporter(run.pk)
    with reporter.lease():
        deadline = time.monotonic() + 5
        while Run.objects.get(pk=run.pk).heartbeat_at == old and time.monotonic() < deadline:
            time.sleep(0.02)  # the main thread is busy elsewhere: no progress, no should_stop
    renewed = Run.objects.get(pk=run.pk).heartbeat_at
    assert renewed > old + timedelta(minutes=9)
    time.sleep(0.2)
    assert Run.objects.get(pk=run.pk).heartbeat_at == renewed  # the thread stopped with the block


@pytest.mark.django_db(transaction=True)
def test_a_beat_the_database_refuses_does_not_end_the_lease(alice, demo_trace, monkeypatch):
    """SQLite answers "database is locked" while the worker writes a result: that beat is lost, the
    thread goes on (a dead thread would let the lease go stale and the run be handed to another worker)."""
    run = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get()
    old = timezone.now() - timedelta(minutes=10)
    Run.objects.filter(pk=run.pk).update(status="running", heartbeat_at=old)
    monkeypatch.setattr("webapp.core.progress.HEARTBEAT_SECONDS", 0.05)
    refused, update = [0], QuerySet.update

    def locked_twice(self, **fields):
        if "heartbeat_at" in fields and refused[0] < 2:
            refused[0] += 1
            raise OperationalError("database is locked")
        return update(self, **fields)

    monkeypatch.setattr(QuerySet, "update", locked_twice)
    with Reporter(run.pk).lease():
        deadline = time.monotonic() + 5
        while Run.objects.get(pk=run.pk).heartbeat_at == old and time.monotonic() < deadline:
            time.sleep(0.02)
    assert refused[0] == 2 and Run.objects.get(pk=run.pk).heartbeat_at > old + timedelta(minutes=9)
