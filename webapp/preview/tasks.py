"""The Celery task that computes a preview (webapp.preview.services.run), queueing a new one, and the
lost-work checks."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from webapp.core.broker import resend_lost
from webapp.core.tasks import enqueue
from webapp.preview.forms import PreviewForm
from webapp.preview.models import Preview
from webapp.preview.services import create_preview, run

LOST_MESSAGE = "lost in the queue: its message was lost twice (a worker holding it stopped); start it again"
WORKER_LOST = "worker lost: the worker computing it stopped (tried twice)"


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_preview(preview_id: int) -> int:
    run(preview_id)
    return preview_id


def queue_preview(owner: Any, form: PreviewForm) -> Preview:
    """A Preview from a valid PreviewForm, queued for a worker."""
    preview = create_preview(owner, form)
    enqueue(run_preview, preview.pk)
    return preview


@shared_task
def reconcile_previews() -> dict[str, int]:
    """Queued previews whose message the broker lost: sent again once, then failed with the reason."""
    return resend_lost(Preview.objects.filter(status=Preview.Status.QUEUED), run_preview,
                       settings.SCHEDLAB_RUN_STALE_SECONDS,
                       {"status": Preview.Status.FAILED, "finished": timezone.now(), "error": LOST_MESSAGE})


def requeue_running(count: bool = True) -> dict[str, int]:
    """Previews left running by a worker known to be gone (make run's supervisor saw it stop): queued
    again at once, once; with `count` a second loss fails them (a preview that kills its worker)."""
    counts = {"requeued": 0, "failed": 0}
    for preview in Preview.objects.filter(status=Preview.Status.RUNNING).only("pk", "resends"):
        guard = Preview.objects.filter(pk=preview.pk, status=Preview.Status.RUNNING)
        if count and preview.resends >= 1:
            counts["failed"] += guard.update(status=Preview.Status.FAILED, finished=timezone.now(), error=WORKER_LOST)
        elif guard.update(status=Preview.Status.QUEUED, queued_at=timezone.now(),
                          resends=F("resends") + (1 if count else 0)):
            run_preview.delay(preview.pk)
            counts["requeued"] += 1
    return counts
