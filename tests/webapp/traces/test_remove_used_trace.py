"""An owner may delete a trace that others' experiments used (issue 27: they could only unshare it):
those experiments keep their results and say "trace removed by its owner"; the file goes, nobody lists
the trace, nothing is computed from it again."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_experiment, make_trace
from webapp.experiments.models import Run
from webapp.experiments.tasks import run_simulation
from webapp.traces.models import Trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def used(alice, bob):
    """alice's shared trace, which bob's experiment ran."""
    trace = make_trace(alice, name="alices-trace", shared=True)
    experiment = make_experiment(bob, trace, ["fcfs"])
    assert experiment.runs.get().status == "done"
    return trace, experiment


def test_the_owner_deletes_a_trace_others_used(used, alice_client):
    trace, experiment = used
    stored = Path(trace.path)
    caches = list(stored.parent.glob(f"{trace.sha256}-p*.npz"))
    assert stored.exists() and caches

    response = alice_client.post(reverse("traces:delete", args=[trace.pk]))

    assert response.status_code == 302
    trace.refresh_from_db()
    assert trace.status == "removed" and not trace.shared
    assert not stored.exists() and not any(c.exists() for c in caches)
    alice_client.get(reverse("traces:list"))      # shows (and uses up) the message naming it
    assert "alices-trace" not in alice_client.get(reverse("traces:list")).content.decode()


def test_others_experiments_keep_their_results_and_say_so(used, bob_client, alice_client):
    trace, experiment = used
    alice_client.post(reverse("traces:delete", args=[trace.pk]))

    page = bob_client.get(experiment.get_absolute_url())
    text = page.content.decode()
    assert page.status_code == 200
    assert "removed by its owner" in text and "alices-trace" in text
    run = experiment.runs.get()
    assert bob_client.get(reverse("experiments:run_schedule_csv", args=[run.pk])).status_code == 200
    assert bob_client.get(trace.get_absolute_url()).status_code == 404
    assert "alices-trace" not in bob_client.get(reverse("traces:list")).content.decode()


def test_nothing_is_computed_from_a_removed_trace(used, alice_client):
    trace, experiment = used
    alice_client.post(reverse("traces:delete", args=[trace.pk]))
    run = experiment.runs.get()
    Run.objects.filter(pk=run.pk).update(status="queued", attempts=0)

    run_simulation(run.pk)

    run.refresh_from_db()
    assert run.status == "failed" and "removed by its owner" in run.error


def test_another_trace_of_the_same_content_keeps_the_file(used, bob, alice_client):
    trace, _ = used
    copy = make_trace(bob, name="bobs-copy")
    alice_client.post(reverse("traces:delete", args=[trace.pk]))
    assert Path(copy.path).exists() and Trace.objects.get(pk=copy.pk).status == "ready"


def test_a_trace_nothing_used_is_deleted_outright(alice, alice_client):
    trace = make_trace(alice, name="unused")
    alice_client.post(reverse("traces:delete", args=[trace.pk]))
    assert not Trace.objects.filter(pk=trace.pk).exists() and not Path(trace.path).exists()
