"""Parsing an uploaded trace in the background: thin over the engine's readers (engine.api)."""

from __future__ import annotations

import logging
import time

from celery import shared_task
from django.conf import settings

from engine.api import WorkloadError, describe, error_line, trace_time_zone
from webapp.core.limits import LIMIT_ERRORS, limit_message, memory_limit
from webapp.traces.models import Trace

log = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=settings.SCHEDLAB_PARSE_TIME_LIMIT, time_limit=settings.SCHEDLAB_PARSE_TIME_LIMIT + 30)
def parse_trace(trace_id: int) -> int:
    """Full parse and clean → summary, cleaning report and the columnar cache; status ready|invalid.
    Bounded in time and memory (webapp.core.limits): past either, invalid with the limit named."""
    trace = Trace.objects.filter(pk=trace_id, status=Trace.Status.PARSING).first()
    if trace is None:  # deleted, or already parsed by an earlier delivery of this message
        return trace_id
    started = time.monotonic()
    try:
        with memory_limit(settings.SCHEDLAB_TASK_MEMORY_BYTES):
            workload = trace.read()
            procs = int(workload.metadata["procs"])
            target = trace.cache_path_for(procs)
            summary = describe(workload)
            summary["source"] = trace.name
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
    _finish(
        trace_id, Trace.Status.READY, summary=summary, procs=procs,
        cache=f"traces/{target.name}", parse_seconds=time.monotonic() - started,
        time_zone=zone,
    )
    return trace_id


def _finish(trace_id: int, status: str, **fields: object) -> None:
    Trace.objects.filter(pk=trace_id, status=Trace.Status.PARSING).update(status=status, **fields)

