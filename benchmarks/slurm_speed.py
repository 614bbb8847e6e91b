"""Speed of the ``slurm`` policy (issue 24, Speed): a Slurm site as configured, at grid scale and on the
real Slurm trace.

* ``grid``: the synthetic NGI_CZ month (benchmarks/metacentrum_speed.synthetic_jobs, ``--jobs`` 500,000
  at load 1.0 on the 47 clusters, 34,556 cores, the 2014 queues) written as a ``sacct --parsable2``
  dump (Start = Submit: a workload, not a recorded run; 300 users in ``--accounts`` accounts), with a
  slurm.conf made for it (a NodeName line per cluster, a partition per queue with its MaxTime and its
  priority as PriorityJobFactor, ``priority/multifactor`` with Fair Tree, ``sched/backfill`` with
  ``bf_max_job_test`` ``--bf-max-job-test`` (500)), a QOS dump (normal, MaxJobsPU ``--max-jobs-pu``)
  and an association dump. Then the whole command, in a fresh child (parse cache off)::

      python -m engine simulate grid.sacct --slurm-conf slurm.conf --qos qos.txt --assoc assoc.txt \\
          --policy slurm --out S.csv

  Target: <= 180 s and <= 4 GiB peak memory. The generator spreads 500,000 jobs at load 1.0 over
  seven months (Jan 1 - Aug 3): the harder figure, kept as the grid's. With ``--month`` the same jobs
  fill one month (31 days) at load 1.0 on the same cores: every submission, runtime and time limit,
  and each partition's MaxTime, scaled by 31 days over the seven months' span (the work per second
  offered stays the machine's; the jobs, their order and the queues are the same, in compressed
  time; the schedulers' intervals are not scaled, so a month has a seventh of the passes).
* ``replay``: the same command on tests/data/slurm_replay (the real Slurm 22.05 run, 330 jobs).
  Target: < 2 s.

Measured (2026-11-27, the shared 2-core machine, other engineers' runs beside: read CPU seconds;
main at 4478f51 unless said):

* replay: 1.15 s CPU (1.16 s wall, load 1.7): met.
* grid, 100,000 jobs: 28-41 s CPU (load 2-3; 30.8 s for main before the backfill look-ahead, the
  same load), schedules byte-identical; 20,000 jobs: 3.9 s.
* grid, 500,000 jobs over one month (``--month``): 177 s CPU, 321 s wall, 1,142 MiB, load 3.0
  (before the queue order's merge, 59fe7d1); 190 s CPU, 373 s wall, 1,131 MiB, load 3.4, with a
  seven-month run beside it. Mean wait 4.31 h.
* grid, 500,000 jobs over seven months: 390 s CPU, 605 s wall, 1,143 MiB, load 3.2 (59fe7d1,
  with the month's run beside it); 407 s CPU, 591 s wall, 1,134 MiB (4478f51, the month's run
  beside it for most of it; the same schedule: the order's merge gains nothing measurable here).
  Mean wait 29.1 h (28.0 h under the rules before the backfill table's and will-run's of
  2026-11-27, when 477 s CPU were measured at load 6-8). Target MISSED.
  What is left (py-spy, before those rules): the main scheduler's walk over the whole queue every
  sched_interval (a third), the queue's order made for each pass (a quarter), the backfill walk.
* grid, 500,000 jobs over one month, the order's int64 keys kept between passes and a few arrived
  jobs priced in Python floats (slurmspeed2): 144.0 s CPU, 267 s wall, 1,142 MiB, with main (77c9a5c)
  run beside it on the same files: 165.8 s CPU, 289 s wall (load 2.8-3.1); the same schedule and
  summary, byte for byte (also the 20k and 100k grids). py-spy of the month (77c9a5c): the order's
  merge of each pass's new jobs (their priorities, the keys of the whole order remade and checked)
  was a fifth of the run; with the keys kept (before the pricing in floats): main_walk's compiled walk ~14 %, backfill ~11 %, the order's
  insert (np.insert of the new jobs, three arrays) ~10 %, submissions' limits ~7 %.

* Another host of the same kind (2026-11-27 evening, 2 cores, quiet: load 1.0-1.1), main at bec3688:
  the month grid 223.8 s CPU (224.8 s wall, 1,364 MiB); replay 2.38-2.63 s CPU. b1f5326, measured at
  132.2 s / 1.23 s on the earlier host, gives the same replay figures here (2.33-2.82 s): the host is
  1.7-1.9x slower (a plain Python loop of 10^7 additions: 1.0-2.1 s run to run). With the bytecode
  written first (below): replay 1.99-2.42 s CPU. A/B of a head-only order for the main scheduler's
  default_queue_depth passes (not kept): 216.2 s against 212.2 s without, the month grid's schedule
  byte-identical either way.

* The same slow host (2026-11-28, quiet: load 1.0; ``/tmp/ab.sh``-style A/B, the month grid's command
  alternated between main and 567743f in a second worktree): 567743f 224.0 s and 231.8 s CPU; after
  the queue's order kept by one compiled merge (slurmkernels.keyed_merge, instead of a dozen numpy
  calls and three np.insert per pass), SiteLimits.never found once per kind of job and skipped where
  no row sets a limit a job alone breaks, the usage left in its array, and the passes' walks called
  directly (3c80a1b): 165.6, 175.9, 179.2 s CPU, 1,404 MiB, the schedule byte-identical; with the
  running jobs' arrays kept by direct calls too (this script, 02:27-02:30, load 0.7-1.0): 168.7 s CPU,
  169.1 s wall, 1,405 MiB: met. The replay in the same run: 1.97-2.13 s CPU (met once in three): its
  fixed costs are importing the engine (~0.9 s, pandas 0.6 s of it) and numba (~0.45 s) and loading
  the cached kernels (~0.3 s); plain-Python kernels (numba not imported) gain ~0.15 s on these 330 jobs
  and lose at any size beyond, so not taken. A main pass of default_queue_depth jobs walking only the
  order's head (1134b61, slurmkernels.keyed_head), A/B against a10b016 with CI beside (load 1.7-2.1):
  167.9 and 154.6 s CPU against 176.0 and 153.3 s, within this host's noise; the time spent making
  the order, summed over its 687,169 calls in one run each: 18.0 s against 24.9 s. py-spy
  (3c80a1b's parent): the merge's O(queue) copy is now its cost (the queue holds ~2,800 jobs at a
  submission on average, ~10,000 at the 90th percentile: 18 us a merge at 3,000, 55 us at 10,000);
  the main walk ~9 %, the backfill walk ~11 %, submissions' _top_priority ~12 %.

* A fast host (2026-11-28 morning, 2 cores; a plain Python loop of 10^7 additions 0.69 s): main at
  0655596 (load 0.4-1.0, nothing beside): the month grid 65.2 s CPU (65.7 s wall), 1,408 MiB; the
  replay 0.84-0.91 s CPU. At 4e37b5e (partition access lists, the backfill pass's caps and
  bf_max_job_start, default_queue_depth + 1, TRES/association priority factors; load 3.0, a real
  Slurm recording and tests beside): the month grid 78.8 s CPU (83.8 s wall), 1,460 MiB, mean wait
  4.31 h as before; the replay 0.90-0.95 s CPU. The 100k month grid at 32c602f (the caps, K = 0 here)
  17.2 s CPU against 18.4 s at 16d3ca5, the schedule byte-identical.

Each figure: wall and CPU seconds of the child (``wait4``), its peak resident memory, the 1-minute
load average when it ended (the machine is shared: read CPU seconds first). numba's cache is filled
first by one untimed replay, so no timed command compiles the profile kernels, and the engine's
bytecode is written first (``compileall``), as an installed copy has it: with PYTHONDONTWRITEBYTECODE
set (this machine's environment, 2026-11-27) each child otherwise compiles the engine's ~50 imported
modules from source, 0.27 s of the replay's CPU.

    .venv/bin/python benchmarks/slurm_speed.py [--only grid replay] [--jobs 500000] [--month] [--work DIR]
"""

