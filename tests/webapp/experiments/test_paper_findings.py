"""An experiment made from a reproduce-a-paper preset records it (migration 0008, the form and the API), and
its comparison page holds the paper's claims beside our runs' own figures: agree / partly / disagree."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from webapp.experiments.models import Experiment
from webapp.experiments.reproduce import PRESETS, judge_runs

from ..conftest import make_experiment

pytestmark = pytest.mark.django_db

HOUR = 3_600.0


@pytest.fixture
def script(alice):
    from django.test import Client

    from webapp.accounts.models import Token
    return Client(HTTP_AUTHORIZATION=f"Token {Token.issue(alice)}")


def test_the_form_records_the_preset_it_was_filled_from(alice_client, demo_trace):
    data = {"trace": demo_trace.pk, "machine_source": "header", "allocation": "count", "seed": "0", "replicates": "",
            "policy_easy": "on", "policy_conservative": "on", "policy_dbf": "on", "workload_drop_interactive": "on",
            "sweep_param": "deadline_fraction", "sweep_values": "0.2, 0.6"}
    response = alice_client.post(reverse("experiments:new") + "?reproduce=dbf", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    experiment = Experiment.objects.get()
    assert experiment.paper == "dbf"
    detail = alice_client.get(experiment.get_absolute_url()).content.decode()
    assert 'id="paper-note"' in detail and "#paper-findings" in detail and "agree, partly or disagree" in detail
    alice_client.post(reverse("experiments:new"), {**data, "name": "plain"})
    assert Experiment.objects.get(name="plain").paper == ""


def test_the_api_records_the_paper_and_refuses_one_that_is_no_experiment(script, demo_trace):
    body = {"trace": demo_trace.pk, "policies": [{"preset": "easy"}, {"preset": "plan1"}], "paper": "plan"}
    response = script.post("/api/experiments/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    pk = response.json()["id"]
    assert Experiment.objects.get(pk=pk).paper == "plan" and script.get(f"/api/experiments/{pk}/").json()["paper"] == "plan"
    replicated = script.post("/api/experiments/", {**body, "replicates": "windows:3"}, content_type="application/json")
    assert replicated.status_code == 201, replicated.content   # its replicates are judged against the same claims
    assert Experiment.objects.get(pk=replicated.json()["id"]).replicate_set.options["paper"] == "plan"
    for bad, said in (("paragon", "not a reproduce-a-paper preset of an experiment"), (3, "field paper")):
        refused = script.post("/api/experiments/", {**body, "paper": bad}, content_type="application/json")
        assert refused.status_code == 400 and said in refused.json()["error"]
    assert Experiment.objects.filter(replicates_of__isnull=True).count() == 2   # the refused ones left nothing


@pytest.fixture
def dbf_experiment(alice, demo_trace) -> Experiment:
    """The DBF preset's experiment (EASY and conservative once, DBF at 0.2 and 0.6), run here."""
    return make_experiment(alice, demo_trace, ("easy", "conservative", "dbf"), sweep_param="deadline_fraction",
                           sweep_values=[0.2, 0.6], paper="dbf")


def give_metrics(experiment: Experiment, dbf_wait: dict[float, float], easy_wait: dict[float, float],
                 cbf_wait: dict[float, float]) -> None:
    """Constructed metrics: the regular jobs' mean wait of DBF at each share, and of EASY and conservative
    (run once) derived at each share; all jobs' mean wait DBF 2 h at every share, EASY 3 h, conservative 4 h."""
    for run in experiment.runs.all():
        summary = dict(run.summary)
        if run.sweep_value is None:
            waits = easy_wait if run.policy["preset"] == "easy" else cbf_wait
            summary["mean_wait"] = 3 * HOUR if run.policy["preset"] == "easy" else 4 * HOUR
            summary["at_sweep_values"] = [{**entry, "mean_wait_regular": waits[entry["value"]]}
                                          for entry in summary["at_sweep_values"]]
        else:
            summary.update(mean_wait=2 * HOUR, mean_wait_regular=dbf_wait[run.sweep_value])
        run.summary = summary
        run.save(update_fields=["summary"])


def claim_rows(page: str) -> dict[str, str]:
    """The findings table's rows as {metric against policy: status}."""
    section = page.split('id="paper-findings"')[1].split("</section>")[0]
    rows = {}
    for row in section.split("<tr class=\"claim")[1:]:
        status = row.split('data-status="')[1].split('"')[0]
        metric = row.split('data-metric="')[1].split('"')[0]
        said = row.split("<td>")[1].split("</td>")[0]
        rows[f"{metric} {said.rsplit(' ', 1)[-1]}"] = status
    return rows


