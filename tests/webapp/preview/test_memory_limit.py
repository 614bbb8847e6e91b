"""A preview's run is bounded in memory as a parse is (SCHEDLAB_TASK_MEMORY_BYTES, webapp.core.limits):
past the bound it fails with one line naming the limit; an ordinary experiment's run is not bounded so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.webapp.conftest import make_experiment, make_preview
from tests.webapp.real_workers import worker_database_url
from webapp.experiments.models import Run

ROOT = Path(__file__).resolve().parents[3]
TINY = 8 * 2**20
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def run_in_a_fresh_worker_process(run_id: int, memory_bytes: int) -> None:
    """run_simulation in a new process on this test's database and media, as a worker's pool process
    runs it (a long-lived test process reuses memory it mapped before and would not reach the bound)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings", "MEDIA_ROOT": str(settings.MEDIA_ROOT),
           "DATABASE_URL": worker_database_url(), "SCHEDLAB_TASK_MEMORY_BYTES": str(memory_bytes)}
    code = ("import django; django.setup(); from webapp.experiments.tasks import run_simulation; "
            f"run_simulation({run_id})")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_preview_run_past_the_memory_bound_fails_with_the_limit_named_and_runs_under_the_default(alice, demo_trace):
    preview = make_preview(alice, demo_trace)
    run = preview.experiment.runs.filter(queues="proposed").first()
    run_in_a_fresh_worker_process(run.pk, TINY)
    failed = Run.objects.get(pk=run.pk)
    assert failed.status == "failed"
    assert failed.error == ("memory limit: the preview needed more than 8.0\xa0MB (this server's limit); "
                            "try a smaller file or window, or ask an admin")

    Run.objects.filter(pk=run.pk).update(status="queued", error="", finished_at=None)
    run_in_a_fresh_worker_process(run.pk, 3 * 2**30)  # the default: the same run computes
    done = Run.objects.get(pk=run.pk)
    assert done.status == "done" and done.summary["jobs"] > 0, done.error


def test_an_experiments_run_is_not_bounded_so(alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, policies=("easy",), run=False)
    run = experiment.runs.get()
    run_in_a_fresh_worker_process(run.pk, TINY)
    done = Run.objects.get(pk=run.pk)
    assert done.status == "done", done.error
