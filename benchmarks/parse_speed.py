"""Parse speed and peak memory of the SWF reader on three real traces.

Each trace is measured in a fresh child process, so the peak resident memory (getrusage
ru_maxrss) belongs to that trace alone; "import" is the peak after importing numpy/pandas/engine,
"peak" the peak after reading. Times are the best of --repeat runs.

    .venv/bin/python benchmarks/parse_speed.py [--repeat 3] [TRACE ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
DATA = (SHARED_DATA / "swf")
DEFAULT_TRACES = (
    "HPC2N-2002-2.2-cln.swf.gz",
    "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz",
)

CHILD = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from engine.workload import load_workload
from engine.workload.cache import load, save
from engine.workload.swf import read_swf

path, repeat = sys.argv[2], int(sys.argv[3])
import_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

def best(action):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return min(times), result

parse_s, trace = best(lambda: read_swf(path))
parse_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
load_s, workload = best(lambda: load_workload(path))
with tempfile.TemporaryDirectory() as folder:
    cache = Path(folder) / "w.npz"
    save(workload, cache)
    cache_s, _ = best(lambda: load(cache))
print(json.dumps({
    "jobs": trace.lines, "parse_s": parse_s, "load_s": load_s, "cache_load_s": cache_s,
    "import_mib": import_kib / 1024, "parse_peak_mib": parse_kib / 1024,
}))
"""


def measure(trace: Path, repeat: int) -> dict:
    output = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), str(trace), str(repeat)],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="*", type=Path, default=[DATA / name for name in DEFAULT_TRACES])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    print(f"{'trace':32s} {'jobs':>8s} {'parse s':>8s} {'load s':>7s} {'cache s':>8s} "
          f"{'import MiB':>10s} {'peak MiB':>9s}")
    for trace in options.traces:
        r = measure(trace, options.repeat)
        print(f"{trace.name[:32]:32s} {r['jobs']:8d} {r['parse_s']:8.3f} {r['load_s']:7.3f} "
              f"{r['cache_load_s']:8.4f} {r['import_mib']:10.0f} {r['parse_peak_mib']:9.0f}")


if __name__ == "__main__":
    main()
