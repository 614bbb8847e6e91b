"""Cancel and re-run, by the owner only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_experiment
from webapp.experiments.models import Run

pytestmark = pytest.mark.django_db


def test_cancelling_a_queued_run_is_immediate(alice_client, alice, demo_trace):
    run = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get()
    alice_client.post(reverse("experiments:run_cancel", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == "cancelled"


def test_cancelling_a_running_run_asks_the_worker(alice_client, alice, demo_trace):
    run = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get()
    Run.objects.filter(pk=run.pk).update(status="running")
    response = alice_client.post(reverse("experiments:cancel", args=[run.experiment_id]), follow=True)
    run.refresh_from_db()
    assert run.status == "running" and run.cancel_requested
    assert "Asked 1 running run to stop." in response.content.decode()


def test_cancel_unfinished_says_how_many_runs_it_cancelled(alice_client, alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, ["fcfs", "easy", "conservative"], run=False)
    first = experiment.runs.order_by("pk").first()
    Run.objects.filter(pk=first.pk).update(status="done")
    response = alice_client.post(reverse("experiments:cancel", args=[experiment.pk]), follow=True)
    assert "Cancelled 2 queued runs." in response.content.decode()
    assert sorted(experiment.runs.values_list("status", flat=True)) == ["cancelled", "cancelled", "done"]
    again = alice_client.post(reverse("experiments:cancel", args=[experiment.pk]), follow=True)
    assert "Every run had already ended: nothing to cancel." in again.content.decode()


def test_rerun_starts_a_finished_run_from_scratch(alice_client, done_run, monkeypatch, django_capture_on_commit_callbacks):
    from webapp.experiments import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.run_simulation, "delay", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("experiments:run_rerun", args=[done_run.pk]))
    assert response.status_code == 302
    done_run.refresh_from_db()
    assert done_run.status == "queued" and done_run.summary is None and sent == [done_run.pk]
    assert not done_run.result_dir.exists()


def test_rerun_of_an_unfinished_run_is_refused(alice_client, alice, demo_trace):
    run = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get()
    response = alice_client.post(reverse("experiments:run_rerun", args=[run.pk]), follow=True)
    assert "still queued" in response.content.decode()


def test_deleting_an_experiment_removes_its_results(alice_client, done_experiment):
    dirs = [r.result_dir for r in done_experiment.runs.all()]
    alice_client.post(reverse("experiments:delete", args=[done_experiment.pk]))
    assert not Run.objects.exists() and not any(d.exists() for d in dirs)
