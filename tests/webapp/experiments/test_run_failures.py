"""A failing run says why in one line; the traceback stays in the log."""

from __future__ import annotations

import pytest

from tests.webapp.conftest import make_experiment
from webapp.experiments.models import Run
from webapp.experiments.tasks import run_simulation

pytestmark = pytest.mark.django_db


def test_an_engine_crash_becomes_a_one_line_reason(alice, demo_trace, monkeypatch, caplog):
    from webapp.experiments import tasks

    def explode(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(tasks, "run_scenario", explode)
    experiment = make_experiment(alice, demo_trace, ["fcfs"])
    run = experiment.runs.get()
    assert run.status == "failed"
    assert run.error == "internal error (RuntimeError: boom); see the worker log"
    assert "Traceback" in caplog.text
    page = __import__("django.test", fromlist=["Client"]).Client()
    page.force_login(alice)
    content = page.get(experiment.get_absolute_url()).content.decode()
    assert "internal error (RuntimeError: boom)" in content and "Traceback" not in content


def test_a_missing_trace_file_fails_the_run_with_the_reason(alice, demo_trace):
    demo_trace.path.unlink()
    demo_trace.cache_path.unlink()
    run = make_experiment(alice, demo_trace, ["fcfs"]).runs.get()
    assert run.status == "failed" and run.error


def test_a_cancelled_run_is_not_started(alice, demo_trace):
    from webapp.experiments.services import cancel_run

    run = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get()
    cancel_run(run)
    run_simulation(run.pk)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.attempts == 0


def test_cancel_during_the_simulation_stops_it(alice, big_trace, monkeypatch):
    from webapp.experiments import tasks

    run = make_experiment(alice, big_trace, ["fcfs"], run=False).runs.get()
    monkeypatch.setattr(tasks.Reporter, "should_stop", lambda self: True)
    run_simulation(run.pk)
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert not run.result_dir.exists()
    assert Run.objects.get(pk=run.pk).finished_at is not None
