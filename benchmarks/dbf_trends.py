"""The DBF paper's trends (N'takpé & Suter, JSSPP 2017, §6.3, Figs. 2 and 4-7), measured.

    .venv/bin/python benchmarks/dbf_trends.py [--traces SDSC-DS-2004 ...] [--fractions 0.2,0.4,0.6,0.8]
           [--days FROM:TO] [--workers 2] [--seed 1] [--csv out.csv]

For each trace (the paper's preprocessing: interactive queues removed, jobs stopped at their
walltime) and each share X of deadline jobs (the same seeded pick for every policy), DBF,
conservative and EASY are simulated, and the table gives per run:

* ``wait_reg``: mean wait of regular jobs, leaving out those that waited 0 under all three policies
  (the paper's filter, Fig. 2), in minutes;
* ``wait_all``: mean wait of all jobs (Fig. 4), in minutes;
* ``maxstr_reg``: maximum stretch of regular jobs (Fig. 5);
* ``miss``, ``miss24``, ``missprop``: deadline misses, with a 24-hour and a proportional deadline
  (Fig. 6);
* ``usage``: mean deadline usage of the deadline jobs that waited (Fig. 7), in %;
* ``sim_s``: the engine's simulation time.

Runs go to ``--workers`` processes (the machine is shared: times are indicative only).
"""

from __future__ import annotations

import argparse
import csv
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

import pandas as pd

from engine.metrics.deadlines import compared_summaries, deadline_summary
from engine.run import simulate
from engine.workload import load_workload
from engine.workload.window import parse_days, select_days

SWF = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf"
TRACES = {"SDSC-DS-2004": "SDSC-DS-2004-2.1-cln.swf.gz", "SDSC-BLUE-2000": "SDSC-BLUE-2000-4.2-cln.swf.gz",
          "HPC2N-2002": "HPC2N-2002-2.2-cln.swf.gz"}
POLICIES = ("dbf", "conservative", "easy")
COLUMNS = ("trace", "X", "policy", "jobs", "deadline_jobs", "wait_reg", "wait_all", "maxstr_reg",
           "miss", "miss24", "missprop", "usage", "sim_s")


@lru_cache(maxsize=2)
def workload_of(trace: str, days: str | None):  # noqa: ANN201
    workload = load_workload(SWF / TRACES[trace])
    return select_days(workload, *parse_days(days)) if days else workload


def run_one(task: tuple[str, float, str, str | None, int]) -> tuple[tuple, pd.DataFrame, float]:
    trace, fraction, policy, days, seed = task
    workload = workload_of(trace, days)
    params = {"deadline_fraction": fraction, "drop_interactive": True}
    result = simulate(workload, int(workload.metadata["procs"]), {"preset": policy, "params": params}, seed=seed)
    keep = ["job_id", "submit", "start", "end", "wait", "requested_time", "deadline"]
    return (trace, fraction, policy), result.schedule[keep], result.meta["wall_seconds"]


def table_rows(results: dict[tuple, tuple[pd.DataFrame, float]], traces: list[str],
               fractions: list[float]) -> list[dict]:
    rows = []
    for trace in traces:
        for fraction in fractions:
            schedules = {p: results[(trace, fraction, p)][0] for p in POLICIES if (trace, fraction, p) in results}
            filtered = compared_summaries(schedules, drop_zero_wait=True)
            for policy, schedule in schedules.items():
                everything = deadline_summary(schedule)
                rows.append({
                    "trace": trace, "X": f"{fraction:.0%}", "policy": policy, "jobs": len(schedule),
                    "deadline_jobs": everything["deadline_jobs"],
                    "wait_reg": _minutes(filtered[policy]["mean_wait_regular"]),
                    "wait_all": _minutes(float(schedule["wait"].mean())),
                    "maxstr_reg": round(everything["max_stretch_regular"] or 0.0, 1),
                    "miss": everything["deadline_misses"], "miss24": everything["deadline_misses_24h"],
                    "missprop": everything["deadline_misses_proportional"],
                    "usage": round(100 * (everything["mean_deadline_usage_waited"] or 0.0), 2),
                    "sim_s": round(results[(trace, fraction, policy)][1], 1),
                })
    return rows


def _minutes(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds / 60.0, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="+", default=list(TRACES), choices=list(TRACES))
    parser.add_argument("--fractions", default="0.2,0.4,0.6,0.8")
    parser.add_argument("--days", help="only jobs submitted in that window (FROM:TO days); default: whole traces")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--csv", help="also write the table here")
    args = parser.parse_args()
    fractions = [float(x) for x in args.fractions.split(",")]
    # longest traces first so the two workers finish together
    tasks = [(t, f, p, args.days, args.seed) for t in reversed(args.traces) for f in fractions for p in POLICIES]
    results: dict[tuple, tuple[pd.DataFrame, float]] = {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for key, schedule, seconds in pool.map(run_one, tasks):
            results[key] = (schedule, seconds)
            print(f"done {key[0]} X={key[1]:g} {key[2]} in {seconds:.1f} s", flush=True)
    rows = table_rows(results, args.traces, fractions)
    print(f"\nseed {args.seed}, days {args.days or 'all'}; waits in minutes, usage in % (jobs that waited)")
    print(pd.DataFrame(rows, columns=COLUMNS).to_string(index=False))
    if args.csv:
        with open(args.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