from __future__ import annotations

import argparse
import compileall
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from metacentrum_speed import synthetic_jobs  # noqa: E402
from scale import NGI, ROOT, line, run_child  # noqa: E402

from engine.platform.machines import Machine, read_machines  # noqa: E402
from engine.platform.queues import load_queue_config  # noqa: E402

REPLAY = ROOT / "tests" / "data" / "slurm_replay"
GRID_SECONDS = 180.0
GRID_MIB = 4096
REPLAY_SECONDS = 2.0
EPOCH = np.datetime64("2014-01-01T00:00:00", "s")
MONTH = 31 * 86400
SACCT_HEADER = ("JobID|JobIDRaw|Partition|QOS|Account|User|Group|Submit|Eligible|Start|End|State|NNodes|NCPUS|"
                "ReqCPUS|ReqMem|Timelimit")


def site_command(trace: Path, site: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "engine", "simulate", str(trace), "--slurm-conf", str(site / "slurm.conf"),
            "--qos", str(site / "qos.txt"), "--assoc", str(site / "assoc.txt"), "--policy", "slurm",
            "--out", str(out), "--summary", str(out.with_suffix(".json")), "--no-progress", "--no-parse-cache"]


def slurm_time(seconds: int) -> str:
    days, rest = divmod(int(seconds), 86400)
    return f"{days}-{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def month_scale(jobs: pd.DataFrame) -> float:
    """The factor that puts the jobs' submissions into one month (--month): 31 days over their span."""
    return MONTH / max(int(jobs["submit"].max()), 1)


