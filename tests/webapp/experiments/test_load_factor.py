"""The experiments' load factor: offered by the form, stored per run, named in its label, applied
by the run task."""

from __future__ import annotations

import pytest

from engine.workload import load_workload
from tests.webapp.api.conftest import api  # noqa: F401 - the token-authenticated client fixture
from tests.webapp.conftest import make_experiment
from webapp.experiments.forms import ExperimentForm
from webapp.experiments.services import ExperimentError


@pytest.mark.django_db
def test_a_run_with_load_factor_two_replays_the_same_jobs_twice_as_fast(alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, ["fcfs"], load_factor=2.0)
    run = experiment.runs.get()
    assert (run.load_factor, run.label, run.status) == (2.0, "fcfs @ load ×2", "done")
    assert run.summary["load_factor"] == 2.0
    original = load_workload(demo_trace.path).jobs["submit"].to_numpy()
    first = original[0]
    # submits = first + half the original offsets (rounded half up); the same jobs, in order
    assert run.load_schedule()["submit"].tolist() == [first + (s - first + 1) // 2 for s in original]


@pytest.mark.django_db
def test_a_zero_load_factor_is_refused_by_the_service(alice, demo_trace):
    with pytest.raises(ExperimentError, match="load factor must be a positive number"):
        make_experiment(alice, demo_trace, ["fcfs"], load_factor=0, run=False)


@pytest.mark.django_db
@pytest.mark.parametrize("value, ok", [("1.5", True), ("", True), ("0", False), ("-1", False)])
def test_the_form_offers_a_load_factor(alice, demo_trace, value, ok):
    form = ExperimentForm(alice, {"trace": demo_trace.pk, "load_factor": value})
    form.is_valid()
    assert ("load_factor" not in form.errors) is ok
    assert form.fields["load_factor"].initial == 1.0


@pytest.mark.django_db
def test_the_api_takes_a_load_factor_and_reports_it_per_run(api, demo_trace):  # noqa: F811 - the fixture
    body = {"trace": demo_trace.pk, "policies": [{"preset": "fcfs"}], "load_factor": 1.5}
    created = api.post("/api/experiments/", body, content_type="application/json")
    assert created.status_code == 201
    detail = api.get(f"/api/experiments/{created.json()['id']}/").json()
    assert detail["runs"][0]["load_factor"] == 1.5
    bad = api.post("/api/experiments/", {**body, "load_factor": -2}, content_type="application/json")
    assert bad.status_code == 400 and "load factor must be a positive number" in bad.json()["error"]
