"""Two users on one `make run` server: does the second get served while the first keeps it busy?

    .venv/bin/python benchmarks/shared_server.py [--heavy-trace CTC-SP2-1996-3.1-cln.swf.gz]
                                                  [--light-trace KTH-SP2-1996-2.1-cln.swf.gz]

Starts the application exactly as `make run` does (python -m webapp.run: a quick worker, a simulation
worker with one process per core, the fair dispatcher, SQLite, the filesystem broker) in a temporary
data directory with its default settings. User A (the admin) uploads the heavy trace and queues six
heavy runs on it (plan-based and conservative backfilling, two experiments). Once A's first run
computes, user B uploads the light trace and, once it is parsed, queues one FCFS run.

Prints how long B's upload took to be parsed (target: within 20 s) and B's run to be done from its
submission (target: within 60 s), what A's runs were doing meanwhile, B's place in the queue as the
page showed it, the machine's cores and load average. Nothing is timed as a test; the figures depend
on the machine (CPU, other load).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.shared_data import SHARED_DATA  # noqa: E402
from tests.app_process import App, processes_of, wait_for  # noqa: E402

HEAVY = [  # plan-based runs first: they hold their slot for minutes
    ("A: plan-based and conservative", [{"preset": "plan1"}, {"preset": "plan2"}, {"preset": "plan3"},
                                        {"preset": "conservative"}], 1.0),
    ("A: the same at a higher load", [{"preset": "plan1"}, {"preset": "conservative"}], 1.3),
]
PARSE_TARGET, RUN_TARGET = 20.0, 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heavy-trace", default="CTC-SP2-1996-3.1-cln.swf.gz")
    parser.add_argument("--light-trace", default="KTH-SP2-1996-2.1-cln.swf.gz")
    parser.add_argument("--slots-per-user", type=int, default=None,
                        help="SCHEDLAB_SLOTS_PER_USER (default: the server's, all slots but one); "
                             "all the slots shows what the headroom buys: B then waits for one of A's runs")
    args = parser.parse_args()
    heavy, light = SHARED_DATA / "swf" / args.heavy_trace, SHARED_DATA / "swf" / args.light_trace
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # `timeout` stops it: the app is stopped too (finally)
    print(f"machine: {os.cpu_count()} cores, load average before {os.getloadavg()[0]:.2f}"
          + (f"; SCHEDLAB_SLOTS_PER_USER={args.slots_per_user}" if args.slots_per_user else ""))
    with tempfile.TemporaryDirectory(prefix="schedlab-shared-") as tmp:
        settings = {"SCHEDLAB_SLOTS_PER_USER": str(args.slots_per_user)} if args.slots_per_user else {}
        app = App(Path(tmp) / "data", **settings)
        try:
            return measure(app, heavy, light)
        finally:
            app.stop()
            left = processes_of(app.data)
            if left:
                print(f"warning: {len(left)} process(es) of the app still running: {left}")


def measure(app: App, heavy: Path, light: Path) -> int:
    started = time.monotonic()
    heavy_trace = app.upload(heavy, "A's heavy trace")
    print(f"A: {heavy.name} parsed in {time.monotonic() - started:.1f} s (nobody else on the server)")
    a_runs: list[int] = []
    for name, policies, load in HEAVY:
        body = {"trace": heavy_trace, "policies": policies, "load_factor": load, "name": name}
        a_runs += app.call("POST", "/api/experiments/", body)["runs"]
    wait_for("A's first run to compute", lambda: app.run_row(a_runs[0])[0] == "running", timeout=120)
    print(f"A: {len(a_runs)} heavy runs queued; the first is computing")

    bob = app.add_user("bob")
    sent = time.monotonic()
    light_trace = app.upload(light, "B's trace", token=bob, wait=False)
    wait_for("B's trace", lambda: app.call("GET", f"/api/traces/{light_trace}/", token=bob)["status"] != "parsing",
             timeout=600, every=0.1)
    parsed = time.monotonic() - sent
    status = app.call("GET", f"/api/traces/{light_trace}/", token=bob)["status"]
    print(f"B: {light.name} uploaded and {status} after {parsed:.1f} s (target {PARSE_TARGET:.0f} s)")
    a_states = [app.run_row(r)[0] for r in a_runs]

    submitted = time.monotonic()
    experiment = app.call("POST", "/api/experiments/", {"trace": light_trace, "policies": [{"preset": "fcfs"}]},
                          token=bob)
    run = experiment["runs"][0]
    seen: list[str] = []

    def b_done() -> bool:
        row = app.call("GET", f"/api/experiments/{experiment['id']}/", token=bob)["runs"][0]
        if row["time_left"] and row["time_left"] not in seen:
            seen.append(row["time_left"])
        return row["status"] in ("done", "failed", "cancelled")

    wait_for("B's run", b_done, timeout=1800, every=0.2)
    done = time.monotonic() - submitted
    print(f"B: FCFS run {app.run_row(run)[0]} {done:.1f} s after submission (target {RUN_TARGET:.0f} s)")
    print(f"   the page said: {'; '.join(seen) or '(done before the first look)'}")
    print(f"A's runs while B was served: {', '.join(a_states)}; now: "
          f"{', '.join(app.run_row(r)[0] for r in a_runs)}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    verdict = parsed <= PARSE_TARGET and done <= RUN_TARGET
    print(f"{'MET' if verdict else 'MISSED'}: B parsed within {PARSE_TARGET:.0f} s and served within "
          f"{RUN_TARGET:.0f} s while A's heavy runs occupied the server")
    return 0


if __name__ == "__main__":
    sys.exit(main())
