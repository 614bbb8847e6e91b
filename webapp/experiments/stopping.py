"""Stopping running runs: the cancel flag for the engine's check, and Celery's revoke for the task.

A cancelled run's task is revoked with ``terminate``: where the worker's pool can end one task
(prefork, Celery's default: the workers of `make run` and compose), its pool process is ended at
once and the worker marks the run cancelled (webapp.experiments.tasks, ``task_revoked``). Where it
cannot (a solo or thread pool), or the broadcast is lost, the run stops at the engine's next
``should_stop`` check (about a second): that check stays as the fallback.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import QuerySet

from webapp.experiments.models import Run

log = logging.getLogger(__name__)

#: the signal that ends a revoked run's pool process (the pool processes reset SIGTERM to its
#: default, so it ends them at once, also inside compiled simulation code)
STOP_SIGNAL = "SIGTERM"


def stop_running(runs: QuerySet[Run]) -> int:
    """Ask the running runs of ``runs`` to stop: flag them (the engine's check) and, once the
    current transaction commits, revoke their tasks. Returns how many were running."""
    running = runs.filter(status=Run.Status.RUNNING)
    with transaction.atomic():
        task_ids = [t for t in running.values_list("task_id", flat=True) if t]
        count = running.update(cancel_requested=True)
    if task_ids:
        transaction.on_commit(lambda: revoke(task_ids))
    return count


def revoke(task_ids: list[str]) -> None:
    """Broadcast the revoke to every worker; never fails the cancel (the flag is already set)."""
    from webapp.celery import app
    try:
        app.control.revoke(task_ids, terminate=True, signal=STOP_SIGNAL)
    except Exception:  # noqa: BLE001 - the run stops at its next should_stop check instead
        log.warning("revoking tasks %s failed; they stop at their next check", task_ids, exc_info=True)
