"""Parsing an uploaded trace in the background: thin over engine.workload."""

from __future__ import annotations

import logging
import time

from celery import shared_task

from webapp.traces.models import Trace

log = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def parse_trace(trace_id: int) -> int:
    """Full parse and clean → summary, cleaning report and the columnar cache; status ready|invalid."""
    from engine.workload import WorkloadError, cache, describe, load_workload

    trace = Trace.objects.filter(pk=trace_id, status=Trace.Status.PARSING).first()
    if trace is None:  # deleted, or already parsed by an earlier delivery of this message
        return trace_id
    started = time.monotonic()
    try:
        workload = load_workload(trace.path, procs=trace.procs, memory_unit=(trace.header or {}).get("memory_unit"))
        procs = int(workload.metadata["procs"])
        target = trace.cache_path_for(procs)
        target.parent.mkdir(parents=True, exist_ok=True)
        cache.save(workload, target)
        summary = describe(workload)
        summary["source"] = trace.name
    except WorkloadError as e:
        _finish(trace_id, Trace.Status.INVALID, error=_user_message(e, trace))
        return trace_id
    except Exception as e:  # noqa: BLE001 - users get one line, the log gets the traceback
        log.exception("parsing trace %s failed", trace_id)
        _finish(trace_id, Trace.Status.INVALID, error=f"Internal error while parsing ({type(e).__name__}); see the worker log.")
        return trace_id
    _finish(
        trace_id, Trace.Status.READY, summary=summary, procs=procs,
        cache=f"traces/{target.name}", parse_seconds=time.monotonic() - started,
    )
    return trace_id


def _finish(trace_id: int, status: str, **fields: object) -> None:
    Trace.objects.filter(pk=trace_id, status=Trace.Status.PARSING).update(status=status, **fields)


def _user_message(error: Exception, trace: Trace) -> str:
    """The engine's message, naming the trace as the user knows it instead of the storage path."""
    line = getattr(error, "line", None)
    field = getattr(error, "field", None)
    message = getattr(error, "message", None) or str(error)
    where = trace.original_name or trace.name
    where += (f", line {line}" if line else "") + (f", field {field}" if field else "")
    return f"{where}: {message}"
