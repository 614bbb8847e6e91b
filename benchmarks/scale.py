"""Speed at scale (issue 14): whole real traces and a national grid, with time, CPU, memory and queue.

Every figure comes from a fresh child process: the **whole command** (``python -m engine simulate``:
imports, parse, simulate, write the schedule and the summary; its parse cache off, so every parse
is cold: benchmarks/command_stages.py shows the warm figure) and, for the homogeneous traces, the
**simulate call alone** (the child loads the trace, then times ``simulate()`` only). For each child:
wall seconds, CPU seconds (the child's user+system time from ``wait4``), peak resident memory, the
peak number of waiting jobs (from the schedule it wrote: submitted, not yet started) and the
1-minute load average when it ended (the machine is shared: read CPU seconds first).

Sections (``--only`` picks some):

* ``homogeneous``: HPC2N-2002, RICC-2010 (``--procs 8192``, its header is stripped), CEA-Curie-2011
  under fcfs, easy, conservative.
* ``wagap``: wagap-2013 under mrfs-easy and the 2014 queues.
* ``grid``: synthetic MetaCentrum jobs (``metacentrum_speed.synthetic_jobs``) on NGI_CZ (47 clusters,
  34,556 cores), written as a MetaCentrum SWF so the command parses them like a real trace:
  ``--jobs`` (500,000) at each ``--loads`` (1.0 1.3) under mrfs-fcfs, mrfs-easy and
  mrfs-conservative, with the backfill bound (``--bound``, like Slurm's bf_max_job_test) and
  exact (no bound) (``--modes``); the bounded schedule is compared with the exact one job by job.
* ``growth``: time against job count (``--counts`` 50k 100k 200k 500k) and peak queue, mrfs-easy
  exact and bounded at ``--growth-load`` (1.3), mrfs-fcfs beside (the exact/fcfs ratio target is 4);
  CPU microseconds per job beside each, constant when the cost is linear in the jobs.

Targets (issue 14) are printed beside each figure. A child that runs longer than ``--timeout``
seconds is stopped and reported as such (with its memory when stopped).

    .venv/bin/python benchmarks/scale.py [--only homogeneous wagap grid growth] [--timeout 1800]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.platform.machines import read_machines  # noqa: E402
from metacentrum_speed import synthetic_jobs  # noqa: E402
from shared_data import SHARED_DATA  # noqa: E402

SWF = SHARED_DATA / "swf"
META = SHARED_DATA / "metacentrum"
NGI = META / "aleang" / "NGI_CZ.swf.machines"
HOMOGENEOUS = {   # name: (file, extra flags, {policy: whole-command target s}, simulate-alone targets)
    "HPC2N": ("HPC2N-2002-2.2-cln.swf.gz", [], {"easy": 1.5, "conservative": 8.0}, {"fcfs": 0.5, "easy": 0.5}),
    "RICC": ("RICC-2010-2.swf.gz", ["--procs", "8192"], {"easy": 5.0, "conservative": 20.0}, {}),
    "CEA-Curie": ("CEA-Curie-2011-2.1-cln.swf.gz", [], {"easy": 5.0, "conservative": 20.0}, {}),
}
GRID_TARGETS = {"mrfs-easy": 180.0, "mrfs-conservative": 600.0}
GRID_MEMORY_MIB = 4096
WAGAP_TARGET = 2.0
EXACT_OVER_FCFS = 4.0

SIMULATE_ALONE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from engine.run import simulate
from engine.workload import load_workload
path, policy, procs = sys.argv[2], sys.argv[3], (int(sys.argv[4]) if len(sys.argv) > 4 else None)
workload = load_workload(path, procs=procs)
figures = {"numba_before": "numba" in sys.modules}   # a large SWF's parse (engine.workload.swfscan) loads it
for call in ("first", "second"):
    wall, cpu = time.perf_counter(), time.process_time()
    simulate(workload, int(workload.metadata["procs"]), policy)
    figures[call] = {"sim_s": time.perf_counter() - wall, "sim_cpu_s": time.process_time() - cpu}
print(json.dumps(figures))
"""


def run_child(args: list[str], timeout: float) -> dict:
    """Run a child: wall and CPU seconds, peak memory (MiB; wait4 on exactly that child), whether it
    finished, its last error line, and the load average when it ended."""
    started = time.perf_counter()
    process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            process.send_signal(signal.SIGKILL)
            pid, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)
    err = process.stderr.read().decode(errors="replace") if process.stderr else ""
    return {"wall_s": time.perf_counter() - started, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_mib": usage.ru_maxrss / 1024, "finished": process.returncode == 0,
            "error": (err.strip().splitlines() or [f"exit {process.returncode}"])[-1] if process.returncode else "",
            "load": os.getloadavg()[0]}


