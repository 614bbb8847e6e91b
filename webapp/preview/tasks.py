"""The site preview's background work besides its runs (those are webapp.experiments.tasks'): the
calibration of its baseline (webapp.preview.calibration does the work; its queueing, its turn in the
server's fair queue and its cancelling are here, beside its task).

A calibration is simulation work like a run (some 80 short replays), so it waits for its owner's turn
in the fair queue of runs (webapp.experiments.fairqueue, as a registered :class:`Work`): it takes a
slot only when the dispatcher gives it one, after its owner's earlier experiments' runs, and never
ahead of another user's turn."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from webapp.experiments.fairqueue import Work, register_work
from webapp.experiments.tasks import dispatch_in_worker, dispatch_later
from webapp.preview.calibration import run_calibration, settled
from webapp.preview.models import SiteCalibration, SitePreview
from webapp.preview.services import PreviewError

Status = SiteCalibration.Status
OWNER = "site_preview__experiment__owner_id"


@shared_task(acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=settings.SCHEDLAB_RUN_TIME_LIMIT, time_limit=settings.SCHEDLAB_RUN_TIME_LIMIT + 60)
def calibrate_site_preview(calibration_id: int) -> int:
    try:
        run_calibration(calibration_id)
    finally:
        dispatch_in_worker()        # its slot is free (or it never took one): the next by turn
    return calibration_id


def start_calibration(preview: SitePreview) -> SiteCalibration:
    """Queue the calibration of ``preview`` (replacing an earlier one) for its owner's turn; PreviewError
    (one line) when it cannot be: not a Slurm site, a trace without start times, or one already under way."""
    if preview.kind != "slurm":
        raise PreviewError("calibration replays a Slurm site's scheduler: a PBS site has none to calibrate yet")
    if not (preview.experiment.trace.summary or {}).get("recorded_starts"):
        raise PreviewError("the trace records no start times: there is no recorded schedule to calibrate against")
    earlier = settled(SiteCalibration.objects.filter(site_preview=preview).first())
    if earlier is not None and earlier.status == Status.RUNNING:
        raise PreviewError("the baseline is being calibrated already: wait for it to end or cancel it"
                           if not earlier.cancel_requested else "the calibration is being cancelled: wait for it to stop")
    with transaction.atomic():
        SiteCalibration.objects.filter(site_preview=preview).delete()
        calibration = SiteCalibration.objects.create(site_preview=preview)
        dispatch_later()
    return calibration


def cancel_calibration(preview: SitePreview) -> str:
    """Cancel the preview's calibration: a queued one at once, a running one at its next progress check
    (its task then stops and marks it cancelled). Returns "cancelled", "stopping" or "ended" (nothing
    left to cancel)."""
    rows = SiteCalibration.objects.filter(site_preview=preview)
    if rows.filter(status=Status.QUEUED).update(status=Status.CANCELLED, cancel_requested=True,
                                                finished_at=timezone.now(), error="cancelled before it started"):
        dispatch_later()        # (it may have held a slot: sent, not started yet)
        return "cancelled"
    if rows.filter(status=Status.RUNNING).update(cancel_requested=True):
        return "stopping"
    return "ended"


# -- its turn in the fair queue (webapp.experiments.fairqueue.Work) ---------------------------------


def _waiting() -> Iterable[tuple[int, int, tuple]]:
    """Queued calibrations not yet sent, placed after their preview's runs among their owner's work."""
    rows = SiteCalibration.objects.filter(status=Status.QUEUED, dispatched_at__isnull=True, cancel_requested=False)
    return [(pk, owner, (experiment, math.inf, pk))
            for pk, owner, experiment in rows.values_list("pk", OWNER, "site_preview__experiment_id")]


def _holding() -> list[dict[str, Any]]:
    """Calibrations holding a slot: running with a live worker, or sent and not started yet. One whose
    worker or message was lost (no heartbeat, or not started, for the runs' stale limit) holds none:
    the page marks a lost running one failed, and a queued one can be cancelled and asked again."""
    fresh = timezone.now() - timedelta(seconds=settings.SCHEDLAB_RUN_STALE_SECONDS)
    rows = SiteCalibration.objects.filter(Q(status=Status.RUNNING, heartbeat_at__gte=fresh)
                                          | Q(status=Status.QUEUED, dispatched_at__gte=fresh, cancel_requested=False))
    return [{"status": status, "progress": progress, "started_at": started, "experiment__owner_id": owner}
            for status, progress, started, owner in rows.values_list("status", "progress", "started_at", OWNER)]


def _dispatched(users: list[int]) -> list[tuple[int, datetime]]:
    return list(SiteCalibration.objects.filter(**{f"{OWNER}__in": users}, dispatched_at__isnull=False)
                .values_list(OWNER, "dispatched_at"))


def _claim(pk: int, now: datetime) -> bool:
    return bool(SiteCalibration.objects.filter(pk=pk, status=Status.QUEUED, dispatched_at__isnull=True,
                                               cancel_requested=False).update(dispatched_at=now))


def register_calibrations() -> None:
    """Calibrations take their turns in the fair queue of runs (the app's ready())."""
    register_work(Work("calibration", _waiting, _holding, _dispatched, _claim,
                       lambda pk: calibrate_site_preview.delay(pk)))
