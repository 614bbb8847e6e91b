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
def script(alice):
    """A client that sends alice's token, as a script would."""
    from django.test import Client

    from webapp.accounts.models import Token
    return Client(HTTP_AUTHORIZATION=f"Token {Token.issue(alice)}")


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
    assert replicates.error.startswith("replicate shake:3 #2 failed: shake:3/1/easy") or \
        replicates.error.startswith("replicate shake:3 #2 failed: shake:3/1/fcfs")
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


@pytest.fixture
def replicated(alice, small_trace):
    """An experiment fcfs vs easy with 5 windows, every run done here."""
    from webapp.experiments.replicates import ReplicateChoice, add_replicates
    from webapp.experiments.services import create_experiment

    experiment = create_experiment(alice, name="replicated", trace=small_trace, procs=None, machine=None,
                                   policies=[{"preset": "fcfs"}, {"preset": "easy"}])
    add_replicates(experiment, ReplicateChoice("windows", 5))
    run_all(experiment)
    experiment.replicate_set.refresh_from_db()
    assert experiment.replicate_set.report is not None, experiment.replicate_set.error
    return experiment


def test_the_comparison_page_shows_intervals_verdicts_and_the_forest_plot(alice_client, replicated):
    report = replicated.replicate_set.report
    page = alice_client.get(reverse("dashboards:comparison", args=[replicated.pk])).content.decode()
    assert 'id="verdicts"' in page
    for pair in report["pairs"]:
        assert pair["verdict"].replace("'", "&#x27;") in page or pair["verdict"] in page
    assert "class='ci'" in page and "95 % CI" in page
    assert reverse("dashboards:forest", args=[replicated.pk]) in page
    forest = alice_client.get(reverse("dashboards:forest", args=[replicated.pk]))
    assert forest.status_code == 200
    import gzip
    import json
    body = forest.content if forest.get("Content-Encoding") != "gzip" else gzip.decompress(forest.content)
    assert json.loads(body)["target_id"] == "plot-forest"


def test_the_api_returns_the_report_json_of_the_command_line(script, replicated):
    data = script.get(f"/api/experiments/{replicated.pk}/replicates/").json()
    assert data == replicated.replicate_set.report
    assert data["pairs"], "no pairs"
    for pair in data["pairs"]:
        assert {"a", "b", "metric", "difference", "ci", "replicates", "method", "verdict"} <= set(pair)
        assert pair["replicates"] == 5 and isinstance(pair["verdict"], str) and pair["verdict"]
        if pair["ci"] is not None:
            low, high = pair["ci"]
            assert low <= high
            if pair["difference"] is not None:
                assert low <= pair["difference"] <= high
    first = data["pairs"][0]
    assert (first["a"], first["b"]) == ("fcfs", "easy")


def test_the_api_creates_an_experiment_with_replicates_and_says_while_they_run(script, small_trace):
    response = script.post("/api/experiments/", {"trace": small_trace.pk, "policies": [{"preset": "fcfs"}, {"preset": "easy"}],
                                              "replicates": {"spec": "shake:3", "warmup": "10j"}},
                        content_type="application/json")
    assert response.status_code == 201, response.content
    pk = response.json()["id"]
    waiting = script.get(f"/api/experiments/{pk}/replicates/")
    assert waiting.status_code == 409 and waiting.json()["progress"]["total"] == 3
    bad = script.post("/api/experiments/", {"trace": small_trace.pk, "policies": [{"preset": "fcfs"}, {"preset": "easy"}],
                                         "replicates": "shake"}, content_type="application/json")
    assert bad.status_code == 400 and "replicates" in bad.json()["error"]
    assert [e["id"] for e in script.get("/api/experiments/").json()["experiments"]] == [pk]
    ordinary = script.post("/api/experiments/", {"trace": small_trace.pk, "policies": [{"preset": "fcfs"}]},
                        content_type="application/json").json()["id"]
    assert script.get(f"/api/experiments/{ordinary}/replicates/").status_code == 404


def test_a_paper_preset_chooses_replicates_by_default(alice_client, small_trace):
    page = alice_client.get(reverse("experiments:new") + "?reproduce=plan").content.decode()
    assert 'name="replicates" value="windows"' in page
    checked = page.split('name="replicates" value="windows"')[1].split(">")[0]
    assert "checked" in checked
    assert 'name="replicate_count" value="6"' in page


