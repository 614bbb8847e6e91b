"""Where the whole ``python -m engine simulate`` command spends its CPU time, stage by stage.

Each (trace, policy) runs in a fresh child process that starts the interpreter, imports the
command line, then runs ``engine.cli.main`` with the same arguments as the command, timing with
``time.process_time`` (CPU seconds of that process, one core):

* ``start``: the interpreter itself, before any engine import;
* ``imports``: ``import engine.cli`` (everything the command imports before it reads a byte);
* ``parse``: reading and cleaning the trace (``api.read_trace``);
* ``simulate``: the event loop (``Simulation.run``);
* ``validate``: the schedule check (``engine.run.validate``);
* ``metrics``: the summary (``api.summarize``) and writing it as JSON;
* ``write``: the schedule CSV (``SimResult.to_csv``);
* ``other``: the rest (argument parsing, policy set-up, the schedule frame, lazy imports on the way).

Children run with Python's bytecode cache on (as an installed engine runs; PYTHONDONTWRITEBYTECODE
is removed from their environment) after one warm-up child that writes it; ``--no-bytecode-cache``
keeps the variable as it is, so every run compiles the engine's modules first (about 0.2 s more).

The command's parse cache (engine.workload.cache.read_through, kept by the trace's content) is
measured both ways (``--parse-cache``): ``cold``, every child with an empty cache folder of its own
(it parses, then writes the cache), and ``warm``, children sharing a folder that one untimed child
filled (they load the parsed trace instead of parsing it). numba's kernel cache is warm in both
(the best of ``--repeat`` children is shown; the first child after an edit of the engine compiles).

The whole-command targets of issue 14 are printed beside the total; the load average beside each
row (the machine is shared: CPU seconds are the figure to read).

    .venv/bin/python benchmarks/command_stages.py [--traces HPC2N RICC CEA-Curie] [--policies easy]
        [--parse-cache cold warm] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
SWF = SHARED_DATA / "swf"
ALEA = SHARED_DATA / "metacentrum" / "alea"
TRACES = {   # name: (file, extra flags, {policy: whole-command target s})
    "HPC2N": (SWF / "HPC2N-2002-2.2-cln.swf.gz", [], {"easy": 1.5, "conservative": 8.0}),
    "RICC": (SWF / "RICC-2010-2.swf.gz", ["--procs", "8192"], {"easy": 5.0, "conservative": 20.0}),
    "CEA-Curie": (SWF / "CEA-Curie-2011-2.1-cln.swf.gz", [], {"easy": 5.0, "conservative": 20.0}),
    "wagap": (ALEA / "wagap-2013.swf", ["--machines", str(ALEA / "wagap-2013.swf.machines"), "--queues",
                                         "metacentrum-2014"], {"mrfs-easy": 2.0}),
}
#: traces that run on clusters of nodes: their policy, whatever --policies says
NODE_POLICY = {"wagap": "mrfs-easy"}
STAGES = ("start", "imports", "parse", "simulate", "validate", "metrics", "write", "other")

CHILD = r"""
import json, resource, sys, time
start = time.process_time()
sys.path.insert(0, sys.argv[1])
import engine.cli
imports = time.process_time() - start
import engine.api, engine.sim.simulator as simulator
run_module = sys.modules["engine.run"]   # engine.run is also the name of the function run()

spent = {"parse": 0.0, "simulate": 0.0, "validate": 0.0, "metrics": 0.0, "write": 0.0}

def timed(stage, function):
    def wrapper(*args, **kwargs):
        began = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[stage] += time.process_time() - began
    return wrapper

