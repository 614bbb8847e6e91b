"""How fast the accounting-log readers are: a PBS log and a sacct dump of 1,000,000 jobs each.

    .venv/bin/python benchmarks/accounting_parse.py                 # 1,000,000 jobs each
    .venv/bin/python benchmarks/accounting_parse.py --jobs 200000 --keep /tmp/bench

The PBS log replicates the real OpenPBS.log (200 jobs: Q, S and E records, licence lines) with job
ids and every time shifted per copy; the sacct dump replicates the real dump recorded on this
machine (tests/data/accounting/slurm_real_allocations.txt, 23 lines, 16 jobs that ran) the same way
(JobID/JobIDRaw shifted, ISO times shifted). Times the full read (load_workload: parse, clean) once
the file is written; prints the jobs read, wall and CPU seconds (the machine may be shared: the CPU
seconds are this process's own) and the load average. Target: <= 15 s each.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from shared_data import SHARED_DATA  # noqa: E402  (after the path set-up above)

from engine.workload import load_workload  # noqa: E402

PBS_SAMPLE = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"
SACCT_SAMPLE = REPO / "tests" / "data" / "accounting" / "slurm_real_allocations.txt"
EPOCH_KEYS = re.compile(r"\b(ctime|qtime|etime|start|end)=(\d+)")
PBS_ID = re.compile(r";(\d+)\.")
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def build_pbs(target: Path, jobs: int) -> int:
    """Copies of the sample log, each 3 days and 1,000 job ids after the one before; returns the jobs."""
    lines = [line for line in PBS_SAMPLE.read_text().splitlines() if line and not line.startswith(";")]
    per_copy = sum(1 for line in lines if ";E;" in line)
    copies = -(-jobs // per_copy)
    span = 3 * 86400
    # each line as pieces: text, then (kind, number) to shift: "d" its date, "i" the job id, "t" an epoch
    templates = []
    for line in lines:
        pieces: list = [("d", datetime.strptime(line[:19], "%m/%d/%Y %H:%M:%S"))]
        rest, position = line[19:], 0
        marks = [(m.start(1), m.end(1), "i", int(m.group(1))) for m in PBS_ID.finditer(rest)][:1]
        marks += [(m.start(2), m.end(2), "t", int(m.group(2))) for m in EPOCH_KEYS.finditer(rest)]
        for begin, finish, kind, value in sorted(marks):
            pieces += [rest[position:begin], (kind, value)]
            position = finish
        pieces.append(rest[position:] + "\n")
        templates.append(pieces)
    with open(target, "w") as out:
        for copy in range(copies):
            shift = copy * span
            date_shift = timedelta(seconds=shift)
            dates: dict = {}
            chunk = []
            for pieces in templates:
                for piece in pieces:
                    if isinstance(piece, str):
                        chunk.append(piece)
                    elif piece[0] == "d":
                        if piece[1] not in dates:
                            dates[piece[1]] = (piece[1] + date_shift).strftime("%m/%d/%Y %H:%M:%S")
                        chunk.append(dates[piece[1]])
                    else:
                        chunk.append(str(piece[1] + (copy * 1000 if piece[0] == "i" else shift)))
            out.write("".join(chunk))
    return copies * per_copy


def build_sacct(target: Path, jobs: int) -> int:
    """Copies of the sample dump, each an hour and 100 job ids after the one before; returns the jobs
    that ran."""
    header, *lines = SACCT_SAMPLE.read_text().splitlines()
    ran = len(load_workload(SACCT_SAMPLE))
    copies = -(-jobs // ran)
    templates = []
    for line in lines:
        fields = line.split("|")
        pieces: list = []
        for index, field in enumerate(fields):
            head = re.match(r"\d+", field) if index in (0, 1) else None
            if head:
                pieces += [("i", int(head.group(0))), field[head.end():]]
            elif ISO.fullmatch(field):
                pieces.append(("t", datetime.fromisoformat(field)))
            else:
                pieces.append(field)
            pieces.append("|" if index < len(fields) - 1 else "\n")
        templates.append(pieces)
    with open(target, "w") as out:
        out.write(header + "\n")
        for copy in range(copies):
            shift = timedelta(hours=copy)
            chunk = []
            for pieces in templates:
                for piece in pieces:
                    if isinstance(piece, str):
                        chunk.append(piece)
                    elif piece[0] == "i":
                        chunk.append(str(piece[1] + copy * 100))
                    else:
                        chunk.append((piece[1] + shift).isoformat())
            out.write("".join(chunk))
    return copies * ran


def timed(path: Path) -> tuple[int, float, float]:
    """Jobs read, wall seconds and CPU seconds of this process (the machine may be shared)."""
    began, cpu = time.perf_counter(), time.process_time()
    workload = load_workload(path)
    return len(workload), time.perf_counter() - began, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="write the files here (and reuse them when present)")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="accounting-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    for name, build in (("pbs", build_pbs), ("sacct", build_sacct)):
        path = folder / f"{name}-{args.jobs}.log"
        if not path.exists():
            began = time.perf_counter()
            build(path, args.jobs)
            print(f"{name}: built {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - began:.0f} s",
                  flush=True)
        jobs, seconds, cpu = timed(path)
        print(f"{name}: {jobs:,} jobs read in {seconds:.1f} s wall, {cpu:.1f} s CPU "
              f"({jobs / seconds:,.0f} jobs/s; load average {os.getloadavg()[0]:.1f})", flush=True)
        if not args.keep:
            path.unlink()


if __name__ == "__main__":
    main()
