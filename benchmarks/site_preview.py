"""How long a preview on a site's own files takes and how far its current run is from the recording:
the real Slurm's run (tests/data/slurm_replay: 330 jobs, slurm.conf + sacctmgr dumps) and the OpenPBS
test server's log (fairsharesim/OpenPBS.log, 200 jobs, tests/data/pbs_site's files, 4 CPUs).

    .venv/bin/python benchmarks/site_preview.py

Per site: the files read from text (engine.platform.sitefiles), the current run and a proposal
(Slurm: PriorityWeightFairshare doubled; PBS: max_run [u:PBS_GENERIC=1] on workq), each timed as the
worker runs it (the run, then the pending reasons for the recorded run, estimated from its schedule),
wall and CPU seconds of this process, the mean wait recorded / current / proposed and the current run's
rank correlation of waits with the recording, and for Slurm the page's calibration of the baseline
(every candidate at 6 phases of the priority cycle, as the web's task runs it); then the pbs policy on a whole PWA trace (KTH-SP2) and
the load average (the machine may be shared).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from shared_data import SHARED_DATA  # noqa: E402  (after the path set-up above)

from engine.api import (Pool, Scenario, calibrate_site, common_keys, fidelity, held_by_reason,  # noqa: E402
                        pending_reasons, read_trace, run, site_from_texts, with_change)

SLURM = REPO / "tests" / "data" / "slurm_replay"
PBS = REPO / "tests" / "data" / "pbs_site"


def timed(label: str, work):  # noqa: ANN001, ANN201
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    print(f"  {label}: {time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU")
    return result


def site_run(kind: str, trace, texts: dict[str, str], cpus: int):  # noqa: ANN001, ANN201
    site = site_from_texts(kind, texts)
    scenario = Scenario(trace=trace, policy=kind, platform=Pool(cpus),
                        **({"slurm_site": site} if kind == "slurm" else {"pbs_site": site}))
    return run(scenario)


def main() -> None:
    cases = [
        ("slurm", SLURM / "sacct.txt", {"slurm.conf": SLURM / "slurm.conf", "qos": SLURM / "qos.txt",
                                        "assoc": SLURM / "assoc.txt"}, 16, "PriorityWeightFairshare", "20000"),
        ("pbs", SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log",
         {"print server": PBS / "print_server.txt", "sched_config": PBS / "sched_config",
          "resource_group": PBS / "resource_group"}, 4, "workq max_run", "[u:PBS_GENERIC=1]"),
    ]
    for case in cases:
        bench(*case)
    large()
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


def bench(kind: str, trace_path: Path, files: dict[str, Path], cpus: int, label: str, value: str) -> None:
    print(f"{kind}: {trace_path.name} on {cpus} CPUs")
    texts = {name: path.read_text() for name, path in files.items()}
    trace = timed("read the trace", lambda: read_trace(str(trace_path), procs=cpus))
    site = timed("read the site's files", lambda: site_from_texts(kind, texts))
    recorded = timed("recorded run", lambda: run(Scenario(trace=trace, policy="recorded", platform=Pool(cpus))))
    timed("its pending reasons (estimated)", lambda: held_by_reason(pending_reasons(
        recorded.schedule, trace.jobs, site, cpus, trace.metadata.get("user_names", {}),
        trace.metadata.get("group_names", {})), recorded.schedule))
    current = timed("current run", lambda: site_run(kind, trace, texts, cpus))
    key = next(k for k in common_keys(site) if k.label == label)
    proposed = timed(f"proposed run ({label} = {value})",
                     lambda: site_run(kind, trace, with_change(texts, key, value), cpus))
    figures = fidelity(recorded.schedule, current.schedule, capacity=cpus)["overall"]
    waits = [float((r.schedule["start"] - r.schedule["submit"]).mean()) for r in (recorded, current, proposed)]
    print(f"  mean wait recorded / current / proposed: {waits[0]:,.0f} / {waits[1]:,.0f} / {waits[2]:,.0f} s; "
          f"current vs recorded {figures['mean_wait_ratio'] - 1:+.1%}, "
          f"rank correlation of waits {figures['wait_rank_correlation']:.3f}")
    if kind == "slurm":    # the page's "Calibrate the baseline" (webapp.preview.calibration), at its default phases
        replays: list[float] = []
        report = timed("the page's calibration (6 phases)", lambda: calibrate_site(
            trace, site, capacity=cpus, phases=6, progress=replays.append))
        print(f"  {len(replays)} replays; closest: {report['best']}")


def large() -> None:
    """The pbs policy on a whole PWA trace: KTH-SP2 (28,475 jobs, 100 CPUs) under one queue with
    max_run [u:PBS_GENERIC=5], fair-share with one share per user, strict order, backfill_depth 1."""
    texts = {"print server": "create queue workq\nset queue workq max_run = [u:PBS_GENERIC=5]\n"
                             "set server default_queue = workq\n",
             "sched_config": "fair_share: true ALL\nstrict_ordering: true ALL\n"}
    path = SHARED_DATA / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
    print(f"pbs: {path.name}, the whole trace")
    trace = timed("read the trace", lambda: read_trace(str(path)))
    result = timed("pbs run", lambda: site_run("pbs", trace, texts, 100))
    print(f"  {len(result.schedule):,} jobs, schedule checks {'ok' if result.meta['summary']['validation']['ok'] else 'FAILED'}")


if __name__ == "__main__":
    main()
