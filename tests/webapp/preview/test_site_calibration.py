"""Calibrating a Slurm site preview's baseline from its page (issue 24 §3): the engine's calibration on
the preview's own trace and files in the background, with progress; its table (candidate, mean wait,
rank correlation, per partition, distance) and the trust per partition; a candidate's --set applied to
both the current and the proposed runs. Figures are checked against the runs' stored schedules and
the report itself, never pinned (the engine's Slurm rules move)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from tests.engine.test_calibrate import EVERY_EVENT
from tests.webapp.conftest import compute, login, make_trace
from tests.webapp.preview.test_site_preview import post_pbs_site, post_site, proposal_post, slurm_files
from webapp.preview.models import SiteCalibration, SitePreview
from webapp.preview.tasks import calibrate_site_preview


def mean_wait(run) -> float:  # noqa: ANN001
    schedule = run.load_schedule()
    return float((schedule["start"] - schedule["submit"]).mean())


def calibrate(client, preview: SitePreview) -> SiteCalibration:  # noqa: ANN001
    """Ask for the calibration on the page, then do what the worker does with it."""
    response = client.post(reverse("preview:site_calibrate", args=[preview.pk]))
    assert response.status_code == 302
    calibration = SiteCalibration.objects.get(site_preview=preview)
    assert calibration.status == "queued"
    calibrate_site_preview(calibration.pk)
    calibration.refresh_from_db()
    return calibration


@pytest.mark.django_db
def test_calibrate_the_baseline_and_apply_a_candidate_to_both_sides(alice, sacct_trace, settings):
    settings.SCHEDLAB_CALIBRATION_PHASES = 1     # one replay per candidate (and the timers' six phases)
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    client.post(reverse("preview:site_propose", args=[preview.pk]), proposal_post(preview, PriorityWeightFairshare="20000"))
    compute(preview)
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="calibrate"' in page and "Calibrate the baseline" in page
    calibration = calibrate(client, preview)
    assert calibration.status == "done" and calibration.progress == 1.0, calibration.error
    assert client.get(reverse("preview:site_calibration_progress", args=[preview.pk])).json() == {
        "status": "done", "shown": "done", "progress": 1.0, "finished": True, "error": ""}
    report = calibration.report
    runs = {run.queues or "recorded": run for run in preview.experiment.runs.all()}
    # the recording is the recorded run's; "as configured" at the first phase is the current run itself
    assert report["recorded_mean_wait"] == pytest.approx(mean_wait(runs["recorded"]))
    rows = {row["name"]: row for row in report["candidates"]}
    assert rows["as configured"]["mean_wait"] == pytest.approx(mean_wait(runs["current"]))
    assert report["best"] == min(report["candidates"], key=lambda row: row["distance"])["name"]
    assert set(report["trust"]) == {"long", "short"}
    # the page: every candidate closest first, the closest marked, the trust per partition
    page = client.get(preview.get_absolute_url()).content.decode()
    table = page[page.index('id="calibration-table"'):page.index('id="calibration-closest"')]
    order = [name for name in sorted(rows, key=lambda name: rows[name]["distance"])]
    positions = [table.index(f'data-candidate="{escape(name)}"') for name in order]
    assert positions == sorted(positions)
    assert f'data-candidate="{escape(report["best"])}" class="chosen"' in table
    trust = page[page.index('id="calibration-trust"'):]
    assert "<td>long</td>" in trust and "<td>short</td>" in trust
    html = client.get(reverse("preview:site_download", args=[preview.pk])).content.decode()   # the download has it too
    # (the parts are Bokeh Divs: their HTML is in the document's JSON, escaped)
    assert 'id=\\"calibration-table\\"' in html and 'id=\\"calibration-trust\\"' in html
    assert "&lt;table" in html and "&lt;button" not in html and "&lt;form" not in html   # no buttons to press in a file
    # apply a candidate that is parameters alone: both sides run again with its --set
    chosen = report["best"] if rows[report["best"]]["params"] and not rows[report["best"]]["inferred_limits"] \
        and not rows[report["best"]]["without_limits"] else EVERY_EVENT
    response = client.post(reverse("preview:site_calibration_apply", args=[preview.pk]), {"candidate": chosen})
    assert response.status_code == 302
    preview.refresh_from_db()
    assert preview.calibrated == {"name": chosen, "params": rows[chosen]["params"]}
    again = {run.queues: run for run in preview.experiment.runs.all() if run.queues}
    assert set(again) == {"current", "proposed"}
    assert all(run.status == "queued" and run.policy == {"preset": "slurm", "params": rows[chosen]["params"]}
               for run in again.values())
    assert again["current"].label == "current: slurm as configured, calibrated"
    assert again["proposed"].label == "proposed: my change, calibrated"
    compute(preview)
    runs = {run.queues or "recorded": run for run in preview.experiment.runs.all()}
    assert all(run.status == "done" for run in runs.values()), [run.error for run in runs.values()]
    assert mean_wait(runs["current"]) == pytest.approx(rows[chosen]["mean_wait"])   # the calibrated baseline
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="calibrated"' in page and f"The baseline is calibrated: both sides replay with <strong>{escape(chosen)}" in page
    # a later proposal runs calibrated too; "as configured" takes the parameters off again
    client.post(reverse("preview:site_propose", args=[preview.pk]), proposal_post(preview, PriorityWeightAge="2000"))
    assert preview.experiment.runs.get(queues="proposed").policy["params"] == rows[chosen]["params"]
    compute(preview)
    client.post(reverse("preview:site_calibration_apply", args=[preview.pk]), {"candidate": "as configured"})
    preview.refresh_from_db()
    assert preview.calibrated == {}
    assert all(run.policy == {"preset": "slurm", "params": {}} and not run.label.endswith("calibrated")
               for run in preview.experiment.runs.filter(queues__gt=""))


@pytest.mark.django_db
def test_a_failed_calibration_says_why_and_can_be_asked_again(alice, sacct_trace, settings):
    """Stored files the engine no longer reads (as after an engine upgrade): the calibration fails with
    one line naming file, line and key, the page says so without a traceback, and once the files
    read again it is asked again and done."""
    settings.SCHEDLAB_CALIBRATION_PHASES = 1
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    compute(preview)
    good = dict(preview.current)
    bad = {**good, "slurm.conf": good["slurm.conf"].replace("PriorityWeightFairshare=10000", "PriorityWeightFairshare=lots")}
    SitePreview.objects.filter(pk=preview.pk).update(current=bad)
    line = next(n for n, text in enumerate(bad["slurm.conf"].splitlines(), 1) if "PriorityWeightFairshare" in text)
    calibration = calibrate(client, preview)
    assert calibration.status == "failed" and calibration.report is None
    assert calibration.error.startswith(f"slurm.conf, line {line}") and "PriorityWeightFairshare" in calibration.error
    page = client.get(preview.get_absolute_url()).content.decode()
    assert f"The calibration failed: {escape(calibration.error)}" in page and "Traceback" not in page
    assert "Calibrate again" in page
    # the jobs' download needs the files too (the recorded run's reasons): one line, no traceback
    response = client.get(reverse("preview:site_jobs_csv", args=[preview.pk]))
    assert response.status_code == 409 and response.content.decode().startswith(
        f"The stored files no longer read: slurm.conf, line {line}")
    # nothing to apply from a failed one
    page = client.post(reverse("preview:site_calibration_apply", args=[preview.pk]), {"candidate": "as configured"},
                       follow=True).content.decode()
    assert "calibrate the baseline first" in page
    SitePreview.objects.filter(pk=preview.pk).update(current=good)
    calibration = calibrate(client, preview)
    assert calibration.status == "done" and calibration.report["candidates"], calibration.error


@pytest.mark.django_db
def test_asked_twice_lost_or_on_a_pbs_site_the_calibration_answers_one_line(alice, sacct_trace, settings):
    from tests.shared_data import SHARED_DATA

    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    url = reverse("preview:site_calibrate", args=[preview.pk])
    # asked again while still queued (the simulation queue busy): the new one replaces it, and the first
    # one's message, when a worker takes it, finds nothing to run
    client.post(url)
    first = SiteCalibration.objects.get()
    client.post(url)
    second = SiteCalibration.objects.get()
    assert second.pk != first.pk and second.status == "queued"
    calibrate_site_preview(first.pk)
    assert SiteCalibration.objects.get().status == "queued"
    # while a worker runs it, asking again waits for it; the page shows its progress
    SiteCalibration.objects.filter(pk=second.pk).update(status="running", progress=0.4, heartbeat_at=timezone.now())
    page = client.post(url, follow=True).content.decode()
    assert "the baseline is being calibrated already: wait for it to end or cancel it" in page
    assert SiteCalibration.objects.get().pk == second.pk
    assert 'data-progress-url="' in page and 'id="calibration-progress"' in page and "40.0" in page
    # its worker lost (no heartbeat for the runs' stale limit): failed, saying so, and asked again
    SiteCalibration.objects.filter(pk=second.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.SCHEDLAB_RUN_STALE_SECONDS + 5))
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "The calibration failed: the worker running it was lost (restarted?): calibrate again" in page
    client.post(url)
    assert SiteCalibration.objects.get().status == "queued"
    # a candidate that is not in the report, and a PBS site (no Slurm scheduler to calibrate)
    page = client.post(reverse("preview:site_calibration_apply", args=[preview.pk]), {"candidate": "luck"},
                       follow=True).content.decode()
    assert "calibrate the baseline first" in page
    trace = make_trace(alice, SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log", name="openpbs", format="pbs")
    post_pbs_site(client, trace)
    pbs = SitePreview.objects.get(kind="pbs")
    page = client.post(reverse("preview:site_calibrate", args=[pbs.pk]), follow=True).content.decode()
    assert "a PBS site has none to calibrate yet" in page and not SiteCalibration.objects.filter(site_preview=pbs).exists()
    assert 'id="calibrate"' not in client.get(pbs.get_absolute_url()).content.decode()