def command(trace: Path, policy: str, out: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "engine", "simulate", str(trace), "--policy", policy, "--out", str(out),
            "--summary", str(out.with_suffix(".json")), "--no-progress", "--no-parse-cache", *extra]


def peak_queue(schedule: Path) -> int:
    """The most jobs waiting at once (submitted, not started; a job starting at its submit never waits)."""
    frame = pd.read_csv(schedule, usecols=["submit", "start"])
    times = np.concatenate([frame["submit"].to_numpy(), frame["start"].to_numpy()])
    steps = np.concatenate([np.ones(len(frame), np.int64), -np.ones(len(frame), np.int64)])
    order = np.lexsort((steps, times))     # at one instant, starts before submits
    return int(np.cumsum(steps[order]).max())


def line(label: str, r: dict, target: float | None = None, extra: str = "") -> None:
    if not r["finished"]:
        state = f"NOT FINISHED ({r['error'] or 'stopped at the time limit'})"
        print(f"{label:<52} {r['wall_s']:8.1f} s wall {r['cpu_s']:8.1f} s cpu {r['peak_mib']:7.0f} MiB  "
              f"load {r['load']:4.1f}  {state}", flush=True)
        return
    verdict = "" if target is None else f"  target {target:g} s: {'met' if r['cpu_s'] <= target else 'MISSED'} (cpu)"
    print(f"{label:<52} {r['wall_s']:8.2f} s wall {r['cpu_s']:8.2f} s cpu {r['peak_mib']:7.0f} MiB  "
          f"load {r['load']:4.1f}{extra}{verdict}", flush=True)


WARM_UP = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from engine.run import simulate
from engine.sim.simulator import Simulation
from tests.engine.conftest import make_workload
Simulation.compiled = True
cpu = time.process_time()
for policy in ("fcfs", "easy", "conservative"):
    simulate(make_workload([(0, 5, 10, 2), (1, 5, 5, 4), (2, 3, 5, 1)]), 4, policy)
print(f"{time.process_time() - cpu:.2f}")
"""


GRID_WARM_UP = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from engine.platform.machines import read_machines
from engine.platform.queues import load_queue_config
from engine.run import simulate
from metacentrum_speed import synthetic_jobs
machine = read_machines(sys.argv[2])
workload = synthetic_jobs(2_000, machine, load=1.3)
cpu = time.process_time()
for policy in ("mrfs-fcfs", "mrfs-easy", "mrfs-conservative"):
    for params in ({}, {"backfill_bound": 100}):
        if params and policy == "mrfs-fcfs":
            continue
        simulate(workload, None, {"preset": policy, "params": params}, machine=machine,
                 queues=load_queue_config("metacentrum-2014"))
print(f"{time.process_time() - cpu:.2f}")
"""


def warm_grid_kernels() -> None:
    """Fill numba's cache with the node-level kernels first, so no timed command compiles them."""
    warm = subprocess.run([sys.executable, "-c", GRID_WARM_UP, str(ROOT), str(NGI)], capture_output=True, text=True,
                          check=True)
    print(f"numba's cache filled first with the node-level kernels: {float(warm.stdout):.2f} s cpu "
          "(seconds: it compiled; under one: it was there)", flush=True)


def homogeneous(options: argparse.Namespace, work: Path) -> None:
    print("\n## Homogeneous real traces: whole command, then the simulate call alone")
    warm = subprocess.run([sys.executable, "-c", WARM_UP, str(ROOT)], capture_output=True, text=True, check=True)
    print(f"numba's cache (next to the sources) filled first: {float(warm.stdout):.2f} s cpu "
          "(seconds: it compiled; under one: it was there), so whole commands load the kernels from it")
    for name in options.traces:
        file, flags, targets, alone = HOMOGENEOUS[name]
        trace = SWF / file
        for policy in options.policies:
            out = work / f"{name}-{policy}.csv"
            r = run_child(command(trace, policy, out, flags), options.timeout)
            queue = f"  peak queue {peak_queue(out):,}" if r["finished"] else ""
            line(f"{name} {policy} whole command", r, targets.get(policy), queue)
            if r["finished"] and policy in alone or options.alone:
                simulate_alone(name, trace, policy, flags, alone.get(policy), options.timeout)


