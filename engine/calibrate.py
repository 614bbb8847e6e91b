"""Calibrating a Slurm site's replay against its own accounting log (issue 24 §3).

The replay of a site from its files (the ``slurm`` policy) is compared with the schedule the log
records. Where they differ, the candidate explanations the data allows are each tried alone on top
of the site as configured, and the one that brings the replay closest is named:

* the scheduler's cycle: backfill on a grid every bf_interval from the first submission (the site
  as configured times it as Slurm's backfill thread does: bf_interval after the previous pass while
  jobs wait, else at the first change after). Three more are calibrations, not Slurm's rules,
  and their labels ("Slurm's log: ...") say what slurmctld's own debug log shows instead
  (tests/data/slurm_replay_debug: the backfill thread every bf_interval, 5.0 s in 778 of 793 gaps
  while jobs wait): backfill every 2 x bf_interval on the grid or timed as the thread (fewer backfill
  chances; on the real recording of tests/data/slurm_replay the latter is the closest on average),
  and backfill at every submission and end ("every event");
* a pass per job end: Slurm's main scheduler at once at every submission and end, without
  batch_sched_delay (the site as configured runs it at the background loop's next tick once
  batch_sched_delay has passed since its last run, as the log shows; only a job end slurmd reports
  with MESSAGE_EPILOG_COMPLETE runs it at once: 25 of 327 ends there, 8 %, as the label says);
* the bound on backfill work: bf_max_job_test lowered (a pass that runs out of time tests fewer
  jobs), or bf_resolution 1 s instead of the site's grid;
* how backfill reserves: only the reserved job's processors instead of whole nodes;
* the priority cycle: priorities recalculated at every pass instead of every PriorityCalcPeriod;
* limits: the replay without the QOS and association limits (how much they explain), and with each
  user's MaxJobs set to the most jobs the log shows it running at once (limits inferred per user);
* node availability seen in the log: the seconds the log shows jobs waiting while no job ran
  (a node down or drained that the files do not say), reported, not replayed;
* pending reasons: the share of the waiting time under each reason squeue's snapshots show
  (``--squeue``) against the replay's, reported;
* the priority cycle's phase the recording's sprio snapshots show (``--sprio``): the age factor
  sprio prints tells when slurmctld last recalculated (within PriorityMaxAge / PriorityWeightAge
  seconds), so the cycle's offset from the first submission.

Slurm's timers (the priority cycle, the backfill and main cycles) run from the controller's start,
which no file records: the replay starts them at the first submission. Their phase alone moves the
replay (a job's priority changes a few seconds earlier or later, and the schedule follows), so the
site as configured is also run at six phases of the priority cycle; the spread is noise any
delta has too.

The distance of a replay from the recording is |overall mean wait error| + the mean over partitions
of |partition mean wait error| + (1 - rank correlation of waits). Per partition, a delta between two
replays (a proposed change against the site as is) can be trusted only beyond the larger of: the
largest error on that partition's mean of the models the recording cannot reject (those meeting
the issue's targets for the means: overall within 10 %, each partition within 20 %), and half the
range the timers' phase alone gives, relative to the recorded mean.
"""

from __future__ import annotations

import gzip
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.metrics.fidelity import fidelity
from engine.platform.slurmconf import SCHEDULER_DEFAULTS, Qos, SlurmSite
from engine.run import simulate
from engine.workload.errors import WorkloadError
from engine.workload.model import Workload

#: phases of the priority cycle the site as configured is also run at (fractions of PriorityCalcPeriod)
PHASES = 6

#: the issue's targets: overall mean within 10 %, each partition's within 20 %, rank correlation 0.9
MEAN_TARGET, PARTITION_TARGET, RANK_TARGET = 0.10, 0.20, 0.90


@dataclass(frozen=True)
class Candidate:
    name: str
    explanation: str                   # which of the module docstring's families
    params: dict[str, Any] = field(default_factory=dict)
    without_limits: bool = False
    inferred_limits: bool = False      # each user's MaxJobs: the most the recording shows running at once


