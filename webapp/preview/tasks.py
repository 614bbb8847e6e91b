"""The site preview's background work besides its runs (those are webapp.experiments.tasks'): the
calibration of its baseline (webapp.preview.calibration does the work; its queueing is here, beside its task)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import transaction

from webapp.preview.calibration import run_calibration, settled
from webapp.preview.models import SiteCalibration, SitePreview
from webapp.preview.services import PreviewError


@shared_task(acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=settings.SCHEDLAB_RUN_TIME_LIMIT, time_limit=settings.SCHEDLAB_RUN_TIME_LIMIT + 60)
def calibrate_site_preview(calibration_id: int) -> int:
    run_calibration(calibration_id)
    return calibration_id


def start_calibration(preview: SitePreview) -> SiteCalibration:
    """Queue the calibration of ``preview`` (replacing an earlier one); PreviewError (one line) when it
    cannot be: not a Slurm site, a trace without start times, or one already under way."""
    if preview.kind != "slurm":
        raise PreviewError("calibration replays a Slurm site's scheduler: a PBS site has none to calibrate yet")
    if not (preview.experiment.trace.summary or {}).get("recorded_starts"):
        raise PreviewError("the trace records no start times: there is no recorded schedule to calibrate against")
    earlier = settled(SiteCalibration.objects.filter(site_preview=preview).first())
    if earlier is not None and earlier.status == SiteCalibration.Status.RUNNING:
        raise PreviewError("the baseline is being calibrated already: wait for it to end")
    with transaction.atomic():
        SiteCalibration.objects.filter(site_preview=preview).delete()
        calibration = SiteCalibration.objects.create(site_preview=preview)
        transaction.on_commit(lambda: calibrate_site_preview.delay(calibration.pk))
    return calibration
