"""Idle CPUs while a small job waits: the episodes and what slurmctld's log says about them (issue 24 §3).

    python3 scripts/slurm_idle_episodes.py [--recording tests/data/slurm_replay_debug]
        [--log .../slurmctld_sched.log.gz] [--phase 44] [--list N]

An episode: a waiting job of 1-8 CPUs, not held by its QOS MaxJobsPU, whose CPUs are idle on the
node for more than 10 s in a row (the schedule's second resolution), and that does not start then;
its CPU-seconds: the job's CPUs x the episode's length (episodes of jobs waiting together overlap).
Each is classified by what the backfill passes in it did with the job: not tested, started, blocked
by a reservation (real: a job tested before it is planned, in the log, to start before it would
end; replay: the pass's own profile, running jobs and every reservation it made, has no room for
it), or tested and fits but not started. Then the idle CPU-seconds while such a job waits, each
second once, by what the last pass did with the first fitting job of its order. The real run is
the recording's sacct.txt and log; the replay is the ``slurm`` policy's on the same files at
``--phase`` (as benchmarks/slurm_fidelity_sweep.py, overruns kept), its passes recorded as it runs.

What it showed (rec2, replay at its own phase 44): real 444 episodes, 438 blocked by a reservation
(66,637 CPU-s), 6 fitting (423). Idle CPU-s while a job fits: real 15,853 (6,411 > 30 s after a job
end): reservation 14,138, fits-but-not-started (all within 30 s of a job end: when the passes run)
1,322, not in the last pass (submitted after it or held at its turn: sacct's seconds) 393. The first
reservation the log prints follows from the running jobs' start + time limit through the will-run
test's batches (slurmkernels.will_run_ends) in 740 of 763 passes: no missing rule in what a pass
decides. The replay, before a backfill pass stopped seeing the job ends of its own second: 448
episodes, 442 reservation (64,719 CPU-s); idle CPU-s 15,375: reservation 14,607, fits 600, not in
the pass 168; after: 692 episodes, 642 reservation (99,174), 49 fitting (2,418); idle CPU-s 18,195:
reservation 16,889, fits 1,138, not in the pass 168. Main-scheduler starts: real 80, replay 115-129
(backfill 250 vs 201-215): its main runs at an end come in the end's second, Slurm's at the
background loop's next tick (median 1.0 s after the end).
"""

from __future__ import annotations

import argparse
import bisect
import csv
import importlib.util
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

MAXJOBS = {"normal": 4, "bulk": 2}
CAPACITY = 16
MIN_LEN = 10


