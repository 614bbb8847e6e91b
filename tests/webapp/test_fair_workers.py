"""The fair shared server on real `celery worker` processes and the real Redis: a parse never waits
behind a simulation (a worker of its own), and users take turns for the simulation slots.

The workers share this test's database and media directory with the test process
(tests/webapp/real_workers.py). Redis db 13 by default (SCHEDLAB_TEST_FAIR_REDIS_URL to change it),
so that other test runs on the same Redis never take these messages. Never skipped: when Redis is
down these tests fail.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest

from tests.webapp.conftest import make_trace, synthetic_swf
from tests.webapp.real_workers import worker_cluster
from webapp.celery import app
from webapp.core.models import SimulationWorker
from webapp.core.workers import simulation_slots
from webapp.experiments.models import Run
from webapp.experiments.services import cancel_run, create_experiment
from webapp.studies.cluster import LocalCluster
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace

REDIS_URL = os.environ.get("SCHEDLAB_TEST_FAIR_REDIS_URL", "redis://127.0.0.1:6379/13")
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cluster(tmp_path, settings) -> Iterator[LocalCluster]:
    """Worker processes on this test's database and media (tmp_path/media is MEDIA_ROOT), one slot, at
    most one per user, the queues' plain names on a Redis db of their own (emptied first)."""
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER = 1, 1
    with worker_cluster(tmp_path, REDIS_URL, env={"SCHEDLAB_SIM_SLOTS": "1", "SCHEDLAB_SLOTS_PER_USER": "1"}) as rig:
        yield rig


def wait_for(what: str, condition, timeout: float = 120):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    runs = [(r.pk, r.status, r.error) for r in Run.objects.all()]
    raise AssertionError(f"timed out waiting for {what}; runs {runs}")


def status(run_id: int) -> str:
    return Run.objects.get(pk=run_id).status


def test_a_parse_is_done_by_the_quick_worker_while_the_simulation_worker_is_busy(cluster, alice, tmp_path):
    cluster.start_worker("quick", "quick")
    cluster.start_worker("simulation", "simulation")
    busy = make_trace(alice, synthetic_swf(tmp_path / "long.swf", jobs=2000))
    experiment = create_experiment(alice, name="long", trace=busy, procs=None, machine=None,
                                   policies=[{"preset": "plan1"}], load_factor=3)
    long_run = experiment.runs.get().pk
    wait_for("the long run to start", lambda: status(long_run) == "running")

    upload = make_trace(alice, synthetic_swf(tmp_path / "new.swf", jobs=3000), name="new", parse=False)
    sent = time.monotonic()
    parse_trace.delay(upload.pk)
    wait_for("the parse", lambda: Trace.objects.get(pk=upload.pk).status != "parsing", timeout=60)
    waited = time.monotonic() - sent
    assert Trace.objects.get(pk=upload.pk).status == "ready"
    # the simulation worker (one solo process) was computing the long run all along: the quick one parsed
    assert status(long_run) == "running", "the parse must not have waited for the simulation to end"
    assert waited < 30, waited
    cancel_run(Run.objects.get(pk=long_run))
    wait_for("the long run to stop", lambda: status(long_run) == "cancelled", timeout=60)


def test_users_take_turns_for_the_one_slot(cluster, alice, bob, demo_trace):
    """alice queues three runs, then bob one; one slot. First come first served would run bob's last;
    the fair queue runs it as soon as alice's first ends."""
    alices = create_experiment(alice, name="a", trace=demo_trace, procs=None, machine=None,
                               policies=[{"preset": "fcfs"}, {"preset": "easy"}, {"preset": "conservative"}])
    bobs = create_experiment(bob, name="b", trace=demo_trace, procs=None, machine=None, policies=[{"preset": "fcfs"}])
    a = list(alices.runs.order_by("position").values_list("pk", flat=True))
    b = bobs.runs.get().pk
    assert list(Run.objects.filter(dispatched_at__isnull=False).values_list("pk", flat=True)) == [a[0]]
    cluster.start_worker("simulation", "simulation")
    wait_for("every run", lambda: not Run.objects.exclude(status="done").exists(), timeout=180)
    started = list(Run.objects.order_by("started_at").values_list("pk", flat=True))
    assert started == [a[0], b, a[1], a[2]]


def pool_process_of(task_id: str) -> int:
    """The pid of the pool process running ``task_id``, as the worker reports it (inspect active)."""
    active = app.control.inspect(timeout=2.0).active() or {}
    pids = [task["worker_pid"] for tasks in active.values() for task in tasks if task["id"] == task_id]
    return pids[0] if pids else 0


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as stat:       # a zombie not reaped yet has ended too
        return stat.read().rsplit(")", 1)[1].split()[0] == "Z"


