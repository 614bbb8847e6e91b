"""Real `celery worker` processes for one test, on this test's own database and media and a Redis db of
their own: the set-up the tests with real workers share (test_fair_workers.py, traces/
test_lost_parse_worker.py).

The workers reach the very database the test process uses, whatever its engine: the test SQLite file,
or on PostgreSQL (DATABASE_URL, tests/webapp/test_postgres.py) the test database pytest-django made
(`test_...`). They see the test's rows only once committed: use `django_db(transaction=True)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.db import connection

from tests.celery_broker import on_broker
from webapp.celery import app
from webapp.studies.cluster import LocalCluster


def worker_database_url() -> str:
    """A DATABASE_URL naming the database this test process is connected to (its test database)."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    if db["ENGINE"] == "django.db.backends.postgresql":
        credentials = quote(db["USER"] or "", safe="") + (f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else "")
        host = f"{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}"
        return f"postgres://{credentials}{'@' if credentials else ''}{host}/{quote(db['NAME'], safe='')}"
    raise AssertionError(f"real workers on {db['ENGINE']}: no DATABASE_URL known for it")


@contextmanager
def worker_cluster(root: Path, redis_url: str, *, stale_seconds: int = 60,
                   env: dict[str, str] | None = None) -> Iterator[LocalCluster]:
    """Workers sharing this test's database and media (`root`/media is MEDIA_ROOT in the tests) on
    `redis_url`, emptied first; the queues' plain names; this process's Celery app sends there too.
    Every worker still running is stopped at the end."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()   # fails (the test fails) when Redis is down
    rig = LocalCluster(root, redis_url, database_url=worker_database_url(), stale_seconds=stale_seconds,
                       extra_env={"SCHEDLAB_QUEUE_PREFIX": "", **(env or {})})
    with on_broker(app, redis_url, redis_url):
        try:
            yield rig
        finally:
            rig.stop()
