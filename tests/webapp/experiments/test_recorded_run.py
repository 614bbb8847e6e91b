"""The recorded run beside the simulations, and fidelity at the top of the comparison."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.shared_data import SHARED_DATA
from tests.webapp.conftest import make_experiment, make_trace

pytestmark = pytest.mark.django_db

OPENPBS = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"


@pytest.fixture
def pbs_trace(alice):
    return make_trace(alice, OPENPBS, name="pbs", format="pbs")


def test_the_recorded_run_comes_first_when_the_trace_records_starts(alice, pbs_trace):
    experiment = make_experiment(alice, pbs_trace, ("easy",), procs=4, with_recorded=True)
    runs = list(experiment.runs.order_by("position"))
    assert [run.policy["preset"] for run in runs] == ["recorded", "easy"]
    assert all(run.status == "done" for run in runs), [run.error for run in runs]
    recorded = runs[0].summary
    assert recorded["jobs"] == 200 and recorded["mean_wait"] == pytest.approx(log_mean_wait())


def log_mean_wait() -> float:
    """start - ctime of every E record of the log, read here with a plain regular expression."""
    waits = [int(re.search(r" start=(\d+)", line).group(1)) - int(re.search(r" ctime=(\d+)", line).group(1))
             for line in OPENPBS.read_text().splitlines() if ";E;" in line]
    return sum(waits) / len(waits)


def test_no_recorded_run_when_arrivals_are_rescaled_or_not_asked(alice, pbs_trace):
    assert [r.policy["preset"] for r in make_experiment(alice, pbs_trace, ("easy",), procs=4, run=False).runs.all()] \
        == ["easy"]
    scaled = make_experiment(alice, pbs_trace, ("easy",), procs=4, run=False, with_recorded=True, load_factor=2)
    assert [r.policy["preset"] for r in scaled.runs.all()] == ["easy"]


def test_the_form_offers_it_checked(alice_client):
    page = alice_client.get(reverse("experiments:new")).content.decode()
    assert 'name="with_recorded"' in page and 'id="id_with_recorded" checked' in page.replace('checked=""', "checked")


def test_comparison_shows_fidelity_with_a_warning_for_a_far_baseline(alice, alice_client, pbs_trace):
    experiment = make_experiment(alice, pbs_trace, ("easy", "sjf"), procs=4, with_recorded=True)
    page = alice_client.get(reverse("dashboards:comparison", args=[experiment.pk])).content.decode()
    assert 'id="fidelity"' in page and "Against what really happened" in page
    assert "rank correlation" in page
