"""A sweep on a site preview, as an admin uses it: one of the proposal form's keys (``short MaxTime``,
``bf_max_job_test``, PBS ``workq max_run``) at several values, the current and the proposed files each
replayed once per value with the key set to it, and the page's table and figure across the values (the
ordinary preview's, webapp.preview.page.sweep_overview). A bad key or value answers one line and stores
nothing."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from django.urls import reverse

from engine.api import metric_text
from tests.webapp.conftest import compute, login, make_trace
from tests.webapp.preview.test_site_preview import SLURM, post_pbs_site, post_site, proposal_post, slurm_files
from webapp.experiments.models import Experiment
from webapp.preview.models import SitePreview

REFUSED = "PartitionTimeLimit (refused at submission)"


def runs_by(preview: SitePreview) -> dict[tuple[str, str | None], object]:
    return {(run.queues or "recorded", run.sweep_value): run for run in preview.experiment.runs.all()}


@pytest.mark.django_db
def test_a_sweep_of_a_partitions_maxtime_runs_each_side_once_per_value(alice, sacct_trace):
    client = login(alice)
    response = post_site(client, sacct_trace, **slurm_files(), sweep_key="short MaxTime",
                         sweep_values="00:05:00, 00:02:00")
    assert response.status_code == 302
    preview = SitePreview.objects.get()
    assert preview.experiment.sweep_param == "short MaxTime"
    assert preview.experiment.sweep_values == ["00:05:00", "00:02:00"]
    assert set(runs_by(preview)) == {("recorded", None), ("current", "00:05:00"), ("current", "00:02:00")}
    assert runs_by(preview)[("current", "00:02:00")].label == "current: slurm as configured (short MaxTime=00:02:00)"
    # the stored files stay as uploaded; each run's copy has the key at its value
    assert "MaxTime=00:05:00" in preview.current["slurm.conf"]
    assert preview.site("current", "00:02:00").conf.partitions["short"].max_time == 120
    # a proposal makes one proposed run per value, each with MaxTime set in a copy of the proposed files
    response = client.post(reverse("preview:site_propose", args=[preview.pk]),
                           proposal_post(preview, PriorityWeightFairshare="20000"))
    assert response.status_code == 302
    preview.refresh_from_db()
    assert preview.site("proposed", "00:02:00").conf.partitions["short"].max_time == 120
    assert preview.site("proposed", "00:02:00").conf.weights["fairshare"] == 20000
    compute(preview)
    runs = runs_by(preview)
    assert len(runs) == 5 and all(run.status == "done" for run in runs.values()), [r.error for r in runs.values()]
    # by hand from the trace: at 2 minutes, the short jobs asking for more are refused at submission
    jobs = sacct_trace.workload().jobs
    over = int(((jobs["queue_name"] == "short") & (jobs["requested_time"] > 120)).sum())
    assert over > 0
    for side in ("current", "proposed"):
        held = {row["reason"]: row for row in runs[(side, "00:02:00")].summary["site_pending"]}
        assert held[REFUSED]["jobs"] == over
        assert runs[(side, "00:02:00")].summary["rejected_total"] == over
        assert REFUSED not in {row["reason"] for row in runs[(side, "00:05:00")].summary["site_pending"]}
    # the page: every value at once, current beside proposed, and the figure across the values
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="sweep"' in page and "Across the sweep of short MaxTime" in page
    row = page[page.index('data-value="00:02:00"'):]
    row = row[:row.index("</tr>")]
    cells = [cell.split("</td>")[0] for cell in row.split("<td")[1:]]
    rejected = metric_text("rejected_total", over)
    assert cells[0].endswith(f">{rejected}") and cells[1].endswith(f">{rejected}")      # current, proposed
    assert 'data-bokeh-item="sweep-plot-item"' in page and 'id="sweep-plot-item"' in page
    # the first value's tables by default; ?value=1 the second's, with its refusals
    assert "at short MaxTime = 00:05:00" in page and f"<td>{REFUSED}</td>" not in page
    second = client.get(preview.get_absolute_url() + "?value=1").content.decode()
    assert "at short MaxTime = 00:02:00" in second and f"<td>{REFUSED}</td>" in second
    assert client.get(preview.get_absolute_url() + "?value=2").status_code == 404
    # "Compare the runs": a line per side across the values, current and proposed apart
    from webapp.dashboards.data import load_comparison

    series = load_comparison(preview.experiment).sweep_series
    assert sorted(series) == ["slurm (current)", "slurm (proposed)"]
    assert [s["rejected_total"] for s in series["slurm (proposed)"]] == [0, over]


@pytest.mark.django_db
def test_a_second_proposal_runs_every_value_again_under_its_name(alice, sacct_trace):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files(), sweep_key="bf_max_job_test", sweep_values="10, 100")
    preview = SitePreview.objects.get()
    client.post(reverse("preview:site_propose", args=[preview.pk]), proposal_post(preview, PriorityWeightAge="2000"))
    compute(preview)
    data = {**proposal_post(preview, PriorityWeightAge="3000"), "name": "older first"}
    assert client.post(reverse("preview:site_propose", args=[preview.pk]), data).status_code == 302
    proposed = preview.experiment.runs.filter(queues="proposed").order_by("position")
    assert [(run.label, run.status) for run in proposed] == [
        ("proposed: older first (bf_max_job_test=10)", "queued"), ("proposed: older first (bf_max_job_test=100)", "queued")]
    compute(preview)
    preview.refresh_from_db()
    assert preview.site("proposed", "10").conf.scheduler["bf_max_job_test"] == 10
    assert preview.site("proposed", "10").conf.weights["age"] == 3000
    # the swept key's field says the sweep sets it
    page = client.get(preview.get_absolute_url()).content.decode()
    assert page.count("Swept: each run sets it to its value.") == 1


@pytest.mark.django_db
def test_a_bad_sweep_answers_one_line_and_stores_nothing(alice, sacct_trace):
    client = login(alice)
    page = post_site(client, sacct_trace, **slurm_files(), sweep_key="bf_max_jobs", sweep_values="10").content.decode()
    assert "no key &#x27;bf_max_jobs&#x27; to sweep; the site&#x27;s are:" in page and "bf_max_job_test" in page
    page = post_site(client, sacct_trace, **slurm_files(), sweep_key="bf_max_job_test", sweep_values=" , ").content.decode()
    assert "sweep over bf_max_job_test: give at least one value, as slurm.conf writes it" in page
    response = post_site(client, sacct_trace, **slurm_files(), sweep_key="short MaxTime", sweep_values="00:02:00, soon")
    assert response.status_code == 400
    line = next(n for n, text in enumerate((SLURM / "slurm.conf").read_text().splitlines(), 1)
                if text.startswith("PartitionName=short"))
    assert f"sweep value soon: slurm.conf, line {line}" in response.content.decode()
    assert not SitePreview.objects.exists() and not Experiment.objects.exists()


def most_running_per_user(schedule: pd.DataFrame, users: pd.Series) -> int:
    """The most jobs one user had running at once (a naive sweep over starts and ends)."""
    frame = schedule.assign(user=users.reindex(schedule["job_id"]).to_numpy())
    most = 0
    for _, jobs in frame.groupby("user"):
        events = sorted([(t, 1) for t in jobs["start"]] + [(t, -1) for t in jobs["end"]], key=lambda e: (e[0], e[1]))
        running = 0
        for _, step in events:
            running += step
            most = max(most, running)
    return most


@pytest.mark.django_db
def test_a_pbs_sweep_of_a_queues_max_run(alice):
    from tests.shared_data import SHARED_DATA

    trace = make_trace(alice, SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log", name="openpbs", format="pbs")
    client = login(alice)
    response = post_pbs_site(client, trace, sweep_key="workq max_run", sweep_values="[u:PBS_GENERIC=1], [u:PBS_GENERIC=2]")
    assert response.status_code == 302
    preview = SitePreview.objects.get()
    assert preview.experiment.sweep_values == ["[u:PBS_GENERIC=1]", "[u:PBS_GENERIC=2]"]
    compute(preview)
    runs = runs_by(preview)
    users = trace.workload().jobs.set_index("job_id")["user"]
    for value, most in (("[u:PBS_GENERIC=1]", 1), ("[u:PBS_GENERIC=2]", 2)):
        run = runs[("current", value)]
        assert run.status == "done", run.error
        assert most_running_per_user(run.load_schedule(), users) == most
        held = {row["reason"]: row for row in run.summary["site_pending"]}
        assert held["Queue max_run limit reached"]["jobs"] > 0
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'data-value="[u:PBS_GENERIC=1]"' in page and "Across the sweep of workq max_run" in page


def sweep_post(client, preview: SitePreview, key: str, values: str):  # noqa: ANN001, ANN201
    return client.post(reverse("preview:site_sweep", args=[preview.pk]), {"sweep_key": key, "sweep_values": values})


@pytest.mark.django_db
def test_a_sweep_added_from_the_page_replaces_both_sides_runs_by_one_per_value(alice, sacct_trace):
    """A preview made without a sweep, with a proposal run: sweeping short MaxTime from its page queues
    one current and one proposed run per value (the proposal's copy of the files too), keeps the
    recorded run, and the page then shows the table across the values as a sweep asked at creation."""
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    client.post(reverse("preview:site_propose", args=[preview.pk]), proposal_post(preview, PriorityWeightFairshare="20000"))
    compute(preview)
    recorded = preview.experiment.runs.get(queues="")
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="sweep-form"' in page and 'id="sweep"' not in page
    response = sweep_post(client, preview, "short MaxTime", "00:05:00, 00:02:00")
    assert response.status_code == 302
    preview = SitePreview.objects.get()
    assert (preview.experiment.sweep_param, preview.experiment.sweep_values) == ("short MaxTime", ["00:05:00", "00:02:00"])
    runs = runs_by(preview)
    assert set(runs) == {("recorded", None), ("current", "00:05:00"), ("current", "00:02:00"),
                         ("proposed", "00:05:00"), ("proposed", "00:02:00")}
    assert runs[("recorded", None)].pk == recorded.pk and runs[("recorded", None)].status == "done"
    assert runs[("proposed", "00:02:00")].label == "proposed: my change (short MaxTime=00:02:00)"
    assert all(run.status == "queued" for key, run in runs.items() if key[0] != "recorded")
    compute(preview)
    runs = runs_by(preview)
    assert all(run.status == "done" for run in runs.values()), [run.error for run in runs.values()]
    jobs = sacct_trace.workload().jobs
    over = int(((jobs["queue_name"] == "short") & (jobs["requested_time"] > 120)).sum())
    assert over > 0
    for side in ("current", "proposed"):
        assert runs[(side, "00:02:00")].summary["rejected_total"] == over
        assert runs[(side, "00:05:00")].summary["rejected_total"] == 0
    assert preview.site("proposed", "00:02:00").conf.weights["fairshare"] == 20000
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "Across the sweep of short MaxTime" in page and 'data-value="00:02:00"' in page
    assert 'data-bokeh-item="sweep-plot-item"' in page and "Sweep another key" in page
    # the downloads are of the value shown: ?value=1's tables count the refusals, the first value's none
    url = reverse("preview:site_tables_csv", args=[preview.pk])
    held = {value: {row[1]: row for row in csv.reader(io.StringIO(client.get(url + query).content.decode()))
                    if row[0] == "pending reason: jobs held"} for value, query in (("00:05:00", ""), ("00:02:00", "?value=1"))}
    assert REFUSED not in held["00:05:00"] and held["00:02:00"][REFUSED][4:6] == [str(over), str(over)]
    assert f'href="{url}?value=1"' in client.get(preview.get_absolute_url() + "?value=1").content.decode()
    # sweeping another key replaces this sweep: two values of bf_max_job_test, each side
    assert sweep_post(client, preview, "bf_max_job_test", "10, 100").status_code == 302
    assert set(runs_by(SitePreview.objects.get())) == {("recorded", None), ("current", "10"), ("current", "100"),
                                                       ("proposed", "10"), ("proposed", "100")}


@pytest.mark.django_db
def test_a_bad_sweep_from_the_page_answers_one_line_and_changes_nothing(alice, sacct_trace):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    before = sorted(preview.experiment.runs.values_list("pk", "status"))
    # a run still queued: the sweep would replace it under the worker
    page = sweep_post(client, preview, "bf_max_job_test", "10").content.decode()
    assert "current: slurm as configured is still running: wait for it or cancel it first" in page
    compute(preview)
    before = sorted(preview.experiment.runs.values_list("pk", "status"))
    page = sweep_post(client, preview, "bf_max_jobs", "10").content.decode()
    assert "no key &#x27;bf_max_jobs&#x27; to sweep; the site&#x27;s are:" in page
    response = sweep_post(client, preview, "short MaxTime", "00:02:00, soon")
    assert response.status_code == 400
    line = next(n for n, text in enumerate(preview.current["slurm.conf"].splitlines(), 1)
                if text.startswith("PartitionName=short"))
    assert f"sweep value soon: slurm.conf, line {line}" in response.content.decode()
    assert sweep_post(client, preview, "bf_max_job_test", "").status_code == 400
    preview = SitePreview.objects.get()
    assert preview.experiment.sweep_param == "" and preview.experiment.sweep_values in ([], None)
    assert sorted(preview.experiment.runs.values_list("pk", "status")) == before


@pytest.mark.django_db
def test_the_page_reads_its_runs_once_and_each_set_of_files_once(alice, sacct_trace, monkeypatch):
    """A swept preview with a proposal, every run done: the page asks the database for the runs once,
    and reads the current and the proposed files once each (not once per swept run or per use)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from webapp.preview import models

    client = login(alice)
    post_site(client, sacct_trace, **slurm_files(), sweep_key="bf_max_job_test", sweep_values="10, 100")
    preview = SitePreview.objects.get()
    client.post(reverse("preview:site_propose", args=[preview.pk]), proposal_post(preview, PriorityWeightFairshare="20000"))
    compute(preview)
    read: list[dict] = []
    real = models.site_from_texts
    monkeypatch.setattr(models, "site_from_texts", lambda kind, texts: read.append(dict(texts)) or real(kind, texts))
    with CaptureQueriesContext(connection) as queries:
        page = client.get(preview.get_absolute_url() + "?value=1").content.decode()
    assert "at bf_max_job_test = 100" in page and 'id="changed-keys"' in page
    assert sum('FROM "experiments_run"' in query["sql"] for query in queries.captured_queries) == 1
    preview.refresh_from_db()
    assert len(read) == 2 and preview.current in read and preview.proposed in read, [sorted(r) for r in read]


@pytest.mark.django_db
def test_sweeping_the_only_key_the_proposal_changes_says_both_sides_then_match(alice, sacct_trace):
    """Found in the browser: a proposal that doubles PriorityWeightFairshare, then a sweep of
    PriorityWeightFairshare: each value sets it on both sides, so current and proposed are the same
    files (±0 s everywhere); the page says why. A sweep of another key does not say it."""
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    client.post(reverse("preview:site_propose", args=[preview.pk]), proposal_post(preview, PriorityWeightFairshare="20000"))
    compute(preview)
    assert sweep_post(client, preview, "bf_max_job_test", "10, 100").status_code == 302
    assert 'id="swept-only"' not in client.get(preview.get_absolute_url()).content.decode()
    compute(preview)
    assert sweep_post(client, preview, "PriorityWeightFairshare", "10000, 40000").status_code == 302
    assert SitePreview.objects.get().experiment.sweep_param == "PriorityWeightFairshare"
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="swept-only"' in page and "changes no form key but PriorityWeightFairshare, the swept key" in page