def simulate_alone(name: str, trace: Path, policy: str, flags: list[str], target: float | None, timeout: float) -> None:
    """simulate() alone, in fresh children: the first call with numba's cache empty (it compiles
    the kernels), the first call with the cache written by that child (the kernels loaded from
    disk: what a command pays; numba is imported in the call unless the parse imported it, which
    a large plain SWF's compiled pass does, and the label says so), and a second call in that same
    child (numba loaded already: what a long-lived worker pays)."""
    procs = flags[1:] if flags else []
    with tempfile.TemporaryDirectory(prefix="schedlab-numba-") as cache:
        environment = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = []
        for _ in range(2):
            sim = subprocess.run([sys.executable, "-c", SIMULATE_ALONE, str(ROOT), str(trace), policy, *procs],
                                 capture_output=True, text=True, timeout=timeout, env=environment)
            if sim.returncode != 0:
                print(f"{name} {policy} simulate() alone: failed ({sim.stderr.strip().splitlines()[-1:]})")
                return
            runs.append(json.loads(sim.stdout))
    cached = "first call, cached" + (" (numba imported by the parse)" if runs[1]["numba_before"] else "")
    for label, figures in (("first call, compiling", runs[0]["first"]), (cached, runs[1]["first"]),
                           ("second call, numba loaded", runs[1]["second"])):
        if label.endswith("compiling"):      # a one-off after an install or an engine edit: not the target's case
            verdict = "" if target is None else "  (compiles the kernels once: the target is the cached call)"
        else:
            verdict = "" if target is None else \
                f"  target {target:g} s: {'met' if figures['sim_cpu_s'] <= target else 'MISSED'} (cpu)"
        print(f"{name + ' ' + policy + ' simulate() ' + label:<84} {figures['sim_s']:8.2f} s wall "
              f"{figures['sim_cpu_s']:8.2f} s cpu {'':>11}  load {os.getloadavg()[0]:4.1f}{verdict}", flush=True)


def wagap(options: argparse.Namespace, work: Path) -> None:
    print("\n## wagap-2013 (17,900 jobs, 2 clusters), mrfs-easy, 2014 queues: whole command")
    warm_grid_kernels()
    out = work / "wagap.csv"
    flags = ["--machines", str(META / "alea" / "wagap-2013.swf.machines"), "--queues", "metacentrum-2014"]
    # once first: a kernel the grid's warm-up does not call would compile in the timed run (seen: 2.4 s
    # in a new checkout, 1.4 s after)
    first = run_child(command(META / "alea" / "wagap-2013.swf", "mrfs-easy", out, flags), options.timeout)
    line("wagap-2013 mrfs-easy first run (may compile)", first)
    r = run_child(command(META / "alea" / "wagap-2013.swf", "mrfs-easy", out, flags), options.timeout)
    line("wagap-2013 mrfs-easy whole command", r, WAGAP_TARGET,
         f"  peak queue {peak_queue(out):,}" if r["finished"] else "")


def write_metacentrum_swf(count: int, load: float, path: Path) -> None:
    """The synthetic jobs as a MetaCentrum 21-field SWF (memory in bytes per node, queue name, nodespec)."""
    jobs = synthetic_jobs(count, read_machines(NGI), load=load).jobs
    spec = (jobs["nodes"].astype(str) + ":ppn=" + jobs["ppn"].astype(str)
            + np.where(jobs["gpus"] > 0, ":gpu=" + jobs["gpus"].astype(str), ""))
    frame = pd.DataFrame({
        "id": jobs["job_id"] + 1, "submit": jobs["submit"], "wait": -1, "runtime": jobs["runtime"],
        "procs": jobs["procs"], "cpu": -1, "mem": -1, "req_procs": jobs["procs"],
        "req_time": jobs["requested_time"], "req_mem": jobs["mem"] * 1024, "status": 1,
        "user": jobs["user"] + 1, "group": 1, "exe": 1, "queue": -1, "partition": 1, "prev": -1, "think": -1,
        "hosts": "{}", "queue_name": jobs["queue_name"], "spec": spec})
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"; synthetic MetaCentrum-like jobs: {count} at offered load {load:g} (benchmarks/scale.py)\n")
        frame.to_csv(handle, sep=" ", header=False, index=False)


def grid_trace(count: int, load: float, work: Path) -> Path:
    path = work / f"synthetic-{count}-{load:g}.swf"
    if not path.exists():
        write_metacentrum_swf(count, load, path)
    return path


def grid_flags(bound: int | None) -> list[str]:
    flags = ["--machines", str(NGI), "--queues", "metacentrum-2014"]
    return flags + (["--set", f"backfill_bound={bound}"] if bound else [])


def schedule_change(exact: Path, bounded: Path) -> str:
    """How much the bounded schedule differs from the exact one."""
    a = pd.read_csv(exact, usecols=["job_id", "start", "wait"]).set_index("job_id")
    b = pd.read_csv(bounded, usecols=["job_id", "start", "wait"]).set_index("job_id").loc[a.index]
    moved = float((a["start"] != b["start"]).mean())
    return (f"  vs exact: {moved:.1%} of jobs start elsewhen, mean wait {a['wait'].mean() / 3600:.2f} h -> "
            f"{b['wait'].mean() / 3600:.2f} h")


