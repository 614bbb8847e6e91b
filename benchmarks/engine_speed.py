"""Engine speed: parse and simulation seconds, jobs/s and peak memory per (trace, policy).

Every (trace, policy) runs in a fresh child process, so its peak resident memory (getrusage
ru_maxrss) is its own and its simulation pays what a fresh worker pays (for conservative: loading
numba's compiled kernels from the cache, or compiling them the first time). "sim s" is wall time,
"cpu s" the child's CPU time for the simulation (closer to the wall time on an idle machine);
with --repeat N each figure is the best of N children.

Targets (issue): parse <= 2 s; simulation fcfs <= 3 s, easy <= 5 s, conservative <= 30 s;
peak memory <= 1 GB.

    .venv/bin/python benchmarks/engine_speed.py [--traces HPC2N SDSC CTC] [--policies fcfs easy conservative]
                                                [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
DATA = (SHARED_DATA / "swf")
TRACES = {
    "HPC2N": "HPC2N-2002-2.2-cln.swf.gz",
    "SDSC-BLUE": "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "CTC": "CTC-SP2-1996-3.1-cln.swf.gz",
}
POLICIES = ("fcfs", "easy", "conservative")
TARGET_SECONDS = {"fcfs": 3.0, "easy": 5.0, "conservative": 30.0}
TARGET_PARSE_SECONDS = 2.0
TARGET_PEAK_MIB = 1024

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from engine.run import simulate
from engine.workload import load_workload

path, policy = sys.argv[2], sys.argv[3]
started = time.perf_counter()
workload = load_workload(path)
parse_s = time.perf_counter() - started
started, cpu = time.perf_counter(), time.process_time()
simulate(workload, int(workload.metadata["procs"]), policy)
sim_s, sim_cpu_s = time.perf_counter() - started, time.process_time() - cpu
print(json.dumps({"jobs": len(workload.jobs), "parse_s": parse_s, "sim_s": sim_s, "sim_cpu_s": sim_cpu_s,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(trace: Path, policy: str) -> dict:
    child = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(trace), policy],
                           capture_output=True, text=True)
    if child.returncode:
        last = (child.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"{trace.name} {policy}: the child failed: {last}")
    return json.loads(child.stdout)


def best_of(trace: Path, policy: str, repeat: int) -> dict:
    runs = [measure(trace, policy) for _ in range(repeat)]
    best = {key: min(run[key] for run in runs) for key in ("parse_s", "sim_s", "sim_cpu_s", "peak_mib")}
    return {"jobs": runs[0]["jobs"], **best}


def verdict(policy: str, r: dict) -> str:
    misses = []
    if r["parse_s"] > TARGET_PARSE_SECONDS:
        misses.append("parse")
    if r["sim_s"] > TARGET_SECONDS.get(policy, float("inf")):
        misses.append("sim")
    if r["peak_mib"] > TARGET_PEAK_MIB:
        misses.append("memory")
    return "ok" if not misses else "SLOW " + ",".join(misses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="+", default=list(TRACES),
                        help=f"names ({', '.join(TRACES)}) or paths to SWF files")
    parser.add_argument("--policies", nargs="+", default=list(POLICIES), help="preset names")
    parser.add_argument("--repeat", type=int, default=1, help="children per (trace, policy); best figures shown")
    options = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; targets: parse <= "
          f"{TARGET_PARSE_SECONDS:g} s, sim " + ", ".join(f"{p} <= {s:g} s" for p, s in TARGET_SECONDS.items())
          + f", peak <= {TARGET_PEAK_MIB} MiB")
    print(f"{'trace':10s} {'policy':13s} {'jobs':>8s} {'parse s':>8s} {'sim s':>7s} {'cpu s':>7s} "
          f"{'jobs/s':>9s} {'peak MiB':>9s}  verdict")
    for name in options.traces:
        trace = DATA / TRACES[name] if name in TRACES else Path(name)
        for policy in options.policies:
            r = best_of(trace, policy, options.repeat)
            print(f"{name[:10]:10s} {policy[:13]:13s} {r['jobs']:8d} {r['parse_s']:8.2f} {r['sim_s']:7.2f} "
                  f"{r['sim_cpu_s']:7.2f} {r['jobs'] / r['sim_s']:9.0f} {r['peak_mib']:9.0f}  {verdict(policy, r)}",
                  flush=True)


if __name__ == "__main__":
    main()