def candidates(site: SlurmSite) -> list[Candidate]:
    """The candidates for this site (values relative to its own SchedulerParameters)."""
    sched = site.conf.scheduler
    bf = int(sched.get("bf_interval", SCHEDULER_DEFAULTS["bf_interval"]))
    bound = int(sched.get("bf_max_job_test", 500))
    log = f"Slurm's log: every {bf} s"      # what slurmctld's debug log shows instead (the module's docstring)
    found = [Candidate("as configured", "the site's files"),
             Candidate(f"backfill on a grid every {bf} s from the first submission", "the scheduler's cycle",
                       {"backfill_agent": False}),
             Candidate(f"backfill every {2 * bf} s ({log})", "the scheduler's cycle",
                       {"sched_cycle": 2 * bf, "backfill_agent": False}),
             Candidate(f"Slurm's backfill thread, {2 * bf} s apart (Slurm's log: {bf} s)", "the scheduler's cycle",
                       {"backfill_agent": True, "sched_cycle": 2 * bf}),
             Candidate(f"backfill at every event ({log})", "the scheduler's cycle", {"sched_cycle": 0}),
             Candidate("main scheduler at once at every event (Slurm's log: 8 % of ends)", "a pass per job end",
                       {"main_at_events": True})]
    for smaller in sorted({max(bound // 2, 1), max(bound // 10, 1)} - {bound}, reverse=True):
        found.append(Candidate(f"bf_max_job_test {smaller}", "the bound on backfill work", {"backfill_bound": smaller}))
    if int(sched.get("bf_resolution", 60)) > 1:
        found.append(Candidate("bf_resolution 1 s", "the bound on backfill work", {"bf_resolution": 1}))
    found.append(Candidate("reservations of processors, not whole nodes", "how backfill reserves",
                           {"whole_node_reservations": False}))
    found.append(Candidate("priorities at every pass", "the priority cycle", {"PriorityCalcPeriod": 1}))
    if any(_limited(q) for q in site.qos.values()) or any(a.max_jobs is not None or a.grp_tres or a.grp_jobs is not None
                                                          for a in site.associations):
        found.append(Candidate("without the QOS and association limits", "limits", without_limits=True))
    return found


def _limited(q: Qos) -> bool:
    return (q.max_jobs_per_user is not None or q.max_submit_per_user is not None or bool(q.max_tres_per_user)
            or bool(q.grp_tres) or q.grp_jobs is not None or q.max_wall is not None)


def priority_phase_from_sprio(path: str | Path, workload: Workload, site: SlurmSite) -> int | None:
    """The priority cycle's offset (seconds after the first submission, modulo PriorityCalcPeriod)
    that ``sprio -h -o "%i|%u|%r|%P|%Y|%A|%F|%J|%Q"`` snapshots (``# EPOCH`` lines between, gzip or
    not) show: each snapshot's weighted age factors, A = PriorityWeightAge x (t - submit) /
    PriorityMaxAge rounded to the nearest integer as sprio prints it, bound the time t of the last
    calculation; the most frequent offset of those times. (On tests/data/slurm_replay the bounds
    meet on whole seconds only when read as rounded: 12 s, every snapshot; read as truncated they
    would put slurmctld's calculations 0.6 s off its clock's seconds.) None when the site has no
    age weight or maximum age, or no snapshot bounds it."""
    weight, max_age = site.conf.weights.get("age", 0), site.conf.max_age or 0
    period = max(int(site.conf.calc_period), 1)
    if weight <= 0 or max_age <= 0 or "jobid" not in workload.jobs:
        return None
    submit = dict(zip(workload.jobs["jobid"].astype(str), workload.jobs["submit"].astype("int64").tolist()))
    origin = int(workload.jobs["submit"].min())
    opener: Any = gzip.open if str(path).endswith(".gz") else open
    offsets: Counter[int] = Counter()
    low, high = -math.inf, math.inf
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as lines:
            for line in [*lines, "# end"]:
                if line.startswith("#"):
                    if low <= high and math.isfinite(low) and math.isfinite(high):
                        offsets[round(((low + high) / 2 - origin) % period) % period] += 1
                    low, high = -math.inf, math.inf
                    continue
                fields = line.strip().split("|")
                if len(fields) < 6 or fields[0] not in submit or not fields[5].strip().isdigit():
                    continue
                age = int(fields[5])
                if 0 < age < weight:
                    low = max(low, submit[fields[0]] + (age - 0.5) * max_age / weight)
                    high = min(high, submit[fields[0]] + (age + 0.5) * max_age / weight)
    except OSError as e:
        raise WorkloadError(f"cannot read: {e.strerror or e}", file=str(path)) from None
    return offsets.most_common(1)[0][0] if offsets else None


def squeue_reasons(path: str | Path) -> dict[str, float]:
    """Each pending reason's share of the pending rows of ``squeue -t all -o "%i|%u|%P|%q|%T|%r|..."``
    snapshots (``# EPOCH`` lines between, gzip or not): taken at regular moments, the share of the
    time jobs waited under it."""
    opener: Any = gzip.open if str(path).endswith(".gz") else open
    counts: Counter[str] = Counter()
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                fields = line.rstrip("\n").split("|")
                if line.startswith("#") or len(fields) < 6 or fields[4] != "PENDING":
                    continue
                counts[fields[5]] += 1
    except OSError as e:
        raise WorkloadError(f"cannot read: {e.strerror or e}", file=str(path)) from None
    total = sum(counts.values())
    return {reason: count / total for reason, count in sorted(counts.items())} if total else {}


def reason_shares(summary: Mapping[str, Any]) -> dict[str, float]:
    """Each pending reason's share of the time jobs waited in a ``slurm`` run (its summary's slurm_pending)."""
    hours = {reason: float(v["hours"]) for reason, v in summary.get("slurm_pending", {}).items()}
    total = sum(hours.values())
    return {reason: h / total for reason, h in sorted(hours.items())} if total else {}


def most_running(recorded: pd.DataFrame, accounts: list[str]) -> dict[tuple[str, str], int]:
    """(account, user) -> the most jobs the recording shows running at once for it."""
    if "user_name" not in recorded:
        return {}
    most: dict[tuple[str, str], int] = {}
    frame = pd.DataFrame({"key": list(zip(accounts, recorded["user_name"].astype(str))),
                          "start": recorded["start"].to_numpy(np.int64), "end": recorded["end"].to_numpy(np.int64)})
    for key, jobs in frame.groupby("key", sort=True):
        times = np.concatenate([jobs["start"].to_numpy(), jobs["end"].to_numpy()])
        steps = np.concatenate([np.ones(len(jobs), np.int64), -np.ones(len(jobs), np.int64)])
        order = np.lexsort((steps, times))           # an end before a start at the same second
        most[key] = int(np.cumsum(steps[order]).max())
    return most


def _inferred_limits(site: SlurmSite, most: dict[tuple[str, str], int]) -> SlurmSite:
    """The site with each user association's MaxJobs set to the most the recording shows running,
    the QOS's MaxJobsPU and MaxJobsPA taken off: Slurm checks an association's MaxJobs only where no
    QOS of the job sets either (acct_policy.c; engine.policies.slurmlimits.ASSOC_SHADOWED_BY)."""
    assoc = [replace(a, max_jobs=most[(a.account, a.user)]) if a.user and (a.account, a.user) in most else a
             for a in site.associations]
    qos = {name: replace(q, max_jobs_per_user=None, max_jobs_per_account=None) for name, q in site.qos.items()}
    return SlurmSite(site.conf, qos, assoc)


def _unlimited(site: SlurmSite) -> SlurmSite:
    qos = {name: Qos(name, priority=q.priority, usage_factor=q.usage_factor) for name, q in site.qos.items()}
    assoc = [replace(a, max_jobs=None, max_submit=None, max_wall=None, grp_tres={}, grp_jobs=None, max_tres_per_job={})
             for a in site.associations]
    return SlurmSite(site.conf, qos, assoc)


def idle_with_waiting(recorded: pd.DataFrame) -> int:
    """Seconds the recording shows jobs waiting while no job ran (node availability the files do not say)."""
    submit, start, end = (recorded[c].to_numpy(np.int64) for c in ("submit", "start", "end"))
    times = np.unique(np.concatenate([submit, start, end]))
    if len(times) < 2:
        return 0
    at = times[:-1]
    waiting = np.searchsorted(np.sort(submit), at, side="right") - np.searchsorted(np.sort(start), at, side="right")
    running = np.searchsorted(np.sort(start), at, side="right") - np.searchsorted(np.sort(end), at, side="right")
    return int((np.diff(times) * ((waiting > 0) & (running == 0))).sum())


def _row(candidate: Candidate, figures: Mapping[str, Any]) -> dict[str, Any]:
    overall = figures["overall"]
    recorded = overall["recorded"]["mean_wait"]
    per = {name: {"recorded": part["recorded"]["mean_wait"], "simulated": part["simulated"]["mean_wait"],
                  "error": _error(part["simulated"]["mean_wait"], part["recorded"]["mean_wait"])}
           for name, part in figures["per_queue"].items()}
    error = _error(overall["simulated"]["mean_wait"], recorded)
    rank = float(overall["wait_rank_correlation"])
    distance = abs(error) + (float(np.mean([abs(p["error"]) for p in per.values()])) if per else 0.0) + (1 - rank)
    meets = abs(error) <= MEAN_TARGET and all(abs(p["error"]) <= PARTITION_TARGET for p in per.values())
    return {"name": candidate.name, "explanation": candidate.explanation, "params": dict(candidate.params),
            "without_limits": candidate.without_limits, "inferred_limits": candidate.inferred_limits,
            "mean_wait": overall["simulated"]["mean_wait"],
            "error": error, "rank_correlation": rank, "per_partition": per, "distance": distance,
            "meets_means": meets, "meets_all": meets and rank >= RANK_TARGET}


def _averaged(candidate: Candidate, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A row of the mean figures of ``runs`` (the same candidate at several phases)."""
    def part(recorded: float, simulated: float) -> dict[str, dict[str, float]]:
        return {"recorded": {"mean_wait": recorded}, "simulated": {"mean_wait": simulated}}
    first = runs[0]
    recorded = first["mean_wait"] / (1 + first["error"]) if first["error"] != -1 else 0.0
    figures = {"overall": {**part(recorded, float(np.mean([r["mean_wait"] for r in runs]))),
                           "wait_rank_correlation": float(np.mean([r["rank_correlation"] for r in runs]))},
               "per_queue": {name: part(p["recorded"], float(np.mean([r["per_partition"][name]["simulated"] for r in runs])))
                             for name, p in first["per_partition"].items()}}
    row = _row(candidate, figures)
    row["reasons"] = {reason: float(np.mean([r["reasons"].get(reason, 0.0) for r in runs]))
                      for reason in sorted({k for r in runs for k in r["reasons"]})}
    row["mean_wait_low"] = min(r["mean_wait"] for r in runs)
    row["mean_wait_high"] = max(r["mean_wait"] for r in runs)
    return row


def _error(simulated: float, recorded: float) -> float:
    return simulated / recorded - 1 if recorded else 0.0


def calibrate(workload: Workload, site: SlurmSite, *, capacity: int | None = None,
              tried: list[Candidate] | None = None, sprio: str | Path | None = None,
              squeue: str | Path | None = None, phases: int = 1,
              progress: Callable[[float], None] | None = None) -> dict[str, Any]:
    """Every candidate's replay against the recording (JSON-able; see the module docstring).
    ``phases`` > 1: each candidate's figures are the averages of its replays at that many phases of
    the priority cycle (0, period/phases, ...), which the timers' noise does not decide.
    ``progress``: called with the fraction of the replays done after each one."""
    capacity = int(capacity or site.conf.total_cpus or workload.metadata.get("procs") or 0)
    recorded = simulate(workload, capacity, "recorded").schedule
    tried = list(tried if tried is not None else candidates(site))
    period = max(int(site.conf.calc_period), 1)
    phase = priority_phase_from_sprio(sprio, workload, site) if sprio is not None else None
    if phase:
        tried.append(Candidate(f"priority cycle at sprio's phase ({phase} s)", "the scheduler's cycle",
                               {"priority_phase": phase}))

    accounts = [str(a) for a in workload.jobs["account"].tolist()] if "account" in workload.jobs else [""] * len(recorded)
    most = most_running(recorded, accounts) if len(accounts) == len(recorded) else {}
    if most and site.associations:
        tried.append(Candidate("MaxJobs per user as the log shows it", "limits inferred per user", inferred_limits=True))

    offsets = [k * period // max(phases, 1) for k in range(max(phases, 1))]
    single = [c for c in tried if "priority_phase" in c.params or len(offsets) == 1]
    total = len(single) + (len(tried) - len(single)) * len(offsets) + (PHASES - 1 if len(offsets) == 1 else 0)
    done = [0]

    def replay(candidate: Candidate) -> dict[str, Any]:
        used = _unlimited(site) if candidate.without_limits else _inferred_limits(site, most) \
            if candidate.inferred_limits else site
        result = simulate(workload, capacity, {"preset": "slurm", "params": candidate.params},
                          context={"slurm_site": used})
        row = _row(candidate, fidelity(recorded, result.schedule, capacity=capacity))
        row["reasons"] = reason_shares(result.meta["summary"])
        done[0] += 1
        if progress is not None:
            progress(min(done[0] / max(total, 1), 1.0))
        return row

    def over_phases(candidate: Candidate) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The candidate at each phase of the priority cycle (once if it sets the phase), and the
        row of their averages."""
        if "priority_phase" in candidate.params or len(offsets) == 1:
            row = replay(candidate)
            return row, [row]
        runs = [replay(replace(candidate, params={**candidate.params, "priority_phase": offset})) for offset in offsets]
        return _averaged(candidate, runs), runs

    rows, runs_of = [], {}
    for candidate in tried:
        row, runs = over_phases(candidate)
        rows.append(row)
        runs_of[candidate.name] = runs
    base = next((r for r in rows if r["name"] == "as configured"), rows[0])
    phase_runs = runs_of[base["name"]]
    if len(phase_runs) == 1:     # the timers' noise: the site as configured at PHASES phases anyway
        phase_runs = phase_runs + [replay(Candidate(f"priority phase {k * period // PHASES} s", "timers' phase",
                                                    {"priority_phase": k * period // PHASES})) for k in range(1, PHASES)]
    phases_run = phase_runs
    best = min(rows, key=lambda r: r["distance"])
    plausible = [r for r in rows if r["meets_means"]] or [best]
    trust = {}
    for name, part in best["per_partition"].items():
        errors = [abs(r["per_partition"][name]["error"]) for r in plausible if name in r["per_partition"]]
        values = [r["per_partition"][name]["simulated"] for r in plausible if name in r["per_partition"]]
        timed = [r["per_partition"][name]["simulated"] for r in phases_run if name in r["per_partition"]]
        noise = (max(timed) - min(timed)) / 2 / part["recorded"] if part["recorded"] else 0.0
        trust[name] = {"recorded": part["recorded"], "best": part["simulated"], "best_error": part["error"],
                       "models": len(errors), "low": min(values), "high": max(values), "model_bound": max(errors),
                       "phase_low": min(timed), "phase_high": max(timed), "phase_noise": noise,
                       "bound": max(max(errors), noise)}
    means = [r["mean_wait"] for r in phases_run]
    return {"capacity": capacity, "jobs": len(recorded), "recorded_mean_wait": float(recorded["wait"].mean()),
            "idle_with_waiting": idle_with_waiting(recorded), "candidates": rows, "best": best["name"],
            "averaged_over_phases": len(offsets), "sprio_phase": phase, "phases": phases_run,
            "squeue_reasons": squeue_reasons(squeue) if squeue is not None else None,
            "phase_mean_wait": {"low": min(means), "high": max(means), "mean": float(np.mean(means)),
                                "rank_low": min(r["rank_correlation"] for r in phases_run),
                                "rank_high": max(r["rank_correlation"] for r in phases_run)},
            "trust": trust}


def calibration_lines(report: dict[str, Any]) -> list[str]:
    """The report as a table for a person."""
    rows = sorted(report["candidates"], key=lambda r: r["distance"])
    partitions = sorted({name for r in rows for name in r["per_partition"]})
    lines = [f"recorded: {report['jobs']:,} jobs on {report['capacity']:,} CPUs, mean wait "
             f"{report['recorded_mean_wait']:,.0f} s; "
             + ", ".join(f"{name} {rows[0]['per_partition'][name]['recorded']:,.0f} s" for name in partitions)
             + (f"; each replay's figures are the means over {report['averaged_over_phases']} phases of the priority cycle"
                if report.get("averaged_over_phases", 1) > 1 else "")]
    width = max([len("candidate"), *(len(r["name"]) for r in rows)])
    head = f"{'candidate':{width}} {'explains':28} {'mean wait':>14} {'rank':>6} " + " ".join(
        f"{name[:16]:>18}" for name in partitions) + f" {'distance':>9}"
    lines += [head, "-" * len(head)]
    for r in rows:
        parts = " ".join(f"{r['per_partition'][n]['simulated']:7,.0f} ({r['per_partition'][n]['error']:+6.1%})"
                         if n in r["per_partition"] else f"{'-':>18}" for n in partitions)
        mark = " *" if r["name"] == report["best"] else ""
        lines.append(f"{r['name']:{width}} {r['explanation'][:28]:28} {r['mean_wait']:5,.0f} ({r['error']:+6.1%}) "
                     f"{r['rank_correlation']:6.3f} {parts} {r['distance']:9.3f}{mark}")
    best = next(r for r in rows if r["name"] == report["best"])
    verdict = "meets every target" if best["meets_all"] else (
        "meets the targets for the means, not the rank correlation (0.9)" if best["meets_means"] else
        "does not meet the targets (mean within 10 %, partitions within 20 %, rank correlation 0.9)")
    lines.append(f"closest: {report['best']} (distance {best['distance']:.3f}; {verdict})")
    if best["params"] or best.get("inferred_limits") or best.get("without_limits"):
        sets = " ".join(f"--set {key}={str(value).lower() if isinstance(value, bool) else value}"
                        for key, value in best["params"].items())
        lines.append(f"  to replay with it: python -m engine simulate ... --policy slurm {sets}".rstrip()
                     + (" (and the site's limits changed as the candidate says)"
                        if best.get("inferred_limits") or best.get("without_limits") else ""))
    lines.append(f"node availability: the recording shows {report['idle_with_waiting']:,} s with jobs waiting and "
                 "no job running" + (" (nothing the files do not say)" if not report["idle_with_waiting"] else
                                     " (a node down or drained? the replay keeps every node up)"))
    timed = report["phase_mean_wait"]
    lines.append(f"timers' phase: the site as configured at {len(report['phases'])} phases of the priority cycle "
                 f"gives a mean wait of {timed['low']:,.0f}-{timed['high']:,.0f} s (mean {timed['mean']:,.0f}), "
                 f"rank correlation {timed['rank_low']:.3f}-{timed['rank_high']:.3f}"
                 + (f"; the recording's sprio shows the cycle {report['sprio_phase']} s after the first submission"
                    if report.get("sprio_phase") is not None else ""))
    if report.get("squeue_reasons"):
        recorded_shares, replayed = report["squeue_reasons"], next(r for r in rows if r["name"] == "as configured")["reasons"]
        lines.append("pending reasons, share of the time jobs waited (squeue's snapshots / the site as configured):")
        for reason in sorted(set(recorded_shares) | set(replayed), key=lambda r: -recorded_shares.get(r, 0.0)):
            lines.append(f"  {reason[:60]:60} {recorded_shares.get(reason, 0.0):6.1%} {replayed.get(reason, 0.0):6.1%}")
    lines.append("how far a per-partition delta can be trusted (the larger of the error of the models the "
                 "recording cannot reject, those within the targets for the means, and the timers' phase noise):")
    for name, t in sorted(report["trust"].items()):
        lines.append(f"  {name}: recorded {t['recorded']:,.0f} s, closest {t['best']:,.0f} s ({t['best_error']:+.1%}); "
                     f"{t['models']} model(s) give {t['low']:,.0f}-{t['high']:,.0f} s, the phases "
                     f"{t['phase_low']:,.0f}-{t['phase_high']:,.0f} s: a change of this mean by less than "
                     f"{t['bound']:.0%} is within the replay's error")
    return lines
