"""The lost-message lookup (webapp.core.broker) on the real Redis at 127.0.0.1:6379, db 12 (used by
nothing else; tests/webapp/test_worker_redis.py has 15, studies 14, the study benchmarks 13).

A queued run's message waits in Redis' queue list, or in the hash of messages a worker holds
unacknowledged; either way the run is not lost. "Losing" the message is removing it from the list,
as a dying worker's filesystem broker would: the reconcile step sends it again once, then fails the
run "lost in the queue". Redis must be running (the CI starts it); nothing skips when it is not.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.celery_broker import on_broker
from tests.webapp.conftest import make_experiment
from webapp.celery import app
from webapp.core.broker import waiting_messages
from webapp.core.queues import SIMULATION, queue_name
from webapp.experiments.models import Run
from webapp.experiments.tasks import LOST_MESSAGE, reconcile_runs, resend_lost, run_simulation

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

REDIS_URL = "redis://127.0.0.1:6379/12"
QUEUE = queue_name(SIMULATION)     # the fair dispatcher sends a run to the simulation queue


@pytest.fixture
def redis() -> Iterator[Any]:
    """The project's Celery app on Redis db 12, emptied before and after; yields a Redis client."""
    with on_broker(app, REDIS_URL, REDIS_URL):
        with app.connection_for_write() as connection:
            client = connection.default_channel.client
            client.ping()  # fails loudly when Redis is not running
            client.flushdb()
            try:
                yield client
            finally:
                client.flushdb()


@pytest.fixture
def queued_run(alice, demo_trace, redis, django_capture_on_commit_callbacks) -> Run:
    with django_capture_on_commit_callbacks(execute=True):  # the run's message is sent on commit
        experiment = make_experiment(alice, demo_trace, ["fcfs"], run=False)
    assert redis.llen(QUEUE) == 1
    return experiment.runs.get()


def lose_message(redis: Any) -> None:
    assert redis.delete(QUEUE) == 1


def age(run: Run) -> None:
    Run.objects.filter(pk=run.pk).update(queued_at=timezone.now() - timedelta(minutes=10))


def test_the_lookup_finds_the_queued_message(queued_run):
    assert waiting_messages() == {(run_simulation.name, (queued_run.pk,))}


def test_a_message_a_worker_holds_unacknowledged_is_not_lost(queued_run, redis):
    with app.connection_for_write() as worker:
        held = worker.default_channel.basic_get(QUEUE, no_ack=False)  # as a worker takes it (acks_late)
        assert held is not None and redis.llen(QUEUE) == 0 and redis.hlen("unacked") == 1
        age(queued_run)
        assert resend_lost() == {"resent": 0, "failed": 0}
        held.ack()


def test_a_lost_message_is_sent_again_once_then_the_run_fails_lost_in_the_queue(queued_run, redis):
    lose_message(redis)
    age(queued_run)
    assert resend_lost() == {"resent": 1, "failed": 0}
    queued_run.refresh_from_db()
    assert queued_run.status == "queued" and queued_run.resends == 1
    assert waiting_messages() == {(run_simulation.name, (queued_run.pk,))}  # sent again, into Redis

    assert resend_lost() == {"resent": 0, "failed": 0}  # its message waits again: left alone
    lose_message(redis)
    age(queued_run)
    assert reconcile_runs() == {"requeued": 0, "failed": 0, "resent": 0, "lost_in_queue": 1}
    queued_run.refresh_from_db()
    assert queued_run.status == "failed" and queued_run.error == LOST_MESSAGE and queued_run.finished_at
    assert redis.llen(QUEUE) == 0  # failed, not sent a third time


def test_a_run_queued_moments_ago_is_not_judged_yet(queued_run, redis):
    lose_message(redis)  # a worker may have just taken it
    assert resend_lost() == {"resent": 0, "failed": 0}
