"""POST /api/experiments/ → {id, runs}; GET /api/experiments/{id}/ → runs with status, progress,
summary metrics; GET /api/runs/{id}/schedule.csv → the engine's schedule CSV."""

from __future__ import annotations

import pytest

from tests.webapp.conftest import make_trace
from webapp.experiments.models import Experiment
from webapp.experiments.tasks import run_simulation

pytestmark = pytest.mark.django_db


def post(api, body):  # noqa: ANN001, ANN201
    return api.post("/api/experiments/", body, content_type="application/json")


def test_create_run_and_read_results(api, demo_trace):
    response = post(api, {"trace": demo_trace.pk, "procs": 16,
                          "policies": [{"preset": "easy"}, {"preset": "sorted-masc", "params": {"masc": "inf"}}]})
    assert response.status_code == 201
    body = response.json()
    assert len(body["runs"]) == 2
    for pk in body["runs"]:
        run_simulation(pk)
    detail = api.get(f"/api/experiments/{body['id']}/").json()
    assert [r["status"] for r in detail["runs"]] == ["done", "done"]
    assert detail["runs"][1]["policy"]["params"]["masc"] == "inf"
    assert detail["runs"][0]["summary"]["mean_wait"] >= 0
    csv = api.get(detail["runs"][0]["schedule_csv"])
    assert csv["Content-Type"] == "text/csv; charset=utf-8"
    text = b"".join(csv.streaming_content)
    assert text.startswith(b"# SchedLab schedule") and b"\njob_id,user,submit,start,end" in text


def test_a_time_window_applies_to_every_run(api, demo_trace):
    body = post(api, {"trace": demo_trace.pk, "policies": [{"preset": "easy"}], "days": "0:0.1"}).json()
    assert Experiment.objects.get().days == "0:0.1"
    run_simulation(body["runs"][0])
    assert api.get(f"/api/experiments/{body['id']}/").json()["runs"][0]["summary"]["days"] == "0:0.1"


def test_a_sweep(api, demo_trace):
    body = post(api, {"trace": demo_trace.pk, "policies": [{"preset": "sorted-masc"}],
                      "sweep": {"param": "masc", "values": [1, 10, "inf"]}}).json()
    assert len(body["runs"]) == 3 and Experiment.objects.get().sweep_param == "masc"


@pytest.mark.parametrize("body, message", [
    ({"policies": [{"preset": "easy"}]}, "field trace"),
    ({"trace": 0, "policies": [{"preset": "easy"}]}, "field trace: no trace with id 0"),
    ({"trace": "T", "policies": []}, "field policies"),
    ({"trace": "T", "policies": [{"preset": "nope"}]}, "unknown policy 'nope'"),
    ({"trace": "T", "policies": [{"preset": "sorted-masc", "params": {"masc": -1}}]}, "masc"),
    ({"trace": "T", "procs": 0, "policies": [{"preset": "easy"}]}, "field procs"),
    ({"trace": "T", "policies": [{"preset": "easy"}], "colour": "red"}, "unknown field 'colour'"),
    ({"trace": "T", "policies": [{"preset": "easy"}], "days": "5:2"}, "time window 5:2: TO must be after FROM"),
])
def test_bad_input_is_a_json_error_and_stores_nothing(api, demo_trace, body, message):
    body = {k: (demo_trace.pk if v == "T" else v) for k, v in body.items()}
    response = post(api, body)
    assert response.status_code == 400 and message in response.json()["error"]
    assert not Experiment.objects.exists()


def test_another_users_private_trace_cannot_be_used(api, bob):
    bobs = make_trace(bob)
    response = post(api, {"trace": bobs.pk, "policies": [{"preset": "easy"}]})
    assert response.status_code == 400 and "no trace with id" in response.json()["error"]


def test_a_schedule_of_an_unfinished_run_is_a_json_404(api, demo_trace):
    body = post(api, {"trace": demo_trace.pk, "policies": [{"preset": "easy"}]}).json()
    response = api.get(f"/api/runs/{body['runs'][0]}/schedule.csv")
    assert response.status_code == 404 and "queued" in response.json()["error"]


FORMULA = {"ordering": "formula", "algorithm": "easy", "params": {"formula": "(wait / requested) ** 3 * procs",
                                                                  "first": "largest"}}


def test_a_formula_policy_runs_and_its_run_shows_the_formula(api, demo_trace):
    body = post(api, {"trace": demo_trace.pk, "procs": 16, "policies": [FORMULA],
                      "sweep": {"param": "backfill_bound", "values": [5, "inf"]}}).json()
    assert len(body["runs"]) == 2
    for pk in body["runs"]:
        run_simulation(pk)
    runs = api.get(f"/api/experiments/{body['id']}/").json()["runs"]
    assert [r["status"] for r in runs] == ["done", "done"]
    assert runs[0]["label"] == "(wait / requested) ** 3 * procs (largest first), easy (backfill_bound=5)"
    assert runs[1]["policy"]["ordering"] == "formula" and runs[1]["policy"]["params"]["first"] == "largest"


def test_a_bad_formula_is_a_400_with_the_engine_s_line(api, demo_trace):
    from engine.api import PolicyError, resolve_policy

    bad = {**FORMULA, "params": {"formula": "wait / reqested", "first": "largest"}}
    with pytest.raises(PolicyError) as caught:
        resolve_policy(bad)
    response = post(api, {"trace": demo_trace.pk, "policies": [bad]})
    assert response.status_code == 400 and response.json()["error"] == str(caught.value)
    assert "column 8: unknown name 'reqested'" in response.json()["error"]
    assert not Experiment.objects.exists()
