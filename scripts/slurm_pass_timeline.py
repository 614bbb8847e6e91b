"""When the replay's schedulers run and start jobs, beside what rec2's slurmctld debug log shows
(issue 24 §3; tests/data/slurm_replay_debug, read by scripts/slurm_log_facts.py).

    .venv/bin/python scripts/slurm_pass_timeline.py [--phase P] [--set NAME=VALUE ...]

The replay of rec2 (priority_phase P, default 0) runs with SlurmBackfill's main_pass and
backfill_pass wrapped (their results unchanged) to note when each ran and what it started. Printed,
real | replay: the main scheduler's runs (full queue / at events), backfill passes, the gaps
between backfill passes, starts by each scheduler, the delay from each job end to the next start,
and per job the delay from the first moment it could start in its own run (its CPUs free on the
node and its user below its QOS's MaxJobsPU) to its start. The replay skips passes that could start
nothing (nothing changed since the last one), so it counts fewer passes than Slurm runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchmarks.slurm_fidelity_sweep import RECORDINGS, parsed, recording  # noqa: E402
from engine.policies.slurm import SlurmBackfill  # noqa: E402
from engine.run import simulate  # noqa: E402
from slurm_log_facts import _gaps, _hist, read_events  # noqa: E402

LOG = RECORDINGS["rec2"] / "slurmctld_sched.log.gz"
DELAYS = [0.5, 1.1, 2.1, 3.1, 5.1, 10.1, 30.1]
GAPS = [4.9, 5.1, 6.1, 10.1, 15.1, 30.1]


@contextmanager
def traced() -> Iterator[list[tuple[int, str, list[int]]]]:
    """SlurmBackfill's passes while inside: (time, "full" / "event" / "backfill", jobs started), and
    (time, "thread", []) for each pass of Slurm's backfill thread (backfill_agent), those the replay
    skips as they could start nothing included (each moves last_backfill)."""
    passes: list[tuple[int, str, list[int]]] = []
    main_pass, backfill_pass = SlurmBackfill.main_pass, SlurmBackfill.backfill_pass
    schedule, settle = SlurmBackfill.schedule, SlurmBackfill.settle_backfill

    def settled(self: SlurmBackfill) -> None:
        before = self.last_backfill
        settle(self)
        if before is not None and self.last_backfill is not None:
            passes.extend((t, "thread", []) for t in range(before + self.cycle, self.last_backfill + 1, self.cycle))

    def anchored(self: SlurmBackfill) -> None:
        schedule(self)
        thread = [t for t, kind, _ in passes if kind == "thread"]
        if self.last_backfill is not None and (not thread or thread[-1] != self.last_backfill):
            passes.append((self.last_backfill, "thread", []))

    def noted(kind_of: Any, method: Any) -> Any:
        def wrapper(self: SlurmBackfill, *args: Any) -> None:
            before = self.sim.started
            method(self, *args)
            order = self.sim.start_order
            started = [j for j in range(self.sim.n) if before <= order[j] < self.sim.started]
            passes.append((self.sim.now, kind_of(*args), started))
        return wrapper

    SlurmBackfill.main_pass = noted(lambda depth: "full" if depth is None else "event", main_pass)  # type: ignore[method-assign]
    SlurmBackfill.backfill_pass = noted(lambda: "backfill", backfill_pass)  # type: ignore[method-assign]
    SlurmBackfill.schedule, SlurmBackfill.settle_backfill = anchored, settled  # type: ignore[method-assign]
    try:
        yield passes
    finally:
        SlurmBackfill.main_pass, SlurmBackfill.backfill_pass = main_pass, backfill_pass  # type: ignore[method-assign]
        SlurmBackfill.schedule, SlurmBackfill.settle_backfill = schedule, settle  # type: ignore[method-assign]


def real_timeline() -> dict[str, Any]:
    """The log's passes and starts (epoch seconds, ms), job ids as Slurm's."""
    events = read_events(LOG)
    by: dict[str, list[tuple[float, tuple[str, ...]]]] = defaultdict(list)
    for t, kind, groups in events:
        by[kind].append((t, groups))
    t0 = by["submit"][0][0]
    main = [(t, "full" if g[0] == "full queue" else "event") for t, g in by["main"] if t >= t0]
    return {"full": [t for t, k in main if k == "full"], "event": [t for t, k in main if k == "event"],
            "backfill": [t for t, _ in by["bf_begin"] if t >= t0],
            "starts": {"main": [(t, int(g[0])) for t, g in by["alloc"]],
                       "backfill": [(t, int(g[0])) for t, g in by["bf_start"]]},
            "ends": sorted(t for t, _ in by["end"] + by["timeout"])}


def replay_timeline(params: dict[str, Any]) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """The replay's passes and starts (job ids as Slurm's), its schedule, and the recorded one."""
    workload, site, capacity = recording(RECORDINGS["rec2"])
    with traced() as passes:
        result = simulate(workload, capacity, {"preset": "slurm", "params": params}, context={"slurm_site": site})
    schedule = result.schedule
    native = dict(zip(schedule["job_id"].astype(int), schedule["native_id"].astype(int)))
    starts: dict[str, list[tuple[float, int]]] = {"main": [], "backfill": []}
    for t, kind, jobs in passes:
        starts["backfill" if kind == "backfill" else "main"] += [(float(t), native[j]) for j in jobs]
    timeline = {kind: [float(t) for t, k, _ in passes if k == kind] for kind in ("full", "event", "backfill", "thread")}
    timeline |= {"starts": starts, "ends": sorted(schedule["end"].astype(float).tolist())}
    return timeline, schedule, simulate(workload, capacity, "recorded").schedule


def end_to_next_start(ends: list[float], starts: list[float]) -> list[float]:
    """For each job end, the time until the first start at or after it (ends with none after: left out)."""
    starts = sorted(starts)
    idx = np.searchsorted(starts, ends, side="left")
    return [starts[i] - e for e, i in zip(ends, idx) if i < len(starts)]


def fit_delays(schedule: pd.DataFrame, qos: pd.Series, limits: dict[str, int | None], capacity: int) -> pd.Series:
    """Per job (by Slurm's id), its start minus the first second from its submission at which its CPUs
    were free and its user ran fewer than its QOS's MaxJobsPU jobs of that QOS, in ``schedule``."""
    frame = schedule.assign(qos=qos.to_numpy())
    times = np.unique(np.concatenate([frame["submit"], frame["start"], frame["end"]]).astype(np.int64))
    start, end = frame["start"].to_numpy(np.int64), frame["end"].to_numpy(np.int64)
    # running[i, k]: job i runs at times[k] (started at or before, ends after)
    running = (start[:, None] <= times[None, :]) & (end[:, None] > times[None, :])
    busy = (frame["procs"].to_numpy(np.int64)[:, None] * running).sum(axis=0)
    delays = {}
    for i, row in enumerate(frame.itertuples()):
        same = ((frame["user"] == row.user) & (frame["qos"] == row.qos)).to_numpy().copy()
        same[i] = False
        limit = limits.get(row.qos) or 1 << 30
        ok = (capacity - busy + row.procs * running[i] >= row.procs) & (running[same].sum(axis=0) < limit)
        window = (times >= row.submit) & (times <= row.start)
        first = times[window & ok]
        delays[int(row.native_id)] = row.start - (first[0] if len(first) else row.start)
    return pd.Series(delays)


def row(label: str, real: Any, replay: Any) -> None:
    print(f"{label:<44} {real!s:<34} {replay!s}")


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} mean {statistics.mean(values):.2f} (n {len(values)})" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    real = real_timeline()
    replay, schedule, recorded = replay_timeline({**parsed(args.set), "priority_phase": args.phase})
    print(f"rec2: real (slurmctld log) | replay (priority_phase {args.phase} {' '.join(args.set)})\n")
    row("", "real", "replay")
    for kind, label in (("full", "main runs, full queue"), ("event", "main runs, at events"),
                        ("backfill", "backfill passes (replay: those run)")):
        row(label, len(real[kind]), len(replay[kind]))
    thread = replay["thread"] or replay["backfill"]
    row("backfill passes (replay: with those skipped)", len(real["backfill"]), len(thread))
    print(f"backfill gaps (s)\n  real:   {_hist(_gaps(real['backfill']), GAPS)}\n  replay: {_hist(_gaps(thread), GAPS)}")
    for who in ("main", "backfill"):
        row(f"starts by {who}", len(real["starts"][who]), len(replay["starts"][who]))
    for timeline in (real, replay):
        timeline["next"] = end_to_next_start(timeline["ends"], [t for s in timeline["starts"].values() for t, _ in s])
    row("job end -> next start (s)", summary(real["next"]), summary(replay["next"]))
    print(f"  real:   {_hist(real['next'], DELAYS)}\n  replay: {_hist(replay['next'], DELAYS)}")
    workload, site, capacity = recording(RECORDINGS["rec2"])
    limits = {name: q.max_jobs_per_user for name, q in site.qos.items()}
    qos = workload.jobs["qos"].astype(str)
    real_fit = fit_delays(recorded, qos, limits, capacity)
    replay_fit = fit_delays(schedule, qos, limits, capacity)
    row("job could start -> started (s, all jobs)", summary(real_fit.tolist()), summary(replay_fit.tolist()))
    procs = dict(zip(schedule["native_id"].astype(int), schedule["procs"].astype(int)))
    for name, sizes in (("1-8 CPUs", range(1, 9)), ("9-16 CPUs", range(9, 17))):
        jobs = [j for j, p in procs.items() if p in sizes]
        row(f"  {name}", summary(real_fit[jobs].tolist()), summary(replay_fit[jobs].tolist()))
    print(f"  real:   {_hist(real_fit.tolist(), DELAYS)}\n  replay: {_hist(replay_fit.tolist(), DELAYS)}")
    waits = {"real": recorded["wait"].mean(), "replay": schedule["wait"].mean()}
    row("mean wait (s)", f"{waits['real']:.1f}", f"{waits['replay']:.1f}")


if __name__ == "__main__":
    main()
