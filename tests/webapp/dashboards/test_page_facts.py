"""The comparison page's own figures (metrics and fidelity tables, Gantt window) are computed once and
read back: once built (by the worker's prebuild or a first view) the page reads no schedule, shows the
same tables, and a re-run or another window computes them again."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from webapp.dashboards import data
from webapp.dashboards.plot_cache import cached_json
from webapp.dashboards.views import prebuild_comparison
from webapp.experiments.models import Run

from ..conftest import make_experiment

pytestmark = pytest.mark.django_db


def part(page: str, start: str, end: str) -> str:
    begin = page.index(start)
    return page[begin:page.index(end, begin)]


def tables_of(page: str) -> tuple[str, str]:
    """The metrics section (table and fidelity footnote) and the window fieldset."""
    return part(page, 'id="section-metrics"', "</section>"), part(page, "<legend>Window", "</fieldset>")


@pytest.fixture
def no_schedule_reads(monkeypatch):  # noqa: ANN201
    """Count the schedules read from disk (the in-process cache emptied first)."""
    reads: list[int] = []
    real = Run.load_schedule

    def counted(run):  # noqa: ANN001, ANN202
        reads.append(run.pk)
        return real(run)

    data._cache.clear()
    monkeypatch.setattr(Run, "load_schedule", counted)
    return reads


def page_of(client, experiment, query: str = "") -> str:  # noqa: ANN001
    response = client.get(reverse("dashboards:comparison", args=[experiment.pk]) + query)
    assert response.status_code == 200
    return response.content.decode()


def test_after_the_prebuild_the_page_reads_no_schedule_and_shows_the_same_tables(alice, alice_client, demo_trace,
                                                                                  no_schedule_reads):
    experiment = make_experiment(alice, demo_trace, ("fcfs", "easy"), with_recorded=True)
    fresh = tables_of(page_of(alice_client, experiment))     # the first view computes them
    assert len(no_schedule_reads) == 3 and "fidelity" in fresh[0] and "mean wait" in fresh[0].lower()
    data._cache.clear()
    no_schedule_reads.clear()
    assert tables_of(page_of(alice_client, experiment)) == fresh
    assert no_schedule_reads == []

    other = make_experiment(alice, demo_trace, ("fcfs", "easy"), with_recorded=True)
    prebuild_comparison(other)          # as the worker does when the last run is done
    data._cache.clear()
    no_schedule_reads.clear()
    assert tables_of(page_of(alice_client, other)) == fresh  # same trace, same policies: same figures
    assert no_schedule_reads == []


def test_a_rerun_or_another_window_computes_them_again(alice, alice_client, done_experiment, no_schedule_reads):
    first = tables_of(page_of(alice_client, done_experiment))
    reads = len(no_schedule_reads)
    assert reads == 2
    data._cache.clear()
    window = first[1]
    start = part(window, 'placeholder="', '" size').removeprefix('placeholder="')
    moved = tables_of(page_of(alice_client, done_experiment, "?start=" + start.replace(" ", "%20") + "&end="))
    assert len(no_schedule_reads) == 2 * reads          # a window not asked before: the schedules again
    assert moved[0] == first[0]

    done_experiment.runs.filter(pk=done_experiment.runs.first().pk).update(finished_at=timezone.now())
    data._cache.clear()
    page_of(alice_client, done_experiment)
    assert len(no_schedule_reads) == 3 * reads           # re-run: new key, computed again


def test_stored_figures_come_back_as_computed(media_root):
    """numpy numbers (summaries computed over the common jobs carry them) are stored as plain numbers."""
    built = {"summaries": {"easy": {"jobs": np.int64(3), "mean_wait": np.float64(12.5), "max": float("nan")}},
             "unusable": {}, "note": "x"}
    first = cached_json("experiments/0/page", "table", "k" * 32, lambda: built)
    again = cached_json("experiments/0/page", "table", "k" * 32, lambda: pytest.fail("built twice"))
    assert first == again
    assert first["summaries"]["easy"]["jobs"] == 3 and type(first["summaries"]["easy"]["jobs"]) is int
    assert first["summaries"]["easy"]["mean_wait"] == 12.5 and np.isnan(first["summaries"]["easy"]["max"])
