"""Real Slurm against real Slurm: the runs of one workload compared job by job (issue 24 §3).

    python scripts/slurm_real_vs_real.py [FOLDER ...]

Each FOLDER is a recording of ``scripts/slurm_replay_workload.py`` (sacct.txt, slurm.conf, qos.txt,
assoc.txt, workload.tsv, submitted.tsv); by default the three runs of seed 24's workload on the
first site: tests/data/slurm_replay (rec1), slurm_replay_debug (rec2), slurm_replay_rerun (rec4).
Job ids differ between runs, so a job is named by its row of workload.tsv: submitted.tsv lists
each sbatch in the workload's order with the id Slurm gave it. Each job's wait is the recorded
schedule's (``--policy recorded``, start - submit from sacct, as ``python -m engine fidelity`` reads
a recording), and the rank correlation of waits is fidelity's own (engine.metrics.fidelity.spearman:
Spearman's, average ranks for ties). Printed: every pair's rank correlation over all jobs and per
partition, and each run's mean waits.
"""

from __future__ import annotations

import csv
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine.metrics.fidelity import spearman  # noqa: E402
from engine.run import simulate  # noqa: E402
from slurm_fidelity_sweep import recording  # noqa: E402

DATA = ROOT / "tests" / "data"
RUNS = {"rec1": DATA / "slurm_replay", "rec2": DATA / "slurm_replay_debug", "rec4": DATA / "slurm_replay_rerun"}


def workload_rows(folder: Path) -> dict[int, int]:
    """Slurm's job id -> the row of workload.tsv it was submitted for (submitted.tsv's lines are the
    workload's rows in order; each line's offset is checked against workload.tsv's)."""
    with open(folder / "workload.tsv", newline="") as f:
        offsets = [row["offset"] for row in csv.DictReader(f, delimiter="\t")]
    with open(folder / "submitted.tsv", newline="") as f:
        submitted = list(csv.DictReader(f, delimiter="\t"))
    if [row["offset"] for row in submitted] != offsets:
        raise ValueError(f"{folder}: submitted.tsv does not follow workload.tsv row by row")
    return {int(row["jobid"]): i for i, row in enumerate(submitted)}


def recorded_waits(folder: Path) -> pd.DataFrame:
    """The recording's jobs indexed by their workload row: Slurm's job id, partition and wait (s)."""
    workload, _, capacity = recording(folder)
    schedule = simulate(workload, capacity, "recorded").schedule
    rows = workload_rows(folder)
    ids = schedule["native_id"].astype(int)
    if sorted(ids) != sorted(rows):
        raise ValueError(f"{folder}: sacct.txt's jobs are not submitted.tsv's")
    table = pd.DataFrame({"row": ids.map(rows).to_numpy(), "jobid": ids.to_numpy(),
                          "partition": schedule["queue"].astype(str).to_numpy(),
                          "wait": schedule["wait"].to_numpy(np.float64)})
    return table.set_index("row").sort_index()


def compare(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, float | None]:
    """Rank correlation of the waits of two runs over their common workload rows, overall and per partition."""
    both = a.merge(b, how="inner", left_index=True, right_index=True, suffixes=("_a", "_b"))
    if not (both["partition_a"] == both["partition_b"]).all():
        raise ValueError("the runs put a workload row in different partitions")
    out: dict[str, float | None] = {"jobs": float(len(both)),
                                    "all": spearman(both["wait_a"].to_numpy(), both["wait_b"].to_numpy())}
    for name, part in both.groupby("partition_a", sort=True):
        out[str(name)] = spearman(part["wait_a"].to_numpy(), part["wait_b"].to_numpy())
    return out


def means(run: pd.DataFrame) -> dict[str, float]:
    """Mean wait overall and per partition (s)."""
    return {"all": float(run["wait"].mean()),
            **{str(name): float(part["wait"].mean()) for name, part in run.groupby("partition", sort=True)}}


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    folders = {Path(a).name: Path(a) for a in args} if args else RUNS
    runs = {name: recorded_waits(folder) for name, folder in folders.items()}
    print("mean wait (s):")
    for name, run in runs.items():
        print(f"  {name:8s} " + ", ".join(f"{k} {v:.1f}" for k, v in means(run).items()) + f"  ({len(run)} jobs)")
    print("rank correlation of waits (Spearman, jobs matched by workload row):")
    for (na, a), (nb, b) in itertools.combinations(runs.items(), 2):
        figures = compare(a, b)
        print(f"  {na}-{nb}: " + ", ".join(f"{k} {v:.3f}" if k != "jobs" else f"{int(v)} jobs"
                                           for k, v in figures.items() if v is not None))


if __name__ == "__main__":
    main()
