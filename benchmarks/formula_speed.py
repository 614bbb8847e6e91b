"""Speed of priority formulas (issue 25 §3): whole commands beside the built-in policy they compete with.

Every figure is one fresh child (``python -m engine simulate``, parse cache off: imports, parse,
simulate, schedule and summary written), measured as benchmarks/scale.py does (wall and CPU seconds
of that child, peak memory, the load average when it ended). Targets are CPU seconds (the machine
is shared): read CPU first.

* ``hpc2n``: HPC2N-2002 (202,871 jobs). A formula over job data only (SAF, F1: a key per job, the
  compiled loop of the built-in orderings) within 1.5x the built-in EASY; formulas re-evaluated
  at every scheduling pass (WFP3, UNICEF) within 10 s.
* ``grid`` (``--only grid``; long): WFP3 and UNICEF (``--formulas``) on the synthetic NGI_CZ grid
  (``--jobs`` 500,000 at load 1.0, 47 clusters, the 2014 queues, ``backfill_bound`` ``--bound``)
  within 3x mrfs-easy with the same bound.

    .venv/bin/python benchmarks/formula_speed.py [--only hpc2n grid] [--jobs 500000] [--bound 100]
        [--formulas wfp3 unicef]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import (ROOT, SWF, command, grid_flags, grid_trace, line, run_child, run_sections,  # noqa: E402
                   warm_grid_kernels)

HPC2N = SWF / "HPC2N-2002-2.2-cln.swf.gz"
#: the formulas re-evaluated at every pass, as the presets wfp3-easy and unicef-easy say them
GRID_FORMULAS = {"wfp3": {"formula": "(wait / requested) ** 3 * procs", "first": "largest"},
                 "unicef": {"formula": "wait / (log2(procs) * requested)", "first": "largest"}}
STATIC_OVER_EASY = 1.5
DYNAMIC_SECONDS = 10.0
GRID_OVER_MRFS = 3.0


def formula(params: dict, algorithm: str = "easy", **extra: object) -> str:
    return json.dumps({"ordering": "formula", "algorithm": algorithm, "params": {**params, **extra}})


def hpc2n(options: argparse.Namespace, work: Path) -> None:
    print(f"\n## HPC2N-2002 ({HPC2N.name}), whole command, EASY backfilling")
    for policy in ("easy", "saf-easy"):        # numba's cache filled first: no timed child compiles
        run_child(command(HPC2N, policy, work / "warm.csv", []), options.timeout)
    easy = run_child(command(HPC2N, "easy", work / "easy.csv", []), options.timeout)
    line("easy (built-in, FCFS order)", easy)
    for name in ("saf-easy", "f1-easy"):
        r = run_child(command(HPC2N, name, work / f"{name}.csv", []), options.timeout)
        ratio = r["cpu_s"] / easy["cpu_s"] if easy["cpu_s"] else float("inf")
        verdict = f"  {ratio:.2f}x easy, target {STATIC_OVER_EASY:g}x: {'met' if ratio <= STATIC_OVER_EASY else 'MISSED'}"
        line(f"{name} (a key per job)", r, extra=verdict)
    for name in ("wfp3-easy", "unicef-easy"):
        r = run_child(command(HPC2N, name, work / f"{name}.csv", []), options.timeout)
        line(f"{name} (evaluated at every pass)", r, DYNAMIC_SECONDS)


def grid(options: argparse.Namespace, work: Path) -> None:
    print(f"\n## NGI_CZ, {options.jobs:,} synthetic jobs at load 1.0, 2014 queues, backfill_bound={options.bound}")
    warm_grid_kernels()
    trace = grid_trace(options.jobs, 1.0, work)
    children = {"mrfs-easy": command(trace, "mrfs-easy", work / "mrfs.csv", grid_flags(options.bound))}
    for name in options.formulas:
        policy = formula(GRID_FORMULAS[name], backfill_bound=options.bound)
        children[name] = command(trace, policy, work / f"{name}.csv", grid_flags(None))
    if options.parallel:        # each child's own CPU seconds (wait4), so they may share the machine's time
        with ThreadPoolExecutor(len(children)) as pool:
            running = {name: pool.submit(run_child, args, options.timeout) for name, args in children.items()}
            results = {name: future.result() for name, future in running.items()}
    else:
        results = {name: run_child(args, options.timeout) for name, args in children.items()}
    mrfs = results.pop("mrfs-easy")
    line("mrfs-easy", mrfs)
    for name, r in results.items():
        ratio = r["cpu_s"] / mrfs["cpu_s"] if mrfs["cpu_s"] and r["finished"] else float("inf")
        line(f"{name.upper()} formula, EASY", r, extra=f"  {ratio:.2f}x mrfs-easy, target {GRID_OVER_MRFS:g}x: "
                                                       f"{'met' if ratio <= GRID_OVER_MRFS else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", default=["hpc2n"], choices=["hpc2n", "grid"])
    parser.add_argument("--jobs", type=int, default=500_000)
    parser.add_argument("--bound", type=int, default=100)
    parser.add_argument("--formulas", nargs="+", default=list(GRID_FORMULAS), choices=list(GRID_FORMULAS),
                        help="the formulas run on the grid")
    parser.add_argument("--parallel", action="store_true",
                        help="grid: run mrfs-easy and the formulas at once (the figures are each child's CPU seconds)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds before a child is stopped")
    parser.add_argument("--work", help="folder for traces and schedules (default: a temporary one)")
    run_sections(parser.parse_args(), {"hpc2n": hpc2n, "grid": grid}, f"commit {git_commit()}")


def git_commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


if __name__ == "__main__":
    main()
