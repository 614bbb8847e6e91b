"""A third real Slurm 22.05 run of tests/data/slurm_replay's site and workload (rec4:
tests/data/slurm_replay_rerun, README there), replayed from its own files with the ``slurm`` policy,
and the three real runs of the workload against one another (issue 24 §3).

The replay's figures are pinned (the replay is deterministic) with test_slurm_replay's tolerances.
The real-vs-real rank correlations are computed from the three recordings' files
(scripts/slurm_real_vs_real.py: jobs matched by their workload row, fidelity's Spearman) and pinned
to +-0.005: they are the noise floor a single replay against a single recording is judged by."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest

from engine import api
from engine.metrics.fidelity import fidelity
from tests.engine.policies.test_slurm_replay import OVERRUN, assert_pinned, schedule

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "slurm_replay_rerun"
SITE_ARGS = ["--slurm-conf", str(DATA / "slurm.conf"), "--qos", str(DATA / "qos.txt"), "--assoc", str(DATA / "assoc.txt")]
RUNS = {"rec1": ROOT / "tests" / "data" / "slurm_replay", "rec2": ROOT / "tests" / "data" / "slurm_replay_debug",
        "rec4": DATA}


def _script():
    spec = importlib.util.spec_from_file_location("slurm_real_vs_real", ROOT / "scripts" / "slurm_real_vs_real.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


@pytest.fixture(scope="module")
def real():
    """Each real run's jobs by workload row (Slurm's id, partition, recorded wait), and the script."""
    script = _script()
    return {name: script.recorded_waits(folder) for name, folder in RUNS.items()}, script


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay_rerun")
    recorded = schedule(tmp, "recorded", "--procs", "16", "--policy", "recorded", data=DATA)
    return fidelity(recorded, schedule(tmp, "slurm", *SITE_ARGS, "--policy", "slurm", *OVERRUN, data=DATA), capacity=16)


def test_the_rerun_is_the_same_workload_and_site():
    """workload.tsv and the accounts are rec1's; slurm.conf is rec2's (rec1's plus the logging lines)."""
    first, second = RUNS["rec1"], RUNS["rec2"]
    assert (DATA / "workload.tsv").read_text() == (first / "workload.tsv").read_text()
    assert (DATA / "qos.txt").read_text() == (first / "qos.txt").read_text()
    assert (DATA / "assoc.txt").read_text() == (first / "assoc.txt").read_text()
    assert (DATA / "slurm.conf").read_text() == (second / "slurm.conf").read_text()
    jobs = api.read_trace(str(DATA / "sacct.txt"), procs=16).jobs
    assert len(jobs) == 330
    assert sorted(jobs["jobid"].astype(int)) == list(range(3, 333))   # ids 1-2 went to two sbatch --test-only


def test_the_replay_of_the_rerun_is_pinned(figures):
    """Recorded mean wait 334.6 s (long 653.0, short 200.1): 21 % under rec1's 424.2 s and 12 % under
    rec2's 378.2 s on the same workload and site. The replay at phase 0 of the priority cycle, the 4
    jobs killed at their limit keeping their recorded runtimes (OVERRUN, as test_slurm_replay):
    411.5 s (+23.0 %), rank correlation of waits 0.837, long 877.9 s (+34.4 %), short 214.5 s (+7.2 %).
    The replay of this workload lands where it did on rec1 and rec2 (400 / 388 s over 20 phases,
    here 397 s): it is real Slurm that moved."""
    overall = figures["overall"]
    assert_pinned(figures, 330, 334.56, 411.5, 0.837, {"long": 877.9, "short": 214.5})   # recorded 653.0, 200.1
    # against the targets of issue 24 at this phase: the short partition's mean meets its 20 %,
    # neither the overall mean (10 %), the long partition's (20 %) nor the rank correlation (0.9) do
    met = {"mean within 10 %": abs(overall["mean_wait_ratio"] - 1) <= 0.10,
           "rank >= 0.9": overall["wait_rank_correlation"] >= 0.9,
           **{f"{name} within 20 %": abs(part["mean_wait_ratio"] - 1) <= 0.20 for name, part in figures["per_queue"].items()}}
    assert met == {"mean within 10 %": False, "rank >= 0.9": False, "long within 20 %": False, "short within 20 %": True}


def test_the_rerun_at_its_own_priority_phase(tmp_path):
    """sprio's age factors put this run's priority calculations 48 s after the first submission
    (engine.calibrate.priority_phase_from_sprio; rec1 12 s, rec2 44 s). slurmctld.log agrees:
    the controller started at 05:04:57.35, 13.4 s before the first sbatch (05:05:10.71), so its
    60-s cycle falls 46.6 s after it, 47 s after sacct's whole second of it; the decay thread starts
    after the controller's own start-up. At that phase the replay gives 363.8 s (+8.8 %), rank 0.837,
    long 751.6 s (+15.1 %), short 200.1 s (+0.0 %): the means meet the targets, the rank does not."""
    from engine.calibrate import priority_phase_from_sprio

    site = api.read_slurm_site(DATA / "slurm.conf", qos=DATA / "qos.txt", assoc=DATA / "assoc.txt")
    phase = priority_phase_from_sprio(DATA / "sprio.txt.gz", api.read_trace(str(DATA / "sacct.txt"), procs=16), site)
    assert phase == 48
    recorded = schedule(tmp_path, "recorded", "--procs", "16", "--policy", "recorded", data=DATA)
    report = fidelity(recorded, schedule(tmp_path, "slurm", *SITE_ARGS, "--policy", "slurm", *OVERRUN,
                                         "--set", f"priority_phase={phase}", data=DATA), capacity=16)
    assert report["overall"]["simulated"]["mean_wait"] == pytest.approx(363.8, abs=1)
    assert report["overall"]["wait_rank_correlation"] == pytest.approx(0.837, abs=0.002)
    assert report["per_queue"]["long"]["simulated"]["mean_wait"] == pytest.approx(751.6, abs=1)
    assert report["per_queue"]["short"]["simulated"]["mean_wait"] == pytest.approx(200.1, abs=1)


def test_real_slurm_against_real_slurm(real):
    """The three real runs of one workload, jobs matched by workload row: rec1-rec2 0.921 (long
    0.934, short 0.884), rec1-rec4 0.863 (0.881, 0.807), rec2-rec4 0.877 (0.926, 0.814). Real Slurm
    reorders its own waits from run to run about as much as the replay departs from a run
    (0.879 / 0.898 / 0.837 at phase 0 on rec1 / rec2 / rec4; 0.895 / 0.875 / 0.826 over 20 phases):
    one of the three real pairs reaches 0.9."""
    runs, script = real
    measured = {("rec1", "rec2"): (0.921, 0.934, 0.884), ("rec1", "rec4"): (0.863, 0.881, 0.807),
                ("rec2", "rec4"): (0.877, 0.926, 0.814)}
    for (a, b), (overall, long, short) in measured.items():
        figures = script.compare(runs[a], runs[b])
        assert figures["jobs"] == 330
        assert figures["all"] == pytest.approx(overall, abs=0.005)
        assert figures["long"] == pytest.approx(long, abs=0.005)
        assert figures["short"] == pytest.approx(short, abs=0.005)
    assert sum(script.compare(runs[a], runs[b])["all"] >= 0.9 for a, b in itertools.combinations(runs, 2)) == 1


def test_the_mean_waits_of_the_three_real_runs(real):
    """424.2 / 378.2 / 334.6 s (long 920.0 / 792.9 / 653.0, short 214.7 / 203.0 / 200.1): the same
    workload on the same site, 21 % apart from the first run to this one. The short partition holds
    steady (7 %), the long one moves (29 %)."""
    runs, script = real
    means = {name: script.means(run) for name, run in runs.items()}
    expected = {"rec1": (424.17, 919.97, 214.74), "rec2": (378.17, 792.90, 202.99), "rec4": (334.56, 653.00, 200.05)}
    for name, (overall, long, short) in expected.items():
        assert means[name]["all"] == pytest.approx(overall, abs=0.01)
        assert means[name]["long"] == pytest.approx(long, abs=0.01)
        assert means[name]["short"] == pytest.approx(short, abs=0.01)
