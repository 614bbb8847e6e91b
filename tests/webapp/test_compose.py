"""docker-compose.yml starts what `make run` starts (webapp/run.py), as services: the web server, a worker
for each queue (webapp.core.queues) and the clock of the supervisor's periodic work (beat). The stack
itself cannot run in the tests (no container engine); `docker-compose config` validates the file by hand.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import yaml
from django.conf import settings

from webapp import run, supervision
from webapp.core.queues import QUICK, SIMULATION, queue_for, queue_name

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def argument(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def workers() -> dict[str, dict]:
    """Kind (the SCHEDLAB_WORKER_KIND it sets) -> the service running `celery worker`."""
    return {service["environment"]["SCHEDLAB_WORKER_KIND"]: service for service in SERVICES.values()
            if service.get("command", [])[:4] == ["celery", "-A", "webapp", "worker"]}


def test_a_worker_for_each_queue_as_make_run_starts_them():
    kinds = workers()
    assert set(kinds) == {QUICK, SIMULATION}
    for kind, service in kinds.items():
        command = service["command"]
        assert argument(command, "--queues") == queue_name(kind)   # compose sets no queue prefix
        assert argument(command, "--hostname") == f"{kind}@%h"
        made = run.worker_child(kind, 1, {}, Path("worker.log"))   # make run's worker of that kind
        assert argument(made.command, "--queues") == queue_name(kind)
        assert made.env["SCHEDLAB_WORKER_KIND"] == kind


def test_every_task_goes_to_a_queue_a_service_serves():
    served = {argument(service["command"], "--queues") for service in workers().values()}
    tasks = [*(entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()),
             "webapp.experiments.tasks.run_simulation", "webapp.traces.tasks.parse_trace"]
    assert {queue_for(task) for task in tasks} <= served


def test_beat_does_what_the_supervisor_does_on_its_clock():
    """make run's supervisor dispatches runs and checks for lost work (runs, messages, parses, upload
    leftovers) itself; on compose one beat service sends the same tasks."""
    beat = [service for service in SERVICES.values() if service.get("command", [])[:4] == ["celery", "-A", "webapp", "beat"]]
    assert len(beat) == 1
    scheduled = {entry["task"].rsplit(".", 1)[1] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled == {"dispatch_runs", "reconcile_runs", "reconcile_traces"}
    supervisor = inspect.getsource(supervision.check_lost_work) + inspect.getsource(supervision.dispatch_runs)
    assert all(call in supervisor for call in ("reconcile()", "resend_lost()", "reconcile_traces()", "dispatch()"))


def test_the_web_server_and_its_settings():
    web = SERVICES["web"]
    assert "command" not in web                    # the image's: migrate, first admin, gunicorn (webapp/gunicorn_conf.py)
    assert "gunicorn -c python:webapp.gunicorn_conf webapp.wsgi" in (ROOT / "Dockerfile").read_text()
    environment = web["environment"]
    assert environment["REDIS_URL"] and environment["DATABASE_URL"].startswith("postgres://")
    assert environment["SCHEDLAB_SIM_SLOTS"] == "${SCHEDLAB_SIM_SLOTS:-auto}"


def test_workers_yield_the_cpu_to_the_web_server():
    """Nice values do not reach across containers (a cgroup each): CPU weights do, in make run's order
    (simulations nicest, quick work between, the web server first)."""
    kinds = workers()
    web = SERVICES["web"].get("cpu_shares", 1024)
    assert kinds[SIMULATION]["cpu_shares"] < kinds[QUICK]["cpu_shares"] < web