def limit_time(seconds: int, scale: float) -> int:
    """A time limit in compressed time, whole minutes (Slurm's unit for MaxTime and --time)."""
    return seconds if scale == 1.0 else max(int(round(seconds * scale / 60)), 1) * 60


def write_site(machine: Machine, folder: Path, options: argparse.Namespace, scale: float = 1.0) -> None:
    """slurm.conf (a NodeName line per cluster, a partition per 2014 queue, MaxTime x ``scale``), the
    QOS and association dumps."""
    queues = load_queue_config("metacentrum-2014").queues
    nodes = [f"NodeName={c.name}n[1-{c.nodes}] CPUs={c.cores} RealMemory={max(c.ram_kb // 1024, 1)}"
             + (f" Gres=gpu:{c.gpus}" if c.gpus else "") for c in machine.clusters]
    partitions = [f"PartitionName={q.name} Nodes=ALL MaxTime={slurm_time(limit_time(q.walltime, scale))} "
                  f"PriorityJobFactor={q.priority}"
                  f" PriorityTier=1" + (" Default=YES" if q.name == "q_1d" else "") for q in queues]
    conf = [
        "# made by benchmarks/slurm_speed.py for the synthetic NGI_CZ grid", "ClusterName=ngicz",
        "SchedulerType=sched/backfill",
        f"SchedulerParameters=bf_interval=30,bf_resolution=60,bf_window=43200,bf_max_job_test={options.bf_max_job_test},"
        "bf_continue,default_queue_depth=100,sched_interval=60",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
        "PriorityType=priority/multifactor", "PriorityCalcPeriod=5", "PriorityDecayHalfLife=7-0",
        "PriorityMaxAge=7-0", "PriorityFavorSmall=NO", "PriorityWeightAge=1000", "PriorityWeightFairshare=10000",
        "PriorityWeightJobSize=1000", "PriorityWeightPartition=2000", "PriorityWeightQOS=0",
        "AccountingStorageEnforce=associations,limits,qos",     # (else Slurm holds no job by its QOS's MaxJobsPU)
        *nodes, "PartitionName=DEFAULT State=UP", *partitions]
    (folder / "slurm.conf").write_text("\n".join(conf) + "\n", encoding="utf-8")
    qos_header = "Name|Priority|GraceTime|Flags|UsageFactor|MaxWall|MaxTRESPU|MaxJobsPU|MaxSubmitPU"
    (folder / "qos.txt").write_text(f"{qos_header}\nnormal|0|00:00:00||1.000000|||{options.max_jobs_pu}|\n",
                                    encoding="utf-8")
    rng = np.random.default_rng(24)
    rows = ["Cluster|Account|User|Partition|Share|QOS|Def QOS", "ngicz|root|||1|normal|"]
    for a in range(options.accounts):
        rows.append(f"ngicz|acct{a:02d}|||{int(rng.integers(1, 100))}|normal|")
    for u in range(300):
        rows.append(f"ngicz|acct{u % options.accounts:02d}|u{u:03d}||1|normal|")
    (folder / "assoc.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")