def _hms(s: str) -> int:
    parts = [int(x) for x in s.replace("-", ":").split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    if len(parts) == 4:
        return parts[0] * 86400 + parts[1] * 3600 + parts[2] * 60 + parts[3]
    return parts[0] * 3600 + parts[1] * 60 + parts[2]


def read_sacct(path: Path) -> dict[str, dict]:
    jobs = {}
    with path.open() as f:
        rows = csv.DictReader(f, delimiter="|")
        for r in rows:
            ts = {k: int(datetime.fromisoformat(r[k]).timestamp()) for k in ("Submit", "Start", "End")}
            jobs[r["JobIDRaw"]] = {"id": r["JobIDRaw"], "user": r["User"], "qos": r["QOS"], "part": r["Partition"],
                                   "cpus": int(r["NCPUS"]), "limit": _hms(r["Timelimit"]), **ts}
    return jobs


def read_replay(path: Path, real: dict[str, dict]) -> dict[str, dict]:
    """The replay's start/end per job (the CSV of `engine simulate`), other fields from sacct."""
    jobs = {}
    with path.open() as f:
        for r in csv.DictReader(f):
            base = real[r["native_id"]]
            jobs[base["id"]] = {**base, "Start": round(float(r["start"])), "End": round(float(r["end"]))}
    return jobs


def replay_passes(folder: Path, phase: int) -> tuple[dict[str, dict], list[dict]]:
    """The ``slurm`` replay of the recording in ``folder`` at ``phase``: its schedule (as
    read_sacct's jobs) and its backfill passes in the log's shape (t, tested: the first
    bf_max_job_test jobs of the order, started, planned: the begin of each reservation made)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from engine.platform.slurmconf import read_slurm_site
    from engine.policies import slurm
    from engine.run import simulate
    from engine.workload import load_workload

    site = read_slurm_site(folder / "slurm.conf", qos=folder / "qos.txt", assoc=folder / "assoc.txt")
    workload = load_workload(folder / "sacct.txt", procs=CAPACITY, overrun="run")   # as benchmarks/slurm_fidelity_sweep.py
    real = read_sacct(folder / "sacct.txt")
    native = [str(x) for x in workload.jobs["jobid"].tolist()]
    passes: list[dict] = []
    state: dict = {"pass": None}
    by_main: set[str] = set()
    orig_pass, orig_start = slurm.SlurmBackfill.backfill_pass, slurm.SlurmBackfill.start

    def backfill_pass(self):
        order = [native[int(j)] for j in self._order()[: self.bound]]
        state["pass"] = {"t": float(self.sim.now), "tested": [(j, "") for j in order], "started": set(), "planned": {}}
        passes.append(state["pass"])
        self.profile.length = 0         # (a pass that builds its profile sets it)
        try:
            orig_pass(self)
            if self.profile.length:
                state["pass"]["profile"] = self.profile.steps()
        finally:
            state["pass"] = None

    def start(self, job):
        if state["pass"] is not None:
            state["pass"]["started"].add(native[int(job)])
        else:
            by_main.add(native[int(job)])
        orig_start(self, job)

    slurm.SlurmBackfill.backfill_pass, slurm.SlurmBackfill.start = backfill_pass, start
    try:
        result = simulate(workload, CAPACITY, {"preset": "slurm", "params": {"priority_phase": phase}},
                          context={"slurm_site": site})
    finally:
        slurm.SlurmBackfill.backfill_pass, slurm.SlurmBackfill.start = orig_pass, orig_start
    jobs = {}
    for row in result.schedule.itertuples():
        base = real[str(row.native_id)]
        jobs[base["id"]] = {**base, "Start": int(row.start), "End": int(row.end)}
    for p in passes:
        p["planned"] = first_reservation(jobs, int(p["t"]), [j for j, _ in p["tested"]], p["started"])
        if "profile" not in p:
            p["profile"] = None         # no profile: nothing blocked, no reservation
    passes.append({"t": float("inf"), "tested": [], "started": set(), "planned": {}, "main_started": by_main})
    return jobs, passes


def first_reservation(jobs: dict[str, dict], t: int, order: list[str], started: set[str]) -> dict[str, int]:
    """The planned start of the first job of ``order`` that neither a QOS limit holds nor fits now
    (the jobs ``started`` in the pass taken first): the will-run test's earliest start over the
    running jobs' start + time limit (slurmkernels.will_run_ends' batches), as the replay plans it."""
    import numpy as np

    from engine.policies import slurmkernels

    running = [j for j in jobs.values() if j["Start"] <= t < j["End"] or j["id"] in started]
    per_user: dict[tuple[str, str], int] = defaultdict(int)
    for j in running:
        per_user[(j["user"], j["qos"])] += 1
    idle = CAPACITY - sum(j["cpus"] for j in running)
    for jid in order:
        j = jobs[jid]
        if jid in started or per_user[(j["user"], j["qos"])] >= MAXJOBS[j["qos"]] or j["cpus"] <= idle:
            continue
        running.sort(key=lambda r: r["Start"] + r["limit"])
        ends = np.array([r["Start"] + r["limit"] for r in running], dtype=np.int64)
        batched = np.empty_like(ends)
        slurmkernels.will_run_ends(ends, len(ends), batched)
        free = idle
        for r, end in zip(running, np.maximum(batched, t + 1).tolist()):
            free += r["cpus"]
            if free >= j["cpus"]:
                return {jid: int(end)}
    return {}


def episodes(jobs: dict[str, dict], seconds: list | None = None) -> list[dict]:
    """Each maximal run of seconds > MIN_LEN where a waiting, unheld 1-8 CPU job fits the idle CPUs
    (and in ``seconds`` each such second: t, idle CPUs, the jobs that fit, seconds since a job end)."""
    t0 = min(j["Submit"] for j in jobs.values())
    t1 = max(j["End"] for j in jobs.values())
    ends = sorted(j["End"] for j in jobs.values())
    open_: dict[str, int] = {}
    found = []
    for t in range(t0, t1 + 1):
        running = [j for j in jobs.values() if j["Start"] <= t < j["End"]]
        idle = CAPACITY - sum(j["cpus"] for j in running)
        per_user = defaultdict(int)
        for j in running:
            per_user[(j["user"], j["qos"])] += 1
        fit = set()
        for j in jobs.values():
            if j["Submit"] <= t < j["Start"] and j["cpus"] <= min(8, idle) and per_user[(j["user"], j["qos"])] < MAXJOBS[j["qos"]]:
                fit.add(j["id"])
        if fit and seconds is not None:
            k = bisect.bisect_right(ends, t) - 1
            seconds.append((t, idle, fit, t - ends[k] if k >= 0 else 10**9))
        for jid in list(open_):
            if jid not in fit:
                a = open_.pop(jid)
                if t - a > MIN_LEN:
                    k = bisect.bisect_right(ends, a) - 1
                    found.append({"job": jid, "a": a, "b": t, "since_end": a - ends[k] if k >= 0 else 1e9})
        for jid in fit:
            open_.setdefault(jid, t)
    return found


def _load_log_facts():
    spec = importlib.util.spec_from_file_location("slurm_log_facts", Path(__file__).with_name("slurm_log_facts.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["slurm_log_facts"] = mod
    spec.loader.exec_module(mod)
    return mod


def log_passes(log: Path) -> tuple[list[dict], dict[str, list[tuple[float, str]]]]:
    """The real run's backfill passes (slurm_log_facts.backfill_passes) and the main scheduler's
    reasons per job."""
    facts = _load_log_facts()
    events = facts.read_events(log)
    reasons: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for t, kind, g in events:
        if kind == "main_job":
            reasons[g[0]].append((t, g[1]))
        elif kind == "alloc":
            reasons["__alloc__"].append((t, g[0]))     # the main scheduler's starts
    return facts.backfill_passes(events), reasons


def classify(eps: list[dict], jobs: dict[str, dict], passes: list[dict],
             reasons: dict[str, list[tuple[float, str]]] | None = None) -> None:
    """Per episode, the backfill passes in it: was the job tested, its position, the earliest
    planned start of a job tested before it (the reservation that blocks it if the job, started
    now, would end after it), the main scheduler's reasons."""
    times = [p["t"] for p in passes]
    for e in eps:
        j = jobs[e["job"]]
        inside = passes[bisect.bisect_left(times, e["a"] + 1):bisect.bisect_left(times, e["b"])]
        causes = []
        e["detail"] = []
        for p in inside:
            cause = cause_at(p, e["job"], j["limit"], j["cpus"])
            causes.append(cause)
            order = [jid for jid, _ in p["tested"]]
            if cause in ("reservation", "tested, fits, not started"):
                pos = order.index(e["job"])
                before = [p["planned"][x] for x in order[:pos] if x in p["planned"]]
                e["detail"].append((round(p["t"] - e["a"]), pos, min(before) - int(p["t"]) if before else None))
        e["causes"] = causes
        e["main"] = sorted({r for t, r in (reasons or {}).get(e["job"], []) if e["a"] <= t < e["b"]})
        e["cause"] = _dominant(causes)


