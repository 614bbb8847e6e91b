"""DBF's simulation time against conservative backfilling on the same trace, in one run.

    .venv/bin/python benchmarks/dbf_speed.py [TRACE] [--fraction 0.4] [--days FROM:TO] [--repeat 3]

Both policies simulate the same workload (the paper's preprocessing, the same deadline jobs: the
fraction and seed are workload options, so conservative sees them too and simply ignores them).
Runs alternate (dbf, conservative, dbf, ...) so that load from other users of the machine hits
both alike; prints every time, the min and median of each and the ratio DBF / conservative of the
minimums (the paper reports about 1.25x; the target is at most 1.5x). Simulation time is the
engine's own ``wall_seconds`` (event loop only: no parsing, no metrics). A warm-up run of each
compiles the numba kernels first.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from engine.run import simulate
from engine.workload import load_workload
from engine.workload.window import parse_days, select_days

DEFAULT_TRACE = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "SDSC-DS-2004-2.1-cln.swf.gz"
POLICIES = ("dbf", "conservative")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    parser.add_argument("--fraction", type=float, default=0.4, help="share of deadline jobs (default 0.4)")
    parser.add_argument("--days", help="only jobs submitted in that window (FROM:TO days)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    workload = load_workload(args.trace)
    if args.days:
        workload = select_days(workload, *parse_days(args.days))
    capacity = int(workload.metadata["procs"])
    params = {"deadline_fraction": args.fraction, "drop_interactive": True}
    times: dict[str, list[float]] = {p: [] for p in POLICIES}
    for policy in POLICIES:   # warm-up: numba compilation or cache load
        simulate(workload, capacity, {"preset": policy, "params": params}, seed=args.seed)
    jobs = 0
    for _ in range(args.repeat):
        for policy in POLICIES:
            result = simulate(workload, capacity, {"preset": policy, "params": params}, seed=args.seed)
            times[policy].append(result.meta["wall_seconds"])
            jobs = len(result.schedule)
    print(f"trace {Path(args.trace).name}, {jobs:,} jobs, {capacity} processors, "
          f"deadline fraction {args.fraction:g}, seed {args.seed}, days {args.days or 'all'}")
    for policy in POLICIES:
        runs = times[policy]
        print(f"  {policy:<13} min {min(runs):7.2f} s   median {statistics.median(runs):7.2f} s   "
              f"runs {', '.join(f'{t:.2f}' for t in runs)}")
    ratio = min(times["dbf"]) / min(times["conservative"])
    print(f"  DBF / conservative (min): {ratio:.2f}x   (paper: about 1.25x; target <= 1.5x)")


if __name__ == "__main__":
    main()
