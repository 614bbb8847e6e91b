"""A preview's run is bounded in memory as a parse is (SCHEDLAB_TASK_MEMORY_BYTES, webapp.core.limits):
past the bound it fails with one line naming the limit; an ordinary experiment's run is not bounded so.
(How the bound itself stops an allocation: tests/webapp/core/test_limits.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from tests.webapp.conftest import make_experiment, make_preview
from webapp.experiments import tasks
from webapp.experiments.models import Run
from webapp.experiments.tasks import run_simulation

pytestmark = pytest.mark.django_db
GIB = 2**30


@pytest.fixture
def greedy(monkeypatch) -> None:
    """Each run first maps 2 GiB (address space only: np.empty touches none of it), then simulates."""
    simulate = tasks.simulate

    def mapping_first(run, reporter):  # noqa: ANN001, ANN202
        held = np.empty(2 * GIB // 8)
        simulate(run, reporter)
        del held

    monkeypatch.setattr(tasks, "simulate", mapping_first)


def test_a_preview_run_past_the_memory_bound_fails_with_the_limit_named(alice, demo_trace, settings, greedy):
    settings.SCHEDLAB_TASK_MEMORY_BYTES = 64 * 2**20
    preview = make_preview(alice, demo_trace)
    run = preview.experiment.runs.filter(queues="proposed").first()
    run_simulation(run.pk)
    failed = Run.objects.get(pk=run.pk)
    assert failed.status == "failed"
    assert failed.error == ("memory limit: the preview needed more than 64.0\xa0MB (this server's limit); "
                            "try a smaller file or window, or ask an admin")


def test_under_the_default_bound_the_preview_computes(alice, demo_trace, settings):
    assert settings.SCHEDLAB_TASK_MEMORY_BYTES == 3 * GIB
    preview = make_preview(alice, demo_trace)
    run = preview.experiment.runs.filter(queues="proposed").first()
    run_simulation(run.pk)
    done = Run.objects.get(pk=run.pk)
    assert done.status == "done" and done.summary["jobs"] > 0, done.error


def test_an_experiments_run_is_not_bounded_so(alice, demo_trace, settings, greedy):
    settings.SCHEDLAB_TASK_MEMORY_BYTES = 64 * 2**20
    experiment = make_experiment(alice, demo_trace, policies=("easy",), run=False)
    run = experiment.runs.get()
    run_simulation(run.pk)
    done = Run.objects.get(pk=run.pk)
    assert done.status == "done", done.error
