"""Where the replay's order of waits departs from Slurm's, job by job and by group (issue 24 §3).

    python scripts/slurm_rank_divergence.py [--phases 20] [--cache waits.json] [--top 12] [--set NAME=VALUE ...]

For each recording (rec1, rec2, rec3 of benchmarks/slurm_fidelity_sweep.py) the ``slurm`` replay is run at
the sweep's phases (priority_phase 0, 3, ...; overruns kept); each job's replayed wait is averaged over
them (and its spread, the standard deviation, kept). A job's *rank difference*: its wait's rank among
the recording's jobs (average ranks for ties, scaled to 0..1) in the replay minus in the recording,
per phase, averaged over the phases: > 0, the replay puts the job later in the order of waits than
Slurm did. Jobs are grouped by user, account, QOS, partition, CPUs, time limit, and whether the real
run held them by their QOS's MaxJobsPU (at some second of the recorded wait the user already ran
MaxJobsPU jobs of that QOS, from the recorded starts and ends) and whether the replay did (the same test
on the replay's starts, in at least half the phases). Printed: the groups whose mean rank
difference is farthest from 0, and Spearman's rank correlation of waits within each partition and
each user (the mean over phases). The same is done between the two real runs of the same workload
(rec2's waits against rec1's, jobs matched by submission order): a group whose replay bias is no
larger than real-vs-real's is noise, one well beyond it is a rule the replay lacks or gets wrong.

``--cache FILE`` stores the replays' per-job waits (and reads them back when the file exists and was
made with the same phases and ``--set``): the grouping can then be re-read in seconds.

What it showed (main of 27 Nov, 20 phases; rec1/rec2/rec3): no group of jobs is displaced one way by the
replay beyond what the second real run does: every user, account, QOS, partition, CPU count, time-limit
band and MaxJobsPU hold has a mean rank difference within +-0.06 (real vs real: within +-0.04), and none
moves the same way on rec1 and rec2 by more than twice real-vs-real's, except the jobs Slurm started
11-60 s after submission (41 jobs: +0.053 / +0.047, rec3 -0.009, real +0.003; a pull towards the middle
every noisy comparison shows: jobs that waited <= 10 s +0.038 / +0.048 and real +0.034, > 300 s -0.034 /
-0.036 and real -0.019). The displacements of rec1's and rec2's replays (the same workload) correlate
0.25 over the jobs: most of it is not shared. The replay's rank correlation against the recording,
0.895 / 0.875 / 0.922, equals the replay's against itself at another phase, 0.899 / 0.873 / 0.923, and
so within every partition and user (short 0.811 vs 0.829, 0.801 vs 0.809; long 0.916 vs 0.890, 0.893 vs
0.852); the replay's mean over the phases correlates 0.948 / 0.932 / 0.954 with the recording, above real
vs real (0.921). What keeps one replay below 0.9 is its own sensitivity to the timers' phase (a phase
moves the replay's order more than a whole re-run moves Slurm's, 0.921), not a rule that orders jobs
wrongly: for a single run against a single run the ceiling is about sqrt(0.921 x 0.899) = 0.91 (rec1),
sqrt(0.921 x 0.873) = 0.90 (rec2). Phases 3 s apart already agree only 0.936 / 0.927 / 0.933 (about a
real re-run), 12 s or more apart 0.89 / 0.86 / 0.92 (rec1's pairs >= 12 s apart: 5th-95th percentile
0.83-0.94, 22 % of them >= 0.921; rec2's 0.80-0.91, none): a 3-s shift of the priority recalculation
reorders the replay's waits about as much as a whole re-run reorders Slurm's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine.metrics.fidelity import spearman  # noqa: E402
from engine.platform.slurmconf import SlurmSite  # noqa: E402
from engine.run import simulate  # noqa: E402
from slurm_fidelity_sweep import RECORDINGS, parsed, recording  # noqa: E402

LIMIT_BANDS = ((2, "<=2 min"), (5, "3-5 min"), (10, "6-10 min"), (float("inf"), ">10 min"))
WAIT_BANDS = ((10, "<=10 s"), (60, "11-60 s"), (300, "61-300 s"), (float("inf"), ">300 s"))
GROUPS = ("user", "account", "qos", "partition", "cpus", "limit", "held_real", "held_other", "held", "waited")


def scaled_ranks(waits: np.ndarray) -> np.ndarray:
    """Average ranks of ``waits`` scaled to 0..1 (0 = the shortest wait)."""
    ranks = pd.Series(waits).rank(method="average").to_numpy()
    return (ranks - 1) / max(len(waits) - 1, 1)


def band(value: float, bands: tuple[tuple[float, str], ...]) -> str:
    """The label of the first band whose top ``value`` does not exceed."""
    return next(label for top, label in bands if value <= top)


def held_by_maxjobs(jobs: pd.DataFrame, site: SlurmSite, start: np.ndarray) -> np.ndarray:
    """Whether at some second of each job's wait (submit to ``start``) its user already ran its QOS's MaxJobsPU
    jobs of that QOS (``jobs``' runtimes, ``end - start``, from the given starts)."""
    submit = jobs["submit"].to_numpy()
    end = start + (jobs["end"] - jobs["start"]).to_numpy()
    held = np.zeros(len(jobs), dtype=bool)
    for idx in jobs.groupby(["user", "qos"]).indices.values():
        qos = site.qos.get(str(jobs["qos"].iloc[idx[0]]))
        limit = qos.max_jobs_per_user if qos else None
        if limit is None:
            continue
        for i in idx:
            if start[i] <= submit[i]:
                continue
            mates = idx[idx != i]
            moments = np.concatenate(([submit[i]], start[mates][(start[mates] > submit[i]) & (start[mates] < start[i])]))
            running = ((start[mates][None, :] <= moments[:, None]) & (end[mates][None, :] > moments[:, None])).sum(axis=1)
            held[i] = bool((running >= limit).any())
    return held


def job_table(name: str, overrun: str = "run") -> tuple[pd.DataFrame, Any, SlurmSite, int]:
    """The recording's jobs in job_id order: attributes, recorded start/end/wait, real MaxJobsPU hold."""
    workload, site, capacity = recording(RECORDINGS[name], overrun)
    recorded = simulate(workload, capacity, "recorded").schedule.sort_values("job_id").reset_index(drop=True)
    w = workload.jobs.sort_values("job_id").reset_index(drop=True)
    jobs = pd.DataFrame({"job_id": recorded["job_id"], "user": recorded["user_name"].astype(str),
                         "account": w["account"].astype(str), "qos": w["qos"].astype(str),
                         "partition": w["queue_name"].astype(str), "cpus": recorded["procs"].astype(int),
                         "limit": [band(t / 60, LIMIT_BANDS) for t in recorded["requested_time"]],
                         "submit": recorded["submit"], "start": recorded["start"], "end": recorded["end"],
                         "wait": recorded["wait"].astype(float)})
    jobs["held_real"] = held_by_maxjobs(jobs, site, jobs["start"].to_numpy())
    return jobs, workload, site, capacity


def replay_waits(name: str, phases: list[int], params: dict[str, Any], overrun: str = "run") -> dict[str, list]:
    """Per phase: the replay's waits, in job_id order."""
    _, workload, site, capacity = job_table(name, overrun)
    out: dict[str, list] = {"waits": []}
    for phase in phases:
        schedule = simulate(workload, capacity, {"preset": "slurm", "params": {**params, "priority_phase": phase}},
                            context={"slurm_site": site}).schedule.sort_values("job_id")
        out["waits"].append(schedule["wait"].astype(float).tolist())
    return out


def rank_differences(reference: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """Per job, the mean over ``runs`` (phases x jobs) of its scaled rank there minus in ``reference``."""
    base = scaled_ranks(reference)
    return np.mean([scaled_ranks(run) - base for run in runs], axis=0)


def within(jobs: pd.DataFrame, key: str, reference: np.ndarray, runs: np.ndarray) -> dict[str, float | None]:
    """Spearman's rank correlation of waits within each value of ``key`` (mean over the runs)."""
    out: dict[str, float | None] = {}
    for value, idx in jobs.groupby(key).indices.items():
        rhos = [spearman(reference[idx], run[idx]) for run in runs] if len(idx) >= 3 else []
        rhos = [r for r in rhos if r is not None]
        out[str(value)] = float(np.mean(rhos)) if rhos else None
    return out


def self_agreement(runs: np.ndarray, apart: int | None = None) -> float:
    """Mean rank correlation of waits between every two of the runs (phases x jobs); with ``apart``, only of
    the pairs that many phases apart on the cycle of phases."""
    n = len(runs)
    pairs = [spearman(runs[i], runs[j]) for i in range(n) for j in range(i + 1, n)
             if apart is None or min(j - i, n - (j - i)) == apart]
    return float(np.mean([p for p in pairs if p is not None]))


def group_table(jobs: pd.DataFrame, diff: np.ndarray) -> pd.DataFrame:
    """Mean (and spread across jobs) of the rank difference per value of each grouping key."""
    rows = []
    held = {(True, True): "both", (True, False): "real only", (False, True): "other only", (False, False): "neither"}
    frame = jobs.assign(diff=diff, waited=[band(w, WAIT_BANDS) for w in jobs["wait"]],
                        held=[held[(a, b)] for a, b in zip(jobs["held_real"], jobs["held_other"])])
    for key in GROUPS:
        for value, part in frame.groupby(key):
            rows.append({"key": key, "value": str(value), "jobs": len(part), "mean_diff": part["diff"].mean(),
                         "sd_diff": part["diff"].std(ddof=0), "abs_diff": part["diff"].abs().mean(), "wait_real": part["wait"].mean(),
                         "wait_other": part["other"].mean()})
    return pd.DataFrame(rows)


def report(title: str, jobs: pd.DataFrame, reference: np.ndarray, runs: np.ndarray,
           top: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Print one comparison's groups, within-partition/user correlations and most displaced jobs; the table and
    the jobs' rank differences."""
    diff = rank_differences(reference, runs)
    jobs = jobs.assign(other=runs.mean(axis=0), spread=runs.std(axis=0), diff=diff)
    overall = np.mean([spearman(reference, run) or 0.0 for run in runs])
    print(f"\n== {title}: {len(jobs)} jobs, rank correlation {overall:.3f} (mean over {len(runs)} runs); "
          f"mean wait {reference.mean():.1f} -> {runs.mean():.1f} s")
    table = group_table(jobs, diff)
    shown = table[table.jobs >= 5].reindex(table[table.jobs >= 5].mean_diff.abs().sort_values(ascending=False).index)
    print("  groups (>= 5 jobs) by |mean rank difference| (scaled 0..1; > 0: later in the order than the reference):")
    for row in shown.head(top).itertuples():
        print(f"    {row.key:9s} {row.value:12s} {row.jobs:4d} jobs  diff {row.mean_diff:+.3f} (sd {row.sd_diff:.3f}, "
              f"|d| {row.abs_diff:.3f})  wait {row.wait_real:7.1f} -> {row.wait_other:7.1f} s")
    for key in ("partition", "user"):
        rhos = within(jobs, key, reference, runs)
        print(f"  rank correlation within {key}: " + ", ".join(
            f"{k} {v:.3f}" if v is not None else f"{k} -" for k, v in rhos.items()))
        if len(runs) > 1:
            print(f"    the runs against each other within {key}: " + ", ".join(
                f"{k} {self_agreement(runs[:, idx]):.3f}" for k, idx in jobs.groupby(key).indices.items() if len(idx) >= 3))
    worst = jobs.reindex(jobs["diff"].abs().sort_values(ascending=False).index).head(top)
    print("  most displaced jobs: " + "; ".join(
        f"#{r.job_id} {r.user}/{r.qos}/{r.partition} {r.cpus}c {r.limit} wait {r.wait:.0f}->{r.other:.0f}"
        f"(sd {r.spread:.0f}) {r.diff:+.2f}" for r in worst.itertuples()))
    return table, diff


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=int, default=20)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--cache")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    params = parsed(args.set)
    phases = [3 * k for k in range(args.phases)]
    key = {"phases": phases, "params": params}
    cache: dict[str, Any] = {}
    if args.cache and Path(args.cache).exists():
        stored = json.loads(Path(args.cache).read_text(encoding="utf-8"))
        cache = stored["runs"] if stored.get("key") == key else {}
    tables: dict[str, pd.DataFrame] = {}
    diffs: dict[str, np.ndarray] = {}
    waits: dict[str, np.ndarray] = {}
    for name in ("rec1", "rec2", "rec3"):      # the recordings this report was written for
        jobs, _, site, _ = job_table(name)
        if name not in cache:
            cache[name] = replay_waits(name, phases, params)
            if args.cache:
                Path(args.cache).write_text(json.dumps({"key": key, "runs": cache}) + "\n", encoding="utf-8")
        runs = np.array(cache[name]["waits"])
        waits[name] = runs.mean(axis=0)
        jobs["held_other"] = np.mean([held_by_maxjobs(jobs, site, jobs["submit"].to_numpy() + run) for run in runs], axis=0) >= 0.5
        tables[name], diffs[name] = report(f"{name}: replay vs recorded", jobs, jobs["wait"].to_numpy(), runs, args.top)
        print(f"  the replay against itself, phase to phase: rank correlation {self_agreement(runs):.3f}; "
              f"recorded vs the replay's mean over phases: {spearman(jobs['wait'].to_numpy(), waits[name]):.3f}")
        print("    phase to phase by distance: " + ", ".join(
            f"{3 * k} s {self_agreement(runs, k):.3f}" for k in range(1, len(runs) // 2 + 1)))
        print(f"  held by MaxJobsPU: real {int(jobs.held_real.sum())} jobs, replay (in at least half the phases) "
              f"{int(jobs.held_other.sum())}, both {int((jobs.held_real & jobs.held_other).sum())}")
    rec1, rec2 = job_table("rec1")[0], job_table("rec2")[0]
    same = ["user", "qos", "partition", "cpus", "limit"]
    if not (rec1[same].to_numpy() == rec2[same].to_numpy()).all():
        raise SystemExit("rec1 and rec2 jobs do not match by submission order")
    rec1["held_other"] = rec2["held_real"]
    tables["real"], _ = report("rec2 vs rec1 (real vs real)", rec1, rec1["wait"].to_numpy(), rec2["wait"].to_numpy()[None, :],
                            args.top)
    side_by_side(tables)
    shared(rec1.assign(wait2=rec2["wait"], replay1=waits["rec1"], replay2=waits["rec2"]), diffs["rec1"], diffs["rec2"],
           args.top)


def shared(jobs: pd.DataFrame, diff1: np.ndarray, diff2: np.ndarray, top: int) -> None:
    """The part of the replay's displacement both recordings of the same workload share: the replays of rec1 and
    rec2 are nearly the same schedule, so where rec1's and rec2's real runs differ (noise) the two displacements
    differ; where they agree, the replay departs from both real runs."""
    print(f"\n== displacement shared by rec1's and rec2's replays: correlation over jobs "
          f"{np.corrcoef(diff1, diff2)[0, 1]:.3f}; jobs moved the same way by > 0.1 in both: "
          f"{int(((diff1 > 0.1) & (diff2 > 0.1)).sum())} later, {int(((diff1 < -0.1) & (diff2 < -0.1)).sum())} earlier")
    both = np.where(np.sign(diff1) == np.sign(diff2), np.sign(diff1) * np.minimum(abs(diff1), abs(diff2)), 0.0)
    for i in np.argsort(-abs(both))[:top]:
        r = jobs.iloc[i]
        print(f"    #{r.job_id} {r.user}/{r.qos}/{r.partition} {r.cpus}c {r.limit}: real {r.wait:.0f} / {r.wait2:.0f} s, "
              f"replay {r.replay1:.0f} / {r.replay2:.0f} s (rank diff {diff1[i]:+.2f} / {diff2[i]:+.2f})")


def side_by_side(tables: dict[str, pd.DataFrame]) -> None:
    """Each group's mean rank difference in the three replays and between the two real runs; 'biased': rec1's and
    rec2's replays move it the same way, each by more than twice real-vs-real's (and at least 0.02)."""
    merged = None
    for name, table in tables.items():
        part = table.set_index(["key", "value"])[["jobs", "mean_diff"]].rename(
            columns={"jobs": f"n_{name}", "mean_diff": name})
        merged = part if merged is None else merged.join(part, how="outer")
    assert merged is not None
    merged = merged[(merged["n_rec1"].fillna(0) >= 5) | (merged["n_rec3"].fillna(0) >= 5)]
    noise = merged["real"].abs().fillna(0)
    merged["biased"] = ((np.sign(merged["rec1"]) == np.sign(merged["rec2"]))
                        & (merged[["rec1", "rec2"]].abs().min(axis=1) > np.maximum(2 * noise, 0.02)))
    order = merged[["rec1", "rec2"]].abs().max(axis=1).fillna(merged["rec3"].abs()).sort_values(ascending=False).index
    print("\n== mean rank difference per group (replay vs recorded: rec1, rec2, rec3; real: rec2 vs rec1)")
    print(f"    {'group':24s} {'jobs':>5s} {'rec1':>7s} {'rec2':>7s} {'rec3':>7s} {'real':>7s}")
    for (key, value), row in merged.loc[order].iterrows():
        jobs = int(row["n_rec1"]) if row["n_rec1"] == row["n_rec1"] else int(row["n_rec3"])
        cells = " ".join(f"{row[c]:+7.3f}" if row[c] == row[c] else f"{'-':>7s}" for c in ("rec1", "rec2", "rec3", "real"))
        print(f"    {key + ' ' + value:24s} {jobs:5d} {cells}{'  biased' if row['biased'] else ''}")


if __name__ == "__main__":
    main()
