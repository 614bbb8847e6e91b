"""A site preview's downloads, as an admin takes them away: the page as one HTML file that works
offline (BokehJS inline, nothing fetched from elsewhere), the tables as CSV (per partition, account
and user the mean waits recorded / current / proposed, and the jobs and hours each pending reason
held) and each job's start, wait and reason on every side. The expected figures are worked out here
from the runs' stored schedules, not pinned (the engine's Slurm rules move)."""

from __future__ import annotations

import csv
import html
import io
import json
import re

import pytest
from django.urls import reverse

from tests.webapp.conftest import compute, login
from tests.webapp.preview.test_site_preview import post_site, proposal_post, slurm_files
from tests.webapp.preview.test_site_reading import ENFORCE, NOT_ENFORCED, SLURM, page_of, warnings
from webapp.preview.models import SitePreview

REFUSED = "PartitionTimeLimit (refused at submission)"


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def div_texts(page: str) -> list[str]:
    """The HTML of each part of a downloaded page, in order (Bokeh Divs' texts in the file's document JSON)."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("name") == "Div" and isinstance(node.get("attributes", {}).get("text"), str):
                found.append(node["attributes"]["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for script in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S):
        walk(json.loads(script))
    return found


@pytest.fixture
def proposed(alice, sacct_trace) -> SitePreview:
    """Alice's site preview with a proposal (MaxTime 1 minute on short), every run done."""
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    client.post(reverse("preview:site_propose", args=[preview.pk]), proposal_post(preview, **{"short MaxTime": "00:01:00"}))
    compute(preview)
    preview.refresh_from_db()
    return preview


def by_side(preview: SitePreview) -> dict[str, object]:
    return {run.queues or "recorded": run for run in preview.experiment.runs.all()}


@pytest.mark.django_db
def test_the_downloads_wait_for_the_runs(alice, sacct_trace):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="download-html"' not in page
    for name in ("preview:site_download", "preview:site_tables_csv", "preview:site_jobs_csv"):
        response = client.get(reverse(name, args=[preview.pk]))
        assert response.status_code == 409 and b"not finished" in response.content


@pytest.mark.django_db
def test_the_page_as_one_html_file_with_bokehjs_inline(alice, proposed):
    proposed.experiment.name = "our <cluster>"
    proposed.experiment.save()
    client = login(alice)
    page = client.get(proposed.get_absolute_url()).content.decode()
    assert 'id="download-html"' in page and 'id="download-tables"' in page and 'id="download-jobs"' in page
    response = client.get(reverse("preview:site_download", args=[proposed.pk]))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert response["Content-Disposition"] == f'attachment; filename="our-cluster-{proposed.pk}.html"'
    html = response.content.decode()
    assert "Bokeh.set_log_level" in html or "bokeh-" in html                  # BokehJS itself, inline
    assert not re.search(r"<script[^>]*\bsrc=", html) and not re.search(r"<link[^>]*\bhref=", html)   # nothing fetched
    assert "our &lt;cluster&gt;" in html and "our <cluster>" not in html      # the name escaped
    for part in ("waits-partition", "waits-account", "waits-user", "pending-reasons", "changed-keys",
                 "+PartitionName=short", REFUSED):
        assert part in html, part


