"""Replaying a real Slurm 22.05 run (tests/data/slurm_replay, README there) from the site's own
files with the ``slurm`` policy, and how far the replay is from the recording (issue 24 §3).

The figures are pinned (the replay is deterministic); the issue's targets are not all met yet
(mean wait within 10 %, rank correlation >= 0.9, per-partition means within 20 %): the test says
which are and asserts the replay is closer to the recording than plain EASY."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine import api
from engine.cli import main
from engine.metrics.fidelity import fidelity

DATA = Path(__file__).resolve().parents[2] / "data" / "slurm_replay"
SITE_ARGS = ["--slurm-conf", str(DATA / "slurm.conf"), "--qos", str(DATA / "qos.txt"), "--assoc", str(DATA / "assoc.txt")]


def schedule(tmp_path: Path, name: str, *args: str) -> pd.DataFrame:
    out = tmp_path / f"{name}.csv"
    assert main(["simulate", str(DATA / "sacct.txt"), *args, "--out", str(out), "--no-parse-cache",
                 "--no-progress"]) == 0
    return pd.read_csv(out)


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    recorded = schedule(tmp, "recorded", "--procs", "16", "--policy", "recorded")
    easy = fidelity(recorded, schedule(tmp, "easy", "--procs", "16", "--policy", "easy"), capacity=16)
    slurm = fidelity(recorded, schedule(tmp, "slurm", *SITE_ARGS, "--policy", "slurm"), capacity=16)
    return easy, slurm


def test_the_replay_from_the_sites_files_is_pinned(figures):
    _, slurm = figures
    overall = slurm["overall"]
    assert slurm["jobs"]["matched"] == 330
    assert overall["recorded"]["mean_wait"] == pytest.approx(424.17, abs=0.01)
    assert overall["simulated"]["mean_wait"] == pytest.approx(324, abs=5)
    assert overall["wait_rank_correlation"] == pytest.approx(0.821, abs=0.01)
    per = {name: part["simulated"]["mean_wait"] for name, part in slurm["per_queue"].items()}
    assert per["long"] == pytest.approx(668, abs=10)      # recorded 920
    assert per["short"] == pytest.approx(179, abs=5)      # recorded 215
    # against the targets of issue 24: the short partition's mean is within 20 % of the
    # recording (179 vs 215); the overall mean (-24 %), the rank correlation (< 0.9) and the long
    # partition (-27 %) are not yet
    assert abs(per["short"] / slurm["per_queue"]["short"]["recorded"]["mean_wait"] - 1) <= 0.20
    assert abs(overall["simulated"]["mean_wait"] / overall["recorded"]["mean_wait"] - 1) > 0.10


def test_the_replay_is_closer_to_the_recording_than_easy(figures):
    """Closer in the order of the waits and in each partition's mean; NOT in the overall mean yet:
    EASY's 338 s is nearer 424 s than the replay's 324 s, but EASY gets there by making the short
    partition wait too long (261 vs 215) and the long one too little (520 vs 920)."""
    easy, slurm = figures
    recorded = slurm["overall"]["recorded"]["mean_wait"]
    assert abs(slurm["overall"]["simulated"]["mean_wait"] - recorded) > abs(easy["overall"]["simulated"]["mean_wait"] - recorded)
    assert slurm["overall"]["wait_rank_correlation"] > easy["overall"]["wait_rank_correlation"] + 0.1
    for name in ("long", "short"):
        rec = slurm["per_queue"][name]["recorded"]["mean_wait"]
        assert abs(slurm["per_queue"][name]["simulated"]["mean_wait"] - rec) < abs(
            easy["per_queue"][name]["simulated"]["mean_wait"] - rec)


def test_set_overrides_a_weight_of_the_site(tmp_path):
    base = schedule(tmp_path, "base", *SITE_ARGS, "--policy", "slurm")
    doubled = schedule(tmp_path, "doubled", *SITE_ARGS, "--policy", "slurm", "--set", "PriorityWeightFairshare=20000")
    assert len(doubled) == 330 and not base["start"].equals(doubled["start"])


def test_the_qos_and_the_assoc_need_the_slurm_conf(tmp_path, capsys):
    code = main(["simulate", str(DATA / "sacct.txt"), "--qos", str(DATA / "qos.txt"), "--policy", "slurm",
                 "--out", str(tmp_path / "x.csv")])
    assert code == 2 and "--slurm-conf" in capsys.readouterr().err


def test_the_slurm_policy_without_a_site_is_one_error_line(tmp_path, capsys):
    code = main(["simulate", str(DATA / "sacct.txt"), "--procs", "16", "--policy", "slurm",
                 "--out", str(tmp_path / "x.csv"), "--no-parse-cache"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and "--slurm-conf" in err and "Traceback" not in err


def test_the_sacct_reader_keeps_each_jobs_qos():
    jobs = api.read_trace(str(DATA / "sacct.txt"), procs=16).jobs
    assert set(jobs["qos"]) == {"normal", "bulk"}
    assert set(jobs.loc[jobs["qos"] == "bulk", "account"]) == {"chemistry"}
