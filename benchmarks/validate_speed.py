"""How long the schedule check (engine/sim/validate.py) takes on whole real traces.

    .venv/bin/python benchmarks/validate_speed.py [--traces HPC2N-2002-2.2-cln.swf.gz ...] [--no-nodes]

Simulates each whole trace under EASY (and wagap-2013 on its two clusters under mrfs-easy with
the 2014 queues: node-level cores, RAM and GPUs), and prints the time the check took inside that
run (the verdict's ``seconds``) beside the simulation's own time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.shared_data import SHARED_DATA  # noqa: E402
from engine.platform.machines import read_machines  # noqa: E402
from engine.platform.queues import load_queue_config  # noqa: E402
from engine.run import simulate  # noqa: E402
from engine.workload import load_workload  # noqa: E402

POOL_TRACES = ["HPC2N-2002-2.2-cln.swf.gz", "LLNL-Thunder-2007-1.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz"]


def report(name: str, result) -> None:  # noqa: ANN001
    verdict = result.meta["summary"]["validation"]
    print(f"{name:40s} {len(result.schedule):>9,} jobs   simulation {result.meta['wall_seconds']:7.2f} s"
          f"   check {verdict['seconds'] * 1e3:7.1f} ms   {verdict['line']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="*", default=POOL_TRACES)
    parser.add_argument("--no-nodes", action="store_true", help="skip the node-level run")
    args = parser.parse_args()

    for trace in args.traces:
        workload = load_workload(SHARED_DATA / "swf" / trace)
        report(f"{trace} (easy)", simulate(workload, int(workload.metadata["procs"]), "easy"))
    if not args.no_nodes:
        data = SHARED_DATA / "metacentrum" / "alea"
        workload, machine = load_workload(data / "wagap-2013.swf"), read_machines(data / "wagap-2013.swf.machines")
        result = simulate(workload, None, "mrfs-easy", machine=machine, queues=load_queue_config("metacentrum-2014"))
        report("wagap-2013.swf (mrfs-easy, nodes)", result)


if __name__ == "__main__":
    main()
