"""Replaying a real Slurm 22.05 run (tests/data/slurm_replay, README there) from the site's own
files with the ``slurm`` policy, and how far the replay is from the recording (issue 24 §3).

The figures are pinned (the replay is deterministic). None of the issue's targets (mean wait
within 10 %, rank correlation >= 0.9, per-partition means within 20 %) is met at this phase of the
timers: the test says so, and where the replay is closer to the recording than plain EASY."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine import api
from engine.cli import main
from engine.metrics.fidelity import fidelity

DATA = Path(__file__).resolve().parents[2] / "data" / "slurm_replay"
SITE_ARGS = ["--slurm-conf", str(DATA / "slurm.conf"), "--qos", str(DATA / "qos.txt"), "--assoc", str(DATA / "assoc.txt")]


#: the 4 jobs Slurm killed at their time limit keep their recorded runtimes: slurmctld kills a job
#: over its limit at its next time-limit check, every 30 s (controller.c PERIODIC_TIMEOUT,
#: job_mgr.c job_time_limit), so they held their CPUs 6-17 s past it
#: (tests/engine/policies/test_slurm_debug_log.py); cut at the limit, this phase gave 313.2 s,
#: 0.818, long 651.5, short 170.3, and the 20-phase averages (benchmarks/slurm_fidelity_sweep.py)
#: were rec1 330.7 s / 0.824, rec2 322.1 s / 0.825, against 338.7 s / 0.844 and 356.9 s / 0.888 kept
OVERRUN = ("--overrun", "run")


def schedule(tmp_path: Path, name: str, *args: str, data: Path = DATA) -> pd.DataFrame:
    """The schedule ``python -m engine simulate`` makes of the recording in ``data`` (its sacct.txt)."""
    out = tmp_path / f"{name}.csv"
    assert main(["simulate", str(data / "sacct.txt"), *args, "--out", str(out), "--no-parse-cache",
                 "--no-progress"]) == 0
    return pd.read_csv(out)


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    recorded = schedule(tmp, "recorded", "--procs", "16", "--policy", "recorded")
    easy = fidelity(recorded, schedule(tmp, "easy", "--procs", "16", "--policy", "easy", *OVERRUN), capacity=16)
    slurm = fidelity(recorded, schedule(tmp, "slurm", *SITE_ARGS, "--policy", "slurm", *OVERRUN), capacity=16)
    return easy, slurm


def assert_pinned(report: dict, jobs: int, recorded: float, simulated: float, rank: float,
                  partitions: dict[str, float], partition_abs: float = 1.0) -> None:
    """A replay's fidelity report against its pinned figures: the jobs matched, the recorded and the
    replayed mean waits (s), the rank correlation of waits and each partition's replayed mean wait."""
    overall = report["overall"]
    assert report["jobs"]["matched"] == jobs
    assert overall["recorded"]["mean_wait"] == pytest.approx(recorded, abs=0.01)
    assert overall["simulated"]["mean_wait"] == pytest.approx(simulated, abs=1)
    assert overall["wait_rank_correlation"] == pytest.approx(rank, abs=0.002)
    per = {name: part["simulated"]["mean_wait"] for name, part in report["per_queue"].items()}
    assert per == pytest.approx(partitions, abs=partition_abs)