def _dominant(causes: list[str]) -> str:
    if not causes:
        return "no backfill pass"
    if "tested, fits, not started" in causes:
        return "tested, fits, not started"
    return max(set(causes), key=causes.count)


def cause_at(p: dict, jid: str, limit: int, cpus: int) -> str:
    """What the pass ``p`` did with the waiting job ``jid`` (of time limit ``limit``, ``cpus``):
    from the log, blocked when a job tested before it is planned to start before it would end;
    in the replay (``profile``), when the pass's profile has no room for it."""
    order = [x for x, _ in p["tested"]]
    if jid not in order:
        return "not in the pass (submitted after it, or held)"
    if jid in p["started"]:
        return "started by backfill"
    if "profile" in p:
        return "reservation" if _blocked_in(p["profile"], int(p["t"]), limit, cpus) else "tested, fits, not started"
    pos = order.index(jid)
    before = [p["planned"][x] for x in order[:pos] if x in p["planned"]]
    if before and int(p["t"]) + limit > min(before):
        return "reservation"
    return "tested, fits, not started"


def _blocked_in(profile: list[tuple[int, int]] | None, now: int, limit: int, cpus: int) -> bool:
    """Whether the replay's pass profile (running jobs and every reservation it made: its steps)
    leaves fewer than ``cpus`` free somewhere in [now, now + limit)."""
    if profile is None:
        return False
    free = [f for k, (t, f) in enumerate(profile)
            if t < now + limit and (k + 1 == len(profile) or profile[k + 1][0] > now)]
    return min(free, default=CAPACITY) < cpus


