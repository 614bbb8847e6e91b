"""What waits in the Celery broker, so that the reconcile step can tell a queued run whose message
is gone (kombu's filesystem broker loses the messages a worker held when it dies) from one that is
merely waiting its turn.
"""

from __future__ import annotations

import base64
import json
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.db.models import F, QuerySet
from django.utils import timezone

from webapp.celery import app

log = logging.getLogger(__name__)

Message = tuple[str, tuple]  # (task name, positional arguments)


def waiting_messages() -> set[Message] | None:
    """Every message waiting in the broker, or None when this broker cannot be looked into (then
    nothing is declared lost). Redis: the queue and the unacknowledged messages workers hold."""
    url = app.conf.broker_url or ""
    try:
        if url.startswith("filesystem://"):
            return _filesystem(Path(app.conf.broker_transport_options["data_folder_in"]))
        if url.startswith(("redis://", "rediss://")):
            return _redis(app)
    except Exception:  # noqa: BLE001 - an unreadable broker must never fail a run
        log.exception("could not look into the broker")
    return None


def _filesystem(folder: Path) -> set[Message] | None:
    found: set[Message] = set()
    for path in folder.glob("*.msg"):
        try:
            found.add(_message(json.loads(path.read_bytes())))
        except FileNotFoundError:
            continue  # taken by a worker meanwhile: it was there when we looked
        except (ValueError, KeyError, TypeError):
            return None  # a message being written: look again next time
    return found


def _redis(app: Any) -> set[Message]:
    """kombu's Redis layout: a list per queue and priority step, and one hash of the messages workers
    hold unacknowledged; the channel names them (key prefixes and transport options included)."""
    found: set[Message] = set()
    with app.connection_for_read() as connection:
        channel = connection.default_channel
        client = channel.client
        queues = [q.name for q in app.amqp.queues.values()] or ["celery"]
        lists = {channel._q_for_pri(queue, step) for queue in queues for step in channel.priority_steps}
        for name in lists:
            found.update(_message(json.loads(raw)) for raw in client.lrange(name, 0, -1))
        for raw in client.hvals(channel.unacked_key):
            found.add(_message(json.loads(raw)[0]))
    return found


def _message(payload: dict) -> Message:
    body = payload["body"]
    if payload.get("properties", {}).get("body_encoding") == "base64":
        body = base64.b64decode(body)
    args = json.loads(body)[0]
    return payload["headers"]["task"], tuple(args)


def resend_lost(queued: QuerySet, task: Any, grace_seconds: float, failed: dict[str, Any]) -> dict[str, int]:
    """Queued rows (a status, `queued_at`, `resends`) sent more than `grace_seconds` ago whose
    message `task(pk)` is no longer in the broker: re-send each once; the next time, update it with
    `failed` (status, error, finish time). Returns how many were re-sent and failed."""
    counts = {"resent": 0, "failed": 0}
    waiting = waiting_messages()
    if waiting is None:
        return counts
    now = timezone.now()
    for row in queued.filter(queued_at__lt=now - timedelta(seconds=grace_seconds)).only("pk", "resends", "queued_at"):
        if (task.name, (row.pk,)) in waiting:
            continue
        guard = type(row).objects.filter(pk=row.pk, status="queued", queued_at=row.queued_at)
        if row.resends < 1:
            if guard.update(resends=F("resends") + 1, queued_at=now):
                task.delay(row.pk)
                counts["resent"] += 1
        elif guard.update(**failed):
            counts["failed"] += 1
    if counts["resent"] or counts["failed"]:
        log.warning("%s: %d lost message(s) re-sent, %d failed", task.name, counts["resent"], counts["failed"])
    return counts
