"""How close a simulated baseline comes to what really happened: wagap-2013, mrfs-easy.

The real wagap-2013 trace (17,900 jobs, CERIT-SC 2013) records every job's real wait (SWF field
3). This prints the mean wait overall and per queue with at least --min-jobs jobs (default 1,000):

- recorded: the trace's own waits (jobs the simulations also ran);
- shipped 2014: mrfs-easy under the shipped ``metacentrum-2014`` queue configuration;
- inferred: mrfs-easy under the configuration ``python -m engine infer`` reads from the trace
  (walltimes, per-queue and per-user limits, pools), on the same machines file;

and each simulated figure as a ratio to the recorded one. The issue's aim: the inferred baseline
within ±30 % of the recorded overall mean wait and within a factor of 2 on every such queue.

Then what the recording itself says about its waits (--why, on by default): for every job that
waited more than an hour, whether during at least half of its wait enough hosts of a cluster it
may use (its cl_ rule, nodes with at least its ppn cores) had its ppn cores and its RAM free in the
recorded schedule (host occupancy sampled every 10 minutes; hosts mapped to clusters as
``engine infer`` does). Where that holds, the wait was not for cores or RAM, and no simulation of
cores and RAM alone can reproduce it.

    .venv/bin/python benchmarks/fidelity_wagap.py [--policy mrfs-easy] [--min-jobs 1000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.shared_data import SHARED_DATA
from engine.platform.infer import (
    assign_hosts,
    host_peaks,
    host_usage,
    infer,
    recorded_jobs,
)
from engine.platform.machines import Machine, read_machines
from engine.platform.queues import load_queue_config
from engine.run import simulate
from engine.workload import Workload, load_workload
from engine.workload.recorded import recorded_starts

TRACE = SHARED_DATA / "metacentrum" / "alea" / "wagap-2013.swf"
HOUR = 3600.0


def mean_waits(frame: pd.DataFrame, wait: str, queues: list[str]) -> dict[str, float]:
    """Mean wait in hours overall and per queue (by the trace's queue name)."""
    result = {"overall": float(frame[wait].mean()) / HOUR}
    for queue in queues:
        result[queue] = float(frame.loc[frame["queue_name"] == queue, wait].mean()) / HOUR
    return result


def room_while_waiting(workload: Workload, machine: Machine, *, step: int = 600,
                       longer_than: int = 3600) -> dict[str, float]:
    """How many long-waiting jobs had room (cores and RAM per node, on an allowed cluster) in the
    recorded schedule for at least half of their wait (see the module docstring)."""
    frame, _ = recorded_jobs(workload)
    usage = host_usage(frame)
    clusters_of = assign_hosts(frame, usage, machine, host_peaks(frame, usage))
    hosts = sorted(clusters_of)
    column = {h: i for i, h in enumerate(hosts)}
    by_name = {c.name: c for c in machine.clusters}
    cores = np.array([by_name[clusters_of[h]].cores for h in hosts], dtype=np.float64)
    ram = np.array([by_name[clusters_of[h]].ram_kb for h in hosts], dtype=np.float64)
    cluster = np.array([clusters_of[h] for h in hosts])
    times = np.arange(frame["submit"].min(), frame["end"].max(), step)
    busy = np.zeros((len(times), len(hosts)))
    busy_ram = np.zeros_like(busy)
    start, end = frame["start"].to_numpy(), frame["end"].to_numpy()
    mem = frame["mem"].to_numpy(np.float64)
    for job, host, held in zip(usage["job"].tolist(), usage["host"].tolist(), usage["cores"].tolist()):
        a, b = np.searchsorted(times, start[job]), np.searchsorted(times, end[job])
        busy[a:b, column[host]] += held
        busy_ram[a:b, column[host]] += mem[job]
    free, free_ram = cores - busy, ram - busy_ram
    jobs = workload.jobs.loc[recorded_starts(workload) >= 0].reset_index(drop=True)
    ppn, nodes, rules = jobs["ppn"].to_numpy(), jobs["nodes"].to_numpy(), jobs["clusters"].to_numpy()
    wait = (frame["start"] - frame["submit"]).to_numpy()
    long_jobs = np.nonzero(wait > longer_than)[0]
    had_room = room_wait = total_wait = 0.0
    for i in long_jobs:
        a, b = np.searchsorted(times, frame["submit"].iat[i]), np.searchsorted(times, frame["start"].iat[i])
        total_wait += wait[i]
        if b <= a:
            continue
        allowed = cores >= ppn[i]
        if rules[i]:
            allowed &= np.isin(cluster, rules[i].split(";"))
        fits = ((free[a:b][:, allowed] >= ppn[i]) & (free_ram[a:b][:, allowed] >= mem[i])).sum(axis=1) >= nodes[i]
        if fits.mean() >= 0.5:
            had_room += 1
            room_wait += wait[i]
    return {"jobs_waiting": len(long_jobs), "had_room": int(had_room),
            "share_of_jobs": had_room / max(len(long_jobs), 1), "share_of_wait": room_wait / max(total_wait, 1),
            "hosts_seen": len(hosts), "nodes_in_machine": machine.nodes,
            "most_cores_busy": int(busy.sum(axis=1).max()), "machine_cores": machine.cores}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="mrfs-easy")
    parser.add_argument("--min-jobs", type=int, default=1000)
    parser.add_argument("--machine", choices=("file", "inferred"), default="file",
                        help="the trace's machines file (default) or the machine inferred from the hosts jobs ran on")
    parser.add_argument("--overrun", choices=("kill", "run"), default="kill",
                        help="jobs that ran past their walltime (702 in wagap): killed at it (default) or run on, "
                             "as the recorded ones did")
    parser.add_argument("--why", action=argparse.BooleanOptionalAction, default=True,
                        help="also measure whether the recorded waits were for cores and RAM at all")
    parser.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    args = parser.parse_args()

    workload = load_workload(TRACE, overrun=args.overrun)
    if args.machine == "file":
        machine = read_machines(f"{TRACE}.machines")
        inferred = infer(workload, machine).queue_config()
    else:
        found = infer(workload)
        machine, inferred = found.machine, found.queue_config()
    configs = {"shipped 2014": load_queue_config("metacentrum-2014"), "inferred": inferred}
    jobs = workload.jobs[["job_id", "queue_name", "wait_trace"]]
    counts = jobs["queue_name"].value_counts()
    queues = sorted(counts[counts >= args.min_jobs].index)
    figures: dict[str, dict[str, float]] = {}
    ran: set | None = None
    schedules = {}
    for label, config in configs.items():
        began = time.perf_counter()
        schedule = simulate(workload, None, args.policy, machine=machine, queues=config).schedule
        print(f"{label}: simulated in {time.perf_counter() - began:.1f} s", file=sys.stderr)
        schedules[label] = schedule
        ids = set(schedule["job_id"].tolist())
        ran = ids if ran is None else ran & ids
    recorded = jobs[jobs["job_id"].isin(ran) & (jobs["wait_trace"] >= 0)]
    figures["recorded"] = mean_waits(recorded, "wait_trace", queues)
    for label, schedule in schedules.items():
        frame = schedule[["job_id", "wait"]].merge(jobs[["job_id", "queue_name"]], on="job_id")
        figures[label] = mean_waits(frame[frame["job_id"].isin(ran)], "wait", queues)

    print(f"wagap-2013, {args.policy}, machine {args.machine} ({machine.cores:,} cores), overrun {args.overrun}, "
          f"{len(recorded):,} jobs; mean wait in hours (ratio to recorded)")
    labels = list(figures)
    print(f"{'':<10}" + "".join(f"{label:>22}" for label in labels) + f"{'jobs':>8}")
    for row in ["overall", *queues]:
        cells = []
        for label in labels:
            value = figures[label][row]
            ratio = value / figures["recorded"][row] if figures["recorded"][row] else float("nan")
            cells.append(f"{value:>10.2f}" + (f" ({ratio:5.2f}x)" if label != "recorded" else " " * 9))
        jobs_in = len(recorded) if row == "overall" else int((recorded["queue_name"] == row).sum())
        print(f"{row:<10}" + "".join(f"{cell:>22}" for cell in cells) + f"{jobs_in:>8,}")
    overall = figures["inferred"]["overall"] / figures["recorded"]["overall"]
    worst = max((max(figures["inferred"][q], figures["recorded"][q]) /
                 max(min(figures["inferred"][q], figures["recorded"][q]), 1e-9) for q in queues), default=1.0)
    print(f"aim: inferred overall within ±30 % (got {overall - 1:+.0%}), every queue within 2x (worst {worst:.2f}x)")
    if args.why:
        room = room_while_waiting(workload, read_machines(f"{TRACE}.machines"))
        figures["room_while_waiting"] = room
        print(f"the recording: {room['jobs_waiting']:,} jobs waited more than 1 h; {room['had_room']:,} of them "
              f"({room['share_of_jobs']:.0%}, {room['share_of_wait']:.0%} of their waiting time) had enough free cores "
              f"and RAM per node on a cluster they may use for at least half of their wait; "
              f"{room['hosts_seen']} of the machine's {room['nodes_in_machine']} nodes ran a job; at most "
              f"{room['most_cores_busy']:,} of {room['machine_cores']:,} cores were busy at once (10-min samples)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
