"""Sweeps run only the policies the swept parameter can change (issue 28): a deadline-share sweep runs
DBF at every share and EASY and conservative once (their schedules never read deadlines)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from webapp.experiments.services import ExperimentError, plan_runs

from ..conftest import make_experiment


def test_a_deadline_share_sweep_runs_easy_and_conservative_once():
    planned = plan_runs(["easy", "conservative", "dbf"], "deadline_fraction", [0.2, 0.4, 0.6, 0.8])
    swept = [(plan.policy["preset"], plan.sweep_value) for plan in planned]
    assert swept == [("easy", None), ("conservative", None), ("dbf", 0.2), ("dbf", 0.4), ("dbf", 0.6), ("dbf", 0.8)]
    assert len(planned) == 6        # was 12: 8 of them identical EASY/conservative schedules
    once = [plan for plan in planned if plan.sweep_value is None]
    assert all(not plan.policy["params"].get("deadline_fraction") for plan in once)
    assert [plan.policy["params"]["deadline_fraction"] for plan in planned[2:]] == [0.2, 0.4, 0.6, 0.8]


def test_a_sweep_no_chosen_policy_reads_is_refused_with_what_to_add():
    with pytest.raises(ExperimentError, match="no chosen policy's schedule changes with it.*dbf"):
        plan_runs(["easy", "conservative"], "deadline_fraction", [0.2, 0.4])


def test_an_option_that_changes_the_jobs_still_runs_every_policy_per_value():
    planned = plan_runs(["easy", "dbf"], "drop_interactive", [False, True])
    assert [(plan.policy["preset"], plan.sweep_value) for plan in planned] == \
        [("easy", False), ("easy", True), ("dbf", False), ("dbf", True)]


@pytest.mark.django_db
def test_the_sweep_section_says_which_runs_ran_once_and_why(alice, alice_client, demo_trace):
    experiment = make_experiment(alice, demo_trace, ("easy", "dbf"), sweep_param="deadline_fraction",
                                 sweep_values=[0.2, 0.6])
    runs = list(experiment.runs.order_by("position"))
    assert [(r.policy["preset"], r.sweep_value) for r in runs] == [("easy", None), ("dbf", 0.2), ("dbf", 0.6)]
    response = alice_client.get(reverse("dashboards:comparison_plot", args=[experiment.pk, "sweep"]))
    text = response.content.decode()
    assert response.status_code == 200 and "run once" in text and "the same at every deadline_fraction" in text


@pytest.mark.django_db
def test_easy_run_once_has_its_deadline_figures_derived_at_each_share(alice, alice_client, demo_trace):
    """EASY's schedule is the same at every share, its deadline figures are not: the one run records them
    at each share, with the very deadline jobs DBF's run at that share has (the same seed)."""
    experiment = make_experiment(alice, demo_trace, ("easy", "dbf"), sweep_param="deadline_fraction",
                                 sweep_values=[0.2, 0.6])
    easy, dbf_low, dbf_high = experiment.runs.order_by("position")
    derived = easy.summary["at_sweep_values"]
    assert [entry["value"] for entry in derived] == [0.2, 0.6]
    for entry, dbf in zip(derived, (dbf_low, dbf_high)):
        assert entry["deadline_jobs"] == dbf.summary["deadline_jobs"] > 0
        assert entry["regular_jobs"] == dbf.summary["regular_jobs"]
    assert derived[0]["deadline_jobs"] < derived[1]["deadline_jobs"]      # not one number copied to every share
    assert "at_sweep_values" not in dbf_low.summary
    response = alice_client.get(reverse("dashboards:comparison_plot", args=[experiment.pk, "sweep"]))
    text = response.content.decode()
    assert "Mean wait, regular jobs" in text and "Deadlines missed" in text
    assert "derived at each share from the one schedule" in text and "easy (run once, per deadline_fraction)" in text