def test_dbf_results_that_agree_and_that_disagree_with_the_paper(alice_client, dbf_experiment):
    """One experiment's runs (simulated once), given metrics that agree, then metrics that disagree."""
    url = reverse("dashboards:comparison", args=[dbf_experiment.pk])
    # agree: DBF's regular jobs wait 1 h and 0.5 h; EASY's 2 h and 1.8 h, conservative's 3 h at both shares
    give_metrics(dbf_experiment, {0.2: 1 * HOUR, 0.6: 0.5 * HOUR}, {0.2: 2 * HOUR, 0.6: 1.8 * HOUR},
                 {0.2: 3 * HOUR, 0.6: 3 * HOUR})
    page = alice_client.get(url).content.decode()
    assert "Against the paper: DBF against conservative and EASY" in page
    assert claim_rows(page) == {"mean_wait_regular conservative&#x27;s": "agree", "mean_wait_regular easy&#x27;s": "agree",
                                "mean_wait conservative&#x27;s": "agree", "mean_wait easy&#x27;s": "agree"}
    assert "more than halved on SDSC-DS at 20 % (Fig. 2)" in page and "(Fig. 4)" in page
    section = page.split('id="paper-findings"')[1].split("</section>")[0]
    assert "at deadline_fraction 0.2: 1.0 h against 2.0 h (50 % lower)" in section, section
    assert "at deadline_fraction 0.6: 30.0 min against 1.8 h (72 % lower)" in section
    assert "4 agree (single runs" in page and escape(PRESETS["dbf"].found) in page

    # disagree: DBF's regular jobs wait longer than EASY's at both shares, than conservative's only at 0.6
    give_metrics(dbf_experiment, {0.2: 2 * HOUR, 0.6: 4 * HOUR}, {0.2: 1 * HOUR, 0.6: 1 * HOUR},
                 {0.2: 3 * HOUR, 0.6: 3 * HOUR})
    page = alice_client.get(url).content.decode()
    rows = claim_rows(page)
    assert rows["mean_wait_regular easy&#x27;s"] == "disagree"
    assert rows["mean_wait_regular conservative&#x27;s"] == "partly"            # lower at 0.2, higher at 0.6
    assert "at deadline_fraction 0.6: 4.0 h against 1.0 h (300 % higher) — ours is 300 % higher, the paper found " \
           "it lower" in page
    assert "1 disagree" in page and "1 partly" in page
    download = alice_client.get(reverse("dashboards:comparison_download", args=[dbf_experiment.pk]))
    text = b"".join(download.streaming_content if download.streaming else [download.content]).decode()
    assert download.status_code == 200 and "Against the paper: DBF against conservative and EASY" in text
    assert "ours is 300 % higher, the paper found it lower" in text


def test_a_plan_claim_in_the_papers_direction_but_far_smaller_is_partly():
    runs = [{"name": "easy", "spec": {"preset": "easy", "params": {}}, "value": None, "at": {},
             "summary": {"mean_wait": 10 * HOUR, "mean_response": 20 * HOUR, "utilization": 0.744}},
            {"name": "plan2", "spec": {"preset": "plan2", "params": {}}, "value": None, "at": {},
             "summary": {"mean_wait": 9 * HOUR, "mean_response": 13 * HOUR, "utilization": 0.751}}]
    rows = {row["claim"].metric: row for row in judge_runs(PRESETS["plan"], runs)}
    assert rows["mean_wait"]["status"] == "partly"            # 10 % lower against the paper's about 40 %
    assert "10 % lower against the paper's 40 % lower" in rows["mean_wait"]["pairs"][0]["why"]
    assert rows["mean_response"]["status"] == "agree"         # 35 % lower, the paper's about 30 %
    assert rows["utilization"]["status"] == "agree"           # 0.744 -> 0.751 as on LLNL (Table II)
    assert rows["utilization"]["claim"].source == "Table II"


def test_an_experiment_without_a_paper_shows_no_findings(alice, alice_client, demo_trace):
    experiment = make_experiment(alice, demo_trace, ("fcfs", "easy"))
    page = alice_client.get(reverse("dashboards:comparison", args=[experiment.pk])).content.decode()
    assert 'id="paper-findings"' not in page


@pytest.mark.django_db(transaction=True)
def test_the_migration_adds_the_paper_empty_for_earlier_experiments(alice, demo_trace):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("experiments", "0007_run_queues")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps.get_model("experiments", "Experiment")
        assert "paper" not in {f.name for f in old._meta.fields}
        made = old.objects.create(owner_id=alice.pk, name="before", trace_id=demo_trace.pk, procs=16)
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        assert Experiment.objects.get(pk=made.pk).paper == ""
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
