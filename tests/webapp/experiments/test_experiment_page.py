"""The experiment page: runs with status and progress, updated by polling a JSON endpoint."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.webapp.conftest import make_experiment
from webapp.experiments.models import Run

pytestmark = pytest.mark.django_db


def test_it_lists_runs_and_polls_progress(alice_client, done_experiment):
    page = alice_client.get(done_experiment.get_absolute_url()).content.decode()
    assert reverse("experiments:progress", args=[done_experiment.pk]) in page
    assert "js/experiment.js" in page
    for run in done_experiment.runs.all():
        assert f'id="run-{run.pk}"' in page


def test_the_progress_endpoint_reports_status_percent_and_metrics(alice_client, done_experiment):
    data = alice_client.get(reverse("experiments:progress", args=[done_experiment.pk])).json()
    assert data["finished"] is True
    assert [r["status"] for r in data["runs"]] == ["done", "done"]
    assert all(r["percent"] == 100 and r["summary"]["jobs"] > 0 for r in data["runs"])


def test_a_queued_run_reports_zero_percent(alice_client, alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, ["easy"], run=False)
    Run.objects.update(status="running", progress=0.42)
    data = alice_client.get(reverse("experiments:progress", args=[experiment.pk])).json()
    assert data["runs"][0]["percent"] == 42 and data["finished"] is False


def test_a_running_run_says_about_how_long_it_has_left(alice_client, alice, demo_trace):
    """A quarter done after a minute: three times the elapsed time is left (the test's own delay,
    which a busy machine stretches, adds to the minute and so to what is left)."""
    experiment = make_experiment(alice, demo_trace, ["easy"], run=False)
    before = timezone.now()
    Run.objects.update(status="running", progress=0.25, started_at=before - timedelta(minutes=1),
                       heartbeat_at=before)   # a live worker: reconcile leaves it running
    data = alice_client.get(reverse("experiments:progress", args=[experiment.pk])).json()
    delay = (timezone.now() - before).total_seconds()
    match = re.fullmatch(r"about (\d+) min (\d+) s left", data["runs"][0]["time_left"])
    assert match, data["runs"][0]["time_left"]
    left = int(match[1]) * 60 + int(match[2])
    assert 180 <= left <= 180 + 3 * delay + 1


def test_the_run_page_says_how_long_is_left_from_its_first_paint(alice_client, alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, ["easy"], run=False)
    Run.objects.update(status="running", progress=0.5, started_at=timezone.now() - timedelta(minutes=2),
                       heartbeat_at=timezone.now())
    page = alice_client.get(experiment.get_absolute_url()).content.decode()
    assert re.search(r'<span data-field="percent">50 %, about 2 min \d\d s left</span>', page), page


def test_a_failed_run_shows_its_reason(alice_client, done_experiment):
    Run.objects.filter(experiment=done_experiment).update(status="failed", error="time limit: too slow")
    assert "time limit: too slow" in alice_client.get(done_experiment.get_absolute_url()).content.decode()


def test_the_metrics_csv_has_one_row_per_run(alice_client, done_experiment):
    response = alice_client.get(reverse("experiments:metrics_csv", args=[done_experiment.pk]))
    lines = [line for line in response.content.decode().splitlines() if not line.startswith("#")]
    assert lines[0].startswith("Run,Policy,Sweep value,Status,Jobs simulated (jobs),") and len(lines) == 3


def test_the_schedule_csv_is_the_engines_after_its_provenance(alice_client, done_run):
    response = alice_client.get(reverse("experiments:run_schedule_csv", args=[done_run.pk]))
    text = b"".join(response.streaming_content)
    body = b"".join(line for line in text.splitlines(keepends=True) if not line.startswith(b"#"))
    assert text.startswith(b"# SchedLab schedule") and body == done_run.schedule_csv.read_bytes()
