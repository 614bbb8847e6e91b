"""A private SchedLab for the page benchmarks (dashboard_speed, page_cost, replicates_page): Django set
up on its own data directory (SQLite + media, kept and reused by the next invocation), the bench user,
a trace uploaded and parsed as the web does, an experiment simulated inline as a worker would, and the
one way they time a request on the server (Django's whole stack, middleware included, in this process).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
USER, PASSWORD = "bench", "bench-password-1"


def setup_django(data_dir: Path) -> None:
    """Django on ``data_dir`` (made if missing), migrated."""
    data_dir.mkdir(parents=True, exist_ok=True)
    os.environ["SCHEDLAB_DATA_DIR"] = str(data_dir.resolve())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def bench_user(*, superuser: bool = False) -> Any:
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    existing = users.filter(username=USER).first()
    if existing is not None:
        return existing
    return (users.create_superuser if superuser else users.create_user)(USER, password=PASSWORD)


def uploaded_trace(user: Any, trace_path: Path) -> Any:
    """The user's parsed trace of that file: stored and parsed as an upload is, unless already there."""
    from django.conf import settings

    from webapp.traces.models import Trace
    from webapp.traces.tasks import parse_trace
    from webapp.traces.uploads import hash_and_measure

    sha, compressed = hash_and_measure(trace_path, trace_path.name)
    trace = Trace.objects.filter(owner=user, sha256=sha, status=Trace.Status.READY).first()
    if trace is not None:
        return trace
    relative = f"traces/{sha}.swf" + (".gz" if compressed else "")
    target = Path(settings.MEDIA_ROOT) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(trace_path.read_bytes())
    trace = Trace.objects.create(owner=user, name=trace_path.name, sha256=sha, file=relative,
                                 original_name=trace_path.name, size_bytes=target.stat().st_size)
    started = time.perf_counter()
    parse_trace(trace.pk)
    trace.refresh_from_db()
    print(f"parsed {trace_path.name}: {trace.status}, {time.perf_counter() - started:.1f} s")
    return trace


def simulated_experiment(user: Any, trace: Any, name: str, policies: list[str], **options: Any) -> Any:
    """The user's experiment ``name`` with every run done: reused when the data dir has it, else created
    (``options`` go to create_experiment, e.g. with_recorded=True) and each run simulated inline."""
    from webapp.experiments.models import Experiment, Run
    from webapp.experiments.services import create_experiment
    from webapp.experiments.tasks import run_simulation

    existing = Experiment.objects.filter(owner=user, name=name).first()
    if existing is not None and all(run.status == Run.Status.DONE for run in existing.runs.all()):
        print(f"reusing experiment {existing.pk} from the data dir")
        return existing
    experiment = create_experiment(user, name=name, trace=trace, procs=None, machine=None,
                                   policies=[{"preset": p} for p in policies], **options)
    for run in experiment.runs.order_by("position"):
        started = time.perf_counter()
        run_simulation(run.pk)
        run.refresh_from_db()
        print(f"simulated {run.label}: {run.status} in {time.perf_counter() - started:.1f} s {run.error}")
    return experiment


@dataclass(frozen=True)
class ServerTime:
    """Requests of one URL: the status and size of the first, the SQL queries of a warm one, and per
    request the wall seconds and the CPU milliseconds of this process (CPU time does not depend on what
    else the machine runs; wall time does)."""

    status: int
    size: int
    queries: int
    wall: list[float]
    cpu_ms: list[float]

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu_ms)


def server_time(client: Any, path: str, headers: dict[str, str] | None = None, *, repeat: int = 3,
                warm: bool = True) -> ServerTime:
    """Time ``repeat`` GETs of ``path`` with Django's test client. ``warm``: one unmeasured request
    first (caches, plots, templates: what a second visitor finds); else the first request is measured
    too (cold: what the first visitor waits for) and its size and status are reported."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    headers = headers or {}
    wall: list[float] = []
    cpu: list[float] = []

    def timed() -> Any:
        started, cpu_started = time.perf_counter(), time.process_time()
        response = client.get(path, **headers)
        wall.append(time.perf_counter() - started)
        cpu.append((time.process_time() - cpu_started) * 1000)
        return response

    first = client.get(path, **headers) if warm else timed()
    with CaptureQueriesContext(connection) as queries:
        client.get(path, **headers)
    count = len(queries)     # now: the next request empties Django's query log
    for _ in range(repeat - (0 if warm else 1)):
        timed()
    return ServerTime(first.status_code, len(first.content), count, wall, cpu)


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"
