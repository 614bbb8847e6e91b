"""Speed of a Python policy plugin: the 40-line EASY of docs/examples/easy_policy.py on CTC-SP2.

Issue 25 §3: the whole command (``python -m engine simulate ... --policy-file docs/examples/easy_policy.py``,
reading the trace included, no parse cache) at least 5 times faster than pyss's
EasyBackfillScheduler on the same trace. Printed: wall and CPU seconds of each command, the
built-in EASY's for comparison, whether the plugin's schedule is the built-in's job by job, and
the machine's load (wall times on a shared machine stretch with it; CPU seconds much less).

pyss (GPL, Python 2; never part of this repository) runs when ``--pyss DIR`` names a Python 3 copy
of its ``src`` folder, made once, e.g. from github.com/dinesh121991/pyss:

    git clone https://github.com/dinesh121991/pyss /tmp/pyss && cp -r /tmp/pyss/src /tmp/pyss3
    cd /tmp/pyss3 && python3.11 -m lib2to3 -w -n . && for f in base/*.py schedulers/*.py; do
        expand -t 8 "$f" > "$f.tmp" && mv "$f.tmp" "$f"; done
    # and in base/prototype.py, JobEvent: __cmp__ -> __lt__ on _cmp_tuple (Python 3 has no cmp)

It then runs under ``python -O`` (pyss's own advice: its asserts are slow) on the decompressed
trace with the machine size of its header.

    .venv/bin/python benchmarks/plugin_speed.py [--trace CTC-SP2-1996-3.1-cln.swf.gz] [--pyss /tmp/pyss3]
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "docs" / "examples" / "easy_policy.py"
TARGET_RATIO = 5.0

#: our driver of pyss's EASY (pyss's own entry point imports every scheduler it has, some broken)
PYSS_DRIVER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from base.workload_parser import parse_lines
from base.prototype import _job_inputs_to_jobs
from schedulers.simulator import run_simulator
from schedulers.easy_scheduler import EasyBackfillScheduler
procs, path = int(sys.argv[2]), sys.argv[3]
with open(path) as trace:
    run_simulator(procs, _job_inputs_to_jobs(parse_lines(trace), procs), EasyBackfillScheduler(procs))
"""


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of ``command``; exits if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"{' '.join(command[:4])} ...: failed: {last}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def engine_command(trace: Path, out: Path, *policy: str) -> list[str]:
    return [sys.executable, "-m", "engine", "simulate", str(trace), *policy, "--out", str(out), "--no-parse-cache",
            "--no-progress"]


def header_procs(trace: Path) -> int:
    with gzip.open(trace, "rt") as lines:
        for line in lines:
            if not line.startswith(";"):
                break
            for field in ("MaxProcs:", "MaxNodes:"):
                if field in line:
                    return int(line.split(field)[1].split()[0])
    raise SystemExit(f"{trace}: no MaxProcs in the header")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", default="CTC-SP2-1996-3.1-cln.swf.gz")
    parser.add_argument("--pyss", type=Path, help="a Python 3 copy of pyss's src folder (see the docstring)")
    args = parser.parse_args()
    trace = SHARED_DATA / "swf" / args.trace
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores; trace {trace.name}")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        plugin = timed(engine_command(trace, work / "plugin.csv", "--policy-file", str(PLUGIN)), ROOT)
        builtin = timed(engine_command(trace, work / "easy.csv", "--policy", "easy"), ROOT)
        same = pd.read_csv(work / "plugin.csv")["start"].equals(pd.read_csv(work / "easy.csv")["start"])
        jobs = len(pd.read_csv(work / "plugin.csv"))
        print(f"plugin EASY ({PLUGIN.relative_to(ROOT)}): {plugin[0]:6.1f} s wall, {plugin[1]:6.1f} s CPU, "
              f"{jobs:,} jobs")
        print(f"built-in EASY:                            {builtin[0]:6.1f} s wall, {builtin[1]:6.1f} s CPU")
        print(f"the plugin's schedule is the built-in's job by job: {'yes' if same else 'NO'}")
        if args.pyss is not None:
            swf = work / trace.name.removesuffix(".gz")
            with gzip.open(trace, "rb") as source, open(swf, "wb") as target:
                shutil.copyfileobj(source, target)
            pyss = timed([sys.executable, "-O", "-W", "ignore", "-c", PYSS_DRIVER, str(args.pyss.resolve()),
                          str(header_procs(trace)), str(swf)], work)
            print(f"pyss EasyBackfillScheduler:               {pyss[0]:6.1f} s wall, {pyss[1]:6.1f} s CPU")
            for what, index in (("wall", 0), ("CPU", 1)):
                ratio = pyss[index] / plugin[index]
                print(f"pyss / plugin ({what}): {ratio:5.1f}x  (target >= {TARGET_RATIO:g}x: "
                      f"{'ok' if ratio >= TARGET_RATIO else 'MISSED'})")
    print(f"load after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
