"""The site preview's background work besides its runs (those are webapp.experiments.tasks'): the
calibration of its baseline (webapp.preview.calibration)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from webapp.preview.calibration import run_calibration


@shared_task(acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=settings.SCHEDLAB_RUN_TIME_LIMIT, time_limit=settings.SCHEDLAB_RUN_TIME_LIMIT + 60)
def calibrate_site_preview(calibration_id: int) -> int:
    run_calibration(calibration_id)
    return calibration_id
