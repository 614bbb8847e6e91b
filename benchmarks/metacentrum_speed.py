"""MetaCentrum speed: the real wagap-2013 trace and a synthetic 100k-job load on the whole MetaCentrum.

1. wagap-2013.swf (17,900 jobs) on its two-cluster machines file, multi-resource fair-share +
   EASY + the 2014 queues (``mrfs-easy``, ``--queues metacentrum-2014``).
2. 100,000 synthetic jobs on NGI_CZ.swf.machines (47 clusters, 799 nodes, 34,556 cores), the
   same policy and queues. The jobs (seeded, see :func:`synthetic_jobs`): 300 users; 85 % single
   node with 1–32 cores per node, 15 % on 2–8 nodes; RAM per node log-normal around 4 GiB (some
   jobs hundreds of GiB); 2 % ask for a GPU; a queue of the 2014 setup drawn with MetaCentrum-like
   weights, walltime its limit, runtime a uniform fraction of it; arrivals Poisson at the rate that
   offers ``--load`` (default 85 %) of the machine's cores while jobs arrive (utilization over the
   whole span is lower: long jobs drain for up to 30 days after the last arrival).

Each figure is the best (and median) of --repeat runs in this process; the targets (issue 4) are
60 s each on the 2-core shared machine. Report whether the machine was shared.

    .venv/bin/python benchmarks/metacentrum_speed.py [--repeat 3] [--jobs 100000] [--load 0.85]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.platform.machines import read_machines  # noqa: E402
from engine.platform.queues import load_queue_config  # noqa: E402
from engine.run import simulate  # noqa: E402
from engine.workload import load_workload  # noqa: E402
from engine.workload.model import Workload  # noqa: E402
from shared_data import SHARED_DATA  # noqa: E402

DATA = (SHARED_DATA / "metacentrum")
TARGET_SECONDS = 60.0
QUEUE_WEIGHTS = {"q_2h": 0.25, "q_4h": 0.08, "q_1d": 0.35, "q_2d": 0.08, "q_4d": 0.06, "q_1w": 0.1, "q_2w": 0.05,
                 "q_2w_plus": 0.01, "backfill": 0.02}
GIB = 1024 ** 2   # KB


def synthetic_jobs(count: int, machine, *, seed: int = 0, load: float = 0.85) -> Workload:
    """A seeded synthetic MetaCentrum-like workload (see the module docstring)."""
    rng = np.random.default_rng(seed)
    config = load_queue_config("metacentrum-2014")
    walltime = {q.name: q.walltime for q in config.queues}
    names = list(QUEUE_WEIGHTS)
    queue = rng.choice(names, size=count, p=np.array(list(QUEUE_WEIGHTS.values())))
    limit = np.array([walltime[q] for q in queue])
    runtime = np.maximum((limit * rng.uniform(0.02, 0.9, count)).astype(np.int64), 1)
    multi = rng.random(count) < 0.15
    nodes = np.where(multi, rng.integers(2, 9, count), 1)
    nodes[queue == "backfill"] = 1
    ppn = rng.choice([1, 1, 1, 2, 4, 8, 16, 32], size=count)
    mem = np.ceil(np.minimum(rng.lognormal(np.log(4), 1.2, count), 900) * GIB).astype(np.int64)
    gpus = (rng.random(count) < 0.02).astype(np.int64)
    work = float((nodes * ppn * runtime).mean())
    gap = work / (load * machine.cores)
    submit = np.cumsum(rng.exponential(gap, count)).astype(np.int64)
    jobs = pd.DataFrame({
        "job_id": np.arange(count), "submit": submit, "runtime": runtime, "requested_time": limit,
        "procs": nodes * ppn, "user": rng.integers(0, 300, count), "group": -1, "queue": -1, "partition": -1,
        "killed": False, "nodes": nodes, "ppn": ppn, "mem": mem, "gpus": gpus,
        "exclusive": False, "queue_name": queue, "clusters": "", "exclude": "", "hosts": "", "properties": "",
    })
    return Workload(jobs, {"procs": machine.cores}, source=f"synthetic-{count}")


def timed(run, repeat: int) -> tuple[list[float], object]:
    seconds, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - started)
    return seconds, result


def report(label: str, seconds: list[float], result) -> None:
    schedule = result.schedule
    rejected = sum(v for k, v in result.meta["rejected"].items())
    print(f"{label:<44} min {min(seconds):6.1f} s  median {statistics.median(seconds):6.1f} s  "
          f"({len(schedule):,} jobs simulated, {rejected:,} rejected; target {TARGET_SECONDS:.0f} s: "
          f"{'met' if min(seconds) <= TARGET_SECONDS else 'MISSED'})")
    wait = schedule["wait"].to_numpy()
    work = float((schedule["procs"] * schedule["runtime"]).sum())
    span = float(schedule["end"].max() - schedule["submit"].min())
    print(f"{'':<44} mean wait {wait.mean() / 3600:.1f} h, p95 {np.percentile(wait, 95) / 3600:.1f} h, "
          f"utilization {work / (result.capacity * span):.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--load", type=float, default=0.85,
                        help="offered load of the synthetic jobs (share of the machine's cores while they arrive)")
    args = parser.parse_args()
    queues = load_queue_config("metacentrum-2014")

    parse, workload = timed(lambda: load_workload(DATA / "alea" / "wagap-2013.swf"), args.repeat)
    print(f"{'parse wagap-2013.swf':<44} min {min(parse):6.2f} s  median {statistics.median(parse):6.2f} s")
    wagap = read_machines(DATA / "alea" / "wagap-2013.swf.machines")
    seconds, result = timed(lambda: simulate(workload, None, "mrfs-easy", machine=wagap, queues=queues), args.repeat)
    report("wagap-2013, mrfs-easy, 2014 queues", seconds, result)

    ngi = read_machines(DATA / "aleang" / "NGI_CZ.swf.machines")
    synthetic = synthetic_jobs(args.jobs, ngi, load=args.load)
    seconds, result = timed(lambda: simulate(synthetic, None, "mrfs-easy", machine=ngi, queues=queues), args.repeat)
    report(f"synthetic {args.jobs:,} jobs (load {args.load:g}) on NGI_CZ, mrfs-easy", seconds, result)


if __name__ == "__main__":
    main()
