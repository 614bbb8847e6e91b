"""The Celery task that computes a preview (webapp.preview.services.run), and queueing a new one."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from webapp.core.tasks import enqueue
from webapp.preview.forms import PreviewForm
from webapp.preview.models import Preview
from webapp.preview.services import create_preview, run


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_preview(preview_id: int) -> int:
    run(preview_id)
    return preview_id


def queue_preview(owner: Any, form: PreviewForm) -> Preview:
    """A Preview from a valid PreviewForm, queued for a worker."""
    preview = create_preview(owner, form)
    enqueue(run_preview, preview.pk)
    return preview
