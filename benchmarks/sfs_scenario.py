"""The SFS paper's §9 scenario under its four configurations, and SFS's speed on a real trace.

Part 1 runs linear priority and Simultaneous Fair-Share, each with the eligible-time dominant and
the node-count dominant weights (presets linear-age, linear-size, sfs-age, sfs-size; reservation
depth 2, backfill on), over --seeds scenario seeds, and prints per user:

- *first start*: hours from the user's first submission to the start of the user's first job (the
  latency the paper describes: "Bob's jobs start about 1 1/2 days into the first week");
- *median wait*: the median over the user's jobs of start - submit, in hours.

The paper's outcomes are printed beside them. The linear configurations are repeated with the
backfill pass off (``backfill=false``), because with backfilling Bob's 65-node jobs fit in the 150
nodes Alice's 250-node jobs always leave free (1,400 - 5 x 250) and start at once; and SFS is
repeated with pass 1 holding the previous iteration's reservations (``pass1_holds_reservations``).

Part 2 times sfs-size (without allocations: every job in the default allocation) against easy on a
real trace (best and median of --repeat runs; the machine is shared, so figures are noisy).

    .venv/bin/python benchmarks/sfs_scenario.py [--seeds 10] [--repeat 3] [--trace KTH-SP2-1996-2.1-cln.swf.gz]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.platform.allocations import parse_allocations  # noqa: E402
from engine.run import simulate  # noqa: E402
from engine.workload import load_workload  # noqa: E402
from engine.workload.scenarios import SFS_MACHINE_NODES, SFS_USERS, sfs_scenario  # noqa: E402
from shared_data import SHARED_DATA

CONFIGURATIONS = (
    ("linear-age", {}, "Alice immediate; Bob ~1.5 d; Chris 6-7 d"),
    ("linear-size", {}, "Alice immediate; Bob >2.5 d (~3 d); Chris <1 d"),
    ("sfs-age", {}, "Alice immediate; Bob immediate; Chris 6-7 d"),
    ("sfs-size", {}, "Alice immediate; Bob immediate; Chris <1 d"),
    ("linear-age", {"backfill": False}, "(not in the paper)"),
    ("linear-size", {"backfill": False}, "(not in the paper)"),
    ("sfs-age", {"pass1_holds_reservations": True}, "(not in the paper)"),
    ("sfs-size", {"pass1_holds_reservations": True}, "(not in the paper)"),
)


def latencies(schedule, user: int) -> tuple[float, float]:
    jobs = schedule[schedule.user == user]
    first = (jobs.start.min() - jobs.submit.min()) / 3600.0
    return float(first), float(jobs.wait.median() / 3600.0)


def scenario_table(seeds: int) -> None:
    runs = {i: [] for i in range(len(CONFIGURATIONS))}
    makespans = {i: [] for i in range(len(CONFIGURATIONS))}
    for seed in range(seeds):
        scenario = sfs_scenario(seed)
        context = {"allocations": parse_allocations(scenario.allocations_text)}
        for i, (preset, params, _) in enumerate(CONFIGURATIONS):
            schedule = simulate(scenario.workload, SFS_MACHINE_NODES, {"preset": preset, "params": params},
                                context=context).schedule
            runs[i].append([value for user in SFS_USERS for value in latencies(schedule, user)])
            makespans[i].append(schedule.end.max() / 86400.0)
    names = [name for name, _ in SFS_USERS.values()]
    print(f"§9 scenario, {seeds} seed(s); hours, mean over seeds [min-max of the first start]")
    print(f"{'configuration':<42}" + "".join(f"{n + ' first':>22}{n + ' median':>14}" for n in names)
          + f"{'makespan d':>12}   paper")
    for i, (preset, params, paper) in enumerate(CONFIGURATIONS):
        values = np.array(runs[i])
        label = preset + "".join(f" {k}={str(v).lower()}" for k, v in params.items())
        cells = ""
        for u in range(len(names)):
            first, median = values[:, 2 * u], values[:, 2 * u + 1]
            cells += f"{first.mean():>9.1f} [{first.min():>4.1f}-{first.max():>5.1f}]{median.mean():>14.1f}"
        print(f"{label:<42}{cells}{np.mean(makespans[i]):>12.1f}   {paper}")


def speed(trace: str, repeat: int) -> None:
    path = (SHARED_DATA / "swf") / trace
    workload = load_workload(path)
    capacity = int(workload.metadata["procs"])
    print(f"\nspeed on {trace} ({len(workload.jobs):,} jobs, {capacity} processors); machine shared, noisy")
    for policy in ("easy", "sfs-size", "linear-size"):
        times = []
        for _ in range(repeat):
            began = time.perf_counter()
            simulate(workload, capacity, policy)
            times.append(time.perf_counter() - began)
        print(f"  {policy:<12} best {min(times):6.2f} s   median {statistics.median(times):6.2f} s   ({repeat} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trace", default="KTH-SP2-1996-2.1-cln.swf.gz")
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()
    scenario_table(args.seeds)
    if not args.no_speed:
        speed(args.trace, args.repeat)


if __name__ == "__main__":
    main()
