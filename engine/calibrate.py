"""Calibrating a Slurm site's replay against its own accounting log (issue 24 §3).

The replay of a site from its files (the ``slurm`` policy) is compared with the schedule the log
records. Where they differ, the candidate explanations the data allows are each tried alone on top
of the site as configured, and the one that brings the replay closest is named:

* the scheduler's cycle: passes every sched_interval instead of every bf_interval; a pass at every
  submission and end;
* a pass per job end: Slurm's event-triggered main scheduler (over default_queue_depth jobs);
* the bound on backfill work: bf_max_job_test lowered (a pass that runs out of time tests fewer
  jobs), or bf_resolution 1 s instead of the site's grid;
* how backfill reserves: only the reserved job's processors instead of whole nodes;
* the priority cycle: priorities recalculated at every pass instead of every PriorityCalcPeriod;
* limits: the replay without the QOS and association limits (how much they explain);
* node availability seen in the log: the seconds the log shows jobs waiting while no job ran
  (a node down or drained that the files do not say), reported, not replayed.

The distance of a replay from the recording is |overall mean wait error| + the mean over partitions
of |partition mean wait error| + (1 - rank correlation of waits). Per partition, a delta between two
replays (a proposed change against the site as is) can be trusted only beyond the error of the
models the recording cannot reject: those meeting the issue's targets for the means (overall within
10 %, each partition within 20 %). Their largest error on that partition's mean is its bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from engine.metrics.fidelity import fidelity
from engine.platform.slurmconf import Qos, SlurmSite
from engine.run import simulate
from engine.workload.model import Workload

#: the issue's targets: overall mean within 10 %, each partition's within 20 %, rank correlation 0.9
MEAN_TARGET, PARTITION_TARGET, RANK_TARGET = 0.10, 0.20, 0.90


@dataclass(frozen=True)
class Candidate:
    name: str
    explanation: str                   # which of the module docstring's families
    params: dict[str, Any] = field(default_factory=dict)
    without_limits: bool = False


def candidates(site: SlurmSite) -> list[Candidate]:
    """The candidates for this site (values relative to its own SchedulerParameters)."""
    sched = site.conf.scheduler
    interval = int(sched.get("sched_interval", 60))
    bound = int(sched.get("bf_max_job_test", 500))
    found = [Candidate("as configured", "the site's files"),
             Candidate(f"backfill every sched_interval ({interval} s)", "the scheduler's cycle",
                       {"sched_cycle": interval}),
             Candidate("a pass at every submission and end", "the scheduler's cycle", {"sched_cycle": 0}),
             Candidate("main scheduler at each submission and end", "a pass per job end", {"main_at_events": True})]
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
            "without_limits": candidate.without_limits, "mean_wait": overall["simulated"]["mean_wait"],
            "error": error, "rank_correlation": rank, "per_partition": per, "distance": distance,
            "meets_means": meets, "meets_all": meets and rank >= RANK_TARGET}


def _error(simulated: float, recorded: float) -> float:
    return simulated / recorded - 1 if recorded else 0.0


def calibrate(workload: Workload, site: SlurmSite, *, capacity: int | None = None,
              tried: list[Candidate] | None = None) -> dict[str, Any]:
    """Every candidate's replay against the recording (JSON-able; see the module docstring)."""
    capacity = int(capacity or site.conf.total_cpus or workload.metadata.get("procs") or 0)
    recorded = simulate(workload, capacity, "recorded").schedule
    rows = []
    for candidate in tried if tried is not None else candidates(site):
        used = _unlimited(site) if candidate.without_limits else site
        result = simulate(workload, capacity, {"preset": "slurm", "params": candidate.params},
                          context={"slurm_site": used})
        rows.append(_row(candidate, fidelity(recorded, result.schedule, capacity=capacity)))
    best = min(rows, key=lambda r: r["distance"])
    plausible = [r for r in rows if r["meets_means"]] or [best]
    trust = {}
    for name, part in best["per_partition"].items():
        errors = [abs(r["per_partition"][name]["error"]) for r in plausible if name in r["per_partition"]]
        values = [r["per_partition"][name]["simulated"] for r in plausible if name in r["per_partition"]]
        trust[name] = {"recorded": part["recorded"], "best": part["simulated"], "best_error": part["error"],
                       "models": len(errors), "low": min(values), "high": max(values), "bound": max(errors)}
    return {"capacity": capacity, "jobs": len(recorded), "recorded_mean_wait": float(recorded["wait"].mean()),
            "idle_with_waiting": idle_with_waiting(recorded), "candidates": rows, "best": best["name"],
            "trust": trust}


def calibration_lines(report: dict[str, Any]) -> list[str]:
    """The report as a table for a person."""
    rows = sorted(report["candidates"], key=lambda r: r["distance"])
    partitions = sorted({name for r in rows for name in r["per_partition"]})
    lines = [f"recorded: {report['jobs']:,} jobs on {report['capacity']:,} CPUs, mean wait "
             f"{report['recorded_mean_wait']:,.0f} s; "
             + ", ".join(f"{name} {rows[0]['per_partition'][name]['recorded']:,.0f} s" for name in partitions)]
    head = f"{'candidate':46} {'explains':28} {'mean wait':>14} {'rank':>6} " + " ".join(
        f"{name[:16]:>18}" for name in partitions) + f" {'distance':>9}"
    lines += [head, "-" * len(head)]
    for r in rows:
        parts = " ".join(f"{r['per_partition'][n]['simulated']:7,.0f} ({r['per_partition'][n]['error']:+6.1%})"
                         if n in r["per_partition"] else f"{'-':>18}" for n in partitions)
        mark = " *" if r["name"] == report["best"] else ""
        lines.append(f"{r['name'][:46]:46} {r['explanation'][:28]:28} {r['mean_wait']:5,.0f} ({r['error']:+6.1%}) "
                     f"{r['rank_correlation']:6.3f} {parts} {r['distance']:9.3f}{mark}")
    best = next(r for r in rows if r["name"] == report["best"])
    verdict = "meets every target" if best["meets_all"] else (
        "meets the targets for the means, not the rank correlation (0.9)" if best["meets_means"] else
        "does not meet the targets (mean within 10 %, partitions within 20 %, rank correlation 0.9)")
    lines.append(f"closest: {report['best']} (distance {best['distance']:.3f}; {verdict})")
    lines.append(f"node availability: the recording shows {report['idle_with_waiting']:,} s with jobs waiting and "
                 "no job running" + (" (nothing the files do not say)" if not report["idle_with_waiting"] else
                                     " (a node down or drained? the replay keeps every node up)"))
    lines.append("how far a per-partition delta can be trusted (models the recording cannot reject: those "
                 "within the targets for the means):")
    for name, t in sorted(report["trust"].items()):
        lines.append(f"  {name}: recorded {t['recorded']:,.0f} s, closest {t['best']:,.0f} s ({t['best_error']:+.1%}); "
                     f"{t['models']} model(s) give {t['low']:,.0f}-{t['high']:,.0f} s: a change of this mean by less "
                     f"than {t['bound']:.0%} is within the replay's error")
    return lines