def test_cancel_revokes_the_running_task_and_the_run_can_run_again(cluster, alice, tmp_path):
    """Issue 23: cancel ends the running task's pool process (Celery's revoke on a prefork worker, as
    `make run` and compose start them), not only at the engine's next check; the run is cancelled, the
    worker takes the next task, and the run re-runs to the end."""
    from webapp.experiments.services import rerun

    cluster.start_worker("simulation", "simulation", pool="prefork")
    # plan1 at load x3 computes for seconds to a minute on 300 jobs, with fewer event instants than
    # the engine's should_stop period (1000): only the revoke can end it before it is done
    trace = make_trace(alice, synthetic_swf(tmp_path / "long.swf", jobs=300))
    experiment = create_experiment(alice, name="long", trace=trace, procs=None, machine=None,
                                   policies=[{"preset": "plan1"}], load_factor=3)
    run_id = experiment.runs.get().pk
    wait_for("the run to start", lambda: status(run_id) == "running")
    task_id = Run.objects.get(pk=run_id).task_id
    pid = wait_for("the worker to report the task", lambda: pool_process_of(task_id))
    assert not process_gone(pid)

    cancel_run(Run.objects.get(pk=run_id))
    wait_for("the run to be cancelled", lambda: status(run_id) == "cancelled", timeout=30)
    # ended by the revoke: the engine's should_stop fallback would have left the pool process alive
    wait_for("the task's pool process to end", lambda: process_gone(pid), timeout=10)
    run = Run.objects.get(pk=run_id)
    assert run.error == "cancelled" and run.progress < 1.0 and not run.result_dir.exists()
    assert wait_for("the worker to report no task", lambda: pool_process_of(task_id) == 0 or None, timeout=10)

    assert rerun(run)
    wait_for("the re-run to end", lambda: status(run_id) in ("done", "failed", "cancelled"), timeout=300)
    run = Run.objects.get(pk=run_id)
    assert run.status == "done", run.error
    assert run.task_id != task_id and run.attempts == 1 and run.summary["jobs"] == 300


@pytest.fixture
def auto_cluster(tmp_path, settings) -> Iterator[LocalCluster]:
    """As `cluster`, but nobody sets the slots (SCHEDLAB_SIM_SLOTS=auto, compose's default): they are
    the processes of the simulation workers alive; a report ages out after 8 s here (60 s by default)."""
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER, settings.SCHEDLAB_RUN_STALE_SECONDS = None, None, 8
    with worker_cluster(tmp_path, REDIS_URL, stale_seconds=8,
                        env={"SCHEDLAB_SIM_SLOTS": "auto", "SCHEDLAB_SLOTS_PER_USER": ""}) as rig:
        yield rig


def test_the_slots_are_the_live_workers_processes(auto_cluster, alice, bob, demo_trace):
    """No worker: no slot, the runs wait in their turn. One worker: one slot, users take turns. A
    second worker adds its slot; a warm stop withdraws a worker's slot at once, a kill -9 within the
    staleness age."""
    alices = create_experiment(alice, name="a", trace=demo_trace, procs=None, machine=None,
                               policies=[{"preset": "fcfs"}, {"preset": "easy"}, {"preset": "conservative"}])
    bobs = create_experiment(bob, name="b", trace=demo_trace, procs=None, machine=None, policies=[{"preset": "fcfs"}])
    a = list(alices.runs.order_by("position").values_list("pk", flat=True))
    b = bobs.runs.get().pk
    assert simulation_slots() == 0 and not Run.objects.filter(dispatched_at__isnull=False).exists()

    auto_cluster.start_worker("one", "simulation")
    wait_for("the worker's slot", lambda: simulation_slots() == 1)
    wait_for("every run", lambda: not Run.objects.exclude(status="done").exists(), timeout=180)
    assert list(Run.objects.order_by("started_at").values_list("pk", flat=True)) == [a[0], b, a[1], a[2]]

    auto_cluster.start_worker("two", "simulation")
    wait_for("the second worker's slot", lambda: simulation_slots() == 2)
    assert sorted(SimulationWorker.objects.values_list("hostname", flat=True))[0].startswith("one@")
    auto_cluster.kill_worker("one", signal.SIGTERM)
    assert simulation_slots() == 1  # withdrawn as it stopped
    auto_cluster.kill_worker("two", signal.SIGKILL)
    assert simulation_slots() == 1  # its report stands until it ages out
    killed = time.monotonic()
    wait_for("the killed worker's slot to age out", lambda: simulation_slots() == 0, timeout=30)
    assert time.monotonic() - killed <= 8 + 1
