"""`make run`: SchedLab on one machine with no services.

SQLite and media in the data directory (SCHEDLAB_DATA_DIR, default ./var), two Celery workers on
kombu's filesystem:// broker (also in the data directory) as subprocesses, and the web server on
HOST:PORT (default 127.0.0.1:8000). The first start creates an admin account.

The workers (webapp.core.queues): a quick one (SCHEDLAB_QUICK_CONCURRENCY processes, default 1) for
parsing and inferences, and a simulation one with SCHEDLAB_SIM_SLOTS processes (default and auto: one per
core), which the fair dispatcher (webapp.experiments.fairqueue) fills by user turn. The quick work
never waits behind a simulation.

This process supervises them all. Each child runs in a process group of its own, and stopping
(Ctrl-C, SIGTERM) ends every process of each group, the workers' pool processes included. A
worker that dies (the out-of-memory killer, say) is restarted after a back-off while the web server
stays up, and the work it was computing is queued again at once: this supervisor knows it is gone.
If this supervisor itself is killed (SIGKILL), the kernel stops its children (webapp.lifeline).
The lost-work check (webapp.experiments.tasks.reconcile_runs: every run's, a preview's too) runs here
every minute and the dispatcher every few seconds, so no beat process is needed.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Protocol

import django
from django.conf import settings
from django.core.management import call_command

from webapp.lifeline import child_setup
from webapp.core.queues import QUICK, SIMULATION, queue_name

STOP_GRACE = 10.0  # seconds a child has to stop on SIGTERM before its whole group is killed
CHECK_EVERY = 60.0  # seconds between lost-work checks
BACKOFF = (1, 2, 4, 8, 16, 32, 60)  # seconds before restarting a worker that died, doubling
STEADY = 60.0  # a worker that lived this long starts the back-off afresh when it dies
DISPATCH_EVERY = 5.0  # seconds between dispatches of waiting runs (also done whenever a run ends)


class Recovery(Protocol):
    """What the supervisor asks of the application (webapp.supervision) when a worker is lost or stops."""

    def recover_lost_worker(self, kind: str) -> str: ...

    def recover_interrupted(self) -> int: ...

    def check_lost_work(self) -> None: ...

    def dispatch_runs(self) -> None: ...


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8000"))
    if not port_free(host, port):
        print(f"error: {host}:{port} is already in use; start with another port, e.g. PORT={port + 1} make run",
              file=sys.stderr)
        return 1

    django.setup()   # after the port check: a busy port is reported at once, not after its ~1 s (CPU)
    from webapp import supervision   # here, not at the top: what it imports (models) loads only after django.setup()
    from webapp.core.workers import slots_per_user

    data = Path(settings.DATA_DIR)
    for folder in (data, Path(settings.MEDIA_ROOT), Path(settings.FILE_UPLOAD_TEMP_DIR)):
        folder.mkdir(parents=True, exist_ok=True)
    lock = lock_data_dir(data)
    if lock is None:
        print(f"error: another SchedLab is running on the data directory {data}; stop it first", file=sys.stderr)
        return 1
    print(f"SchedLab: data directory {data}")
    call_command("migrate", interactive=False, verbosity=0)
    login_hint = supervision.ensure_admin()
    supervision.recover_interrupted()  # left running by a previous start that did not stop cleanly

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    worker_log = data / "worker.log"
    # its simulation worker's processes are the slots (auto: they count once the worker reports them)
    simulating = settings.SCHEDLAB_SIM_SLOTS or max(1, os.cpu_count() or 1)
    workers = [worker_child(kind, concurrency, env, worker_log) for kind, concurrency in
               ((QUICK, settings.SCHEDLAB_QUICK_CONCURRENCY), (SIMULATION, simulating))]
    web = Child("web", [sys.executable, "-m", "gunicorn", "-c", "python:webapp.gunicorn_conf", "webapp.wsgi",
                        "--bind", f"{host}:{port}"], env, death_signal=signal.SIGTERM)
    for child in (*workers, web):
        child.start()
    if not wait_for_port(host, port, [*workers, web]):
        stop([*workers, web])
        print("error: the web server did not start; see the messages above", file=sys.stderr)
        return 1
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
    print(f"\nSchedLab is running at http://{shown}:{port}/\n  {login_hint}\n"
          f"  {simulating} simulation slot(s), at most {slots_per_user(simulating)} per user\n"
          f"  worker log: {worker_log}\nPress Ctrl-C to stop.\n", flush=True)
    try:
        return supervise(web, workers, supervision)
    finally:
        lock.close()


def worker_child(kind: str, concurrency: int, env: dict[str, str], log: Path) -> Child:
    """The Celery worker serving the queue of this kind (webapp.core.queues), SIGKILLed with its
    pool processes if this supervisor dies (a simulation does not stop for SIGTERM)."""
    return Child(kind, [sys.executable, "-m", "celery", "-A", "webapp", "worker", "--queues", queue_name(kind),
                        "--hostname", f"{kind}@%h", "--concurrency", str(concurrency), "--loglevel", "INFO"],
                 {**env, "SCHEDLAB_WORKER_KIND": kind}, log, death_signal=signal.SIGKILL)


class Child:
    """A command run in a new session (so a process group of its own: Ctrl-C reaches only the
    supervisor, which stops the children in order), restartable."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], log: Path | None = None,
                 death_signal: int = signal.SIGTERM) -> None:
        self.name, self.command, self.env, self.log = name, command, env, log
        self.death_signal = death_signal  # what the kernel sends it if this supervisor dies
        self.proc: subprocess.Popen | None = None
        self.started = 0.0

    def start(self) -> None:
        output: IO[bytes] | None = open(self.log, "ab") if self.log else None  # noqa: SIM115 - the child keeps it
        try:
            self.proc = subprocess.Popen(self.command, env=self.env, stdout=output,
                                         stderr=subprocess.STDOUT if output else None, start_new_session=True,
                                         preexec_fn=child_setup(os.getpid(), self.death_signal))  # noqa: PLW1509
        finally:
            if output:
                output.close()
        self.started = time.monotonic()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def exited(self) -> int | None:
        """Its exit status once it has stopped (negative: the signal that killed it), else None."""
        return self.proc.poll() if self.proc else 0

    def terminate(self) -> None:
        if self.exited() is None:
            self.proc.send_signal(signal.SIGTERM)

    def kill_group(self) -> None:
        """SIGKILL every process left in its group (pool processes, gunicorn workers, anything it
        started), then reap it. Processes of a group outlive their leader: kill them by group."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        deadline = time.monotonic() + 5
        while group_members(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # killed processes that init has yet to reap


def group_members(pgid: int) -> list[int]:
    """Pids of the live (not zombie) processes in process group `pgid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def lock_data_dir(data: Path) -> IO[str] | None:
    """An exclusive lock on the data directory (held while this process lives), or None if another
    `make run` holds it: two supervisors would each think the runs of the other's worker were lost."""
    handle = open(data / "run.lock", "w")  # noqa: SIM115 - held until the supervisor exits
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def wait_for_port(host: str, port: int, children: list[Child], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    target = "127.0.0.1" if host == "0.0.0.0" else host
    while time.monotonic() < deadline:
        if any(c.exited() is not None for c in children):
            return False
        try:
            with socket.create_connection((target, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.2)
    return False


class Restarts:
    """One worker's restarts: the back-off after each death, afresh after a steady run."""

    def __init__(self) -> None:
        self.failures = 0  # deaths in a row (each without a steady run): the back-off step
        self.restart_at: float | None = None


def supervise(web: Child, workers: list[Child], recovery: Recovery) -> int:
    stopping = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    restarts = {worker.name: Restarts() for worker in workers}
    next_check = time.monotonic() + CHECK_EVERY
    next_dispatch = time.monotonic()
    while not stopping:
        now = time.monotonic()
        if web.exited() is not None:
            print(f"error: the web server stopped ({describe(web.exited())}); stopping SchedLab", file=sys.stderr)
            stop([web, *workers])
            return 1
        for worker in workers:
            watch_worker(worker, restarts[worker.name], recovery, now)
        if now >= next_check:
            recovery.check_lost_work()
            next_check = now + CHECK_EVERY
        if now >= next_dispatch:
            recovery.dispatch_runs()
            next_dispatch = now + DISPATCH_EVERY
        time.sleep(0.25)
    print("\nstopping SchedLab…", flush=True)
    stop([web, *workers])
    interrupted = recovery.recover_interrupted()
    if interrupted:
        print(f"{interrupted} interrupted run(s) queued again; they continue at the next start",
              flush=True)
    return 0


def watch_worker(worker: Child, restarts: Restarts, recovery: Recovery, now: float) -> None:
    """A worker that stopped: its process group killed, its work queued again, restarted after the back-off."""
    if restarts.restart_at is None and worker.exited() is not None:
        restarts.failures = 0 if now - worker.started >= STEADY else restarts.failures
        delay = BACKOFF[min(restarts.failures, len(BACKOFF) - 1)]
        restarts.failures += 1
        status = describe(worker.exited())
        worker.kill_group()  # its pool processes must not go on computing lost work
        recovered = recovery.recover_lost_worker(worker.name)
        say(worker, f"the {worker.name} worker stopped ({status}); {recovered}; restarting it in {delay} s")
        restarts.restart_at = now + delay
    if restarts.restart_at is not None and now >= restarts.restart_at:
        worker.start()
        say(worker, f"{worker.name} worker restarted (pid {worker.pid})")
        restarts.restart_at = None


def stop(children: list[Child]) -> None:
    """SIGTERM to each child (gunicorn and Celery then stop their own processes); after STOP_GRACE
    seconds (a simulation does not stop for SIGTERM) every process left in their groups is killed."""
    for child in children:
        child.terminate()
    deadline = time.monotonic() + STOP_GRACE
    while any(c.exited() is None for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    for child in children:
        child.kill_group()


def describe(status: int | None) -> str:
    if status is not None and status < 0:
        return f"killed by {signal.Signals(-status).name}"
    return f"exit status {status}"


def say(worker: Child, line: str) -> None:
    """A line in this terminal and in the worker log."""
    stamped = f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] SchedLab supervisor: {line}"
    print(stamped, file=sys.stderr, flush=True)
    if worker.log:
        with open(worker.log, "a") as log:
            log.write(stamped + "\n")


if __name__ == "__main__":
    sys.exit(main())
