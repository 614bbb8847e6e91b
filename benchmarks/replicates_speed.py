"""Speed of a replicated comparison: HPC2N-2002, five policies x (52 weekly windows + 10 shaken copies).

    .venv/bin/python benchmarks/replicates_speed.py [--repeats 2] [--trace HPC2N.swf.gz] [--replicates weeks:52,shake:10]

The same plan as ``python -m engine compare TRACE --policies fcfs,easy,conservative,sjf,sorted-easy
--replicates weeks:52,shake:10 --jobs N``: 5 x (52 + 10) = 310 runs, the shaken copies of the whole
trace (202,871 jobs) and the weeks of its first year. The trace is read once (the parse cache) and
each policy is run once on a small sample first, so the figures are the runs and the report, not
parsing or compiling kernels. Then the plan is run with a process pool of 1 worker and of 2 (the
command line's ``--jobs``), alternately, ``--repeats`` times each; the speed-up is
min(1 worker) / min(2 workers). The runs' CPU time is printed too: on a loaded machine it is the
figure that does not depend on what else runs. The web fans the same run specs out over Celery workers; a process
pool of 1 against 2 is the honest engine-side equivalent of that fan-out (no broker, no database).
The load average is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.shared_data import SHARED_DATA  # noqa: E402
from engine import api  # noqa: E402

TRACE = "HPC2N-2002-2.2-cln.swf.gz"
POLICIES = ["fcfs", "easy", "conservative", "sjf", "sorted-easy"]
TARGET_SECONDS = 90.0


def default_trace() -> Path:
    for folder in (SHARED_DATA / "swf", Path("/work/shared/data/swf")):
        if (folder / TRACE).exists():
            return folder / TRACE
    return SHARED_DATA / "swf" / TRACE


def timed_run(workload: api.Workload, plan: dict, workers: int) -> tuple[float, dict]:
    began = time.perf_counter()
    outcomes = api.run_replicates(workload, plan, workers=workers)
    report = api.combine_replicates(plan, outcomes)
    return time.perf_counter() - began, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(default_trace()))
    parser.add_argument("--replicates", default="weeks:52,shake:10")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cpus: {os.cpu_count()}")
    began = time.perf_counter()
    workload = api.read_trace(args.trace, cache=api.parse_cache_folder())
    print(f"read {Path(args.trace).name}: {len(workload):,} jobs in {time.perf_counter() - began:.1f} s")
    plan = api.plan_replicates(workload, POLICIES, args.replicates)
    sets = ", ".join(f"{s['name']} ({s['replicates']})" for s in plan["sets"])
    print(f"plan: {len(POLICIES)} policies x {sets} = {len(plan['runs'])} runs")
    began = time.perf_counter()
    warm = api.plan_replicates(workload, POLICIES, "windows:2", days=(0, 2))
    api.run_replicates(workload, warm)
    print(f"warm-up (each policy on two small windows, kernels compiled or loaded): "
          f"{time.perf_counter() - began:.1f} s")
    seconds: dict[int, list[float]] = {1: [], 2: []}
    report: dict = {}
    for repeat in range(args.repeats):
        for workers in (1, 2):
            wall, report = timed_run(workload, plan, workers)
            seconds[workers].append(wall)
            print(f"  repeat {repeat + 1}, {workers} worker(s): {wall:.1f} s wall; the runs' own wall time summed "
                  f"{report['run_seconds']:.1f} s, their CPU time {report['run_cpu_seconds']:.1f} s "
                  f"(load average now {os.getloadavg()[0]:.2f})")
    best_one, best_two = min(seconds[1]), min(seconds[2])
    print(f"1 worker: {best_one:.1f} s; 2 workers: {best_two:.1f} s; speed-up {best_one / best_two:.2f}x "
          f"(target <= {TARGET_SECONDS:.0f} s with 2 workers: {'met' if best_two <= TARGET_SECONDS else 'MISSED'})")
    by_set: dict[str, float] = {}
    for run in report["runs"]:
        by_set[run["set"]] = by_set.get(run["set"], 0.0) + run["cpu_seconds"]
    print("the runs' CPU time by set (last measurement): " + ", ".join(f"{k} {v:.1f} s" for k, v in by_set.items()))
    longest = max(run["cpu_seconds"] for run in report["runs"])
    cpu = report["run_cpu_seconds"]
    print(f"on an idle machine the runs would take about {cpu:.1f} s with 1 worker and {max(cpu / 2, longest):.1f} s "
          f"with 2 (their CPU time, halved; an estimate, not a measurement)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
