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
import pstats
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.lab import PASSWORD, USER, bench_user, load_text, server_time, setup_django  # noqa: E402
from benchmarks.lab import simulated_experiment, uploaded_trace  # noqa: E402
from benchmarks.shared_data import SHARED_DATA  # noqa: E402


def prepare(trace_path: Path) -> dict:
    """The ids load.py's requests use, made unless the data dir has them."""
    from django.utils import timezone

    from webapp.experiments.models import Experiment, Run
    from webapp.experiments.services import create_experiment

    user = bench_user(superuser=True)
    trace = uploaded_trace(user, trace_path)
    done = simulated_experiment(user, trace, "bench done", ["fcfs", "easy"])
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
    print(f"{args.trace}; {args.repeat} requests each; {load_text()}")
    print(f"{'request':<28} {'status':>6} {'queries':>7} {'CPU ms median':>14} {'max':>7}")
    for kind, (path, headers) in requests(ids, token).items():
        timing = server_time(client, path, headers, repeat=args.repeat)
        print(f"{kind:<28} {timing.status:>6} {timing.queries:>7} {statistics.median(timing.cpu_ms):>14.1f} "
              f"{max(timing.cpu_ms):>7.1f}")
        if args.profile == kind:
            profiler = cProfile.Profile()
            for _ in range(args.repeat):
                profiler.runcall(client.get, path, **headers)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
