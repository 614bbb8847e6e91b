"""`make run`'s supervisor (webapp/run.py), end to end: the real application in its own data
directory and port, driven through the JSON API like a script would.

Stopping it mid-run leaves no process behind (every process that carries its data directory in its
environment is looked for in /proc, so an orphan re-parented to init is found too). A worker killed
mid-run is restarted while the web server stays up, and its run is queued again at once (long before
the heartbeat check could notice: SCHEDLAB_RUN_STALE_SECONDS is 10 minutes here).
"""

from __future__ import annotations

import os
import signal
import time
import urllib.request

import pytest

from tests.app_process import App, children_of, processes_of, wait_for
from webapp.run import group_members

pytestmark = pytest.mark.slow


@pytest.fixture
def app(tmp_path):  # noqa: ANN201
    running = App(tmp_path / "data")
    yield running
    running.stop()
    for pid in processes_of(running.data):  # never leave a test's processes behind, whatever happened
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGINT])
def test_stopping_mid_run_leaves_no_process_and_the_run_continues_next_time(app, tmp_path, signum):
    run = app.start_long_run(tmp_path)
    assert len(processes_of(app.data)) >= 5  # supervisor, worker, its pool process, gunicorn and its workers
    app.stop(signum)
    assert app.proc.returncode == 0
    time.sleep(2)  # anything orphaned would still be there (the old beat kept sending every minute)
    assert processes_of(app.data) == []
    assert app.run_row(run) == ("queued", 0)  # interrupted, not failed: the attempt is not counted
    assert "queued again" in app.log()


def test_a_killed_worker_is_restarted_and_its_run_queued_again_at_once(app, tmp_path):
    run = app.start_long_run(tmp_path)
    assert app.run_row(run) == ("running", 1)
    killed = app.worker_pid()
    os.kill(killed, signal.SIGKILL)
    wait_for("a new simulation worker", lambda: [p for p, c in children_of(app.proc.pid)
                                                 if "--hostname simulation@" in c and p != killed], timeout=60)
    assert group_members(killed) == []  # nothing of the dead worker's process group goes on
    urllib.request.urlopen(app.base + "/accounts/login/", timeout=30).close()  # the web server stayed up
    wait_for("the run to run again", lambda: app.run_row(run) == ("running", 2), timeout=120)
    assert "the simulation worker stopped (killed by SIGKILL)" in app.log() and "restarting it in 1 s" in app.log()
    assert "1 run(s) it was computing queued again" in app.log()
    log = (app.data / "worker.log").read_text()
    assert "simulation worker restarted" in log
    app.stop(signal.SIGTERM)
    assert processes_of(app.data) == []


def test_killing_the_supervisor_itself_stops_every_process_within_seconds(app, tmp_path):
    """SIGKILL (the out-of-memory killer) gives the supervisor no chance to stop anything: the kernel
    does (webapp.lifeline), down to the simulating pool process."""
    run = app.start_long_run(tmp_path)
    assert app.run_row(run) == ("running", 1)
    children = [pid for pid, _ in children_of(app.proc.pid)]
    assert len(children) == 3  # the quick worker, the simulation worker, the web server
    os.kill(app.proc.pid, signal.SIGKILL)
    app.proc.wait(timeout=10)
    killed_at = time.monotonic()
    wait_for("every process of the app to stop", lambda: processes_of(app.data) == [], timeout=15, every=0.1)
    gone_after = time.monotonic() - killed_at
    assert gone_after < 10, gone_after
    assert app.run_row(run) == ("running", 1)  # the next start queues it again (recover_interrupted)
