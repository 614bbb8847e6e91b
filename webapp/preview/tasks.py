"""The Celery task that computes a preview (webapp.preview.services.run), queueing a new one, and the
lost-work checks."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from webapp.core.broker import resend_lost
from webapp.core.tasks import enqueue
from webapp.preview.forms import PreviewForm
from webapp.preview.models import Preview
from webapp.preview.services import create_preview, run

LOST_MESSAGE = "lost in the queue: its message was lost twice (a worker holding it stopped); start it again"
WORKER_LOST = "worker lost: the worker computing it stopped (tried twice)"

log = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True, soft_time_limit=settings.SCHEDLAB_PREVIEW_TIME_LIMIT,
             time_limit=settings.SCHEDLAB_PREVIEW_TIME_LIMIT + 30)
def run_preview(preview_id: int) -> int:
    run(preview_id)
    return preview_id


def run_again(preview: Preview) -> bool:
    """The retry button of a failed preview (its message lost twice, its worker lost, a limit): queued
    again from the start, with a fresh count of re-sends."""
    changed = Preview.objects.filter(pk=preview.pk, status=Preview.Status.FAILED).update(
        status=Preview.Status.QUEUED, error="", queued_at=timezone.now(), resends=0, progress=0.0,
        started=None, heartbeat_at=None, finished=None)
    if changed:
        enqueue(run_preview, preview.pk)
    return bool(changed)


def queue_preview(owner: Any, form: PreviewForm) -> Preview:
    """A Preview from a valid PreviewForm, queued for a worker."""
    preview = create_preview(owner, form)
    enqueue(run_preview, preview.pk)
    return preview


@shared_task
def reconcile_previews() -> dict[str, int]:
    """The periodic check (beat on compose, the supervisor under `make run`). Running previews whose
    worker's lease lapsed (no heartbeat for SCHEDLAB_RUN_STALE_SECONDS: the worker or its host is
    gone) are queued again once, then failed "worker lost"; queued previews whose message the broker
    lost are sent again once, then failed "lost in the queue"."""
    stale = requeue_running(count=True, stale_seconds=settings.SCHEDLAB_RUN_STALE_SECONDS)
    messages = resend_lost(Preview.objects.filter(status=Preview.Status.QUEUED), run_preview,
                           settings.SCHEDLAB_RUN_STALE_SECONDS,
                           {"status": Preview.Status.FAILED, "finished": timezone.now(), "error": LOST_MESSAGE})
    return {**stale, "resent": messages["resent"], "lost_in_queue": messages["failed"]}


def requeue_running(count: bool = True, stale_seconds: float | None = None) -> dict[str, int]:
    """Running previews whose worker is gone, queued again at once, once; with `count` a second loss
    fails them (a preview that kills its worker). `stale_seconds=None`: every running preview (make
    run's supervisor saw its only worker stop); else those whose heartbeat is older than that."""
    counts = {"requeued": 0, "failed": 0}
    running = Preview.objects.filter(status=Preview.Status.RUNNING)
    if stale_seconds is not None:
        cutoff = timezone.now() - timedelta(seconds=stale_seconds)
        running = running.filter(Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True))
    for preview in running.only("pk", "resends", "heartbeat_at"):
        guard = Preview.objects.filter(pk=preview.pk, status=Preview.Status.RUNNING, heartbeat_at=preview.heartbeat_at)
        if count and preview.resends >= 1:
            counts["failed"] += guard.update(status=Preview.Status.FAILED, finished=timezone.now(), error=WORKER_LOST)
        elif guard.update(status=Preview.Status.QUEUED, queued_at=timezone.now(), progress=0.0,
                          resends=F("resends") + (1 if count else 0)):
            run_preview.delay(preview.pk)
            counts["requeued"] += 1
    if counts["requeued"] or counts["failed"]:
        log.warning("previews whose worker is gone: %(requeued)d queued again, %(failed)d failed", counts)
    return counts


@worker_ready.connect
def _reconcile_at_start(**_: object) -> None:
    try:
        reconcile_previews()
    except Exception:  # noqa: BLE001 - never keep a worker from starting
        log.exception("reconcile of previews at worker start failed")
