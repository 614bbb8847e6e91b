"""The web server's processes and threads, the one place for them: `make run` (webapp.run) and the docker
image both start ``gunicorn -c python:webapp.gunicorn_conf webapp.wsgi``.

- ``SCHEDLAB_WEB_WORKERS`` processes (default: one per core, at least 2, at most 8). A request computes
  in Python, one thread at a time per process (the GIL), so more processes than cores only add memory.
- ``SCHEDLAB_WEB_THREADS`` threads in each (default 8). A thread is held for a whole request, and a
  first request for a plot holds it while the plot is built (seconds under load; one build at a time
  per process, webapp.dashboards.plot_cache): with 8 threads a page or a download never waits for a
  free thread behind those builds (with 4, measured by benchmarks/load.py, it waited seconds).
- Preloaded (Django and the plotting stack imported once, before the fork), a 600 s timeout (a large
  upload on a slow link), warnings only in the log (each 500 is logged by Django itself).

No import of Django here: gunicorn reads this file before it loads the application.
"""

from __future__ import annotations

import os


def env_count(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return max(1, int(value)) if value else default


def default_workers(cores: int | None = None) -> int:
    cores = cores if cores is not None else (os.cpu_count() or 1)
    return min(max(2, cores), 8)


workers = env_count("SCHEDLAB_WEB_WORKERS", default_workers())
threads = env_count("SCHEDLAB_WEB_THREADS", 8)
worker_class = "gthread"
preload_app = True
timeout = 600
loglevel = "warning"
