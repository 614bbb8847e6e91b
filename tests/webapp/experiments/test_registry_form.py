"""A preset added to the engine's registry appears in the form without touching web code."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engine.policies import registry
from webapp.experiments.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def new_preset(monkeypatch):
    monkeypatch.setitem(registry.PRESETS, "sjf-easy", registry.Preset(
        "sjf-easy", "Shortest first with EASY backfilling (added for this test).", "sjf", "easy"))


def test_a_new_preset_is_offered_and_runs(new_preset, alice_client, demo_trace):
    assert 'name="policy_sjf-easy"' in alice_client.get(reverse("experiments:new")).content.decode()
    data = {"trace": demo_trace.pk, "machine_source": "header", "allocation": "count", "seed": "0", "policy_sjf-easy": "on"}
    assert alice_client.post(reverse("experiments:new"), data).status_code == 302
    assert Run.objects.get().policy["preset"] == "sjf-easy"
