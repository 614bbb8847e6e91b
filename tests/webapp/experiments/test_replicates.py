"""Replicated comparisons on the web (issue 26): the form, the fan-out as ordinary runs, one line
when a replicate fails, the combined report cached with the set."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engine import api
from tests.webapp.conftest import make_trace
from webapp.experiments.models import Experiment, ReplicateSet, Run
from webapp.experiments.replicates import set_progress as progress, retry_replicates
from webapp.experiments.tasks import run_simulation

pytestmark = pytest.mark.django_db


def form_data(trace, **extra):
    return {"trace": trace.pk, "machine_source": "header", "allocation": "count", "seed": "0",
            "policy_fcfs": "on", "policy_easy": "on", **extra}


def run_all(experiment: Experiment) -> None:
    """Every queued run of the experiment and of its replicates, here (as a worker would, one by one)."""
    for pk in Run.objects.filter(experiment__in=[experiment, experiment.replicate_set.runs_experiment],
                                 status=Run.Status.QUEUED).order_by("pk").values_list("pk", flat=True):
        run_simulation(pk)


@pytest.fixture
def small_trace(alice, tmp_path):
    from tests.synthetic import synthetic_swf
    return make_trace(alice, synthetic_swf(tmp_path / "small.swf", jobs=600, procs=64), name="small")


def test_the_form_offers_every_kind_with_its_paper(alice_client, small_trace):
    page = alice_client.get(reverse("experiments:new")).content.decode()
    assert "MASCOTS 2007" in page and "ICPE 2013" in page and "weekly windows" in page
    assert 'name="without_flurries"' in page and 'name="warmup"' in page


def test_a_count_is_required_and_a_bad_trim_is_a_form_error(alice_client, small_trace):
    response = alice_client.post(reverse("experiments:new"), form_data(small_trace, replicates="shake"))
    assert response.status_code == 400 and "Give the number of copies" in response.content.decode()
    response = alice_client.post(reverse("experiments:new"),
                                 form_data(small_trace, replicates="shake", replicate_count="5", warmup="2x"))
    assert response.status_code == 400 and "warm-up" in response.content.decode()
    assert not Experiment.objects.exists()


def test_replicates_fan_out_as_runs_and_combine_into_the_report(alice_client, small_trace):
    response = alice_client.post(reverse("experiments:new"), form_data(
        small_trace, replicates="windows", replicate_count="6", warmup="20j", without_flurries="on"))
    assert response.status_code == 302
    experiment = Experiment.objects.exclude(replicates_of__isnull=False).get()
    replicates = experiment.replicate_set
    hidden = replicates.runs_experiment.runs.order_by("position")
    assert hidden.count() == 6                                   # one run per window, both policies in it
    assert [r.policy["replicate_runs"] for r in hidden][:2] == [[0, 1], [2, 3]]
    assert len(replicates.plan["runs"]) == 12
    assert experiment.runs.count() == 2                          # the ordinary runs are kept
    # the experiment list shows the experiment, not the hidden one holding its replicates
    listed = alice_client.get(reverse("experiments:list")).content.decode()
    assert "(replicates)" not in listed
    assert progress(replicates)["status"] == "queued" and progress(replicates)["done"] == 0
    run_all(experiment)
    replicates.refresh_from_db()
    assert replicates.error == ""
    report = replicates.report
    # the same report as the engine computes in one go on this machine
    workload = small_trace.workload()
    here = api.compare_replicates(workload, [{"preset": "fcfs", "params": {}}, {"preset": "easy", "params": {}}],
                                  "windows:6", names=["fcfs", "easy"], capacity=experiment.procs,
                                  counted=api.Counted(api.parse_trim("20j"), api.parse_trim("0")),
                                  without_flurries=True, workers=1)
    assert [(p["metric"], p["difference"], p["ci"]) for p in report["pairs"]] == \
        [(p["metric"], p["difference"], p["ci"]) for p in here["pairs"]]
    assert report["pairs"][0]["replicates"] == 6
    state = progress(replicates)
    assert state["status"] == "done" and state["percent"] == 100 and state["report_ready"]


def test_one_failed_replicate_fails_the_set_with_one_line(alice, small_trace, monkeypatch):
    from webapp.experiments import replicate_runs
    from webapp.experiments.replicates import ReplicateChoice, add_replicates
    from webapp.experiments.services import create_experiment

    experiment = create_experiment(alice, name="x", trace=small_trace, procs=None, machine=None,
                                   policies=[{"preset": "fcfs"}, {"preset": "easy"}])
    replicates = add_replicates(experiment, ReplicateChoice("shake", 3))
    hidden = list(replicates.runs_experiment.runs.order_by("position"))
    real = api.run_replicate

    def broken(workload, spec):
        if spec["replicate"] == 1:
            raise api.ReplicateError(f"{spec['id']}: the replica has no jobs")
        return real(workload, spec)

    monkeypatch.setattr(replicate_runs.api, "run_replicate", broken)
    run_simulation(hidden[0].pk)
    run_simulation(hidden[1].pk)
    replicates.refresh_from_db()
    assert replicates.report is None
    assert replicates.error.startswith("replicate shake:3 2 failed:") or replicates.error.startswith("replicate shake 2 failed:")
    assert "\n" not in replicates.error
    assert Run.objects.get(pk=hidden[2].pk).status == Run.Status.CANCELLED   # the rest stopped waiting
    assert progress(replicates)["status"] == "failed" and progress(replicates)["error"] == replicates.error
    # retried without the fault: the set completes
    monkeypatch.setattr(replicate_runs.api, "run_replicate", real)
    assert retry_replicates(replicates) == 2
    for run in replicates.runs_experiment.runs.filter(status=Run.Status.QUEUED):
        run_simulation(run.pk)
    replicates.refresh_from_db()
    assert replicates.error == "" and replicates.report is not None
    assert ReplicateSet.objects.count() == 1


def test_the_experiment_page_and_its_poll_show_one_bar_for_the_set(alice_client, alice, small_trace):
    from webapp.experiments.replicates import ReplicateChoice, add_replicates
    from webapp.experiments.services import create_experiment

    experiment = create_experiment(alice, name="x", trace=small_trace, procs=None, machine=None,
                                   policies=[{"preset": "fcfs"}, {"preset": "easy"}])
    add_replicates(experiment, ReplicateChoice("windows", 5))
    page = alice_client.get(reverse("experiments:detail", args=[experiment.pk])).content.decode()
    assert "Replicates: windows:5" in page and "0 of 5 replicates done" in page
    first = experiment.replicate_set.runs_experiment.runs.order_by("position").first()
    run_simulation(first.pk)
    data = alice_client.get(reverse("experiments:progress", args=[experiment.pk])).json()
    assert data["replicates"]["done"] == 1 and data["replicates"]["percent"] == 20
    assert data["replicates"]["status"] == "running" and not data["finished"]
    alice_client.post(reverse("experiments:cancel", args=[experiment.pk]))
    data = alice_client.get(reverse("experiments:progress", args=[experiment.pk])).json()
    assert data["replicates"]["status"] == "cancelled" and data["replicates"]["report_ready"] is False
    alice_client.post(reverse("experiments:delete", args=[experiment.pk]))
    assert not Experiment.objects.exists() and not Run.objects.exists()
