"""Point the project's Celery app at another broker for one test, and back afterwards.

Celery caches connections in several places (the connection pool, the producer pool, the result
backend); all of them must be dropped when the broker changes, or a later test would publish
into the previous test's broker while its worker listens on another.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any
from collections.abc import Iterator

from celery import Celery


@contextmanager
def on_broker(app: Celery, broker_url: str, result_backend: str, **conf: Any) -> Iterator[Celery]:
    keys = ("broker_url", "result_backend", "broker_transport_options", *conf)
    saved = {key: app.conf[key] for key in keys}
    app.conf.update(broker_url=broker_url, result_backend=result_backend, broker_transport_options={}, **conf)
    forget_connections(app)
    try:
        yield app
    finally:
        app.conf.update(saved)
        forget_connections(app)


def forget_connections(app: Celery) -> None:
    # Dropped, not closed: kombu keeps producer pools per broker URL, and the next test on the
    # same broker gets that pool back.
    app._pool = None
    app.amqp._producer_pool = None
    app._backend_cache = None
    app._local.backend = None
