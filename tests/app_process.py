"""`make run`'s application (python -m webapp.run) in a private data directory and port, and a
token-authenticated JSON API client for it: for the supervisor's end-to-end tests and the load benchmark.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

from tests.synthetic import synthetic_swf

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "app-process-password"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes_of(data_dir: Path) -> list[int]:
    """Live processes whose environment names this data directory: the app's, wherever they now hang."""
    marker = f"SCHEDLAB_DATA_DIR={data_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0") and " Z " not in (entry / "stat").read_text():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def children_of(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid == pid:
                    found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()))
            except OSError:
                continue
    return found


def wait_for(what: str, condition, timeout: float = 240, every: float = 0.5):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def multipart(path: Path, fields: dict[str, str]) -> tuple[bytes, str]:
    """An upload form's body (the file last) and its Content-Type."""
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
             for key, value in fields.items()]
    parts += [f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
              f"Content-Type: application/octet-stream\r\n\r\n".encode() + path.read_bytes() + b"\r\n",
              f"--{boundary}--\r\n".encode()]
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class App:
    """python -m webapp.run in a fresh data directory, and a token-authenticated API client for it."""

    def __init__(self, data: Path, **settings: str) -> None:
        self.data, self.port = data, free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items()
               if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "MEDIA_ROOT")}
        env.update(SCHEDLAB_DATA_DIR=str(data), PORT=str(self.port), SCHEDLAB_ADMIN_PASSWORD=PASSWORD,
                   SCHEDLAB_RUN_STALE_SECONDS="600", **settings)
        self.output = data.parent / "supervisor.log"
        self.env = env
        with open(self.output, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "webapp.run"], cwd=ROOT, env=env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        wait_for("the app to start", lambda: "is running at" in self.log() or self.proc.poll() is not None)
        assert self.proc.poll() is None, self.log()
        self.token = self.call("POST", "/api/auth/token/", {"username": "admin", "password": PASSWORD})["token"]

    def log(self) -> str:
        return self.output.read_text(errors="replace")

    def add_user(self, username: str, password: str = PASSWORD) -> str:
        """Another account on this app (manage.py in its data directory); returns its API token."""
        code = ("from django.contrib.auth import get_user_model; "
                f"get_user_model().objects.create_user({username!r}, password={password!r})")
        subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=self.env, check=True,
                       capture_output=True, timeout=120)
        return self.call("POST", "/api/auth/token/", {"username": username, "password": password}, token="")["token"]

    def add_users(self, usernames: list[str], password: str = PASSWORD) -> dict[str, str]:
        """Many accounts at once, each with an API token (one manage.py call: the token endpoint
        allows ten requests a minute from one address). Returns username -> token."""
        code = ("import json; from django.contrib.auth import get_user_model; "
                "from webapp.accounts.models import Token; User = get_user_model(); "
                f"print(json.dumps({{name: Token.create_for(User.objects.create_user(name, password={password!r}))[0] "
                f"for name in {usernames!r}}}))")
        result = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=self.env,
                                check=True, capture_output=True, text=True, timeout=600)
        return json.loads(result.stdout.strip().splitlines()[-1])

    def call(self, method: str, path: str, body: dict | None = None, *, raw: bytes | None = None,
             content_type: str = "application/json", token: str | None = None) -> dict:
        """A JSON API call as the admin, or as the account whose `token` is given."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        token = getattr(self, "token", None) if token is None else token
        if token:
            request.add_header("Authorization", f"Token {token}")
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    def upload(self, path: Path, name: str = "synthetic", token: str | None = None, wait: bool = True,
               **fields: str) -> int:
        """POST the file to /api/traces/ with the form's `fields` (shared="on", procs=...)."""
        body, content_type = multipart(path, {"name": name, **fields})
        trace = self.call("POST", "/api/traces/", raw=body, content_type=content_type, token=token)["id"]
        if wait:
            wait_for("the trace to be parsed",
                     lambda: self.call("GET", f"/api/traces/{trace}/", token=token)["status"] == "ready")
        return trace

    def start_long_run(self, tmp: Path) -> int:
        """A plan-based run (simulated annealing at every decision) of 2,000 synthetic jobs at three
        times their load: minutes of work, so it is mid-run when the test acts and would outlast any
        grace period. Returns the run id once it is running."""
        trace = self.upload(synthetic_swf(tmp / "long.swf", jobs=2000))
        experiment = self.call("POST", "/api/experiments/", {"trace": trace, "policies": [{"preset": "plan1"}],
                                                             "load_factor": 3})
        run = experiment["runs"][0]
        wait_for("the run to start", lambda: self.run_row(run)[0] == "running")
        return run

    def run_row(self, run: int) -> tuple[str, int]:
        """(status, attempts) straight from the database (the supervisor may be stopped)."""
        with sqlite3.connect(self.data / "schedlab.sqlite3", timeout=30) as db:
            return db.execute("SELECT status, attempts FROM experiments_run WHERE id = ?", (run,)).fetchone()

    def worker_pid(self, kind: str = "simulation") -> int:
        """The Celery worker of this kind (webapp.core.queues: quick or simulation) the supervisor started."""
        workers = [pid for pid, cmd in children_of(self.proc.pid)
                   if "celery" in cmd and " worker" in cmd and f"--hostname {kind}@" in cmd]
        assert len(workers) == 1, children_of(self.proc.pid)
        return workers[0]

    def stop(self, signum: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
            self.proc.wait(timeout=60)