@pytest.mark.django_db
def test_the_tables_csv_holds_the_pages_waits_and_reasons(alice, proposed, sacct_trace):
    response = login(alice).get(reverse("preview:site_tables_csv", args=[proposed.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    rows = rows_of(response.content.decode())
    jobs = sacct_trace.workload().jobs
    runs = by_side(proposed)
    waits = {side: run.load_schedule().assign(wait=lambda f: f["start"] - f["submit"]).set_index("job_id")["wait"]
             for side, run in runs.items()}
    # by hand: each partition's mean wait on each side, in minutes, from the stored schedules
    partitions = {row["name"]: row for row in rows if row["table"] == "mean wait per partition (minutes)"}
    assert set(partitions) == set(jobs["queue_name"].astype(str))
    for name, row in partitions.items():
        ids = jobs.loc[jobs["queue_name"].astype(str) == name, "job_id"]
        assert int(row["jobs"]) == len(ids)
        for side, wait in waits.items():
            expected = wait.reindex(ids).dropna()
            assert float(row[side]) == pytest.approx(expected.mean() / 60, abs=1e-3), (name, side)
    # the proposed side refuses short's jobs over a minute: not in its mean
    short = jobs.loc[jobs["queue_name"] == "short"]
    assert waits["proposed"].reindex(short["job_id"]).isna().sum() == (short["requested_time"] > 60).sum() > 0
    assert {row["name"] for row in rows if row["table"] == "mean wait per account (minutes)"} == {
        "physics", "chemistry", "teaching"}
    users = {row["name"]: row for row in rows if row["table"] == "mean wait per user (minutes)"}
    assert {"alice", "dave", "erin"} <= set(users)
    # the reasons: each side's jobs and hours as its run's summary says
    held = {(row["table"], row["name"]): row for row in rows if row["table"].startswith("pending reason")}
    for side, run in runs.items():
        for reason in run.summary["site_pending"]:
            assert int(held[("pending reason: jobs held", reason["reason"])][side]) == reason["jobs"]
            hours = held[("pending reason: hours held", reason["reason"])][side]
            assert hours == "" if reason["hours"] is None else float(hours) == pytest.approx(reason["hours"], abs=1e-3)
    assert held[("pending reason: jobs held", REFUSED)]["current"] == ""
    assert int(held[("pending reason: jobs held", REFUSED)]["proposed"]) == (short["requested_time"] > 60).sum()


@pytest.mark.django_db
def test_each_jobs_start_wait_and_reason_on_every_side(alice, proposed, sacct_trace):
    response = login(alice).get(reverse("preview:site_jobs_csv", args=[proposed.pk]))
    assert response.status_code == 200
    rows = rows_of(response.content.decode())
    jobs = sacct_trace.workload().jobs
    assert len(rows) == len(jobs) and [int(row["job_id"]) for row in rows] == jobs["job_id"].tolist()
    assert rows[0]["native_id"] == str(jobs["jobid"].iloc[0])
    for side, run in by_side(proposed).items():
        schedule = run.load_schedule().set_index("job_id")
        for row in rows:
            job = int(row["job_id"])
            if job not in schedule.index:      # refused at submission: no start, the refusal as its reason
                assert side == "proposed" and row[f"{side}_start"] == "" and row[f"{side}_reason"].startswith(
                    "refused: "), row
                continue
            start, submit = int(schedule.at[job, "start"]), int(schedule.at[job, "submit"])
            assert int(row[f"{side}_start"]) == start and int(row[f"{side}_wait"]) == start - submit
            if side == "recorded":    # estimated: a job that never waited has none, one that waited one of these
                assert (row[f"{side}_reason"] == "") == (start == submit), (side, row)
                assert start == submit or row[f"{side}_reason"] in (
                    "Priority", "Resources", "QOSMaxJobsPerUserLimit", "PartitionTimeLimit", "QOSMaxWallDurationPerJobLimit")
            else:                     # the replayed scheduler's own, as its schedule keeps it
                assert row[f"{side}_reason"] == str(schedule.at[job, "slurm_reason"]), (side, row)
                assert start == submit or row[f"{side}_reason"] != "", (side, row)
    refused = [row for row in rows if row["proposed_reason"].startswith("refused: ")]
    short = jobs.loc[jobs["queue_name"] == "short"]
    assert len(refused) == (short["requested_time"] > 60).sum()


@pytest.mark.django_db
def test_a_pbs_sites_jobs_carry_the_pbs_schedulers_own_comments(alice):
    """The OpenPBS test server's log with max_run 1 per user on workq proposed: each job's reason on the
    current and proposed sides is the replayed scheduler's own (its schedule's pbs_reason column)."""
    from tests.shared_data import SHARED_DATA
    from tests.webapp.conftest import make_trace
    from tests.webapp.preview.test_site_preview import post_pbs_site

    trace = make_trace(alice, SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log", name="openpbs", format="pbs")
    client = login(alice)
    post_pbs_site(client, trace)
    preview = SitePreview.objects.get()
    client.post(reverse("preview:site_propose", args=[preview.pk]),
                proposal_post(preview, **{"workq max_run": "[u:PBS_GENERIC=1]"}))
    compute(preview)
    rows = rows_of(login(alice).get(reverse("preview:site_jobs_csv", args=[preview.pk])).content.decode())
    assert len(rows) == len(trace.workload().jobs)
    for side, run in by_side(preview).items():
        if side == "recorded":
            continue
        reasons = run.load_schedule().set_index("job_id")["pbs_reason"].astype(str)
        assert [row[f"{side}_reason"] for row in rows] == [reasons.get(int(row["job_id"]), "") for row in rows]
    assert sum(row["proposed_reason"] == "Queue max_run limit reached" for row in rows) > 0


@pytest.mark.django_db
def test_the_html_file_says_what_schedlab_read_and_warns_as_the_page_does(alice, sacct_trace):
    """The downloaded page carries the page's own "What SchedLab read from your files" and its warnings
    (the same builder: the same HTML), in the page's order: warnings first, the tables after."""
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files((SLURM / "slurm.conf").read_text().replace(ENFORCE, "")))
    preview = SitePreview.objects.get()
    compute(preview)
    page = page_of(client, preview)
    report = html.unescape(html.unescape("".join(div_texts(   # (the file's JSON escapes the parts once more)
        client.get(reverse("preview:site_download", args=[preview.pk])).content.decode()))))
    box = warnings(page)
    assert NOT_ENFORCED in box and box == warnings(report)

    def read(text: str) -> str:
        return re.search(r'<section id="site-read">.*?</section>', text, re.S).group(0)

    assert "What SchedLab read from your files" in read(report) and read(report) == read(page)
    assert "short (default): 1 nodes, MaxTime 00:05:00" in read(report)
    assert report.index(NOT_ENFORCED) < report.index('id="site-read"') < report.index('id="waits-partition"')


@pytest.mark.django_db
def test_the_means_say_they_leave_out_the_jobs_a_side_refused(alice, proposed):
    """Found in the browser: MaxTime 1 min on short refuses jobs at submission, and the proposed means
    (over the jobs it queued) then look far better; the tables say which side left out how many."""
    refused = len(by_side(proposed)["proposed"].load_rejected())
    assert refused > 0
    page = login(alice).get(proposed.get_absolute_url()).content.decode()
    note = re.search(r'<p class="muted" id="means-refused">(.*?)</p>', page, re.S).group(1)
    assert f"proposed refused {refused} jobs at submission" in note and "current refused" not in note
    assert page.index('id="means-refused"') < page.index('id="waits-partition"')
