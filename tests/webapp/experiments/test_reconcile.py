"""A run whose worker died is re-queued once, then failed with the reason "worker lost"."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.webapp.conftest import make_experiment
from webapp.experiments import tasks
from webapp.experiments.models import Run
from webapp.experiments.tasks import reconcile

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(tasks.run_simulation, "delay", lambda pk: calls.append(pk))
    return calls


def lose(run: Run, attempts: int) -> None:
    """As if a worker started the run and died a while ago."""
    old = timezone.now() - timedelta(minutes=10)
    Run.objects.filter(pk=run.pk).update(status="running", attempts=attempts, started_at=old, heartbeat_at=old)


@pytest.fixture
def run(alice, demo_trace) -> Run:
    return make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get()


def test_a_lost_run_is_requeued_once(run, sent, django_capture_on_commit_callbacks):
    lose(run, attempts=1)
    with django_capture_on_commit_callbacks(execute=True):  # back in its owner's turn, sent when a slot is free
        assert reconcile() == {"requeued": 1, "failed": 0}
    run.refresh_from_db()
    assert run.status == "queued" and run.dispatched_at is not None and sent == [run.pk]


def test_a_run_lost_twice_fails_with_the_reason(run, sent):
    lose(run, attempts=2)
    assert reconcile() == {"requeued": 0, "failed": 1}
    run.refresh_from_db()
    assert run.status == "failed" and run.error.startswith("worker lost") and sent == []


def test_a_run_with_a_fresh_heartbeat_is_left_alone(run, sent):
    Run.objects.filter(pk=run.pk).update(status="running", attempts=1, heartbeat_at=timezone.now())
    assert reconcile() == {"requeued": 0, "failed": 0}


def test_a_requeued_run_then_completes(run, sent):
    lose(run, attempts=1)
    reconcile()
    tasks.run_simulation(run.pk)
    run.refresh_from_db()
    assert run.status == "done" and run.attempts == 2


def test_the_experiment_poll_reconciles(run, sent, alice_client):
    from django.urls import reverse

    lose(run, attempts=2)
    data = alice_client.get(reverse("experiments:progress", args=[run.experiment_id])).json()
    assert data["runs"][0]["status"] == "failed" and data["finished"] is True


def test_the_periodic_check_runs_on_compose(settings):
    """docker-compose.yml runs one beat service; its schedule holds the lost-work check of every run
    (a preview's runs are experiment runs: no check of their own), every minute, and the dispatcher."""
    from pathlib import Path

    compose = (Path(__file__).resolve().parents[3] / "docker-compose.yml").read_text()
    assert '"celery", "-A", "webapp", "beat"' in compose
    schedule = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert schedule == {"webapp.experiments.tasks.reconcile_runs": 60.0, "webapp.experiments.tasks.dispatch_runs": 10.0,
                        "webapp.traces.tasks.reconcile_traces": 60.0}
