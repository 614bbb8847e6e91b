"""How many simulation slots the server has: a number set by the administrator
(SCHEDLAB_SIM_SLOTS), or, with ``auto``, the processes of the simulation workers alive now.

Under ``auto`` each Celery worker that consumes the simulation queue reports its pool size when it is
ready and then every 15 seconds (report_every(); a thread of the worker's main process, so a solo worker
busy simulating still reports); it removes its report when it stops. A report older than
SCHEDLAB_RUN_STALE_SECONDS (the age at which a run's heartbeat means its worker is lost) no longer
counts. So `docker compose up --scale worker=4` with SCHEDLAB_WORKER_CONCURRENCY=2 gives 8 slots
with nothing set by hand, and a lost worker's slots stop counting within a minute. With no live
simulation worker there are no slots: runs wait in the database (their turn kept) until one comes.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import connections
from django.utils import timezone

from webapp.core.models import SimulationWorker
from webapp.core.queues import SIMULATION, queue_name

log = logging.getLogger(__name__)

FORGET_AFTER = timedelta(days=1)  # a report this old is deleted (a compose container's random hostname)


def report_every() -> float:
    """Seconds between a worker's reports: 15, or a quarter of the staleness age if that is shorter,
    so that a live worker's report never ages out between two."""
    return max(0.5, min(15.0, settings.SCHEDLAB_RUN_STALE_SECONDS / 4))


def simulation_slots() -> int:
    """Simulations that may compute at once on the whole server."""
    if settings.SCHEDLAB_SIM_SLOTS is not None:
        return settings.SCHEDLAB_SIM_SLOTS
    return live_processes()


def slots_per_user(slots: int | None = None) -> int:
    """Slots one user may hold while others wait: SCHEDLAB_SLOTS_PER_USER, else all but one."""
    if settings.SCHEDLAB_SLOTS_PER_USER is not None:
        return settings.SCHEDLAB_SLOTS_PER_USER
    return max(1, (simulation_slots() if slots is None else slots) - 1)


def live_processes() -> int:
    """The pool processes of the simulation workers whose last report is fresh."""
    cutoff = timezone.now() - timedelta(seconds=settings.SCHEDLAB_RUN_STALE_SECONDS)
    return sum(SimulationWorker.objects.filter(seen_at__gte=cutoff).values_list("processes", flat=True))


def report(hostname: str, processes: int) -> None:
    now = timezone.now()
    SimulationWorker.objects.update_or_create(hostname=hostname, defaults={"processes": processes, "seen_at": now})
    SimulationWorker.objects.filter(seen_at__lt=now - FORGET_AFTER).delete()


def withdraw(hostname: str) -> None:
    SimulationWorker.objects.filter(hostname=hostname).delete()


def consumes_simulations(queues: object) -> bool:
    """Whether a worker consuming `queues` (names) takes simulations."""
    return queue_name(SIMULATION) in queues  # type: ignore[operator]


class Reporter:
    """The thread of one worker that reports it every report_every() seconds until :meth:`stop`."""

    def __init__(self, hostname: str, processes: int, every: float | None = None) -> None:
        self.hostname, self.processes = hostname, processes
        self.every = report_every() if every is None else every
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.loop, name="simulation-slots-report", daemon=True)

    def start(self) -> None:
        """Report now (the start-up dispatch that follows counts this worker), then every `every` s."""
        self.report_once()
        self.thread.start()

    def loop(self) -> None:
        while not self.stopped.wait(self.every):
            self.report_once()

    def report_once(self) -> None:
        try:
            report(self.hostname, self.processes)
        except Exception:  # noqa: BLE001 - a busy database: the next report, well within the age
            log.warning("reporting %s's simulation slots failed; trying again in %.0f s", self.hostname,
                        self.every, exc_info=True)
        finally:
            connections.close_all()  # this thread's: held only while reporting

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=self.every + 5)
        try:
            withdraw(self.hostname)
        except Exception:  # noqa: BLE001 - its report then ages out
            log.warning("withdrawing %s's simulation slots failed", self.hostname, exc_info=True)


_reporter: Reporter | None = None


def start_reporting(hostname: str, processes: int, queues: object) -> None:
    """At a worker's start (celery's worker_ready): if it takes simulations, report it now and then
    every report_every() seconds."""
    global _reporter
    if not consumes_simulations(queues) or _reporter is not None:
        return
    _reporter = Reporter(hostname, processes)
    _reporter.start()


def stop_reporting() -> None:
    """At a worker's warm stop (celery's worker_shutdown): its slots stop counting at once."""
    global _reporter
    if _reporter is not None:
        _reporter.stop()
        _reporter = None


@worker_ready.connect
def _report_at_start(sender: object, **_: object) -> None:
    """Connected when the core app is ready (CoreConfig.ready), so before any app's tasks module's
    worker_ready receiver (the start-up dispatch of webapp.experiments.tasks), which then already
    counts this worker."""
    try:
        start_reporting(sender.hostname, sender.controller.concurrency,  # type: ignore[attr-defined]
                        sender.app.amqp.queues.consume_from)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - never keep a worker from starting
        log.exception("reporting this worker's simulation slots failed")


@worker_shutdown.connect
def _withdraw_at_stop(**_: object) -> None:
    stop_reporting()
