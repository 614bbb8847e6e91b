"""A small cluster on one machine: Celery worker processes sharing one Redis database, one
database file and one media directory, exactly as workers on several hosts share one Redis, one
PostgreSQL and one media volume (docs/scaleout.md). Used by the scale-out benchmark and the
multi-worker tests; nothing in the web application imports it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[2]


class LocalCluster:
    """Worker processes (``celery worker``, one simulation each, ``--pool solo`` unless asked) against ``redis_url``.

    Everything else lives under ``root``: the SQLite database (``DATABASE_URL`` may point at
    PostgreSQL instead), media and the worker logs. ``manage()`` runs a management command with
    the same settings, which is how a test or benchmark creates and watches studies.
    """

    def __init__(self, root: Path, redis_url: str, *, database_url: str | None = None,
                 stale_seconds: int = 60, extra_env: dict[str, str] | None = None) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.redis_url = redis_url
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
            "SCHEDLAB_DATA_DIR": str(self.root),
            "DATABASE_URL": database_url or f"sqlite:///{self.root / 'schedlab.sqlite3'}",
            "REDIS_URL": redis_url,
            "MEDIA_ROOT": str(self.root / "media"),
            "SCHEDLAB_RUN_STALE_SECONDS": str(stale_seconds),
            "SCHEDLAB_WORKER_CONCURRENCY": "1",
            # every worker busy: as many slots as workers could ever be started here, all for one user
            "SCHEDLAB_SIM_SLOTS": "16",
            "SCHEDLAB_SLOTS_PER_USER": "16",
            # queues of its own: tasks never mix with another cluster or test run on the same Redis
            "SCHEDLAB_QUEUE_PREFIX": f"schedlab-cluster-{uuid.uuid4().hex[:12]}-",
            **(extra_env or {}),
        }
        self.env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.workers: dict[str, subprocess.Popen] = {}

    # -- services ----------------------------------------------------------------------------
    def check_redis(self) -> None:
        """Raise (redis.ConnectionError) unless Redis answers at ``redis_url``."""
        redis.Redis.from_url(self.redis_url, socket_connect_timeout=3).ping()

    def manage(self, *args: str, timeout: float = 1800, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=self.env,
                                capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed ({result.returncode}):\n"
                               f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
        return result

    def migrate(self) -> None:
        self.manage("migrate", "--noinput", timeout=300)

    # -- workers -----------------------------------------------------------------------------
    def start_worker(self, name: str, kind: str | None = None, pool: str = "solo") -> subprocess.Popen:
        """A worker serving every queue, or only the queue of `kind` (webapp.core.queues: quick, simulation),
        one task at a time in its own process (``solo``) or in one pool process (``prefork``, as
        `make run` and compose start them: a revoked task's process can be ended)."""
        log = open(self.log_path(name), "ab")
        queues = ["--queues", self.env["SCHEDLAB_QUEUE_PREFIX"] + kind] if kind else []
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "webapp", "worker", "--pool", pool, "--concurrency", "1",
             *queues, "--hostname", f"{name}@%h", "--without-gossip", "--without-mingle", "--loglevel", "INFO"],
            cwd=ROOT, env={**self.env, "SCHEDLAB_WORKER_KIND": kind or ""}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.workers[name] = process
        return process

    def log_path(self, name: str) -> Path:
        return self.root / f"worker-{name}.log"

    def tasks_done_by(self, name: str, task: str = "run_simulation") -> int:
        """Tasks named `task` (default: simulations) this worker finished, read from its log."""
        text = self.log_path(name).read_text(errors="replace") if self.log_path(name).exists() else ""
        return sum(1 for line in text.splitlines() if f"{task}[" in line and "succeeded" in line)

    def kill_worker(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Kill a worker at once (SIGKILL: no warm shutdown, its running task is abandoned)."""
        process = self.workers.pop(name)
        _signal_group(process, sig)
        process.wait(timeout=30)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop every worker started here: ``sig`` to all (SIGTERM: finish the current task first;
        SIGQUIT: at once), then kill whatever still runs after 30 s."""
        processes = [self.workers.pop(name) for name in list(self.workers)]
        for process in processes:
            _signal_group(process, sig)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait(timeout=30)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)   # the worker was started in its own session: its group is its own
    except ProcessLookupError:
        pass
