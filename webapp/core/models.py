"""What the server knows of its background workers (webapp.core.workers)."""

from __future__ import annotations

from django.db import models


class SimulationWorker(models.Model):
    """A Celery worker that consumes the simulation queue, as it last reported itself: its processes
    are simulation slots while its report is fresh (SCHEDLAB_SIM_SLOTS=auto)."""

    hostname = models.CharField(max_length=255, unique=True)
    processes = models.PositiveIntegerField()
    seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.hostname} ({self.processes} processes)"
