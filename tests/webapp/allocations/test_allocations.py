"""Allocations in the web app: upload, paste and edit with the engine's line-level checks; the §9
scenario generator; experiments that run SFS with them; per-allocation occupancy and targets on the
comparison."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse

from tests.webapp.conftest import login
from webapp.allocations.models import AllocationSet, ExperimentAllocations
from webapp.allocations.services import create_scenario
from webapp.dashboards.data import load_comparison
from webapp.experiments.models import Experiment
from webapp.experiments.tasks import run_simulation
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace

pytestmark = pytest.mark.django_db

HEADER = "allocation,members,award,period_days,target_factor,target\n"
GOOD = HEADER + "alice,user:1,1000000,365,,\nbob,user:2,,,,58\n"


def test_pasted_allocations_are_stored_and_shown_with_their_targets(alice_client):
    response = alice_client.post(reverse("allocations:new"), {"name": "year one", "text": GOOD})
    allocation_set = AllocationSet.objects.get()
    assert response.status_code == 302 and response.url == allocation_set.get_absolute_url()
    page = alice_client.get(allocation_set.get_absolute_url()).content.decode()
    assert "228.3" in page and "114.2" in page     # 2 x 1e6 / (365 x 24), and the ideal
    assert "58.0" in page


def test_an_uploaded_file_replaces_the_text(alice_client):
    upload = io.BytesIO(GOOD.encode())
    upload.name = "mine.csv"
    response = alice_client.post(reverse("allocations:new"), {"name": "file", "text": "", "file": upload})
    assert response.status_code == 302
    assert AllocationSet.objects.get().text == GOOD


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("text", HEADER + "alice,usr:1,10,1,,\n", "line 2: field members"),
    ("file", HEADER + "a,user:1,,,,5\na,user:2,,,,5\n", "mine.csv, line 3: field allocation"),
])
def test_a_bad_file_is_refused_naming_line_and_field(alice_client, field, value, expected):
    data = {"name": "bad", "text": value}
    if field == "file":
        upload = io.BytesIO(value.encode())
        upload.name = "mine.csv"
        data = {"name": "bad", "text": "", "file": upload}
    response = alice_client.post(reverse("allocations:new"), data)
    assert response.status_code == 400 and expected in response.content.decode()
    assert not AllocationSet.objects.exists()


def test_editing_checks_again_and_keeps_the_old_text_when_bad(alice, alice_client):
    allocation_set = AllocationSet.objects.create(owner=alice, name="s", text=GOOD)
    url = reverse("allocations:edit", args=[allocation_set.pk])
    bad = alice_client.post(url, {"name": "s", "text": HEADER + "x,user:1,abc,1,,\n"})
    assert bad.status_code == 400 and "line 2: field award" in bad.content.decode()
    allocation_set.refresh_from_db()
    assert allocation_set.text == GOOD
    assert alice_client.post(url, {"name": "s", "text": HEADER + "x,user:1,,,,9\n"}).status_code == 302
    allocation_set.refresh_from_db()
    assert allocation_set.parsed().targets() == {"x": 9.0}


def test_the_download_is_the_csv(alice, alice_client):
    allocation_set = AllocationSet.objects.create(owner=alice, name="My Set", text=GOOD)
    response = alice_client.get(reverse("allocations:download", args=[allocation_set.pk]))
    assert response.content.decode() == GOOD and 'filename="my-set.csv"' in response["Content-Disposition"]


@pytest.fixture
def scenario(alice):
    trace, allocation_set = create_scenario(alice, seed=0, name="sfs", shared=False)
    parse_trace(trace.pk)      # the upload path queued it on commit; run it here
    trace.refresh_from_db()
    return trace, allocation_set


def test_generating_the_scenario_makes_a_trace_and_its_allocations(alice_client, alice):
    response = alice_client.post(reverse("allocations:scenario"), {"name": "paper", "seed": "2"})
    trace = Trace.objects.get()
    assert response.status_code == 302 and response.url == trace.get_absolute_url()
    parse_trace(trace.pk)
    trace.refresh_from_db()
    assert trace.is_ready and trace.summary["jobs"] == 127 and trace.procs == 1400
    assert AllocationSet.objects.get().parsed().targets() == {"alice": 500.0, "bob": 400.0, "chris": 750.0}


def new_experiment(client, trace, allocation_set, *presets):  # noqa: ANN001, ANN201
    """Post the new-experiment form as a browser does: the chosen presets, every choice and checked
    box at its default."""
    from engine.policies.registry import catalog

    data = {"trace": trace.pk, "machine_source": "header", "allocation": "count", "seed": "0",
            "allocations": allocation_set.pk if allocation_set else ""}
    for preset in catalog():
        for param in preset["params"]:
            if param["type"] == "choice" or (param["type"] == "bool" and param["default"]):
                data[f"param_{preset['name']}_{param['name']}"] = "on" if param["type"] == "bool" else param["default"]
    for preset in presets:
        data[f"policy_{preset}"] = "on"
    return client.post(reverse("experiments:new"), data)


def test_an_experiment_runs_sfs_with_the_chosen_allocations(alice, scenario, django_capture_on_commit_callbacks):
    trace, allocation_set = scenario
    client = login(alice)
    with django_capture_on_commit_callbacks() as queued:
        response = new_experiment(client, trace, allocation_set, "sfs-size", "easy")
    experiment = Experiment.objects.get()
    assert response.status_code == 302 and len(queued) == 1     # the fair dispatcher, after the commit
    assert experiment.runs.filter(status="queued").count() == 2
    # attached in the same transaction, so a worker never sees a run without its allocations
    assert ExperimentAllocations.objects.get(experiment=experiment).text == allocation_set.text
    for run in experiment.runs.all():
        run_simulation(run.pk)
    sfs = experiment.runs.get(policy__preset="sfs-size")
    assert sfs.status == "done", sfs.error
    schedule = sfs.load_schedule()
    assert set(schedule.allocation) == {"alice", "bob", "chris"}
    assert set(schedule["pass"]) <= {"1", "2", "backfill"}
    assert sfs.summary["allocation_targets"] == {"alice": 500.0, "bob": 400.0, "chris": 750.0, "default": None}

    # editing the file later changes neither the experiment's copy nor its dashboard's targets
    allocation_set.text = HEADER + "alice,user:1,,,,1\n"
    allocation_set.save()
    comparison = load_comparison(experiment)
    assert comparison.targets == {"alice": 500 / 1400, "bob": 400 / 1400, "chris": 750 / 1400}
    # the EASY run wrote no allocation column: the dashboard maps its jobs through the same file
    assert set(comparison.schedules["easy"].allocation) == {"alice", "bob", "chris"}
    plot = client.get(reverse("dashboards:comparison_plot", args=[experiment.pk, "timelines"]))
    assert plot.status_code == 200


def test_an_experiment_without_allocations_has_no_targets(alice, scenario):
    trace, _ = scenario
    response = new_experiment(login(alice), trace, None, "sfs-size")
    experiment = Experiment.objects.get()
    assert response.status_code == 302 and not ExperimentAllocations.objects.exists()
    run_simulation(experiment.runs.get().pk)
    assert set(experiment.runs.get().load_schedule().allocation) == {"default"}
    assert load_comparison(experiment).targets is None


def test_someone_elses_private_allocations_cannot_be_chosen(alice, bob, scenario):
    trace, allocation_set = scenario
    Trace.objects.filter(pk=trace.pk).update(shared=True)
    response = new_experiment(login(bob), trace, allocation_set, "sfs-size")
    assert response.status_code == 400 and not Experiment.objects.exists()


def test_allocations_used_by_an_experiment_cannot_be_deleted(alice, alice_client, scenario):
    trace, allocation_set = scenario
    new_experiment(alice_client, trace, allocation_set, "sfs-size")
    alice_client.post(reverse("allocations:delete", args=[allocation_set.pk]))
    assert AllocationSet.objects.filter(pk=allocation_set.pk).exists()


def test_the_json_api_takes_an_allocations_id(alice, bob, scenario):
    from django.test import Client

    from webapp.accounts.models import Token

    trace, allocation_set = scenario
    body = {"trace": trace.pk, "policies": [{"preset": "sfs-age"}], "allocations": allocation_set.pk}
    api = Client(HTTP_AUTHORIZATION=f"Token {Token.issue(alice)}")
    response = api.post("/api/experiments/", body, content_type="application/json")
    assert response.status_code == 201
    experiment = Experiment.objects.get(pk=response.json()["id"])
    assert experiment.allocations_used.allocation_set == allocation_set
    Trace.objects.filter(pk=trace.pk).update(shared=True)
    other = Client(HTTP_AUTHORIZATION=f"Token {Token.issue(bob)}")
    refused = other.post("/api/experiments/", body, content_type="application/json")
    assert refused.status_code == 400 and "field allocations" in refused.json()["error"]
    assert Experiment.objects.count() == 1


def test_the_pages_render_and_the_new_experiment_form_offers_the_allocations(alice, alice_client):
    AllocationSet.objects.create(owner=alice, name="year one", text=GOOD)
    assert "year one" in alice_client.get(reverse("allocations:list")).content.decode()
    assert alice_client.get(reverse("allocations:new")).status_code == 200
    assert "1,400 nodes" in alice_client.get(reverse("allocations:scenario")).content.decode()
    form = alice_client.get(reverse("experiments:new")).content.decode()
    assert 'name="allocations"' in form and "year one" in form