def grid(options: argparse.Namespace, work: Path) -> None:
    print(f"\n## NGI_CZ (47 clusters, 34,556 cores), {options.jobs:,} synthetic jobs, 2014 queues: whole command; "
          f"bound = backfill_bound={options.bound}")
    warm_grid_kernels()
    for load in options.loads:
        trace = grid_trace(options.jobs, load, work)
        for policy in options.grid_policies:
            results = {}
            modes = [None if mode == "exact" else options.bound for mode in options.modes]
            for bound in (modes if policy != "mrfs-fcfs" else [None]):
                label = f"load {load:g} {policy} " + (f"bound {bound}" if bound else "exact")
                out = work / f"grid-{load:g}-{policy}-{bound or 'exact'}.csv"
                r = run_child(command(trace, policy, out, grid_flags(bound)), options.timeout)
                results[bound] = (r, out)
                extra = f"  peak queue {peak_queue(out):,}" if r["finished"] else ""
                if bound and None in results and results[None][0]["finished"] and r["finished"]:
                    extra += schedule_change(results[None][1], out)
                if r["peak_mib"] > GRID_MEMORY_MIB:
                    extra += f"  MEMORY over {GRID_MEMORY_MIB} MiB"
                line(label, r, GRID_TARGETS.get(policy) if bound else None, extra)


def growth(options: argparse.Namespace, work: Path) -> None:
    print(f"\n## Time against job count, load {options.growth_load:g}, NGI_CZ, whole command")
    warm_grid_kernels()
    for count in options.counts:
        trace = grid_trace(count, options.growth_load, work)
        fcfs = None
        for policy, bound in (("mrfs-fcfs", None), ("mrfs-easy", None), ("mrfs-easy", options.bound)):
            out = work / f"growth-{count}-{policy}-{bound or 'exact'}.csv"
            r = run_child(command(trace, policy, out, grid_flags(bound)), options.timeout)
            extra = (f"  peak queue {peak_queue(out):,}  {r['cpu_s'] / count * 1e6:,.0f} µs cpu per job"
                     if r["finished"] else "")
            if policy == "mrfs-fcfs":
                fcfs = r
            elif fcfs and fcfs["finished"] and r["finished"]:
                ratio = r["cpu_s"] / fcfs["cpu_s"]
                extra += f"  {ratio:.1f}x mrfs-fcfs" + (f" (target <= {EXACT_OVER_FCFS:g}x: "
                                                        f"{'met' if ratio <= EXACT_OVER_FCFS else 'MISSED'})"
                                                        if bound is None and count == 100_000 else "")
            line(f"{count:,} jobs {policy} {f'bound {bound}' if bound else 'exact'}", r, None, extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", default=["homogeneous", "wagap", "grid", "growth"],
                        choices=["homogeneous", "wagap", "grid", "growth"])
    parser.add_argument("--traces", nargs="+", default=list(HOMOGENEOUS), choices=list(HOMOGENEOUS))
    parser.add_argument("--policies", nargs="+", default=["fcfs", "easy", "conservative"])
    parser.add_argument("--alone", action="store_true", help="time simulate() alone for every (trace, policy)")
    parser.add_argument("--jobs", type=int, default=500_000)
    parser.add_argument("--loads", nargs="+", type=float, default=[1.0, 1.3])
    parser.add_argument("--grid-policies", nargs="+", default=["mrfs-fcfs", "mrfs-easy", "mrfs-conservative"])
    parser.add_argument("--bound", type=int, default=100, help="backfill_bound for the bounded runs")
    parser.add_argument("--modes", nargs="+", default=["exact", "bound"], choices=["exact", "bound"],
                        help="grid: exact (no bound) and/or bounded runs of mrfs-easy and mrfs-conservative")
    parser.add_argument("--counts", nargs="+", type=int, default=[50_000, 100_000, 200_000, 500_000])
    parser.add_argument("--growth-load", type=float, default=1.3)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before a child is stopped")
    parser.add_argument("--work", help="folder for traces and schedules (default: a temporary one)")
    options = parser.parse_args()
    run_sections(options, {"homogeneous": homogeneous, "wagap": wagap, "grid": grid, "growth": growth},
                 "targets are CPU seconds of one child (one core)")


def run_sections(options: argparse.Namespace, sections: dict[str, Callable[[argparse.Namespace, Path], None]],
                 note: str) -> None:
    """A benchmark script's run: a line with the time, the load average, the CPUs and ``note``, then
    each section named in ``options.only``, in the order of ``sections``, in one work folder
    (``options.work``, or a temporary one)."""
    print(f"{time.strftime('%Y-%m-%d %H:%M')}  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs; {note}", flush=True)
    with tempfile.TemporaryDirectory(prefix="schedlab-bench-") as scratch:
        work = Path(options.work or scratch)
        work.mkdir(parents=True, exist_ok=True)
        for name, section in sections.items():
            if name in options.only:
                section(options, work)


if __name__ == "__main__":
    main()
