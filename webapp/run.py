"""`make run`: SchedLab on one machine with no services.

SQLite and media in the data directory (SCHEDLAB_DATA_DIR, default ./var), one Celery worker on
kombu's filesystem:// broker (also in the data directory) as a subprocess, and the web server on
HOST:PORT (default 127.0.0.1:8000). The first start creates an admin account. Ctrl-C stops both.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8000"))
    if not port_free(host, port):
        print(f"error: {host}:{port} is already in use; start with another port, e.g. PORT={port + 1} make run",
              file=sys.stderr)
        return 1

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    data = Path(settings.DATA_DIR)
    for folder in (data, Path(settings.MEDIA_ROOT), Path(settings.FILE_UPLOAD_TEMP_DIR)):
        folder.mkdir(parents=True, exist_ok=True)
    print(f"SchedLab: data directory {data}")
    call_command("migrate", interactive=False, verbosity=0)
    login_hint = ensure_admin()

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    worker_log = data / "worker.log"
    children = [
        start("worker", [sys.executable, "-m", "celery", "-A", "webapp", "worker", "--beat",
                         "--schedule", str(data / "celerybeat-schedule"),
                         "--concurrency", str(settings.SCHEDLAB_WORKER_CONCURRENCY), "--loglevel", "INFO"],
              env, open(worker_log, "ab")),
        start("web", [sys.executable, "-m", "gunicorn", "webapp.wsgi", "--preload", "--bind", f"{host}:{port}",
                      "--worker-class", "gthread", "--workers", "2", "--threads", "4", "--timeout", "600",
                      "--log-level", "warning"], env, None),
    ]
    if not wait_for_port(host, port, children):
        stop(children)
        print("error: the web server did not start; see the messages above", file=sys.stderr)
        return 1
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
    print(f"\nSchedLab is running at http://{shown}:{port}/\n  {login_hint}\n"
          f"  worker log: {worker_log}\nPress Ctrl-C to stop.\n", flush=True)
    return supervise(children)


def ensure_admin() -> str:
    """Create the admin on the first start; say how to log in."""
    from django.contrib.auth import get_user_model

    User = get_user_model()
    username = os.environ.get("SCHEDLAB_ADMIN_USER", "admin")
    if User.objects.filter(is_superuser=True).exists():
        return ("log in with the admin account made on the first start "
                "(forgot the password? .venv/bin/python manage.py changepassword <user>)")
    password = os.environ.get("SCHEDLAB_ADMIN_PASSWORD")
    if password:
        User.objects.create_superuser(username, password=password)
        return f"log in as {username} with the password from SCHEDLAB_ADMIN_PASSWORD"
    password = secrets.token_urlsafe(12)
    User.objects.create_superuser(username, password=password)
    return f"log in as {username} with password {password}   (shown only this once)"


def start(name: str, command: list[str], env: dict, output) -> subprocess.Popen:  # noqa: ANN001
    # A process group of its own: Ctrl-C reaches us, and we stop the children in order.
    return subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT if output else None,
                            start_new_session=True)


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def wait_for_port(host: str, port: int, children: list[subprocess.Popen], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    target = "127.0.0.1" if host == "0.0.0.0" else host
    while time.monotonic() < deadline:
        if any(c.poll() is not None for c in children):
            return False
        try:
            with socket.create_connection((target, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def supervise(children: list[subprocess.Popen]) -> int:
    stopping = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    while not stopping:
        dead = [c for c in children if c.poll() is not None]
        if dead:
            print(f"error: a SchedLab process stopped (exit status {dead[0].returncode}); stopping the rest",
                  file=sys.stderr)
            stop(children)
            return 1
        time.sleep(0.5)
    print("\nstopping SchedLab…", flush=True)
    stop(children)
    return 0


def stop(children: list[subprocess.Popen]) -> None:
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    for child in children:
        try:
            child.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


if __name__ == "__main__":
    sys.exit(main())
