"""The new-experiment page: generated from the policy registry; one run per policy or sweep value."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engine.policies.registry import catalog
from webapp.experiments.models import Experiment, Run

pytestmark = pytest.mark.django_db


def form_data(trace, **extra):  # noqa: ANN001, ANN201
    return {"trace": trace.pk, "machine_source": "header", "allocation": "count", "seed": "0", **extra}


def test_it_offers_every_registry_preset_with_its_parameters(alice_client, demo_trace):
    page = alice_client.get(reverse("experiments:new")).content.decode()
    for preset in catalog():
        assert f'name="policy_{preset["name"]}"' in page
        for param in preset["params"]:
            assert f'name="param_{preset["name"]}_{param["name"]}"' in page


def test_it_creates_one_queued_run_per_policy(alice_client, demo_trace, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        response = alice_client.post(reverse("experiments:new"), form_data(demo_trace, policy_fcfs="on", policy_easy="on"))
    experiment = Experiment.objects.get()
    assert response.status_code == 302 and response.url == experiment.get_absolute_url()
    assert [r.policy["preset"] for r in experiment.runs.all()] == ["fcfs", "easy"]
    assert set(experiment.runs.values_list("status", flat=True)) == {"queued"}
    assert len(queued) == 2 and experiment.procs == 16


def test_a_sweep_makes_one_run_per_value_including_infinity(alice_client, demo_trace):
    data = form_data(demo_trace, **{"policy_sorted-masc": "on", "policy_fcfs": "on",
                                    "sweep_param": "masc", "sweep_values": "1, 2, 5, inf"})
    response = alice_client.post(reverse("experiments:new"), data)
    assert response.status_code == 302
    runs = list(Run.objects.order_by("position"))
    assert [r.policy["params"].get("masc") for r in runs] == [None, 1, 2, 5, "inf"]
    assert [r.sweep_value for r in runs] == [None, 1, 2, 5, "inf"]


def test_a_bad_parameter_is_named_and_nothing_is_stored(alice_client, demo_trace):
    data = form_data(demo_trace, **{"policy_sorted-masc": "on", "param_sorted-masc_masc": "lots"})
    response = alice_client.post(reverse("experiments:new"), data)
    assert response.status_code == 400
    assert "masc" in response.content.decode() and not Experiment.objects.exists()


def test_it_needs_a_policy(alice_client, demo_trace):
    response = alice_client.post(reverse("experiments:new"), form_data(demo_trace))
    assert response.status_code == 400 and b"Choose at least one policy" in response.content


def test_the_machine_can_be_a_size(alice_client, demo_trace):
    alice_client.post(reverse("experiments:new"), form_data(demo_trace, machine_source="size", procs="64", policy_fcfs="on"))
    assert Experiment.objects.get().procs == 64


def test_another_users_private_trace_cannot_be_used(bob_client, demo_trace):
    response = bob_client.post(reverse("experiments:new"), form_data(demo_trace, policy_fcfs="on"))
    assert response.status_code == 400 and not Experiment.objects.exists()
