"""A running run's progress and heartbeat: the engine's progress and should_stop
callbacks, throttled to about one database hit a second, and the page's "about … left".

The heartbeat is the worker's lease on the row: the reconcile step (webapp.experiments.tasks.reconcile)
takes a row whose heartbeat is older than
SCHEDLAB_RUN_STALE_SECONDS for one whose worker is gone, with any broker and with no supervisor.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.db import DatabaseError, connection
from django.db.models import QuerySet
from django.utils import timezone

from engine.api import countdown_text, time_left

log = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 5.0  # at least this often while the engine calls back, far below the stale limit


class Reporter:
    """Callbacks for one simulation of a row that is running: `row` is the row filtered on its
    running status (so nothing is written once it is no longer ours), `live` what must still match
    for the work to go on (default: `row`)."""

    def __init__(self, row: QuerySet, live: QuerySet | None = None, interval: float = 1.0) -> None:
        self.row = row
        self.live = live if live is not None else row
        self.interval = interval
        self.last_progress = 0.0
        self.last_check = 0.0
        self.last_beat = time.monotonic()
        self.done, self.parts = 0, 1

    def part(self, index: int, count: int) -> None:
        """The next callbacks are of simulation `index` (from 0) of `count`, for a row that runs
        several (a replicate: every policy on one window); reports its start."""
        self.done, self.parts = index, count
        self.last_progress = 0.0
        self.progress(0.0)

    def progress(self, fraction: float) -> None:
        now = time.monotonic()
        if now - self.last_progress >= self.interval:
            self.last_progress = self.last_beat = now
            overall = (self.done + min(max(float(fraction), 0.0), 1.0)) / self.parts
            self.row.update(progress=overall, heartbeat_at=timezone.now())

    def beat(self) -> None:
        """Renew the lease if HEARTBEAT_SECONDS passed (the engine's should_stop checks call it)."""
        now = time.monotonic()
        if now - self.last_beat >= HEARTBEAT_SECONDS:
            self.last_beat = now
            self.row.update(heartbeat_at=timezone.now())

    @contextmanager
    def lease(self) -> Iterator[None]:
        """Renew the lease every HEARTBEAT_SECONDS from a thread of its own while the block runs.

        The engine's callbacks do not come while a trace loads, a schedule is summarized or written, or
        a compiled kernel runs; a long one of those must not look like a lost worker to the reconcile
        step (which would hand the row to a second worker)."""
        stop = threading.Event()

        def beat_until_stopped() -> None:
            try:
                while not stop.wait(HEARTBEAT_SECONDS):
                    try:
                        self.row.update(heartbeat_at=timezone.now())
                    except DatabaseError as error:   # SQLite "database is locked" while the worker writes:
                        log.warning("lease not renewed this time (%s); trying again", error)   # next beat
            finally:
                connection.close()  # this thread's own database connection

        beater = threading.Thread(target=beat_until_stopped, name="schedlab-lease", daemon=True)
        beater.start()
        try:
            yield
        finally:
            stop.set()
            beater.join()

    def should_stop(self) -> bool:
        now = time.monotonic()
        if now - self.last_check < self.interval:
            return False
        self.last_check = now
        self.beat()
        # Stop when cancelled, or when the row is no longer ours (reconciled away meanwhile).
        return not self.live.exists()


def time_left_text(status: str, progress: float, started_at: datetime | None) -> str:
    """"about 4 min 10 s left" for running work (at its pace so far), else ""."""
    if status != "running" or started_at is None:
        return ""
    left = time_left(progress, (timezone.now() - started_at).total_seconds())
    return "" if left is None else f"about {countdown_text(left)} left"
