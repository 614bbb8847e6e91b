"""A preview is an experiment: its runs are queued, computed, shown with their progress, cancelled,
re-run, failed with one line and reconciled after a lost worker by the experiments' one run system."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.shared_data import SHARED_DATA
from tests.webapp.conftest import ONE_QUEUE, compute, login, make_preview, make_trace
from webapp.experiments import tasks
from webapp.experiments.models import Run
from webapp.experiments.tasks import reconcile, run_simulation

pytestmark = pytest.mark.django_db
WAGAP = SHARED_DATA / "metacentrum/alea"
WAGAP_MACHINES = (WAGAP / "wagap-2013.swf.machines").read_text()


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(tasks.run_simulation, "delay", lambda pk: calls.append(pk))
    return calls


@pytest.fixture
def wagap_trace(alice, tmp_path):  # noqa: ANN001, ANN201
    head = tmp_path / "wagap-head.txt"
    head.write_text("".join((WAGAP / "wagap-2013.swf").read_text().splitlines(keepends=True)[:400]))
    return make_trace(alice, head, name="wagap head")


def test_making_a_preview_queues_its_runs_for_the_fair_dispatcher_once_stored(alice, demo_trace, sent, settings,
                                                                             django_capture_on_commit_callbacks):
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER = 3, 2
    with django_capture_on_commit_callbacks(execute=True):
        preview = make_preview(alice, demo_trace)
    runs = list(preview.experiment.runs.all())
    assert {run.status for run in runs} == {"queued"}
    assert sent == [run.pk for run in runs][:2]     # in their order, as many as the user's slots
    assert [run.queues for run in runs if run.policy["preset"] != "recorded"] == ["current", "proposed", "proposed"]


def test_the_page_shows_each_runs_progress_and_about_how_long_is_left(alice, alice_client, demo_trace):
    """A quarter done after a minute: three minutes left (plus three times the test's own delay)."""
    preview = make_preview(alice, demo_trace)
    run = preview.experiment.runs.get(queues="proposed", policy__preset="mrfs-easy")
    before = timezone.now()
    Run.objects.filter(pk=run.pk).update(status="running", progress=0.25, heartbeat_at=before,
                                         started_at=before - timedelta(minutes=1))
    page = alice_client.get(preview.get_absolute_url()).content.decode()
    delay = (timezone.now() - before).total_seconds()
    row = re.search(rf'<tr id="run-{run.pk}".*?</tr>', page, re.S)[0]
    match = re.search(r'<span data-field="percent">25 %, about (\d+) min (\d+) s left</span>', row)
    assert match, row
    assert 180 <= int(match[1]) * 60 + int(match[2]) <= 180 + 3 * delay + 1
    assert "The results show here when the current and proposed runs are done" in page
    # the page's poll reads the experiment's progress, as every experiment page does
    payload = alice_client.get(reverse("experiments:progress", args=[preview.experiment.pk])).json()
    assert {r["id"]: r["percent"] for r in payload["runs"]}[run.pk] == 25 and payload["finished"] is False


def test_cancelling_a_running_preview_stops_its_worker_at_the_next_check(alice, alice_client, wagap_trace, monkeypatch):
    """The page's "Cancel unfinished" while a worker computes a run: the engine's next should_stop says
    stop, the run ends cancelled, and the runs not started are cancelled at once."""
    preview = make_preview(alice, wagap_trace, machine=WAGAP_MACHINES, current=ONE_QUEUE, proposed=ONE_QUEUE)
    original = tasks.Reporter
    clicked: list[int] = []

    class ClickingCancel(original):  # type: ignore[misc, valid-type]
        """The real reporter, checking at every callback; the user clicks cancel at the first progress."""

        def __init__(self, run_id: int) -> None:
            super().__init__(run_id, interval=0.0)

        def progress(self, fraction: float) -> None:
            super().progress(fraction)
            if not clicked:
                clicked.append(alice_client.post(reverse("experiments:cancel", args=[preview.experiment.pk])).status_code)

    monkeypatch.setattr(tasks, "Reporter", ClickingCancel)
    first = preview.experiment.runs.get(queues="current")
    run_simulation(first.pk)
    statuses = dict(preview.experiment.runs.values_list("pk", "status"))
    assert clicked == [302]
    assert statuses[first.pk] == "cancelled" and set(statuses.values()) == {"cancelled"}
    assert Run.objects.get(pk=first.pk).error == "cancelled"
    assert not first.result_dir.exists()


def test_a_cancelled_run_is_run_again_from_the_page(alice, alice_client, demo_trace, sent,
                                                     django_capture_on_commit_callbacks):
    preview = make_preview(alice, demo_trace)
    alice_client.post(reverse("experiments:cancel", args=[preview.experiment.pk]))
    run = preview.experiment.runs.get(queues="current")
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("experiments:run_rerun", args=[run.pk]))
    assert response.status_code == 302
    assert alice_client.get(response.url).url == preview.get_absolute_url()   # the experiment's page is the preview's
    run.refresh_from_db()
    assert run.status == "queued" and sent == [run.pk]
    run_simulation(run.pk)
    run.refresh_from_db()
    assert run.status == "done" and run.summary["jobs"] > 0


