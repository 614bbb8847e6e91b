"""Studies on real worker processes: `celery worker` processes sharing the real Redis (db 14, a
queue of their own), one PostgreSQL database (created for this module, dropped after) and one
media directory, the way several hosts share them (docs/scaleout.md).

Never skipped: if Redis or PostgreSQL is not running these tests fail (`make test` starts both).
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.webapp.conftest import synthetic_swf
from webapp.studies.cluster import LocalCluster

REDIS_URL = "redis://127.0.0.1:6379/14"
POSTGRES = os.environ.get("SCHEDLAB_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/schedlab_test").rsplit("/", 1)[0]
STALE_SECONDS = 4   # a running point without a heartbeat for this long is lost (production: 60)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A migrated database, media and a Celery queue of its own; each test starts its own workers."""
    root = tmp_path_factory.mktemp("cluster")
    name = f"schedlab_studies_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as admin:   # fails if PostgreSQL is down
        admin.execute(f'CREATE DATABASE "{name}"')
    rig = LocalCluster(root, REDIS_URL, database_url=f"{POSTGRES}/{name}", stale_seconds=STALE_SECONDS)
    try:
        rig.check_redis()          # raises (the test fails) when Redis is not running
        rig.migrate()
        yield rig
    finally:
        rig.stop()
        with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_study(cluster: LocalCluster, trace: Path, *grid: str, policies: str, wait: bool) -> dict:
    """Start a study (and with ``wait``, wait for it like the study page does, re-queueing points
    of lost workers); the command's last JSON line."""
    args = ["run_study", "--trace", str(trace), "--policies", policies, "--timeout", "240"]
    for item in grid:
        args += ["--grid", item]
    if not wait:
        args.append("--no-wait")
    return json.loads(cluster.manage(*args).stdout.strip().splitlines()[-1])


def wait_for_study(cluster: LocalCluster, study: int) -> dict:
    result = cluster.manage("run_study", "--wait-for", str(study), "--timeout", "240")
    return json.loads(result.stdout.strip().splitlines()[-1])


def runs(cluster: LocalCluster, study: int) -> list[tuple]:
    with psycopg.connect(cluster.env["DATABASE_URL"]) as db:
        return db.execute(
            "SELECT r.id, r.status, r.attempts FROM experiments_run r JOIN studies_studypoint p ON p.run_id = r.id"
            " WHERE p.study_id = %s ORDER BY r.position", (study,)).fetchall()


@pytest.mark.slow
def test_a_studys_points_all_finish_spread_over_two_worker_processes(cluster, tmp_path):
    trace = synthetic_swf(tmp_path / "small.swf", jobs=1500)
    cluster.start_worker("a")
    cluster.start_worker("b")
    outcome = run_study(cluster, trace, "load=0.8,1,1.2,1.5", policies="fcfs,easy,tss", wait=True)
    study = outcome["study"]
    cluster.stop(signal.SIGQUIT)
    assert outcome["points"] == 12 and outcome["statuses"] == {"done": 12}, outcome
    assert all(attempts == 1 for _, _, attempts in runs(cluster, study))
    done_by = [cluster.tasks_done_by("a"), cluster.tasks_done_by("b")]
    assert sum(done_by) == 12 and min(done_by) >= 1, f"the group went to one worker only: {done_by}"


@pytest.mark.slow
def test_a_killed_workers_point_is_run_again_not_lost(cluster, tmp_path):
    """SIGKILL the only worker while it simulates a point: the point's heartbeat stops, the wait
    loop's lost-worker check (the experiments app's reconcile) re-queues it once, and a new worker
    finishes it along with the rest."""
    trace = synthetic_swf(tmp_path / "long.swf", jobs=50000)   # a few seconds per point
    study = run_study(cluster, trace, "load=1,1.1", policies="easy", wait=False)["study"]
    cluster.start_worker("doomed")
    deadline = time.monotonic() + 120
    while not any(status == "running" for _, status, _ in runs(cluster, study)):
        assert time.monotonic() < deadline, "no point started"
        time.sleep(0.1)
    cluster.kill_worker("doomed")
    killed = [pk for pk, status, _ in runs(cluster, study) if status == "running"]
    assert len(killed) == 1
    cluster.start_worker("rescuer")
    outcome = wait_for_study(cluster, study)
    cluster.stop(signal.SIGQUIT)
    assert outcome["statuses"] == {"done": 2}, outcome
    attempts = {pk: a for pk, _, a in runs(cluster, study)}
    assert attempts[killed[0]] == 2          # started by the killed worker, then again by the rescuer
