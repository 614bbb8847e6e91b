"""What each page of the load benchmark (benchmarks/load.py) costs the web server per request: CPU
milliseconds and SQL queries, through Django's whole stack (middleware included) in this process.

    .venv/bin/python benchmarks/page_cost.py [--trace KTH-SP2-1996-2.1-cln.swf.gz] [--repeat 30]
                                              [--data-dir DIR] [--profile "experiment page"]

Sets up a private SchedLab (SQLite + media in --data-dir, kept and reused on the next invocation):
the trace parsed, an experiment (fcfs, easy) simulated inline, as load.py does, and a second
experiment left running (progress 40 %) so that pages show work in progress. Then each kind of
request is sent once to warm caches (the comparison plots are built then, as the worker's prebuild
would) and `--repeat` times measured: CPU ms (time.process_time) median and max, and the number of
SQL queries. `--profile KIND` prints cProfile's top functions for that kind. CPU time does not depend
on what else the machine runs; the load average is printed beside it anyway.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.shared_data import SHARED_DATA  # noqa: E402

USER, PASSWORD = "bench", "bench-password-1"


def setup_django(data_dir: Path) -> None:
    os.environ["SCHEDLAB_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def prepare(trace_path: Path) -> dict:
    """The ids load.py's requests use, made unless the data dir has them."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from webapp.experiments.models import Experiment, Run
    from webapp.experiments.services import create_experiment
    from webapp.experiments.tasks import run_simulation
    from webapp.traces.models import Trace
    from webapp.traces.tasks import parse_trace
    from webapp.traces.uploads import hash_and_measure

    users = get_user_model().objects
    user = users.filter(username=USER).first() or users.create_superuser(USER, password=PASSWORD)
    sha, compressed = hash_and_measure(trace_path, trace_path.name)
    trace = Trace.objects.filter(owner=user, sha256=sha, status=Trace.Status.READY).first()
    if trace is None:
        relative = f"traces/{sha}.swf" + (".gz" if compressed else "")
        target = Path(settings.MEDIA_ROOT) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(trace_path.read_bytes())
        trace = Trace.objects.create(owner=user, name=trace_path.name, sha256=sha, file=relative,
                                     original_name=trace_path.name, size_bytes=target.stat().st_size)
        parse_trace(trace.pk)
        trace.refresh_from_db()
    done = Experiment.objects.filter(owner=user, name="bench done").first()
    if done is None or any(r.status != Run.Status.DONE for r in done.runs.all()):
        done = create_experiment(user, name="bench done", trace=trace, procs=None, machine=None,
                                 policies=[{"preset": "fcfs"}, {"preset": "easy"}])
        for run in done.runs.all():
            run_simulation(run.pk)
    running = Experiment.objects.filter(owner=user, name="bench running").first() or create_experiment(
        user, name="bench running", trace=trace, procs=None, machine=None, policies=[{"preset": "plan1"}])
    now = timezone.now()
    running.runs.update(status=Run.Status.RUNNING, progress=0.4, started_at=now, heartbeat_at=now)
    return {"user": user, "trace": trace.pk, "experiment": done.pk}


def requests(ids: dict, token: str) -> dict[str, tuple[str, dict]]:
    from webapp.dashboards.comparison import plot_names

    auth = {"HTTP_AUTHORIZATION": f"Token {token}", "HTTP_ACCEPT": "application/json"}
    experiment = ids["experiment"]
    kinds = {
        "trace list": ("/traces/", {}),
        "experiment page": (f"/experiments/{experiment}/", {}),
        "comparison page": (f"/dashboards/experiments/{experiment}/", {}),
        "API experiment": (f"/api/experiments/{experiment}/", auth),
        "API traces": ("/api/traces/", auth),
    }
    for name in plot_names(False, False, 2):
        if name != "metrics":
            kinds[f"plot {name}"] = (f"/dashboards/experiments/{experiment}/plots/{name}.json",
                                     {"HTTP_ACCEPT": "application/json", "HTTP_ACCEPT_ENCODING": "gzip"})
    return kinds


def measure(client, path: str, headers: dict, repeat: int) -> tuple[list[float], int, int]:  # noqa: ANN001
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    status = client.get(path, **headers).status_code  # warm: caches, plots, template loading
    with CaptureQueriesContext(connection) as queries:
        client.get(path, **headers)
    count = len(queries)  # now: the next request empties Django's query log
    times = []
    for _ in range(repeat):
        started = time.process_time()
        client.get(path, **headers)
        times.append((time.process_time() - started) * 1000)
    return times, count, status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", default="KTH-SP2-1996-2.1-cln.swf.gz", help="a file in the shared data's swf/")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "schedlab-page-cost")
    parser.add_argument("--profile", metavar="KIND", help="cProfile one kind of request (e.g. 'experiment page')")
    args = parser.parse_args()
    setup_django(args.data_dir)
    from django.test import Client

    ids = prepare(SHARED_DATA / "swf" / args.trace)
    client = Client()
    client.force_login(ids["user"])
    response = client.post("/api/auth/token/", json.dumps({"username": USER, "password": PASSWORD}),
                           content_type="application/json")
    token = response.json()["token"]
    load = os.getloadavg()
    print(f"{args.trace}; {args.repeat} requests each; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"({os.cpu_count()} CPUs)")
    print(f"{'request':<28} {'status':>6} {'queries':>7} {'CPU ms median':>14} {'max':>7}")
    for kind, (path, headers) in requests(ids, token).items():
        times, queries, status = measure(client, path, headers, args.repeat)
        print(f"{kind:<28} {status:>6} {queries:>7} {statistics.median(times):>14.1f} {max(times):>7.1f}")
        if args.profile == kind:
            profiler = cProfile.Profile()
            for _ in range(args.repeat):
                profiler.runcall(client.get, path, **headers)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