def test_a_run_that_cannot_run_fails_with_one_line_on_the_page(alice, alice_client, demo_trace):
    """A stored proposal the engine cannot read (written by an older version, say): the proposed runs fail
    with the file, line and field; the current ones are done; the page shows the line, no traceback."""
    from webapp.preview.models import Preview

    preview = make_preview(alice, demo_trace)
    Preview.objects.filter(pk=preview.pk).update(proposed_text="queues:\n  - {name: q, walltime: soon}\n")
    compute(preview)
    status = {run.queues + (" " + run.policy["preset"] if run.queues else ""): (run.status, run.error)
              for run in preview.experiment.runs.all()}
    assert status["current mrfs-easy"] == ("done", "")
    assert status["proposed mrfs-easy"][0] == "failed"
    assert status["proposed mrfs-easy"][1] == "b, line 2: field walltime: expected a duration such as 2h, 4d or " \
                                              "7200, got 'soon'"
    page = alice_client.get(preview.get_absolute_url()).content.decode()
    assert "b, line 2: field walltime" in page and "Traceback" not in page


def test_a_preview_run_whose_worker_died_is_queued_again_by_the_one_reconcile(alice, demo_trace):
    preview = make_preview(alice, demo_trace)
    run = preview.experiment.runs.get(queues="current")
    old = timezone.now() - timedelta(minutes=10)
    Run.objects.filter(pk=run.pk).update(status="running", attempts=1, started_at=old, heartbeat_at=old,
                                         dispatched_at=old)
    assert reconcile()["requeued"] == 1
    run.refresh_from_db()
    assert (run.status, run.dispatched_at) == ("queued", None)     # back in its owner's turn


def test_a_finished_preview_downloads_as_one_page_and_its_tables_as_csv(alice, demo_trace):
    preview = make_preview(alice, demo_trace, run=True)
    client = login(alice)
    page = client.get(reverse("preview:download", args=[preview.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and page["Content-Disposition"].startswith("attachment;")
    assert "Mean wait per queue: recorded, current, proposed" in html and "Bokeh" in html
    assert "cdn.bokeh.org" not in html                               # works offline: BokehJS inline
    tables = client.get(reverse("preview:tables_csv", args=[preview.pk])).content.decode().splitlines()
    assert tables[0] == "table,queue or user,jobs,recorded_h,current_h,proposed_h,change_h"
    overall = next(line for line in tables if line.startswith("mean wait per trace queue,overall,"))
    summaries = {run.queues: run.summary for run in preview.experiment.runs.filter(policy__preset="mrfs-easy")}
    jobs, _, current, proposed, _ = overall.split(",")[2:]
    assert int(jobs) == summaries["current"]["jobs"]
    assert float(current) == pytest.approx(summaries["current"]["mean_wait"] / 3600, abs=1e-4)
    assert float(proposed) == pytest.approx(summaries["proposed"]["mean_wait"] / 3600, abs=1e-4)


def test_the_jobs_a_run_rejected_download_with_their_ids(alice, alice_client, demo_trace):
    """A one-core machine cannot run the demo's wider jobs: every job of the trace is either in the
    run's schedule or listed in its rejected CSV, once; a run that rejected none downloads the columns only."""
    from engine.api import REJECTED_COLUMNS

    preview = make_preview(alice, demo_trace, machine="0\ttiny\t1\t1\t1\t1048576\n", run=True)
    run = preview.experiment.runs.get(queues="current")
    assert run.status == "done", run.error
    body = b"".join(alice_client.get(reverse("experiments:run_rejected_csv", args=[run.pk])).streaming_content)
    rows = [line for line in body.decode().splitlines() if not line.startswith("#")]
    every = set(demo_trace.workload().jobs["job_id"])
    ran = set(run.load_schedule()["job_id"])
    header = rows[0].split(",")   # native_id and user_name where the trace has them (an SWF has not)
    assert header == [c for c in REJECTED_COLUMNS if c in header] and {"job_id", "reason", "limit"} <= set(header)
    listed = [int(row.split(",")[0]) for row in rows[1:]]
    assert len(listed) == len(set(listed)) > 0
    assert set(listed) == every - ran and not set(listed) & ran
    other = make_preview(alice, demo_trace, run=True).experiment.runs.get(queues="current")
    body = b"".join(alice_client.get(reverse("experiments:run_rejected_csv", args=[other.pk])).streaming_content)
    assert [line for line in body.decode().splitlines() if not line.startswith("#")] == [",".join(REJECTED_COLUMNS)]
