"""Scale-out of a study: one 24-point study on HPC2N-2002 with 1 worker process, then with 2.

    .venv/bin/python benchmarks/study_scaleout.py [--repeats 2] [--trace HPC2N.swf.gz]

Each measurement starts a fresh set of `celery worker --pool solo` processes (one simulation each)
of a private cluster (webapp.studies.cluster: one SQLite file, the real Redis at 127.0.0.1:6379
db 13 on a queue of its own, shared media), starts the study with `manage.py run_study` and reports
the seconds from the study's creation to its last point's end (the trace is imported before the
first measurement and reused). Grid: fcfs, easy, sorted-easy, tss × load 0.8 … 1.3 = 24 points.
Measurements alternate 1, 2, 1, 2 … workers so drift in the machine's other load hits both alike;
the speed-up is min(1 worker) / min(2 workers), the median is printed too.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webapp.studies.cluster import LocalCluster  # noqa: E402

HPC2N = ROOT.parent / "shared" / "data" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
REDIS_URL = "redis://127.0.0.1:6379/13"
POLICIES = "fcfs,easy,sorted-easy,tss"
LOADS = "load=0.8,0.9,1.0,1.1,1.2,1.3"


def measure(cluster: LocalCluster, trace: str, workers: int, run: int) -> dict:
    for i in range(workers):
        cluster.start_worker(f"r{run}-w{i + 1}")
    try:
        result = cluster.manage("run_study", "--trace", trace, "--policies", POLICIES, "--grid", LOADS,
                                "--name", f"scale-out {workers} worker(s) #{run}", "--timeout", "3600", timeout=3700)
    finally:
        cluster.stop(signal.SIGQUIT)   # at once: no comparison plots to wait for between measurements
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    if not outcome["all_done"] or outcome["points"] != 24:
        raise SystemExit(f"study did not finish cleanly: {outcome}")
    per_worker = [cluster.tasks_done_by(f"r{run}-w{i + 1}") for i in range(workers)]
    return {"workers": workers, "seconds": outcome["seconds"], "points_per_worker": per_worker}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(HPC2N))
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="study-scaleout-")), REDIS_URL)
    cluster.check_redis()
    cluster.migrate()
    results: dict[int, list[float]] = {1: [], 2: []}
    run = 0
    for _ in range(args.repeats):
        for workers in (1, 2):
            run += 1
            m = measure(cluster, args.trace, workers, run)
            results[workers].append(m["seconds"])
            print(f"run {run}: {workers} worker(s): {m['seconds']:.1f} s, points per worker {m['points_per_worker']}",
                  flush=True)
    one, two = results[1], results[2]
    print(f"\n24-point study on {Path(args.trace).name} ({POLICIES} × {LOADS}), shared 2-core machine")
    print(f"1 worker : min {min(one):.1f} s, median {statistics.median(one):.1f} s over {len(one)} runs")
    print(f"2 workers: min {min(two):.1f} s, median {statistics.median(two):.1f} s over {len(two)} runs")
    print(f"speed-up (min/min): {min(one) / min(two):.2f}x; (median/median): "
          f"{statistics.median(one) / statistics.median(two):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