engine.api.read_trace = timed("parse", engine.api.read_trace)
run_module.validate = timed("validate", run_module.validate)
engine.api.summarize = timed("metrics", engine.api.summarize)
engine.cli.write_json = timed("metrics", engine.cli.write_json)
simulator.Simulation.run = timed("simulate", simulator.Simulation.run)
simulator.SimResult.to_csv = timed("write", simulator.SimResult.to_csv)
status = engine.cli.main(sys.argv[2:])
total = time.process_time()
other = total - start - imports - sum(spent.values())
print(json.dumps({"status": status, "start": start, "imports": imports, **spent, "other": other, "total": total,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(trace: Path, policy: str, flags: list[str], work: Path, env: dict[str, str], timeout: float,
            parse_cache: Path | None = None) -> dict | None:
    """The child's figures, or None if it ran past ``timeout`` seconds (it is stopped)."""
    out = work / "schedule.csv"
    args = ["simulate", str(trace), "--policy", policy, "--out", str(out), "--summary", str(work / "summary.json"),
            "--no-progress", *flags]
    if parse_cache is None:     # cold: a folder of its own, empty
        parse_cache = Path(tempfile.mkdtemp(prefix="parse-", dir=work))
    env = {**env, "SCHEDLAB_PARSE_CACHE": str(parse_cache)}
    try:
        child = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), *args], capture_output=True, text=True,
                               cwd=ROOT, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if child.returncode:
        last = (child.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"{trace.name} {policy}: the child failed: {last}")
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    if figures["status"]:
        raise SystemExit(f"{trace.name} {policy}: the command failed: {child.stderr.strip()}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="+", default=["HPC2N", "RICC", "CEA-Curie"], choices=list(TRACES),
                        help="wagap: wagap-2013 under mrfs-easy and the 2014 queues (always that policy)")
    parser.add_argument("--policies", nargs="+", default=["easy"])
    parser.add_argument("--repeat", type=int, default=1, help="children per (trace, policy); the best total shown")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before a child is stopped")
    parser.add_argument("--parse-cache", nargs="+", default=["cold", "warm"], choices=["cold", "warm"],
                        help="the parse cache empty (cold) or filled by an untimed child (warm); see above")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE as it is (see the module docstring)")
    options = parser.parse_args()
    env = dict(os.environ)
    if not options.no_bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([sys.executable, "-c", "import engine.cli, engine.run"], cwd=ROOT, env=env, check=True)
    cached = "off" if env.get("PYTHONDONTWRITEBYTECODE") else "on"
    print(f"CPU seconds per stage of `python -m engine simulate` (one child each); load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; bytecode cache {cached}")
    print(f"{'trace':10s} {'policy':13s} {'parse $':7s} " + " ".join(f"{s:>8s}" for s in STAGES)
          + f" {'total':>8s} {'peak MiB':>9s} {'load':>5s}  target")
    with tempfile.TemporaryDirectory(prefix="schedlab-stages-") as scratch:
        for name in options.traces:
            file, flags, targets = TRACES[name]
            for policy in ([NODE_POLICY[name]] if name in NODE_POLICY else options.policies):
                for mode in options.parse_cache:
                    shared = None
                    if mode == "warm":
                        shared = Path(tempfile.mkdtemp(prefix="parse-warm-", dir=scratch))
                        measure(file, policy, flags, Path(scratch), env, options.timeout, shared)
                    runs = [measure(file, policy, flags, Path(scratch), env, options.timeout, shared)
                            for _ in range(options.repeat)]
                    row(name, policy, mode, [run for run in runs if run is not None], targets.get(policy),
                        options.timeout)


def row(name: str, policy: str, mode: str, finished: list[dict], target: float | None, timeout: float) -> None:
    """One line of the table: the best of the finished children."""
    if not finished:
        print(f"{name:10s} {policy[:13]:13s} {mode:7s} NOT FINISHED within {timeout:g} s wall "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
        return
    r = min(finished, key=lambda run: run["total"])
    verdict = "" if target is None else f"{target:g} s {'met' if r['total'] <= target else 'MISSED'}"
    print(f"{name:10s} {policy[:13]:13s} {mode:7s} " + " ".join(f"{r[s]:8.2f}" for s in STAGES)
          + f" {r['total']:8.2f} {r['peak_mib']:9.0f} {os.getloadavg()[0]:5.1f}  {verdict}", flush=True)


if __name__ == "__main__":
    main()
