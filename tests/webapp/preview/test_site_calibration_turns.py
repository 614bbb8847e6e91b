"""A site preview's calibration takes its turn in the server's fair queue of runs (webapp.experiments.fairqueue,
as a registered Work: webapp.preview.tasks) and can be cancelled from the page: a queued one at once, a
running one at its next progress check; the page then says "cancelled" and it can be asked again. The
dispatcher's messages are caught where it sends them, as tests/webapp/experiments/test_fairqueue.py does."""

from __future__ import annotations

from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from engine import api
from tests.webapp.conftest import login, make_experiment
from tests.webapp.preview.test_site_preview import post_site, slurm_files
from webapp.experiments.models import Run
from webapp.experiments.tasks import dispatch, run_simulation
from webapp.preview import calibration as calibration_module
from webapp.preview.models import SiteCalibration, SitePreview
from webapp.preview.tasks import calibrate_site_preview


@pytest.fixture
def sent(settings):
    """What the dispatcher sends, in order: run pks, and ("calibration", pk); 2 slots, at most 1 per user."""
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER = 2, 1
    with mock.patch.object(run_simulation, "delay", autospec=True) as runs, \
            mock.patch.object(calibrate_site_preview, "delay", autospec=True) as calibrations:
        order: list[object] = []
        runs.side_effect = order.append
        calibrations.side_effect = lambda pk: order.append(("calibration", pk))
        yield lambda: list(order)


def finish(run_id: int) -> None:
    Run.objects.filter(pk=run_id).update(status="done", started_at=timezone.now(), finished_at=timezone.now())


@pytest.mark.django_db(transaction=True)
def test_a_calibration_waits_for_its_owners_turn_and_holds_a_slot_like_a_run(alice, bob, sacct_trace, demo_trace, sent):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    mine = list(preview.experiment.runs.order_by("position", "pk").values_list("pk", flat=True))
    assert len(mine) == 2 and sent() == mine[:1]          # alice may hold one of the two slots
    client.post(reverse("preview:site_calibrate", args=[preview.pk]))
    calibration = SiteCalibration.objects.get()
    assert calibration.status == "queued" and calibration.dispatched_at is None     # behind her own runs
    assert "waiting for its turn" in client.get(preview.get_absolute_url()).content.decode()
    theirs = list(make_experiment(bob, demo_trace, ["fcfs"] * 2, run=False).runs.values_list("pk", flat=True))
    assert sent()[1:] == theirs[:1]                        # bob's run takes the other slot at once
    finish(mine[0])
    dispatch()
    assert sent()[2:] == mine[1:]                          # alice's turn: her preview's next run first
    finish(mine[1])
    dispatch()
    assert sent()[3:] == [("calibration", calibration.pk)]   # then her calibration, in her slot
    calibration.refresh_from_db()
    assert calibration.dispatched_at is not None
    # it holds alice's slot: her next run waits while bob's next goes
    later = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get().pk
    finish(theirs[0])
    dispatch()
    assert sent()[4:] == [theirs[1]] and dispatch() == 0
    # cancelled before its worker started it: at once, and the slot it held goes to alice's run
    response = client.post(reverse("preview:site_calibration_cancel", args=[preview.pk]), follow=True)
    assert "Calibration cancelled before it started." in response.content.decode()
    calibration.refresh_from_db()
    assert calibration.status == "cancelled" and calibration.is_final
    assert sent()[5:] == [later]
    calibrate_site_preview.run(calibration.pk)             # its message, if a worker takes it: nothing to do
    assert SiteCalibration.objects.get().status == "cancelled"


@pytest.mark.django_db
def test_a_running_calibration_stops_at_its_next_progress_check_and_can_be_run_again(alice, sacct_trace, settings,
                                                                                     monkeypatch):
    """Cancelled from the page while its first replay runs, it stops at the progress check after it (one
    replay of the dozens), says "cancelled", and "Calibrate again" runs it to the end."""
    settings.SCHEDLAB_CALIBRATION_PHASES = 1
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    checks: list[float] = []

    def cancelled_during_the_first_replay(*args, progress, **kwargs):  # noqa: ANN002, ANN003, ANN202
        def reported(fraction: float) -> None:
            if not checks:
                page = client.get(preview.get_absolute_url()).content.decode()
                assert 'id="cancel-calibration"' in page and "Calibrating" in page
                client.post(reverse("preview:site_calibration_cancel", args=[preview.pk]))
            checks.append(fraction)
            progress(fraction)
        return api.calibrate_site(*args, progress=reported, **kwargs)

    monkeypatch.setattr(calibration_module, "calibrate_site", cancelled_during_the_first_replay)
    client.post(reverse("preview:site_calibrate", args=[preview.pk]))
    calibrate_site_preview(SiteCalibration.objects.get().pk)
    calibration = SiteCalibration.objects.get()
    assert len(checks) == 1 and 0 < checks[0] < 0.2        # stopped after its first replay
    assert calibration.status == "cancelled" and calibration.report is None and calibration.finished_at
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="calibration-cancelled"' in page and "cancelled" in page and "Calibrate again" in page
    assert 'id="cancel-calibration"' not in page and 'id="calibration-table"' not in page
    assert client.get(reverse("preview:site_calibration_progress", args=[preview.pk])).json()["finished"] is True
    # nothing left to cancel now
    page = client.post(reverse("preview:site_calibration_cancel", args=[preview.pk]), follow=True).content.decode()
    assert "The calibration had already ended: nothing to cancel." in page
    monkeypatch.setattr(calibration_module, "calibrate_site", api.calibrate_site)
    client.post(reverse("preview:site_calibrate", args=[preview.pk]))
    calibrate_site_preview(SiteCalibration.objects.get().pk)
    calibration = SiteCalibration.objects.get()
    assert calibration.status == "done" and calibration.report["candidates"]
    assert 'id="calibration-table"' in client.get(preview.get_absolute_url()).content.decode()


@pytest.mark.django_db
def test_only_the_owner_cancels_and_a_lost_worker_of_a_cancelled_one_ends_it_cancelled(alice, bob, sacct_trace, settings):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    client.post(reverse("preview:site_calibrate", args=[preview.pk]))
    assert login(bob).post(reverse("preview:site_calibration_cancel", args=[preview.pk])).status_code == 404
    assert SiteCalibration.objects.get().status == "queued"
    long_ago = timezone.now() - timezone.timedelta(seconds=settings.SCHEDLAB_RUN_STALE_SECONDS + 5)
    SiteCalibration.objects.update(status="running", heartbeat_at=long_ago, cancel_requested=True)
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="calibration-cancelled"' in page and SiteCalibration.objects.get().status == "cancelled"