def test_the_comparison_page_says_whether_the_replicates_agree_with_the_paper(alice_client, replicated, monkeypatch):
    from webapp.dashboards import views as dashboard_views
    from webapp.experiments.reproduce import Claim, PaperPreset, claim_pairs, judge_paper, paper_verdict

    preset = PaperPreset(key="test", title="t", found="EASY waits less than FCFS.", trace_hint="", setup="",
                         claims=(Claim("fcfs", "easy", "mean_wait", "lower"), Claim("fcfs", "easy", "utilization", "same"),
                                 Claim("fcfs", "sjf", "mean_wait", "lower")))
    report = replicated.replicate_set.report
    assert claim_pairs(report, preset.claims[0]) == [("fcfs", "easy")]
    assert claim_pairs(report, preset.claims[2]) == []            # no sjf here: nothing judged
    judgements = judge_paper(report, preset)
    assert len(judgements) == 2
    wait = next(p for p in report["pairs"] if p["metric"] == "mean_wait" and p["set"] == report["sets"][0]["name"])
    expected = ("cannot tell" if wait["direction"] is None else "agrees" if wait["direction"] == "lower" else "contradicts")
    assert judgements[0]["status"] == expected
    monkeypatch.setitem(dashboard_views.PAPER_PRESETS, "test", preset)
    replicated.replicate_set.options = {**replicated.replicate_set.options, "paper": "test"}
    replicated.replicate_set.save()
    page = alice_client.get(reverse("dashboards:comparison", args=[replicated.pk])).content.decode()
    assert 'id="paper-claims"' in page and "EASY waits less than FCFS." in page
    assert paper_verdict(judgements).replace("'", "&#x27;") in page
    assert page.count('class="claim claim-') == 2


def test_replicate_runs_are_not_offered_to_compare_with(alice_client, replicated, alice, small_trace):
    from tests.webapp.conftest import make_experiment

    other = make_experiment(alice, small_trace, ("sjf",), name="other")
    page = alice_client.get(reverse("experiments:detail", args=[other.pk])).content.decode()
    hidden = replicated.replicate_set.runs_experiment.runs.first()
    assert f'value="{hidden.pk}"' not in page
    assert f'value="{replicated.runs.first().pk}"' in page     # the whole-trace runs are


def test_a_confirming_shaking_set_says_whether_each_verdict_holds(alice_client, small_trace, script):
    response = alice_client.post(reverse("experiments:new"), form_data(
        small_trace, replicates="windows", replicate_count="5", confirm_shake="5"))
    assert response.status_code == 302
    experiment = Experiment.objects.exclude(replicates_of__isnull=False).get()
    replicates = experiment.replicate_set
    assert replicates.spec == "windows:5,shake:5"
    assert replicates.runs_experiment.runs.count() == 10
    run_all(experiment)
    replicates.refresh_from_db()
    first = [p for p in replicates.report["pairs"] if p["set"] == "windows:5"]
    confirming = [p for p in replicates.report["pairs"] if p["set"] == "shake:5"]
    assert len(first) == len(confirming) == 5
    assert all("agreement" in p for p in first)
    page = alice_client.get(reverse("dashboards:comparison", args=[experiment.pk])).content.decode()
    assert "The other replicate sets" in page and "MASCOTS 2007" in page
    # the API takes the same spelling, and refuses a second set that is not shaking
    made = script.post("/api/experiments/", {"trace": small_trace.pk, "policies": [{"preset": "fcfs"}, {"preset": "easy"}],
                                             "replicates": "windows:5,shake:3"}, content_type="application/json")
    assert made.status_code == 201
    bad = script.post("/api/experiments/", {"trace": small_trace.pk, "policies": [{"preset": "fcfs"}, {"preset": "easy"}],
                                            "replicates": "windows:5,weeks"}, content_type="application/json")
    assert bad.status_code == 400 and "shake:K" in bad.json()["error"]


def test_a_replicate_failed_by_the_lost_worker_check_fails_the_set_at_the_next_poll(alice_client, alice, small_trace):
    from webapp.experiments.replicates import ReplicateChoice, add_replicates
    from webapp.experiments.services import create_experiment

    experiment = create_experiment(alice, name="x", trace=small_trace, procs=None, machine=None,
                                   policies=[{"preset": "fcfs"}, {"preset": "easy"}])
    replicates = add_replicates(experiment, ReplicateChoice("windows", 5))
    lost = replicates.runs_experiment.runs.order_by("position").first()
    Run.objects.filter(pk=lost.pk).update(status=Run.Status.FAILED, error="worker lost: the worker running it stopped")
    data = alice_client.get(reverse("experiments:progress", args=[experiment.pk])).json()["replicates"]
    assert data["status"] == "failed"
    assert data["error"] == "replicate windows:5 #1 failed: worker lost: the worker running it stopped"
