"""Studies in-process: the grid plan, the fair queue, progress, the page, plots, CSV and re-runs.

Runs are executed by calling the experiments' task directly (the real simulation, no worker); the
tests with real worker processes on Redis are in test_workers.py.
"""

from __future__ import annotations

import csv
import io
from unittest import mock

import pytest
from django.urls import reverse

from webapp.experiments.models import Run
from webapp.experiments.services import ExperimentError
from webapp.experiments.tasks import run_simulation
from webapp.studies import services
from webapp.studies.models import Study
from webapp.studies.presets import PARAGON

POLICIES = [{"preset": "fcfs"}, {"preset": "sorted-masc"}]
GRID = {"load": [0.5, 1, 2], "masc": [2, "inf"]}


def run_all(study: Study) -> None:
    for pk in study.experiment.runs.order_by("position").values_list("pk", flat=True):
        run_simulation(pk)


def test_the_grid_applies_load_to_every_policy_and_masc_only_where_it_exists():
    planned = services.plan_points(POLICIES, GRID)
    # fcfs: 3 loads; sorted-masc: 3 loads x 2 mascs = 6; 9 points in all
    assert [(p.policy["preset"], p.coords) for p in planned[:3]] == [
        ("fcfs", {"load": 0.5}), ("fcfs", {"load": 1.0}), ("fcfs", {"load": 2.0})]
    assert len(planned) == 9
    point = planned[4]   # sorted-masc, load 0.5, masc inf
    assert point.coords == {"load": 0.5, "masc": "inf"} and point.policy["params"]["masc"] == "inf"
    assert point.label == "sorted-masc (masc=inf) @ load ×0.5" and point.load_factor == 0.5
    assert point.policy_label == "sorted-masc"


@pytest.mark.parametrize("grid, message", [
    ({"masc": [1]}, "none of the chosen policies has it"),
    ({"load": [0]}, "load factor must be a positive number"),
    ({"load": ["fast"]}, "load factor must be a positive number"),
])
def test_a_bad_grid_names_what_is_wrong(grid, message):
    with pytest.raises(ExperimentError, match=message):
        services.plan_points([{"preset": "fcfs"}], grid)


@pytest.mark.django_db
@pytest.mark.parametrize("slots, per_user, sent_now", [(20, 20, 9), (4, 3, 3)])
def test_a_study_is_one_experiment_whose_runs_take_their_turns_in_the_fair_queue(
        alice, demo_trace, django_capture_on_commit_callbacks, settings, slots, per_user, sent_now):
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER = slots, per_user
    with mock.patch.object(run_simulation, "delay", autospec=True) as send:
        with django_capture_on_commit_callbacks(execute=True):
            study = services.create_study(alice, name="", trace=demo_trace, policies=POLICIES, grid=GRID)
    runs = list(study.experiment.runs.order_by("position"))
    assert len(runs) == study.points.count() == 9
    assert [r.load_factor for r in runs[:3]] == [0.5, 1.0, 2.0]
    # as many as the user may hold, in the study's order; the others wait in the database
    assert [c.args[0] for c in send.call_args_list] == [r.pk for r in runs[:sent_now]]
    assert [r.dispatched_at is not None for r in runs] == [True] * sent_now + [False] * (9 - sent_now)


@pytest.mark.django_db
def test_progress_counts_points_and_the_page_shows_trend_table_and_csv(alice, alice_client, demo_trace):
    study = services.create_study(alice, name="s", trace=demo_trace, policies=POLICIES, grid=GRID)
    assert services.progress(study)["done"] == 0 and services.progress(study)["total"] == 9
    run_all(study)
    state = alice_client.get(reverse("studies:progress", args=[study.pk])).json()
    assert (state["done"], state["total"], state["finished"]) == (9, 9, True)

    values, series = services.trend_series(study, "load")
    assert values == [0.5, 1, 2]
    assert set(series) == {"fcfs", "sorted-masc (masc=2)", "sorted-masc (masc=inf)"}
    assert all(s is not None for line in series.values() for s in line)
    # each point ran at its own load: the same jobs arriving 4x faster wait longer under FCFS
    fcfs = series["fcfs"]
    assert [s["load_factor"] for s in fcfs] == [0.5, 1.0, 2.0]
    assert fcfs[0]["mean_wait"] < fcfs[2]["mean_wait"]

    page = alice_client.get(reverse("studies:detail", args=[study.pk]))
    assert page.status_code == 200 and b"9</span> of <span data-field=\"total\">9</span> points done" in page.content
    plot = alice_client.get(reverse("studies:plot", args=[study.pk]), {"x": "masc", "metric": "mean_abs_skip"})
    assert plot.status_code == 200 and "doc" in plot.json()
    rows = list(csv.reader(io.StringIO(alice_client.get(reverse("studies:csv", args=[study.pk])).content.decode())))
    assert rows[0][:6] == ["run", "policy", "load", "masc", "status", "error"]
    assert len(rows) == 10 and rows[1][1:5] == ["fcfs", "0.5", "", "done"]


