"""POST /api/studies/ (a grid, or a preset) → {id, points, runs}; GET /api/studies/{id}/ → points
done / total and each point's status; GET /api/studies/{id}/study.csv → the table."""

from __future__ import annotations

import pytest

from tests.webapp.conftest import make_trace
from webapp.experiments.tasks import run_simulation
from webapp.studies.models import Study

pytestmark = pytest.mark.django_db


def post(api, body):  # noqa: ANN001, ANN201
    return api.post("/api/studies/", body, content_type="application/json")


def test_a_grid_fans_out_and_reports_points_done(api, demo_trace):
    response = post(api, {"trace": demo_trace.pk, "procs": 16, "policies": [{"preset": "fcfs"}, {"preset": "sorted-masc"}],
                          "grid": {"load": [0.5, 1], "masc": [1, "inf"]}})
    assert response.status_code == 201
    body = response.json()
    assert body["points"] == 2 + 4 == len(body["runs"])  # fcfs × load; sorted-masc × load × masc
    status = api.get(f"/api/studies/{body['id']}/").json()
    assert (status["done"], status["total"], status["finished"]) == (0, 6, False)
    assert status["grid"] == {"load": [0.5, 1], "masc": [1, "inf"]}
    run_simulation(body["runs"][0])
    status = api.get(f"/api/studies/{body['id']}/").json()
    assert status["done"] == 1 and status["points"][0]["status"] == "done"


def test_the_csv_has_a_row_per_point(api, demo_trace):
    body = post(api, {"trace": demo_trace.pk, "policies": [{"preset": "fcfs"}], "grid": {"load": "0.5, 1"}}).json()
    for pk in body["runs"]:
        run_simulation(pk)
    csv = api.get(api.get(f"/api/studies/{body['id']}/").json()["csv"])
    lines = csv.content.decode().splitlines()
    assert csv["Content-Type"] == "text/csv" and lines[0].startswith("run,policy,load,status")
    assert len(lines) == 3 and all(",done," in line for line in lines[1:])


def test_a_preset(api, demo_trace):
    body = post(api, {"trace": demo_trace.pk, "preset": "paragon"}).json()
    assert Study.objects.get(pk=body["id"]).preset == "paragon" and body["points"] > 10


def test_the_list_shows_only_visible_studies(api, demo_trace, bob):
    post(api, {"trace": demo_trace.pk, "policies": [{"preset": "fcfs"}], "grid": {"load": [1]}})
    bobs = make_trace(bob, name="bob's")
    from webapp.studies.services import create_study

    create_study(bob, name="bob's study", trace=bobs, policies=[{"preset": "fcfs"}], grid={"load": [1]})
    assert [s["owner"] for s in api.get("/api/studies/").json()["studies"]] == ["alice"]


@pytest.mark.parametrize("body, message", [
    ({"policies": [{"preset": "fcfs"}], "grid": {"load": [1]}}, "field trace"),
    ({"trace": "T", "policies": [{"preset": "fcfs"}], "grid": [1]}, "field grid"),
    ({"trace": "T", "policies": [{"preset": "fcfs"}], "grid": {"masc": [1, 2]}}, "none of the chosen policies"),
    ({"trace": "T", "policies": [{"preset": "fcfs"}], "grid": {"load": [0]}}, "load"),
    ({"trace": "T", "policies": [], "grid": {"load": [1]}}, "field policies"),
    ({"trace": "T", "preset": "nope"}, "field preset"),
    ({"trace": "T", "policies": [{"preset": "fcfs"}], "grid": {"load": [1]}, "sweep": {}}, "unknown field 'sweep'"),
])
def test_bad_input_is_a_json_error_and_stores_nothing(api, demo_trace, body, message):
    body = {k: (demo_trace.pk if v == "T" else v) for k, v in body.items()}
    response = post(api, body)
    assert response.status_code == 400 and message in response.json()["error"], response.json()
    assert not Study.objects.exists()
