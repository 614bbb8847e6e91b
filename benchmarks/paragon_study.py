"""The Paragon paper's figures (Suzuoka, Subhlok & Gross, CMU-CS-95-149, §5) as SchedLab's preset
study, run on real worker processes, printed as tables next to the paper's findings.

    .venv/bin/python benchmarks/paragon_study.py [--trace KTH.swf.gz] [--workers 2] [--keep DIR]

It starts a private cluster (webapp.studies.cluster: SQLite file, the real Redis at
127.0.0.1:6379 db 13 on a queue of its own, N `celery worker` processes), runs
`manage.py run_study --preset paragon`, and prints from the study's CSV:

- size-weighted turnaround against load for SSS, sorted, EASY (exact estimates), sorted+EASY, TSS
  (the paper's Figs. 4, 7, 8);
- mean |skipping count| against load for sorted (Fig. 5);
- size-weighted turnaround against MASC for sorted-masc, one column per load (Fig. 6).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webapp.studies.cluster import LocalCluster  # noqa: E402

KTH = ROOT.parent / "shared" / "data" / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
REDIS_URL = "redis://127.0.0.1:6379/13"
LINES = ("fcfs", "sorted", "easy", "sorted-easy", "tss")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(KTH))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", help="keep the cluster's directory here (default: a temporary one)")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="paragon-study-"))
    cluster = LocalCluster(root, REDIS_URL)
    cluster.check_redis()
    cluster.migrate()
    out = root / "paragon.csv"
    began = time.perf_counter()
    with cluster:
        for i in range(args.workers):
            cluster.start_worker(f"w{i + 1}")
        result = cluster.manage("run_study", "--trace", args.trace, "--preset", "paragon", "--csv", str(out),
                                "--timeout", "7200", timeout=7500)
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    print(f"trace {Path(args.trace).name}, buddy allocation, exact estimates; {outcome['points']} points on "
          f"{args.workers} worker processes in {time.perf_counter() - began:.0f} s (shared 2-core machine); "
          f"statuses {outcome['statuses']}")
    print_tables(list(csv.DictReader(out.open())))
    print(f"CSV: {out}")
    return 0 if outcome["all_done"] else 1


def print_tables(rows: list[dict[str, str]]) -> None:
    by = defaultdict(dict)
    for row in rows:
        by[(row["policy"], row["masc"])][float(row["load"])] = row
    loads = sorted({float(r["load"]) for r in rows})

    def table(title: str, columns: list[tuple[str, tuple[str, str], str]], fmt: str) -> None:
        print(f"\n{title}")
        print(f"{'load':>6} " + " ".join(f"{name:>12}" for name, _, _ in columns))
        for load in loads:
            cells = []
            for _, key, metric in columns:
                row = by.get(key, {}).get(load)
                value = row.get(metric) if row and row["status"] == "done" else None
                cells.append(f"{float(value):>12{fmt}}" if value not in (None, "") else f"{'-':>12}")
            print(f"{load:>6g} " + " ".join(cells))

    hours = "weighted_turnaround"
    table("Figs. 4, 7, 8: size-weighted turnaround (s) against load",
          [(p, (p, ""), hours) for p in LINES], ",.0f")
    table("Fig. 5: mean |skipping count| against load (sorted; SSS and TSS are 0 by construction)",
          [("sorted", ("sorted", ""), "mean_abs_skip"), ("easy", ("easy", ""), "mean_abs_skip"),
           ("sorted-easy", ("sorted-easy", ""), "mean_abs_skip")], ",.1f")
    mascs = sorted({r["masc"] for r in rows if r["masc"]}, key=float)
    table("Fig. 6: size-weighted turnaround (s) of sorted-masc against load, one column per MASC "
          "(MASC inf = sorted; 0 = SSS)",
          [("SSS", ("fcfs", ""), hours)] + [(f"MASC {m}", ("sorted-masc", m), hours) for m in mascs]
          + [("inf", ("sorted", ""), hours)], ",.0f")


if __name__ == "__main__":
    sys.exit(main())
