"""Plan-based runs time their decisions: the experiment page and the comparison table show it."""

from __future__ import annotations

import pytest

from tests.webapp.conftest import make_experiment
from webapp.dashboards.figures.metrics_table import metrics_rows, metrics_table_html

pytestmark = pytest.mark.django_db


def test_the_experiment_page_shows_mean_and_max_decision_time_of_plan_runs(alice_client, alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, ["easy", {"preset": "plan2", "params": {"cooling": 0.5}}])
    plan = next(run for run in experiment.runs.all() if run.policy["preset"] == "plan2")
    summary = plan.summary
    assert summary["max_decision_ms"] >= summary["mean_decision_ms"] > 0 and summary["decisions"] > 0
    page = alice_client.get(experiment.get_absolute_url()).content.decode()
    assert page.count("decisions: mean") == 1     # the EASY run has no decision times
    assert f"decisions: mean {summary['mean_decision_ms']:.1f} ms" in page


def test_the_comparison_table_adds_decision_rows_only_when_a_policy_has_them():
    easy = {"mean_wait": 10.0, "utilization": 0.5}
    assert "Mean decision time" not in metrics_rows({"easy": easy})["metric"]
    table = metrics_rows({"easy": easy, "plan2": {**easy, "mean_decision_ms": 12.34, "max_decision_ms": 250.0}})
    row = table["metric"].index("Mean decision time")
    assert table["plan2"][row] == "12.3 ms" and table["easy"][row] == "–"
    html = metrics_table_html({"easy": easy, "plan2": {**easy, "mean_decision_ms": 12.34, "max_decision_ms": 250.0}})
    assert "Mean decision time (ms)</th><td class='num'>–</td><td class='num'>12.3</td>" in html
