"""One user's limits where an admin set them apart from the server's defaults (settings)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Quota(models.Model):
    """Empty fields keep the server's default (SCHEDLAB_MAX_ACTIVE_RUNS, SCHEDLAB_MAX_RUNS_PER_EXPERIMENT,
    SCHEDLAB_DISK_QUOTA_BYTES); an admin fills in one to raise or lower it for this user."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, models.CASCADE, related_name="quota")
    max_active_runs = models.PositiveIntegerField(
        null=True, blank=True, help_text="Runs queued or running at once; empty: the server's default.")
    max_runs_per_experiment = models.PositiveIntegerField(
        null=True, blank=True, help_text="Runs in one experiment, sweep or study; empty: the server's default.")
    disk_bytes = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Bytes of uploads, parsed caches and results; empty: the server's default.")

    def __str__(self) -> str:
        return f"quota of {self.user}"
