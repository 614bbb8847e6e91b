"""Size and memory of parsed traces whose text columns are uneven (issue 27).

    .venv/bin/python benchmarks/wide_text.py [--jobs 20000]

Writes, in a temporary folder: a real-looking sacct dump of --jobs jobs (1-8 nodes each among
n0001..n2048, one job on n[0001-2048]: 4.8 MB for 20,000), the same dump gzipped with one 40 KB
partition name, and a 17.8 KB-class host-list bomb (2,000 lines each on ``n[1-99990],xN``). Each is
read in a fresh child process, which prints its peak resident memory (getrusage ru_maxrss), the
parse time, the cache's size and its load time, then the load time of the same workload kept the
old way (version 1: text as fixed-width unicode) where that is not absurd (the dump without its wide
job). Before: 990 MB cache and 1.15 GB of worker memory; 801 MB; 40 s and 8.2 GB.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADER = ("JobID|JobIDRaw|Partition|QOS|Account|User|Group|Submit|Eligible|Start|End|Elapsed|State|NNodes|NCPUS|"
          "ReqCPUS|ReqMem|ReqTRES|AllocTRES|Timelimit|NodeList")

CHILD = r"""
import json, os, resource, sys, tempfile, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from engine.api import WorkloadError, load_parsed, read_trace, save_parsed

def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def best_load(path):
    times = []
    for _ in range(5):
        began = time.perf_counter()
        load_parsed(path)
        times.append(time.perf_counter() - began)
    return min(times)

def as_version_1(workload, path):
    jobs = workload.jobs
    columns = list(jobs.columns)
    arrays = {f"col{i}": jobs[n].to_numpy() if jobs[n].dtype.kind in "biuf" else np.asarray(jobs[n].to_numpy(), dtype=np.str_)
              for i, n in enumerate(columns)}
    info = {"format": "schedlab-workload-cache", "version": 1, "columns": columns,
            "dtypes": [str(jobs[n].dtype) for n in columns], "metadata": workload.metadata,
            "report": workload.report.to_dict(), "source": workload.source}
    arrays["__info__"] = np.frombuffer(json.dumps(info).encode(), dtype=np.uint8)
    with open(path, "wb") as out:
        np.savez(out, **arrays)

result = {"import_mib": peak_mib()}
began = time.perf_counter()
try:
    workload = read_trace(sys.argv[2])
except WorkloadError as exc:
    result.update(parse_s=time.perf_counter() - began, peak_mib=peak_mib(), refused=str(exc)[-110:])
    print(json.dumps(result)); sys.exit()
result.update(parse_s=time.perf_counter() - began, jobs=len(workload), peak_mib=peak_mib())
with tempfile.TemporaryDirectory() as folder:
    cache = os.path.join(folder, "w.npz")
    save_parsed(workload, cache)
    result.update(cache_mb=os.path.getsize(cache) / 1e6, load_s=best_load(cache), save_peak_mib=peak_mib())
    if sys.argv[3] == "compare":
        old = os.path.join(folder, "v1.npz")
        as_version_1(workload, old)
        result.update(v1_mb=os.path.getsize(old) / 1e6, v1_load_s=best_load(old))
print(json.dumps(result))
"""


def sacct_dump(jobs: int, *, wide: bool, partition: str = "", seed: int = 1) -> str:
    """The dump: random sizes, users, accounts, partitions; job jobs//2 on n[0001-2048] when ``wide``."""
    rng = random.Random(seed)
    epoch = datetime(2026, 1, 1)
    lines = [HEADER]
    for job in range(1, jobs + 1):
        submit = epoch + timedelta(seconds=job * 60)
        start = submit + timedelta(seconds=rng.randint(0, 3600))
        runtime = rng.randint(10, 7200)
        nodes = rng.choice([1, 1, 1, 2, 4, 8])
        first = rng.randint(1, 2048 - nodes + 1)
        nodelist = f"n{first:04d}" if nodes == 1 else f"n[{first:04d}-{first + nodes - 1:04d}]"
        if wide and job == jobs // 2:
            nodes, nodelist = 2048, "n[0001-2048]"
        queue = partition if partition and job == 3 else rng.choice(["short", "long", "gpu"])
        cpus, elapsed = nodes * 32, f"{runtime // 3600:02d}:{runtime % 3600 // 60:02d}:{runtime % 60:02d}"
        lines.append(f"{job}|{job}|{queue}|normal|proj{rng.randint(1, 40)}|user{rng.randint(1, 200)}|"
                     f"grp{rng.randint(1, 20)}|{submit.isoformat()}|{submit.isoformat()}|{start.isoformat()}|"
                     f"{(start + timedelta(seconds=runtime)).isoformat()}|{elapsed}|COMPLETED|{nodes}|{cpus}|{cpus}|"
                     f"{4000 * nodes}M|billing={cpus},cpu={cpus},mem={4000 * nodes}M,node={nodes}|"
                     f"billing={cpus},cpu={cpus},node={nodes}|02:00:00|{nodelist}")
    return "\n".join(lines) + "\n"


def host_bomb(lines: int) -> str:
    """Short lines whose NodeLists each name 99,991 hosts (distinct, so none is shared)."""
    body = [f"{job}|{job}|short|normal|root|root|root|2026-11-23T15:48:18|2026-11-23T15:48:18|2026-11-23T15:48:18|"
            f"2026-11-23T15:48:39|00:00:21|COMPLETED|1|2|2|200M|billing=2,cpu=2,mem=200M,node=1|"
            f"billing=2,cpu=2,node=1|00:05:00|n[1-99990],x{job}" for job in range(1, lines + 1)]
    return "\n".join([HEADER, *body]) + "\n"


def measure(path: Path, compare: bool) -> dict:
    output = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(path), "compare" if compare else "-"],
                            check=True, capture_output=True, text=True).stdout
    return json.loads(output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wide-text-") as folder:
        base = Path(folder)
        cases = []
        wide = base / "sacct-wide.txt"
        wide.write_text(sacct_dump(args.jobs, wide=True))
        cases.append(("sacct, one job on n[0001-2048]", wide, False))
        plain = base / "sacct-plain.txt"
        plain.write_text(sacct_dump(args.jobs, wide=False))
        cases.append(("same without it (v1 compared)", plain, True))
        queue = base / "sacct-queue.txt.gz"
        with gzip.open(queue, "wt") as out:
            out.write(sacct_dump(args.jobs // 4, wide=False, partition="q" * 40_000))
        cases.append(("gz, one 40 KB partition name", queue, False))
        bomb = base / "bomb.txt.gz"
        with gzip.open(bomb, "wt", compresslevel=9) as out:
            out.write(host_bomb(2_000))
        cases.append(("host-list bomb, 2,000 lines", bomb, False))
        print(f"{'file':34s} {'size KB':>8s} {'parse s':>8s} {'peak MiB':>9s} {'cache MB':>9s} {'load s':>7s}  notes")
        for title, path, compare in cases:
            r = measure(path, compare)
            notes = (f"refused: ...{r['refused']}" if "refused" in r else
                     f"v1: {r['v1_mb']:.1f} MB, load {r['v1_load_s']:.4f} s" if compare else "")
            cache = f"{r['cache_mb']:9.2f} {r['load_s']:7.4f}" if "cache_mb" in r else f"{'-':>9s} {'-':>7s}"
            print(f"{title:34s} {path.stat().st_size / 1e3:8.1f} {r['parse_s']:8.2f} {r['peak_mib']:9.0f} {cache}  {notes}",
                  flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
