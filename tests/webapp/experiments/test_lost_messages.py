"""A run still queued whose message is gone from the broker (kombu's filesystem broker
loses what a dying worker had taken) is sent again once by the reconcile step, then failed with the
reason. Messages are real files in a temporary filesystem broker; "losing" one is deleting its file."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from tests.celery_broker import forget_connections
from tests.webapp.conftest import make_experiment
from webapp.celery import app as celery_app
from webapp.experiments.models import Run
from webapp.experiments.tasks import LOST_MESSAGE, reconcile_runs, requeue_interrupted, resend_lost

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(tmp_path) -> Path:  # noqa: ANN201
    """The project's Celery app on a filesystem broker in this test's directory; yields its queue folder."""
    folder, control = tmp_path / "queue", tmp_path / "control"
    folder.mkdir()
    control.mkdir()
    saved = celery_app.conf.broker_url, celery_app.conf.broker_transport_options
    celery_app.conf.update(broker_url="filesystem://", broker_transport_options={
        "data_folder_in": str(folder), "data_folder_out": str(folder), "control_folder": str(control)})
    forget_connections(celery_app)
    yield folder
    celery_app.conf.update(broker_url=saved[0], broker_transport_options=saved[1])
    forget_connections(celery_app)


def messages(queue: Path) -> list[Path]:
    return sorted(queue.glob("*.msg"))


def lose_messages(queue: Path) -> None:
    for path in messages(queue):
        path.unlink()


def age(model, pk: int, minutes: int = 10) -> None:  # noqa: ANN001
    model.objects.filter(pk=pk).update(queued_at=timezone.now() - timedelta(minutes=minutes))


@pytest.fixture
def queued_run(alice, demo_trace, queue, django_capture_on_commit_callbacks) -> Run:
    with django_capture_on_commit_callbacks(execute=True):  # the run's message is sent on commit
        experiment = make_experiment(alice, demo_trace, ["fcfs"], run=False)
    assert len(messages(queue)) == 1
    return experiment.runs.get()


def test_a_queued_run_whose_message_waits_is_left_alone(queued_run):
    age(Run, queued_run.pk)
    assert resend_lost() == {"resent": 0, "failed": 0}


def test_a_run_queued_moments_ago_is_not_judged_yet(queued_run, queue):
    lose_messages(queue)  # a worker may have just taken it
    assert resend_lost() == {"resent": 0, "failed": 0}


def test_a_lost_message_is_sent_again_once_then_the_run_fails_with_the_reason(queued_run, queue):
    lose_messages(queue)
    age(Run, queued_run.pk)
    assert resend_lost() == {"resent": 1, "failed": 0}
    queued_run.refresh_from_db()
    assert queued_run.status == "queued" and queued_run.resends == 1 and len(messages(queue)) == 1

    lose_messages(queue)
    age(Run, queued_run.pk)
    assert resend_lost() == {"resent": 0, "failed": 1}
    queued_run.refresh_from_db()
    assert queued_run.status == "failed" and queued_run.error == LOST_MESSAGE and queued_run.finished_at
    assert messages(queue) == []


def test_the_periodic_check_resends_too(queued_run, queue):
    lose_messages(queue)
    age(Run, queued_run.pk)
    assert reconcile_runs() == {"requeued": 0, "failed": 0, "resent": 1, "lost_in_queue": 0}


def test_a_resent_run_then_runs(queued_run, queue):
    from webapp.experiments.tasks import run_simulation

    lose_messages(queue)
    age(Run, queued_run.pk)
    resend_lost()
    run_simulation(queued_run.pk)
    queued_run.refresh_from_db()
    assert queued_run.status == "done"


def test_running_again_from_the_page_gets_another_chance(queued_run, queue, django_capture_on_commit_callbacks):
    from webapp.experiments.services import rerun

    Run.objects.filter(pk=queued_run.pk).update(status="failed", resends=1, error=LOST_MESSAGE)
    with django_capture_on_commit_callbacks(execute=True):
        assert rerun(queued_run)
    queued_run.refresh_from_db()
    assert queued_run.resends == 0 and timezone.now() - queued_run.queued_at < timedelta(minutes=1)


def test_runs_interrupted_by_stopping_are_queued_again_without_counting_the_attempt(
        queued_run, queue, django_capture_on_commit_callbacks):
    lose_messages(queue)
    Run.objects.filter(pk=queued_run.pk).update(status="running", attempts=1)
    with django_capture_on_commit_callbacks(execute=True):  # the dispatcher sends its message on commit
        assert requeue_interrupted() == 1
    queued_run.refresh_from_db()
    assert (queued_run.status, queued_run.attempts) == ("queued", 0) and len(messages(queue)) == 1
