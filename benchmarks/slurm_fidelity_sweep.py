"""The ``slurm`` replay of the real Slurm 22.05.8 recordings over the priority cycle's phases (issue 24 §3).

One replay's figures move with the phase of the timers alone (rec1: 288-425 s), so a change of
rule is judged by the averages over 20 phases (priority_phase 0, 3, ..., 57 s) of the mean wait and
of the rank correlation of waits, on both recordings of the site the rules were checked on
(tests/data/slurm_replay: rec1; tests/data/slurm_replay_debug: rec2, the same site and workload run
again) and on a recording of another site they were not tuned on (tests/data/slurm_replay_site2: rec3,
12 CPUs, three partitions on two tiers, other backfill parameters, weights and QOS limits), and on a
third real run of rec1's site and workload (tests/data/slurm_replay_rerun: rec4).

    .venv/bin/python benchmarks/slurm_fidelity_sweep.py [--phases 20] [--set NAME=VALUE ...] [--json OUT]

``--set`` adds policy parameters to every replay (e.g. ``--set backfill_agent=1``). ``--overrun``:
``run`` (default) keeps the recorded runtime of a job Slurm killed at its time limit (State TIMEOUT:
slurmctld kills it at its next time-limit check, every PERIODIC_TIMEOUT = 30 s, controller.c
_slurmctld_background / job_mgr.c job_time_limit, so it held its CPUs 6-19 s past its limit);
``kill`` cuts it at the limit (the cleaning's default), and the replay kills it at its time-limit check
(engine/sim/timelimit.py; ``--set time_limit_check=0``: at the limit, as the replays were run before).
``--per-phase`` prints each phase's figures too.

How far noise alone moves the averages: 4 random jobs' runtimes lengthened by 6-19 s (9 draws, the
overruns cut) gave rec1 321-339 s (sd 6) / 0.82-0.86 (sd 0.011), rec2 315-348 s (sd 13) /
0.82-0.85 (sd 0.011) around 330.7 / 0.824 and 322.1 / 0.825: a change moving an average by less
than about two of those is not told apart from a reshuffle of the same schedule.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.metrics.fidelity import fidelity  # noqa: E402
from engine.platform.slurmconf import SlurmSite, read_slurm_site  # noqa: E402
from engine.run import simulate  # noqa: E402
from engine.workload import Workload, load_workload  # noqa: E402

DATA = ROOT / "tests" / "data"
RECORDINGS = {"rec1": DATA / "slurm_replay", "rec2": DATA / "slurm_replay_debug", "rec3": DATA / "slurm_replay_site2",
              "rec4": DATA / "slurm_replay_rerun"}


def recording(folder: Path, overrun: str = "run") -> tuple[Workload, SlurmSite, int]:
    """The recording's workload (its sacct.txt), site (slurm.conf, qos.txt, assoc.txt) and CPUs."""
    site = read_slurm_site(folder / "slurm.conf", qos=folder / "qos.txt", assoc=folder / "assoc.txt")
    capacity = site.conf.total_cpus
    return load_workload(folder / "sacct.txt", procs=capacity, overrun=overrun), site, capacity


def sweep(folder: Path, phases: list[int], params: dict[str, Any], overrun: str = "run") -> dict[str, Any]:
    """Mean wait and rank correlation of the replay at each phase, and their averages."""
    workload, site, capacity = recording(folder, overrun)
    recorded = simulate(workload, capacity, "recorded").schedule
    rows = []
    for phase in phases:
        result = simulate(workload, capacity, {"preset": "slurm", "params": {**params, "priority_phase": phase}},
                          context={"slurm_site": site})
        report = fidelity(recorded, result.schedule, capacity=capacity)
        overall = report["overall"]
        rows.append({"phase": phase, "mean_wait": overall["simulated"]["mean_wait"],
                     "rank": overall["wait_rank_correlation"],
                     "partitions": {name: part["simulated"]["mean_wait"] for name, part in report["per_queue"].items()}})
        recorded_mean = overall["recorded"]["mean_wait"]
        recorded_parts = {name: part["recorded"]["mean_wait"] for name, part in report["per_queue"].items()}
    waits = [r["mean_wait"] for r in rows]
    partitions = {name: {"recorded": recorded, "mean_wait": float(np.mean([r["partitions"][name] for r in rows]))}
                  for name, recorded in recorded_parts.items()}
    return {"recorded_mean_wait": recorded_mean, "mean_wait": float(np.mean(waits)),
            "rank": float(np.mean([r["rank"] for r in rows])), "low": min(waits), "high": max(waits),
            "partitions": partitions, "runs": rows}


def parsed(pairs: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        params[name] = json.loads(value) if value[:1] in "-0123456789tf[{" else value
    return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=int, default=20)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--only", choices=sorted(RECORDINGS))
    parser.add_argument("--overrun", choices=("run", "kill"), default="run")
    parser.add_argument("--per-phase", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    params = parsed(args.set)
    phases = [3 * k for k in range(args.phases)]
    out = {}
    for name, folder in RECORDINGS.items():
        if args.only and name != args.only:
            continue
        began = time.perf_counter()
        out[name] = figures = sweep(folder, phases, params, args.overrun)
        if args.per_phase:
            for row in figures["runs"]:
                print(f"  {name} phase {row['phase']:2d}: mean wait {row['mean_wait']:6.1f} s, rank {row['rank']:.3f}")
        print(f"{name}: recorded {figures['recorded_mean_wait']:.1f} s; replay mean wait {figures['mean_wait']:.1f} s "
              f"({figures['mean_wait'] / figures['recorded_mean_wait'] - 1:+.1%}, phases {figures['low']:.0f}-"
              f"{figures['high']:.0f}), rank {figures['rank']:.3f} over {len(phases)} phases "
              f"(overrun={args.overrun}; {time.perf_counter() - began:.0f} s); " + ", ".join(
                  f"{name} {part['mean_wait']:.0f} vs {part['recorded']:.0f} s ({part['mean_wait'] / part['recorded'] - 1:+.1%})"
                  for name, part in figures["partitions"].items()), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"params": params, **out}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