def idle_seconds(seconds: list, jobs: dict[str, dict], passes: list[dict], title: str) -> None:
    """Idle CPU-seconds while a job fits, each second once, by what the last backfill pass did with
    the first fitting job of its order."""
    times = [p["t"] for p in passes]
    by: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    gaps: dict[str, list[int]] = defaultdict(list)
    for t, idle, fit, since in seconds:
        k = bisect.bisect_right(times, t) - 1
        if k < 0:
            cause = "no pass yet"
        else:
            p = passes[k]
            order = [x for x, _ in p["tested"]]
            first = min(fit, key=lambda x: order.index(x) if x in order else 10**6)
            cause = cause_at(p, first, jobs[first]["limit"], jobs[first]["cpus"])
            if cause == "reservation" and "profile" not in p:
                pos = order.index(first)
                gaps["reservation"].append(min(p["planned"][x] for x in order[:pos] if x in p["planned"]) - int(p["t"]))
        by[cause][0] += idle
        if since > 30:
            by[cause][1] += idle
    print(f"\n{title}: idle CPU-s while a waiting unheld 1-8 CPU job fits, each second once: "
          f"{sum(r[0] for r in by.values()):.0f} ({sum(r[1] for r in by.values()):.0f} > 30 s after a job end)")
    for cause, r in sorted(by.items(), key=lambda kv: -kv[1][0]):
        print(f"  {cause:40s} {r[0]:8.0f} {r[1]:8.0f}")
    g = sorted(gaps["reservation"])
    if g:
        print(f"  the blocking reservation began in: median {g[len(g) // 2]} s, quartiles {g[len(g) // 4]}-{g[3 * len(g) // 4]} s")


def table(eps: list[dict], jobs: dict[str, dict], title: str) -> None:
    by = defaultdict(lambda: [0, 0, 0, 0])
    for e in eps:
        cs = jobs[e["job"]]["cpus"] * (e["b"] - e["a"])
        row = by[e["cause"]]
        row[0] += 1
        row[1] += cs
        if e["since_end"] > 30:
            row[2] += 1
            row[3] += cs
    print(f"\n{title}: {len(eps)} episodes, {sum(r[1] for r in by.values())} CPU-s")
    print(f"  {'cause':40s} {'episodes':>8s} {'CPU-s':>8s} {'>30s after end':>15s} {'CPU-s':>8s}")
    for cause, r in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f"  {cause:40s} {r[0]:8d} {r[1]:8d} {r[2]:15d} {r[3]:8d}")


def listing(eps: list[dict], jobs: dict[str, dict], n: int) -> None:
    t0 = min(j["Submit"] for j in jobs.values())
    for e in sorted(eps, key=lambda e: -jobs[e["job"]]["cpus"] * (e["b"] - e["a"]))[:n]:
        j = jobs[e["job"]]
        print(f"  job {e['job']:>4s} {j['part']:5s} {j['cpus']:2d} CPU limit {j['limit']:5d} s  idle wait "
              f"t={e['a'] - t0}..{e['b'] - t0} ({e['b'] - e['a']} s, {e['since_end']} s after an end) "
              f"-> {e['cause']}; main: {e['main']}; passes (dt, position, first reservation in): {e['detail'][:4]}")


def main() -> None:
    d = Path("tests/data/slurm_replay_debug")
    ap = argparse.ArgumentParser()
    ap.add_argument("--recording", default=str(d), help="a folder with sacct.txt, slurm.conf, qos.txt, assoc.txt")
    ap.add_argument("--log", default=str(d / "slurmctld_sched.log.gz"))
    ap.add_argument("--phase", type=int, default=0, help="the replay's priority_phase")
    ap.add_argument("--list", type=int, default=0, help="print the N largest episodes of each")
    args = ap.parse_args()
    folder = Path(args.recording)
    real = read_sacct(folder / "sacct.txt")
    seconds: list = []
    eps = episodes(real, seconds)
    passes, reasons = log_passes(Path(args.log))
    n_bf = sum(len(p["started"]) for p in passes)
    n_main = sum(1 for _ in reasons.get("__alloc__", []))
    classify(eps, real, passes, reasons)
    table(eps, real, "real (its log)")
    idle_seconds(seconds, real, passes, "real")
    listing(eps, real, args.list)
    rep, rep_passes = replay_passes(folder, args.phase)
    rep_seconds: list = []
    reps = episodes(rep, rep_seconds)
    classify(reps, rep, rep_passes[:-1])
    table(reps, rep, f"replay (priority_phase {args.phase})")
    idle_seconds(rep_seconds, rep, rep_passes[:-1], "replay")
    print(f"\nstarts: real main scheduler {n_main}, backfill {n_bf}; replay main scheduler "
          f"{len(rep_passes[-1]['main_started'])}, backfill {sum(len(p['started']) for p in rep_passes[:-1])}")
    listing(reps, rep, args.list)


if __name__ == "__main__":
    main()
