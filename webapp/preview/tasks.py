"""The Celery task that computes a preview (see webapp.preview.services.run)."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_preview(preview_id: int) -> int:
    from webapp.preview.services import run

    run(preview_id)
    return preview_id
