"""The dashboards' background work: a parsed trace's page plots, built by the quick worker (a task of
its own, after the parse, so another user's parse queued meanwhile goes first)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from webapp.core.limits import memory_limit
from webapp.dashboards.views import characterization_gzip
from webapp.traces.models import Trace

log = logging.getLogger(__name__)


@shared_task(acks_late=True, soft_time_limit=settings.SCHEDLAB_PARSE_TIME_LIMIT,
             time_limit=settings.SCHEDLAB_PARSE_TIME_LIMIT + 30)
def build_trace_plots(trace_id: int) -> bool:
    """The trace page's plots into the plot cache; False when the trace is gone or not ready. A
    failure (a limit, anything) is logged, never shown: the page then builds them when asked."""
    trace = Trace.objects.filter(pk=trace_id, status=Trace.Status.READY).first()
    if trace is None or trace.cache_path is None or not trace.cache_path.exists():
        return False
    try:
        with memory_limit(settings.SCHEDLAB_TASK_MEMORY_BYTES):
            characterization_gzip(trace)
    except Exception as e:  # noqa: BLE001 - SoftTimeLimitExceeded and MemoryError included
        log.warning("building the plots of trace %s failed (%s); the page builds them when asked",
                    trace_id, type(e).__name__, exc_info=not isinstance(e, MemoryError))
        return False
    return True