def test_the_replay_from_the_sites_files_is_pinned(figures):
    _, slurm = figures
    # recorded: long 920.0 s, short 214.7 s
    assert_pinned(slurm, 330, 424.17, 394.4, 0.879, {"long": 818.9, "short": 215.1})
    overall = slurm["overall"]
    per = {name: part["simulated"]["mean_wait"] for name, part in slurm["per_queue"].items()}
    # against the targets of issue 24 at this phase: the overall mean (-7.0 %) and each
    # partition's (long -11.0 %, short +0.2 %) meet them, the rank correlation of waits (0.879)
    # does not. Backfill is timed as Slurm's backfill thread (backfill.c backfill_agent: bf_interval
    # after a pass that tested jobs, else at the first change; SlurmBackfill.backfill_due): before,
    # 406.4 s, 0.867, long 869.5, short 210.7, and over 20 phases rec1 398.2 s / 0.883, rec2
    # 402.2 s / 0.878, against 400.0 s / 0.895 and 388.2 s / 0.875 with it. Before that, a backfill
    # pass came to not see the jobs that ended in its own second (slurmctld's
    # log: the pass comes first in 91 of 108 such seconds; SlurmBackfill.backfill_pass): before,
    # 305.1 s, 0.835, long 622.8, short 170.9, and over 20 phases (benchmarks/slurm_fidelity_sweep.py)
    # rec1 338.7 s / 0.844, rec2 356.9 s / 0.888, against 398.2 s / 0.883 and 402.2 s / 0.878
    # (recorded 424.2 and 378.2 s). The rules of
    # slurmctld 22.05.8 this replay follows were each read from its source and checked on a real
    # run's debug log (the main scheduler at submissions and ends batch_sched_delay apart, the
    # backfill table's times, the will-run test's batches: tests/engine/policies/test_slurm_rules.py);
    # the phase alone moves the replay over 367-428 s (benchmarks/slurm_fidelity_sweep.py)
    for name in ("long", "short"):
        assert abs(per[name] / slurm["per_queue"][name]["recorded"]["mean_wait"] - 1) < 0.20
    assert abs(overall["simulated"]["mean_wait"] / overall["recorded"]["mean_wait"] - 1) < 0.10
    assert overall["wait_rank_correlation"] < 0.9


def test_where_the_replay_is_closer_to_the_recording_than_easy(figures):
    """Closer in the order of the waits (by more than 0.1), in the overall mean and in each
    partition's mean (EASY on the same jobs: 348.5 s overall, short 269.0 s, long 536.7 s, rank
    correlation 0.667; the replay 394.4 s, recorded 424.2 s)."""
    easy, slurm = figures
    recorded = slurm["overall"]["recorded"]["mean_wait"]
    assert abs(slurm["overall"]["simulated"]["mean_wait"] - recorded) < abs(easy["overall"]["simulated"]["mean_wait"] - recorded)
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


@pytest.mark.parametrize("calculated, share", [(None, 0.817), (10, 0.981)])
def test_fair_tree_factors_from_the_recorded_usage_match_sprio(calculated, share):
    """Fair Tree over the recorded schedule's decayed usage (CPU-seconds, half-life 15 min) against
    the fair-share factor the real Slurm printed (sprio every 20 s): pinned share of exact matches.
    Usage taken at each snapshot's time (None): 82 % (5,723 rows). Taken at the time of slurmctld's
    last recalculation before it, every PriorityCalcPeriod (60 s) from 10 s after the first
    submission (sprio's age factors put that cycle 13 s in: engine.calibrate reads it): 98 %. The
    rest differ by the ranks of users whose Level Fairshares are close."""
    import gzip
    import math

    from engine.policies.slurm import association_tree, fair_tree_factors, users_of

    site = api.read_slurm_site(DATA / "slurm.conf", qos=DATA / "qos.txt", assoc=DATA / "assoc.txt")
    workload = api.read_trace(str(DATA / "sacct.txt"), procs=16)
    jobs, names = workload.jobs, workload.metadata["user_names"]
    start = jobs["submit"] + jobs["wait_trace"]
    recorded = {str(jobid): (names[str(int(user))], account, int(cpus), int(begin), int(begin + runtime))
                for jobid, user, account, cpus, begin, runtime
                in zip(jobs["jobid"], jobs["user"], jobs["account"], jobs["procs"], start, jobs["runtime"])}
    half = float(site.conf.decay_half_life or 0)
    first, period = int(jobs["submit"].min()), int(site.conf.calc_period)
    matched = rows = 0
    at = 0
    with gzip.open(DATA / "sprio.txt.gz", "rt") as lines:
        snapshot: list[list[str]] = []
        for line in [*lines, "# end"]:
            if not line.startswith("#"):
                snapshot.append(line.strip().split("|"))
                continue
            if snapshot:
                when = at if calculated is None else at - (at - first - calculated) % period
                root = association_tree(site.associations)
                users = {(u.account, u.user): u for u in users_of(root)}
                for user, account, cpus, begin, end in recorded.values():
                    until = min(end, when)
                    if until > begin:      # CPU-seconds decayed continuously to then
                        users[(account, user)].usage += cpus * half / math.log(2) * (
                            0.5 ** ((when - until) / half) - 0.5 ** ((when - begin) / half))
                factors = fair_tree_factors(root)
                for row in snapshot:
                    user, account = recorded[row[0]][0], recorded[row[0]][1]
                    rows += 1
                    matched += abs(round(10000 * factors[(account, user)]) - int(row[6])) <= 1
            snapshot = []
            at = int(line.split()[1]) if line.split()[1:] and line.split()[1].isdigit() else at
    assert rows == 7004                              # pending-job rows of sprio.txt.gz
    assert matched / rows == pytest.approx(share, abs=0.002)


