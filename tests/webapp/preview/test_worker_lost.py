"""A preview whose worker is gone (its container or host died, as on docker-compose where no supervisor
watches the workers) is found by the periodic reconcile step from its lapsed lease, the heartbeat the
worker renews while it computes: queued again once, then failed "worker lost". The dead worker is
simulated by a heartbeat ten minutes old; a live one by the real computation renewing it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from tests.shared_data import SHARED_DATA
from tests.webapp.conftest import make_trace
from webapp.core import progress as progress_module
from webapp.preview import services, tasks
from webapp.preview.models import Preview
from webapp.preview.tasks import WORKER_LOST, reconcile_previews

pytestmark = pytest.mark.django_db
WAGAP = SHARED_DATA / "metacentrum/alea"
QUEUES = "queues:\n  - {name: q, walltime: 1d}\n"


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(tasks.run_preview, "delay", lambda pk: calls.append(pk))
    return calls


@pytest.fixture
def preview(alice, demo_trace) -> Preview:
    return Preview.objects.create(owner=alice, name="p", trace=demo_trace, machine_name="m",
                                  machine_text="0\tzewura\t20\t80\t1\t529426432\n", current_name="a",
                                  current_text=QUEUES, proposed_name="b", proposed_text=QUEUES, policy="mrfs-easy")


def worker_died(preview: Preview, minutes: float = 10) -> None:
    """As if a worker started it and its host died `minutes` ago: the lease was last renewed then."""
    then = timezone.now() - timedelta(minutes=minutes)
    Preview.objects.filter(pk=preview.pk).update(status="running", started=then, heartbeat_at=then, progress=0.3)


def test_a_preview_whose_worker_renews_its_lease_is_left_alone(preview, sent):
    Preview.objects.filter(pk=preview.pk).update(status="running", started=timezone.now(), heartbeat_at=timezone.now())
    assert reconcile_previews()["requeued"] == 0 and sent == []
    assert Preview.objects.get(pk=preview.pk).status == "running"


def test_a_lapsed_lease_queues_the_preview_again_once_then_fails_it_worker_lost(preview, sent):
    worker_died(preview)
    assert reconcile_previews() == {"requeued": 1, "failed": 0, "resent": 0, "lost_in_queue": 0}
    preview.refresh_from_db()
    assert (preview.status, preview.resends, preview.progress, sent) == ("queued", 1, 0.0, [preview.pk])

    worker_died(preview)  # the second worker died too
    assert reconcile_previews()["failed"] == 1
    preview.refresh_from_db()
    assert preview.status == "failed" and preview.error == WORKER_LOST and preview.finished
    assert sent == [preview.pk]  # not sent a third time


def test_a_lease_lapses_after_the_stale_setting(preview, sent, settings):
    settings.SCHEDLAB_RUN_STALE_SECONDS = 600
    worker_died(preview, minutes=5)
    assert reconcile_previews()["requeued"] == 0
    worker_died(preview, minutes=11)
    assert reconcile_previews()["requeued"] == 1


def test_a_running_preview_from_before_leases_existed_counts_as_lost(preview, sent):
    Preview.objects.filter(pk=preview.pk).update(status="running", heartbeat_at=None)
    assert reconcile_previews()["requeued"] == 1


def test_the_periodic_check_runs_on_compose(settings):
    """docker-compose.yml runs one beat service; its schedule holds the lost-work checks, every minute,
    and the fair dispatcher, every 10 s."""
    compose = (Path(__file__).resolve().parents[3] / "docker-compose.yml").read_text()
    assert '"celery", "-A", "webapp", "beat"' in compose
    schedule = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert schedule == {"webapp.experiments.tasks.reconcile_runs": 60.0,
                        "webapp.preview.tasks.reconcile_previews": 60.0,
                        "webapp.traces.tasks.reconcile_traces": 60.0,
                        "webapp.experiments.tasks.dispatch_runs": 10.0}
    assert tasks.reconcile_previews.name == "webapp.preview.tasks.reconcile_previews"


def test_a_worker_thought_lost_stops_and_leaves_the_preview_to_the_next(preview, monkeypatch):
    """A slow worker whose lease lapsed finds the row no longer its own: it stops without failing it."""
    clock = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    Preview.objects.filter(pk=preview.pk).update(status="running")
    reporter = progress_module.Reporter(Preview.objects.filter(pk=preview.pk, status="running"))
    clock[0] += 1.1
    assert reporter.should_stop() is False
    Preview.objects.filter(pk=preview.pk).update(status="queued")  # reconciled away meanwhile
    clock[0] += 1.1
    assert reporter.should_stop() is True


def test_a_cancelled_computation_leaves_the_requeued_preview_queued(preview, monkeypatch):
    def reconciled_away_then_cancelled(row, reporter):  # noqa: ANN001, ANN202
        Preview.objects.filter(pk=row.pk).update(status="queued")
        raise services.Cancelled

    monkeypatch.setattr(services, "compute", reconciled_away_then_cancelled)
    services.run(preview.pk)
    preview.refresh_from_db()
    assert preview.status == "queued" and preview.error == ""


def test_a_computing_preview_renews_its_lease_and_reports_progress_over_its_simulations(
        alice, media_root, tmp_path, monkeypatch):
    head = tmp_path / "wagap-head.txt"
    head.write_text("".join((WAGAP / "wagap-2013.swf").read_text().splitlines(keepends=True)[:400]))
    trace = make_trace(alice, head, name="wagap head")
    machines = (WAGAP / "wagap-2013.swf.machines").read_text()
    preview = Preview.objects.create(owner=alice, name="p", trace=trace, machine_name="wagap", machine_text=machines,
                                     current_name="a", current_text=QUEUES, proposed_name="b", proposed_text=QUEUES,
                                     policy="mrfs-easy")
    seen: list[tuple[int, int, float]] = []
    part = progress_module.Reporter.part

    def recording_part(self, index: int, count: int) -> None:  # noqa: ANN001
        part(self, index, count)
        row = Preview.objects.get(pk=preview.pk)
        assert row.status == "running" and row.heartbeat_at and row.started
        seen.append((index, count, row.progress))

    monkeypatch.setattr(progress_module.Reporter, "part", recording_part)
    services.run(preview.pk)
    preview.refresh_from_db()
    assert preview.status == "done", preview.error
    # the recorded schedule, then current, proposed and the counterpart: a quarter each
    assert seen == [(0, 4, 0.0), (1, 4, 0.25), (2, 4, 0.5), (3, 4, 0.75)]
    assert preview.progress == 1.0 and preview.heartbeat_at >= preview.started


def test_a_starting_worker_checks_too(preview, sent):
    from celery.signals import worker_ready

    worker_died(preview)
    worker_ready.send(sender=None)
    preview.refresh_from_db()
    assert preview.status == "queued" and sent == [preview.pk]
