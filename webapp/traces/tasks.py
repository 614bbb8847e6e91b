"""Parsing an uploaded trace in the background: thin over the engine's readers (engine.api)."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from engine.api import WorkloadError, clusters_seen, describe, error_line, trace_time_zone
from webapp.core.broker import waiting_messages
from webapp.core.limits import LIMIT_ERRORS, limit_message, memory_limit
from webapp.traces.models import Trace
from webapp.traces.signals import trace_parsed
from webapp.traces.uploads import clean_upload_temp

log = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=settings.SCHEDLAB_PARSE_TIME_LIMIT, time_limit=settings.SCHEDLAB_PARSE_TIME_LIMIT + 30)
def parse_trace(trace_id: int) -> int:
    """Full parse and clean → summary, cleaning report and the columnar cache; status ready|invalid.
    Bounded in time and memory (webapp.core.limits): past either, invalid with the limit named."""
    trace = Trace.objects.filter(pk=trace_id, status=Trace.Status.PARSING).first()
    if trace is None:  # deleted, or already parsed by an earlier delivery of this message
        return trace_id
    Trace.objects.filter(pk=trace_id, status=Trace.Status.PARSING).update(parse_started_at=timezone.now())
    started = time.monotonic()
    try:
        with memory_limit(settings.SCHEDLAB_TASK_MEMORY_BYTES):
            workload = trace.read()
            procs = int(workload.metadata["procs"])
            target = trace.cache_path_for(procs)
            summary = describe(workload)
            summary["source"] = trace.name
            summary["clusters_seen"] = clusters_seen(workload)     # None: the trace records no hosts
            zone = trace.time_zone or trace_time_zone(workload)[1]
    except WorkloadError as e:
        _finish(trace_id, Trace.Status.INVALID, error=error_line(e, name=trace.original_name or trace.name))
        return trace_id
    except LIMIT_ERRORS as e:
        log.warning("parsing trace %s stopped: %s", trace_id, type(e).__name__)
        _finish(trace_id, Trace.Status.INVALID, error=limit_message(
            e, "parsing", settings.SCHEDLAB_PARSE_TIME_LIMIT, settings.SCHEDLAB_TASK_MEMORY_BYTES))
        return trace_id
    except Exception as e:  # noqa: BLE001 - users get one line, the log gets the traceback
        log.exception("parsing trace %s failed", trace_id)
        _finish(trace_id, Trace.Status.INVALID, error=f"Internal error while parsing ({type(e).__name__}); see the worker log.")
        return trace_id
    trace.cache = f"traces/{target.name}"
    announce_parsed(trace)
    _finish(
        trace_id, Trace.Status.READY, summary=summary, procs=procs,
        cache=trace.cache, parse_seconds=time.monotonic() - started,
        time_zone=zone,
    )
    return trace_id


def announce_parsed(trace: Trace) -> None:
    """Tell the apps above, before the trace says ready (trace_parsed: the dashboards build the trace
    page's plots here, so its first visitor reads them instead of building them on a web server
    thread). Bounded like the parse; never fails it: the page then builds them when asked."""
    try:
        with memory_limit(settings.SCHEDLAB_TASK_MEMORY_BYTES):
            trace_parsed.send(sender=Trace, trace=trace)
    except Exception as e:  # noqa: BLE001 - SoftTimeLimitExceeded and MemoryError included
        log.warning("building the plots of trace %s after parsing failed (%s); the page builds them when asked",
                    trace.pk, type(e).__name__, exc_info=not isinstance(e, LIMIT_ERRORS))


def _finish(trace_id: int, status: str, **fields: object) -> None:
    Trace.objects.filter(pk=trace_id, status=Trace.Status.PARSING).update(status=status, **fields)



#: Why a trace stopped "parsing" without a result (the page offers to parse it again).
PARSE_LOST = ("Parsing was lost twice (a worker or the broker stopped, or the disk was full); nothing was "
              "kept. Parse it again with the button below, or tell the server's admin if it happens again.")


def reconcile_parsing(*, worker_gone: bool = False, count: bool = True) -> dict[str, int]:
    """Traces left "parsing" with nobody parsing them, sent again once, then failed with PARSE_LOST.

    Lost in the queue: not taken by a worker SCHEDLAB_RUN_STALE_SECONDS after it was sent, and no
    longer in the broker (a broker restart, a full disk when it was sent; traces from before these
    fields count from their upload). Lost by a worker: taken but not finished long after the parse
    time limit (the worker was killed), or at once when the caller knows the worker is gone
    (``worker_gone``; ``count=False`` when the application was stopped, not the parse's fault).
    A broker that cannot be looked into declares nothing lost in the queue."""
    now = timezone.now()
    grace = timedelta(seconds=settings.SCHEDLAB_RUN_STALE_SECONDS)
    overdue = now - timedelta(seconds=settings.SCHEDLAB_PARSE_TIME_LIMIT + 30) - grace
    waiting = waiting_messages()
    counts = {"resent": 0, "failed": 0}
    rows = Trace.objects.filter(status=Trace.Status.PARSING).only(
        "pk", "created", "parse_sent_at", "parse_started_at", "parse_resends")
    for trace in rows:
        started = trace.parse_started_at
        if started is None:
            sent = trace.parse_sent_at or trace.created
            lost = waiting is not None and sent < now - grace and (parse_trace.name, (trace.pk,)) not in waiting
        else:
            lost = worker_gone or started < overdue
        if not lost:
            continue
        guard = Trace.objects.filter(pk=trace.pk, status=Trace.Status.PARSING, parse_sent_at=trace.parse_sent_at,
                                     parse_started_at=started)
        if trace.parse_resends < 1 or not count:
            if guard.update(parse_sent_at=now, parse_started_at=None,
                            parse_resends=F("parse_resends") + (1 if count else 0)):
                parse_trace.delay(trace.pk)
                counts["resent"] += 1
        elif guard.update(status=Trace.Status.INVALID, error=PARSE_LOST):
            counts["failed"] += 1
    if counts["resent"] or counts["failed"]:
        log.warning("traces left parsing: %(resent)d sent again, %(failed)d failed", counts)
    return counts


def parse_again(trace: Trace) -> bool:
    """The retry button: an invalid trace parsing again from the start (its count of re-sends too)."""
    changed = Trace.objects.filter(pk=trace.pk, status=Trace.Status.INVALID).update(
        status=Trace.Status.PARSING, error="", parse_sent_at=timezone.now(), parse_started_at=None, parse_resends=0)
    if changed:
        parse_trace.delay(trace.pk)
    return bool(changed)


@shared_task
def reconcile_traces() -> dict[str, int]:
    """The periodic check (beat on compose, the supervisor under `make run`): lost parses, and
    leftovers of interrupted uploads."""
    counts = reconcile_parsing()
    counts["temporary_files_removed"] = len(clean_upload_temp())
    return counts


@worker_ready.connect
def _reconcile_at_start(**_: object) -> None:
    try:
        reconcile_traces()
    except Exception:  # noqa: BLE001 - never keep a worker from starting
        log.exception("reconcile of parses at worker start failed")