def test_usage_accrued_as_slurms_decay_thread_matches_sprio_at_its_calculations():
    """The same comparison with the usage kept as slurmctld's decay thread keeps it (the rule the
    policy follows: SlurmPriorityQueue.accrue): calculations every 60 s from 12 s after the first
    submission (where sprio's rounded age factors put them, to the second); at each, all usage
    decays by d^60 (d = 1 - 0.693 / half-life per second), a running job adds CPU-seconds x d^t for
    its t seconds since the previous one, and a job that ended since added its CPU-seconds x d^t at
    its end. Fair Tree's factor then equals sprio's on 99.6 % of the rows (every one but 28: six
    rows each of four snapshots after 3,950 s, where two accounts' Level Fairshares are within
    rounding, and four in the first minutes), against 98 % with the usage decayed continuously."""
    import gzip

    from engine.policies.slurm import association_tree, fair_tree_factors, users_of

    site = api.read_slurm_site(DATA / "slurm.conf", qos=DATA / "qos.txt", assoc=DATA / "assoc.txt")
    workload = api.read_trace(str(DATA / "sacct.txt"), procs=16)
    jobs, names = workload.jobs, workload.metadata["user_names"]
    start = (jobs["submit"] + jobs["wait_trace"]).astype(int).tolist()
    end = (jobs["submit"] + jobs["wait_trace"] + jobs["runtime"]).astype(int).tolist()
    who = [(account, names[str(int(user))]) for account, user in zip(jobs["account"], jobs["user"])]
    cpus = jobs["procs"].astype(int).tolist()
    jobid = [str(j) for j in jobs["jobid"]]
    d = 1 - 0.693 / float(site.conf.decay_half_life or 0)
    first, period = int(jobs["submit"].min()), int(site.conf.calc_period)
    usage: dict[tuple[str, str], float] = {}
    factors_at: dict[int, dict[tuple[str, str], float]] = {}
    previous = None
    for k in range(80):
        at = first + 12 + k * period
        if previous is not None:
            for i in range(len(jobid)):          # ended since the previous calculation: added at the end
                if previous < end[i] <= at and end[i] > max(previous, start[i]):
                    t = end[i] - max(previous, start[i])
                    usage[who[i]] = usage.get(who[i], 0.0) + cpus[i] * t * d ** t
            usage = {key: value * d ** (at - previous) for key, value in usage.items()}
            for i in range(len(jobid)):          # running: added at the calculation
                if start[i] < at < end[i]:
                    t = at - max(previous, start[i])
                    usage[who[i]] = usage.get(who[i], 0.0) + cpus[i] * t * d ** t
        root = association_tree(site.associations)
        for user in users_of(root):
            user.usage = usage.get((user.account, user.user), 0.0)
        factors_at[at] = fair_tree_factors(root)
        previous = at
    of = dict(zip(jobid, who))
    matched = rows = 0
    with gzip.open(DATA / "sprio.txt.gz", "rt") as lines:
        when = 0
        for line in lines:
            if line.startswith("#"):
                when = int(line.split()[1])
                continue
            row = line.strip().split("|")
            calculation = when - (when - first - 12) % period
            rows += 1
            matched += abs(round(10000 * factors_at[calculation][of[row[0]]]) - int(row[6])) <= 1
    assert rows == 7004
    assert matched == 6977                           # 99.6 %
