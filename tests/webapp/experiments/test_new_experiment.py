"""The new-experiment page: generated from the policy registry; one run per policy or sweep value."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from engine.policies.registry import catalog
from webapp.experiments.models import Experiment, Run

pytestmark = pytest.mark.django_db


def form_data(trace, **extra):
    return {"trace": trace.pk, "machine_source": "header", "allocation": "count", "seed": "0", **extra}


def test_it_offers_every_registry_preset_with_its_own_parameters(alice_client, demo_trace):
    page = alice_client.get(reverse("experiments:new")).content.decode()
    for preset in catalog():
        assert f'name="policy_{preset["name"]}"' in page
        for param in preset["params"]:
            per_policy = f'name="param_{preset["name"]}_{param["name"]}"'
            assert (per_policy not in page) if param["workload"] else (per_policy in page)


def test_workload_options_are_asked_once_for_every_policy(alice_client, demo_trace):
    page = alice_client.get(reverse("experiments:new")).content.decode()
    workload = [p for p in catalog()[0]["params"] if p["workload"]]
    assert {p["name"] for p in workload} >= {"deadline_fraction", "drop_interactive"}
    for param in workload:
        assert page.count(f'name="workload_{param["name"]}"') == 1
    assert page.count(escape("the DBF paper's trace preparation")) == 1   # its help text, once, not per policy


def test_policies_are_grouped_by_family_with_their_paper(alice_client, demo_trace):
    from engine.policies.registry import FAMILIES, PAPERS

    page = alice_client.get(reverse("experiments:new")).content.decode()
    offered = {preset["family"] for preset in catalog()}          # no plugin installed: no plugins section
    assert 'id="family-plugins"' not in page and "plugins" not in offered
    positions = [page.index(f'id="family-{key}"') for key in FAMILIES if key in offered]
    assert positions == sorted(positions)
    plan = page[page.index('id="family-plan"'):page.index('id="family-fairshare"')]
    assert 'name="policy_plan2"' in plan and 'name="policy_easy"' not in plan
    assert escape(PAPERS["plan"].citation) in plan


def test_parameters_are_labelled_in_words_with_unit_and_default(alice_client, demo_trace):
    page = alice_client.get(reverse("experiments:new")).content.decode()
    assert "fair-share half-life (h)" in page and "Default: 168.0." in page
    assert "maximum skipping count (MASC) (later arrivals)" in page


def test_a_workload_option_applies_to_every_run(alice_client, demo_trace):
    data = form_data(demo_trace, policy_fcfs="on", policy_easy="on", workload_deadline_fraction="0.4",
                     days_from="0", days_to="0.1")
    assert alice_client.post(reverse("experiments:new"), data).status_code == 302
    experiment = Experiment.objects.get()
    assert [r.policy["params"]["deadline_fraction"] for r in experiment.runs.all()] == [0.4, 0.4]
    assert experiment.days == "0:0.1"


def test_a_backwards_time_window_is_refused(alice_client, demo_trace):
    data = form_data(demo_trace, policy_fcfs="on", days_from="3", days_to="1")
    response = alice_client.post(reverse("experiments:new"), data)
    assert response.status_code == 400 and b"time window" in response.content
    assert not Experiment.objects.exists()


def test_the_time_window_selects_the_jobs_a_run_simulates(alice, demo_trace):
    from tests.webapp.conftest import login, make_experiment

    whole = make_experiment(alice, demo_trace, ["fcfs"]).runs.get()
    window = make_experiment(alice, demo_trace, ["fcfs"], days="0:0.1").runs.get()   # 0.1 d = 8,640 s
    submits = whole.load_schedule()["submit"]
    assert window.status == "done" and window.summary["days"] == "0:0.1"
    assert ("jobs submitted from day 0 to day 0.1 after the first submit (--days 0:0.1): 2023-11-14 23:13 to "
            "2023-11-15 01:37 (Europe/Prague)") in login(alice).get(window.experiment.get_absolute_url()).content.decode()
    assert window.summary["jobs"] == int((submits - submits.min() < 8640).sum()) < whole.summary["jobs"]


@pytest.mark.parametrize("key", ["plan", "sfs", "dbf"])
def test_reproduce_a_paper_fills_the_form(alice_client, demo_trace, key):
    from webapp.experiments.reproduce import PRESETS

    preset = PRESETS[key]
    page = alice_client.get(reverse("experiments:new") + f"?reproduce={key}").content.decode()
    assert escape(preset.found) in page
    ticked = set(re.findall(r'name="policy_([\w-]+)"[^>]* checked>', page))
    assert ticked == set(preset.policies)


def test_the_dbf_preset_sweeps_the_share_of_deadline_jobs(alice_client, demo_trace):
    page = alice_client.get(reverse("experiments:new") + "?reproduce=dbf").content.decode()
    assert 'value="0.2, 0.4, 0.6, 0.8"' in page
    assert '<option value="deadline_fraction" selected>' in page


def test_the_reproduce_page_lists_every_paper(alice_client):
    from engine.policies.registry import PAPERS

    page = alice_client.get(reverse("experiments:reproduce")).content.decode()
    for paper in PAPERS.values():
        assert escape(paper.citation) in page
    assert reverse("studies:new") + "?preset=paragon" in page



def test_the_metacentrum_preset_leads_to_the_preview_form(alice_client):
    """The paper compares queue configurations on two clusters: only the preview form takes those."""
    preview_form = reverse("preview:new") + "?reproduce=metacentrum"
    page = alice_client.get(reverse("experiments:reproduce")).content.decode()
    section = page.split('id="reproduce-metacentrum"')[1].split("</section>")[0]
    assert f'href="{escape(preview_form)}"' in section
    assert reverse("experiments:new") + "?reproduce=metacentrum" not in page
    response = alice_client.get(reverse("experiments:new") + "?reproduce=metacentrum")
    assert response.status_code == 302 and response.url == preview_form


def test_it_creates_one_queued_run_per_policy(alice_client, demo_trace, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        response = alice_client.post(reverse("experiments:new"), form_data(demo_trace, policy_fcfs="on", policy_easy="on"))
    experiment = Experiment.objects.get()
    assert response.status_code == 302 and response.url == experiment.get_absolute_url()
    assert [r.policy["preset"] for r in experiment.runs.all()] == ["fcfs", "easy"]
    assert set(experiment.runs.values_list("status", flat=True)) == {"queued"}
    assert len(queued) == 1 and experiment.procs == 16  # one dispatch of the fair queue for all its runs


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


def test_settings_every_run_shares_are_named_once_not_in_every_label(alice_client, demo_trace):
    data = form_data(demo_trace, policy_dbf="on", policy_easy="on", workload_drop_interactive="on",
                     sweep_param="deadline_fraction", sweep_values="0.2, 0.4")
    assert alice_client.post(reverse("experiments:new"), data).status_code == 302
    experiment = Experiment.objects.get()
    labels = list(experiment.runs.order_by("position").values_list("label", flat=True))
    # the form's (registry) order; EASY ignores deadlines, so it runs once (test_sweep_plan.py)
    assert labels == ["easy", "dbf (deadline_fraction=0.2)", "dbf (deadline_fraction=0.4)"]
    assert all(r.policy["params"]["drop_interactive"] is True for r in experiment.runs.all())
    assert "drop_interactive=True" in experiment.name


def test_the_paragon_study_preset_says_what_the_paper_found(alice_client):
    from webapp.experiments.reproduce import PRESETS

    page = alice_client.get(reverse("studies:new") + "?preset=paragon").content.decode()
    assert escape(PRESETS["paragon"].found) in page and 'id="preset-paragon"' in page
