"""Speed of plan-based scheduling (PLAN 1/2/3, simulated annealing) — issue 5's two targets.

1. One decision with 100 waiting and 100 running jobs and the default parameters (88
   temperatures × 100 moves = 8,800 evaluated permutations); target ≤ 250 ms. The jobs' sizes and
   requested times are drawn (seeded) from SDSC-BLUE-2000 among jobs of at most 64 processors; the
   machine is the running jobs' processors plus 32 free ones, so some waiting jobs fit now (a
   decision where nothing fits skips the annealing). Running jobs started at a random point of
   their request; waiting jobs were submitted in the last 6 hours. The decision is timed through
   the policy (profile, annealing, choice of jobs to start), min and median of --repeat runs.
2. PLAN 2 over one month of LLNL-Atlas-2006 (engine.workload.window.select_days; by default days
   150-180, its busiest month: 9,288 jobs, the most waiting under EASY); target ≤ 15
   min. Also prints the run's mean/max decision time and the number of annealed decisions.

    .venv/bin/python benchmarks/plan_speed.py [--repeat 7] [--days 150:180] [--trace PATH] [--skip-month]

The machine is shared (2 cores): repeat and read the minimum; the CPU time of this process is
printed too, as it is less disturbed by other work than the wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.policies.registry import build_scheduler, resolve  # noqa: E402
from engine.run import simulate  # noqa: E402
from engine.sim.simulator import Simulation  # noqa: E402
from engine.workload import load_workload  # noqa: E402
from engine.workload.model import Workload  # noqa: E402
from engine.workload.window import parse_days, select_days  # noqa: E402
from shared_data import SHARED_DATA

DATA = (SHARED_DATA / "swf")
SIZES_FROM = DATA / "SDSC-BLUE-2000-4.2-cln.swf.gz"
LLNL = DATA / "LLNL-Atlas-2006-2.1-cln.swf.gz"
HOUR = 3600


def decision_state(policy: str, *, waiting: int = 100, running: int = 100, seed: int = 0):
    """A Simulation with ``running`` jobs running and ``waiting`` in the policy's queue, and the policy."""
    rng = np.random.default_rng(seed)
    source = load_workload(SIZES_FROM).jobs
    source = source[source["procs"] <= 64]
    picked = source.iloc[rng.choice(len(source), size=running + waiting, replace=False)]
    requested = picked["requested_time"].to_numpy(dtype=np.int64).clip(60)
    now = 48 * HOUR
    elapsed = (rng.random(running) * requested[:running]).astype(np.int64)
    submit = np.concatenate([now - elapsed - 1, np.sort(now - rng.integers(0, 6 * HOUR, waiting))])
    jobs = pd.DataFrame({
        "job_id": np.arange(1, running + waiting + 1), "submit": submit, "runtime": requested,
        "requested_time": requested, "procs": picked["procs"].to_numpy(dtype=np.int64),
        "user": -1, "group": -1, "queue": -1, "partition": -1, "killed": False,
    })
    order = np.argsort(jobs["submit"].to_numpy(), kind="stable")
    jobs = jobs.iloc[order].reset_index(drop=True)
    is_running = order < running
    capacity = int(jobs.loc[is_running, "procs"].sum()) + 32
    sim = Simulation(Workload(jobs, {"procs": str(capacity)}, source="plan_speed"), capacity)
    scheduler = build_scheduler(resolve(policy), sim)
    for job in np.flatnonzero(is_running):
        sim.now = int(jobs.loc[job, "submit"]) + 1
        sim.start(int(job))
    sim.now = now
    for job in np.flatnonzero(~is_running):
        scheduler.on_submit(int(job))
    return sim, scheduler


def time_decision(policy: str, repeat: int) -> None:
    sim, scheduler = decision_state(policy)
    times, cpu = [], []
    for _ in range(repeat):
        began, began_cpu = time.perf_counter(), time.process_time()
        chosen = scheduler.decide()
        times.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
    evaluated = scheduler.evaluated // repeat
    print(f"{policy}: one decision, {len(scheduler.queue)} waiting, {len(sim.running_ends)} running, "
          f"{sim.capacity} processors ({sim.free} free), {evaluated:,} evaluated permutations: "
          f"wall min {min(times) * 1e3:.0f} ms, median {statistics.median(times) * 1e3:.0f} ms; "
          f"CPU min {min(cpu) * 1e3:.0f} ms ({len(chosen)} jobs start now; load average {os.getloadavg()[0]:.1f})")


def time_month(trace: Path, days: str, policy: str) -> None:
    workload = load_workload(trace)
    capacity = int(workload.metadata["procs"])
    window = select_days(workload, *parse_days(days))
    began, began_cpu = time.perf_counter(), time.process_time()
    result = simulate(window, capacity, policy)
    wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    s = result.meta["summary"]
    print(f"{policy} on {trace.name} days {days} ({len(window.jobs):,} jobs, {capacity} processors): "
          f"{wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU; {s['decisions']:,} decisions, {s['annealed_decisions']:,} annealed, "
          f"mean {s['mean_decision_ms']:.1f} ms, max {s['max_decision_ms']:.0f} ms per decision")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--days", default="150:180")
    parser.add_argument("--trace", type=Path, default=LLNL)
    parser.add_argument("--skip-month", action="store_true")
    args = parser.parse_args()
    for policy in ("plan1", "plan2", "plan3"):
        time_decision(policy, args.repeat)
    if not args.skip_month:
        time_month(args.trace, args.days, "plan2")


if __name__ == "__main__":
    main()