@pytest.mark.django_db
def test_a_failed_point_is_shown_and_re_run_alone(alice, alice_client, demo_trace):
    study = services.create_study(alice, name="s", trace=demo_trace, policies=[{"preset": "fcfs"}],
                                  grid={"load": [1, 2]})
    broken, fine = study.experiment.runs.order_by("position")
    Run.objects.filter(pk=broken.pk).update(policy={"preset": "no-such-policy"})
    run_all(study)
    broken.refresh_from_db()
    assert broken.status == "failed" and broken.error.startswith("unknown policy")
    assert services.progress(study)["failed"] == [{"run": broken.pk, "label": broken.label, "error": broken.error}]
    page = alice_client.get(reverse("studies:detail", args=[study.pk])).content.decode()
    assert "unknown policy" in page and reverse("studies:point_rerun", args=[broken.pk]) in page

    finished_before = Run.objects.get(pk=fine.pk).finished_at
    response = alice_client.post(reverse("studies:rerun_failed", args=[study.pk]))
    assert response.status_code == 302 and response.url == study.get_absolute_url()
    broken.refresh_from_db()
    assert (broken.status, broken.error, broken.attempts) == ("queued", "", 0)
    assert Run.objects.get(pk=fine.pk).finished_at == finished_before   # the done point is kept
    Run.objects.filter(pk=broken.pk).update(policy={"preset": "fcfs", "params": {}})
    run_simulation(broken.pk)
    assert services.progress(study)["done"] == 2


@pytest.mark.django_db
def test_the_new_study_form_builds_the_grid(alice, alice_client, demo_trace):
    data = {"trace": demo_trace.pk, "allocation": "count", "seed": "0", "policies": ["easy", "sorted-masc"],
            "load_values": "1, 1.5", "param": "masc", "param_values": "5, inf"}
    response = alice_client.post(reverse("studies:new"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    study = Study.objects.get()
    assert study.grid == {"load": [1, 1.5], "masc": [5, "inf"]}
    assert study.points.count() == 2 + 4


@pytest.mark.django_db
def test_the_new_study_form_refuses_values_without_a_parameter_that_applies(alice_client, demo_trace):
    data = {"trace": demo_trace.pk, "allocation": "count", "seed": "0", "policies": ["easy"],
            "load_values": "1", "param": "masc", "param_values": "5"}
    response = alice_client.post(reverse("studies:new"), data)
    assert response.status_code == 400 and "none of the chosen policies has it" in response.content.decode()
    assert not Study.objects.exists()


@pytest.mark.django_db
def test_the_paragon_preset_makes_the_papers_grid(alice, alice_client, demo_trace):
    response = alice_client.post(reverse("studies:preset"), {"preset": "paragon", "trace": demo_trace.pk})
    study = Study.objects.get()
    assert response.status_code == 302 and response.url == study.get_absolute_url()
    experiment = study.experiment
    assert (experiment.allocation, experiment.exact_estimates, study.preset) == ("buddy", True, "paragon")
    loads, mascs = len(PARAGON.grid["load"]), len(PARAGON.grid["masc"])
    # five policies over the loads, sorted-masc over loads x MASC values
    assert study.points.count() == 5 * loads + loads * mascs
    page = alice_client.get(reverse("studies:detail", args=[study.pk])).content.decode()
    assert "Figs. 4, 7, 8" in page and "Fig. 5" in page and "Fig. 6" in page


@pytest.mark.django_db
def test_the_worker_builds_no_comparison_after_a_studys_last_point(alice, demo_trace):
    """A study's runs are plotted from their summaries; a comparison of every point (66 for the
    Paragon preset) would hold a worker for a long time after the study is over."""
    from webapp.experiments.tasks import prebuild_when_last

    study = services.create_study(alice, name="s", trace=demo_trace, policies=[{"preset": "fcfs"}], grid={"load": [1]})
    run_all(study)
    with mock.patch("webapp.dashboards.views.prebuild_comparison") as prebuild:
        prebuild_when_last(study.experiment.runs.get().pk)
    assert not prebuild.called
