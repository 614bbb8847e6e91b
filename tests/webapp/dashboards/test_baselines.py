"""A baseline is only a baseline when it is comparable (issue 28): the recorded run of a machine that
cannot have produced it is never one; runs over different jobs are compared over the jobs they share,
so the metrics table and the fidelity table give the same recorded figures; the fidelity table is
first for an accounting log and a footnote under the metrics for an archive (SWF) trace."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from django.urls import reverse

from tests.shared_data import SHARED_DATA
from webapp.dashboards import data
from webapp.dashboards.figures import metrics_table_html

from ..conftest import make_experiment, make_trace

pytestmark = pytest.mark.django_db

OPENPBS = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"


def page_of(client, experiment, extra: str = "") -> str:  # noqa: ANN001
    return client.get(reverse("dashboards:comparison", args=[experiment.pk]) + extra).content.decode()


def baseline_options(page: str) -> list[str]:
    select = page[page.index('name="baseline"'):page.index("</select>", page.index('name="baseline"'))]
    return re.findall(r"<option[^>]*>([^<]*)</option>", select)


def test_an_impossible_recording_is_never_the_baseline_even_when_asked(alice, alice_client):
    trace = make_trace(alice, OPENPBS, name="pbs", format="pbs")
    # 3 processors: the log holds 4 at once (a fifth of its work above 3), so it is no schedule of this machine
    experiment = make_experiment(alice, trace, ("easy", "sjf"), procs=3, with_recorded=True)
    labels = [run.label for run in experiment.runs.order_by("position")]
    recorded = labels[0]
    page = page_of(alice_client, experiment, f"?baseline={recorded}")
    assert recorded not in baseline_options(page) and baseline_options(page) == labels[1:]
    table = page[page.index("metrics-table"):page.index("</table>", page.index("metrics-table"))]
    head = table[table.index(f"data-run='{recorded}'"):]
    head = head[:head.index("</th>")]
    assert "not a baseline" in head and "baseline</small>" not in head.replace("not a baseline", "")
    easy = table[table.index(f"data-run='{labels[1]}'"):]
    assert "<small>baseline</small>" in easy[:easy.index("</th>")]
    # one sentence about the recording, not one red box per run; the accounting log's table comes first
    assert page.count("is not a schedule of this machine") == 1 and "error-box" not in page
    assert page.index('id="fidelity"') < page.index('id="section-metrics"')
    assert "Against what really happened" in page and ">-1<" not in page and "-1," not in page


def test_an_archive_traces_fidelity_is_a_footnote_under_the_metrics(alice, alice_client, demo_trace):
    experiment = make_experiment(alice, demo_trace, ("fcfs", "easy"), with_recorded=True)
    runs = list(experiment.runs.order_by("position"))
    assert runs[0].policy["preset"] == "recorded", "the demo SWF records waits, so it has a recorded run"
    page = page_of(alice_client, experiment)
    metrics = page.index('id="section-metrics"')
    assert metrics < page.index('id="fidelity"') < page.index("</section>", metrics)
    assert "fidelity-footnote" in page and "Against what really happened" not in page
    assert page.count("<tr class=\"far\">") + page.count("<tr class=\"close\">") == 2   # a row per simulated run


def test_runs_over_different_jobs_are_compared_over_the_common_ones(alice, alice_client, demo_trace, monkeypatch):
    """As the DBF preset: the recorded run keeps jobs (there, interactive ones) the simulations dropped."""
    experiment = make_experiment(alice, demo_trace, ("fcfs", "easy"), with_recorded=True)
    runs = list(experiment.runs.order_by("position"))
    recorded_schedule = data.cached_schedule(runs[0])
    dropped = set(recorded_schedule["job_id"].iloc[::4])          # every fourth job only in the recording
    real = data.cached_schedule

    def without_dropped(run):  # noqa: ANN001, ANN202
        schedule = real(run)
        return schedule if run.pk == runs[0].pk else schedule[~schedule["job_id"].isin(dropped)]

    monkeypatch.setattr(data, "cached_schedule", without_dropped)
    page = page_of(alice_client, experiment)
    total, common = len(recorded_schedule), len(recorded_schedule) - len(dropped)
    note = page[page.index('id="job-sets"'):]
    note = note[:note.index("</p>")]
    assert f"{total:,} in" in note and f"{common:,} in" in note and f"compare the {common:,} jobs" in note
    # the recorded mean wait: the same in both tables, and the naive mean over the common jobs
    kept = recorded_schedule[~recorded_schedule["job_id"].isin(dropped)]
    naive_hours = kept["wait"].astype(float).sum() / len(kept) / 3600
    fidelity = data.fidelity_table(experiment, runs, [r.label for r in runs],
                                   data.common_jobs({r.label: without_dropped(r) for r in runs}))
    recorded_in_fidelity = fidelity["rows"][0]["mean_wait"].split(" vs ")[1]
    table = data.comparable_runs([(r.label, r) for r in runs], int(experiment.procs), cross=False)
    assert table.summaries[runs[0].label]["mean_wait"] == pytest.approx(naive_hours * 3600)
    assert table.summaries[runs[0].label]["jobs"] == common
    assert recorded_in_fidelity == data.human_seconds(naive_hours * 3600)


def test_the_table_has_no_changes_when_no_run_can_be_a_baseline():
    html = metrics_table_html({"recorded": {"mean_wait": 10.0}}, baseline="recorded",
                              unusable={"recorded": "not a schedule of this machine"})
    assert "No run here can be a baseline" in html and "<small>baseline</small>" not in html


def test_choose_baseline_skips_unusable_runs_and_keeps_a_usable_request():
    unusable = {"recorded": "impossible"}
    assert data.choose_baseline(["recorded", "easy", "cbf"], unusable) == "easy"
    assert data.choose_baseline(["recorded", "easy", "cbf"], unusable, "recorded") == "easy"
    assert data.choose_baseline(["recorded", "easy", "cbf"], unusable, "cbf") == "cbf"
    assert data.choose_baseline(["recorded"], unusable) == ""


def test_a_run_above_full_utilization_is_unusable():
    class Stub:
        policy = {"preset": "easy"}
        summary = {"utilization": 2.11}

    assert "211.0 %" in data.unusable_baselines([("x", Stub())], {"x": pd.DataFrame()}, 4)["x"]


def test_an_accounting_logs_queue_names_tell_allocations_apart():
    """A PBS schedule's queues are names (comparing them with 0 answered 500 on its timelines)."""
    from webapp.dashboards.comparison import allocation_key

    named = pd.DataFrame({"queue": pd.Series(["default", "long", ""], dtype="string"), "user": [-1, -1, -1]})
    assert allocation_key(named) == "queue"
    assert allocation_key(pd.DataFrame({"queue": pd.Series(["default", ""], dtype="string"),
                                        "user": [-1, 3]})) is None