def write_sacct(jobs: pd.DataFrame, path: Path, options: argparse.Namespace, scale: float = 1.0) -> None:
    """The synthetic jobs as a sacct dump (ISO times from 2014-01-01; Start = Submit, End = Start +
    runtime), their times x ``scale`` (a time limit in whole minutes, a runtime within it)."""
    if scale != 1.0:
        jobs = jobs.copy()
        jobs["submit"] = (jobs["submit"] * scale).round().astype(np.int64)
        jobs["requested_time"] = [limit_time(t, scale) for t in jobs["requested_time"].tolist()]
        jobs["runtime"] = np.clip((jobs["runtime"] * scale).round().astype(np.int64), 1, jobs["requested_time"])
    submit = EPOCH + jobs["submit"].to_numpy().astype("timedelta64[s]")
    end = submit + jobs["runtime"].to_numpy().astype("timedelta64[s]")
    iso = lambda times: np.datetime_as_string(times, unit="s")   # noqa: E731
    ident = (jobs["job_id"] + 1).astype(str)
    user = jobs["user"].to_numpy()
    frame = pd.DataFrame({
        "JobID": ident, "JobIDRaw": ident, "Partition": jobs["queue_name"], "QOS": "normal",
        "Account": [f"acct{u % options.accounts:02d}" for u in user.tolist()],
        "User": [f"u{u:03d}" for u in user.tolist()], "Group": "g", "Submit": iso(submit), "Eligible": iso(submit),
        "Start": iso(submit), "End": iso(end), "State": "COMPLETED", "NNodes": jobs["nodes"], "NCPUS": jobs["procs"],
        "ReqCPUS": jobs["procs"], "ReqMem": (jobs["mem"] // 1024).astype(str) + "Mn",
        "Timelimit": [slurm_time(t) for t in jobs["requested_time"].tolist()]})
    assert "|".join(frame.columns) == SACCT_HEADER
    frame.to_csv(path, sep="|", index=False)


def grid(options: argparse.Namespace, work: Path) -> None:
    machine = read_machines(NGI)
    jobs = synthetic_jobs(options.jobs, machine, load=1.0).jobs
    scale = month_scale(jobs) if options.month else 1.0
    days = jobs["submit"].max() * scale / 86400
    note = f" (times x {scale:.4f}: one month)" if options.month else ""
    print(f"\n## NGI_CZ ({len(machine.clusters)} clusters, {machine.cores:,} cores), {options.jobs:,} synthetic jobs "
          f"at load 1.0 over {days:.0f} days{note} as a "
          f"sacct dump, slurm.conf with multifactor priority and bf_max_job_test={options.bf_max_job_test}: "
          f"whole command")
    name = f"grid-{options.jobs}{'-month' if options.month else ''}"
    site = work / f"site{'-month' if options.month else ''}"
    site.mkdir(exist_ok=True)
    write_site(machine, site, options, scale)
    trace = work / f"{name}.sacct"
    if not trace.exists():
        write_sacct(jobs, trace, options, scale)
    out = work / f"{name}-slurm.csv"
    r = run_child(site_command(trace, site, out), options.timeout)
    memory = f"  peak {r['peak_mib']:.0f} MiB, target {GRID_MIB} MiB: {'met' if r['peak_mib'] <= GRID_MIB else 'MISSED'}"
    line(f"grid slurm whole command{' (month)' if options.month else ''}", r, GRID_SECONDS, memory)
    if r["finished"]:
        schedule = pd.read_csv(out, usecols=["wait"])
        print(f"{'':<52} {len(schedule):,} jobs, mean wait {schedule['wait'].mean() / 3600:.2f} h")


def replay(options: argparse.Namespace, work: Path) -> None:
    print(f"\n## The real Slurm trace ({REPLAY.relative_to(ROOT)}, 330 jobs): whole command")
    trace = REPLAY / "sacct.txt"
    for round_ in range(options.repeat):
        r = run_child(site_command(trace, REPLAY, work / "replay.csv"), options.timeout)
        line(f"replay slurm whole command (run {round_ + 1})", r, REPLAY_SECONDS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", default=["replay", "grid"], choices=["replay", "grid"])
    parser.add_argument("--jobs", type=int, default=500_000)
    parser.add_argument("--month", action="store_true",
                        help="the grid's jobs in one month at load 1.0 (times scaled; see the docstring)")
    parser.add_argument("--accounts", type=int, default=30)
    parser.add_argument("--bf-max-job-test", type=int, default=500)
    parser.add_argument("--max-jobs-pu", type=int, default=1000, help="MaxJobsPU of the normal QOS")
    parser.add_argument("--repeat", type=int, default=3, help="replay runs")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before a child is stopped")
    parser.add_argument("--work", help="folder for the site files, traces and schedules (default: a temporary one)")
    options = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs; targets are CPU seconds of one child (one core)")
    with tempfile.TemporaryDirectory(prefix="schedlab-slurm-") as scratch:
        work = Path(options.work or scratch)
        work.mkdir(parents=True, exist_ok=True)
        compileall.compile_dir(str(ROOT / "engine"), quiet=1)
        warm = run_child(site_command(REPLAY / "sacct.txt", REPLAY, work / "warm.csv"), options.timeout)
        print(f"numba's cache filled first (one untimed replay): {warm['cpu_s']:.2f} s cpu", flush=True)
        for section in ("replay", "grid"):
            if section in options.only:
                globals()[section](options, work)


if __name__ == "__main__":
    main()
