"""Replaying a real Slurm 22.05 run of a second site (tests/data/slurm_replay_site2, README there)
from its own files with the ``slurm`` policy: the rules checked on tests/data/slurm_replay, on a
configuration they were not tuned on (12 CPUs; partitions debug on PriorityTier 2, short and long on
tier 1; bf_interval 10, bf_resolution 30, bf_max_job_test 20, bf_max_job_user 3, sched_interval 20,
default_queue_depth 50; age-heavy weights with PriorityFavorSmall and a QOS weight; QOS limits
MaxTRESPU cpu, GrpTRES cpu, MaxWall, MaxJobsPU; four accounts, seven users).

The figures are pinned (the replay is deterministic) and said against the targets of issue 24 §3
(mean wait within 10 %, rank correlation of waits >= 0.9, per-partition means within 20 %)."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import re
from pathlib import Path

import pytest

from engine import api
from engine.cli import main
from engine.metrics.fidelity import fidelity
from tests.engine.policies.test_slurm_replay import OVERRUN, assert_pinned, schedule

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "slurm_replay_site2"
SITE_ARGS = ["--slurm-conf", str(DATA / "slurm.conf"), "--qos", str(DATA / "qos.txt"), "--assoc", str(DATA / "assoc.txt")]
CPUS = 12
JOBS = 320


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay_site2")
    recorded = schedule(tmp, "recorded", "--procs", str(CPUS), "--policy", "recorded", data=DATA)
    easy = fidelity(recorded, schedule(tmp, "easy", "--procs", str(CPUS), "--policy", "easy", *OVERRUN, data=DATA), capacity=CPUS)
    slurm = fidelity(recorded, schedule(tmp, "slurm", *SITE_ARGS, "--policy", "slurm", *OVERRUN, data=DATA), capacity=CPUS)
    return easy, slurm


def error(report: dict, name: str | None = None) -> float:
    """The replay's mean wait against the recording's, overall or of one partition (-0.1 = 10 % short)."""
    part = report["overall"] if name is None else report["per_queue"][name]
    return part["simulated"]["mean_wait"] / part["recorded"]["mean_wait"] - 1


def test_the_engine_reads_every_key_of_the_site(capsys):
    """``python -m engine site`` follows each scheduling key of this site (the three partitions with
    their tiers and factors, every SchedulerParameters entry, the weights, each QOS limit) and names
    the rest as not modelled: only daemons, paths, logging, and two of AccountingStorageEnforce's
    checks a recorded job has passed already."""
    assert main(["site", str(DATA / "slurm.conf"), "--qos", str(DATA / "qos.txt"), "--assoc", str(DATA / "assoc.txt")]) == 0
    out = capsys.readouterr().out
    for shown in ("debug: 1 nodes, MaxTime 00:02:00, DefaultTime 00:01:00, MaxNodes UNLIMITED, tier 2, factor 1",
                  "short (default): 1 nodes, MaxTime 00:05:00, DefaultTime 00:02:00, MaxNodes UNLIMITED, tier 1, factor 3",
                  "long: 1 nodes, MaxTime 00:20:00, DefaultTime 00:10:00, MaxNodes UNLIMITED, tier 1, factor 1",
                  "weights age 5,000, fairshare 6,000, jobsize 1,500, partition 3,000, qos 1,000; half-life 00:10:00, "
                  "max age 00:10:00, recalculated every 00:01:00; favor small yes",
                  "bf_interval=10, bf_resolution=30, bf_window=60, bf_max_job_test=20, bf_max_job_user=3, "
                  "bf_continue=True, default_queue_depth=50, sched_interval=20",
                  "QOS normal: priority 20, max_wall 00:20:00, max_tres_per_user cpu=6",
                  "QOS bulk: priority 0, max_wall 00:10:00, grp_tres cpu=8",
                  "QOS wide: priority 50, max_wall 00:20:00, max_jobs_per_user 1",
                  "association physics/alice: shares 2"):
        assert shown in out
    not_modelled = out[out.index("not modelled"):]
    names = {item.split(" (")[0] for item in not_modelled.split(": ", 1)[1].split(", ") if item[:1].isupper()}
    assert names == {"SlurmctldHost", "SlurmUser", "SlurmctldPort", "SlurmdPort", "AuthType", "StateSaveLocation",
                     "SlurmdSpoolDir", "SlurmctldPidFile", "SlurmdPidFile", "SlurmctldLogFile", "SlurmdLogFile",
                     "ProctrackType", "TaskPlugin", "ReturnToService", "SlurmdParameters", "MpiDefault",
                     "AccountingStorageType", "AccountingStorageHost", "JobAcctGatherType", "JobCompType", "KillWait",
                     "InactiveLimit", "MinJobAge", "SlurmctldDebug", "SlurmdDebug", "DebugFlags",
                     "LogTimeFormat", "SchedulerParameters bf_continue", "AccountingStorageEnforce qos"}


def test_the_sacct_reader_keeps_each_jobs_partition_and_qos():
    workload = api.read_trace(str(DATA / "sacct.txt"), procs=CPUS)
    jobs, partitions = workload.jobs, workload.metadata["queue_names"]
    assert len(jobs) == JOBS
    assert {partitions[str(q)] for q in jobs["queue"]} == {"debug", "short", "long"}
    assert set(jobs["qos"]) == {"normal", "bulk", "wide"}
    assert jobs.loc[jobs["qos"] == "wide", "procs"].min() > 6          # normal's MaxTRESPU cpu=6 keeps them out
    assert set(jobs.loc[jobs["qos"] == "bulk", "account"]) == {"chemistry", "biology"}


def test_the_workload_script_makes_both_recorded_workloads():
    """scripts/slurm_replay_workload.py with each recording's options gives its workload.tsv again."""
    spec = importlib.util.spec_from_file_location("slurm_replay_workload", ROOT / "scripts" / "slurm_replay_workload.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for folder, args in (("slurm_replay", (24, 330, 2400, "site1")), ("slurm_replay_site2", (2042, JOBS, 1740, "site2"))):
        with open(ROOT / "tests" / "data" / folder / "workload.tsv", newline="") as f:
            written = [{k: str(v) for k, v in row.items()} for row in csv.DictReader(f, delimiter="\t")]
        assert [{k: str(v) for k, v in row.items()} for row in script.make_workload(*args)] == written


def test_the_replay_of_the_second_site_is_pinned(figures):
    """Recorded mean wait 234.6 s (debug 9.5, short 183.5, long 533.8); the replay at phase 0 of the
    priority cycle, the 2 jobs killed at their limit keeping their recorded runtimes (OVERRUN, as
    test_slurm_replay): 233.0 s (-0.7 %), rank correlation of waits 0.923, debug 8.7 s (-8.3 %),
    short 178.3 s (-2.8 %), long 540.6 s (+1.3 %). Cut at the limit: 198.7 s (-15.3 %), 0.929,
    debug +9.4 %, short -12.8 %, long -17.8 %. Before the backfill pass stopped seeing the job ends
    of its own second (main, c3b2052's rule) the pin was 218.1 s (-7.0 %), 0.919, long 498.5 s."""
    _, slurm = figures
    # recorded: debug 9.53 s, short 183.5 s, long 533.8 s
    assert_pinned(slurm, JOBS, 234.62, 233.01, 0.923, {"debug": 8.74, "short": 178.3, "long": 540.6}, partition_abs=0.5)


def test_which_targets_of_issue_24_the_replay_meets(figures):
    """All of them at this phase: the overall mean within 10 % (-0.7 %), the rank correlation
    (0.923 >= 0.9) and every partition's mean within 20 % (debug -8.3 %, short -2.8 %, long +1.3 %)."""
    _, slurm = figures
    met = {"rank correlation >= 0.9": slurm["overall"]["wait_rank_correlation"] >= 0.9,
           "mean within 10 %": abs(error(slurm)) <= 0.10,
           **{f"{name} within 20 %": abs(error(slurm, name)) <= 0.20 for name in ("debug", "short", "long")}}
    assert met == {"rank correlation >= 0.9": True, "mean within 10 %": True,
                   "debug within 20 %": True, "short within 20 %": True, "long within 20 %": True}


def test_the_replay_is_closer_to_the_recording_than_easy(figures):
    """Plain EASY on 12 processors (no tiers, priorities or limits): 158.9 s (-32.3 %), rank 0.339,
    debug 147.7 s (15 x the recording: it ignores the debug partition's higher tier), short 149.5 s
    (-18.5 %), long 191.1 s (-64.2 %). The slurm replay is closer overall, in the order of the waits
    (by more than 0.5) and in every partition's mean."""
    easy, slurm = figures
    assert easy["overall"]["simulated"]["mean_wait"] == pytest.approx(158.93, abs=1)
    assert easy["overall"]["wait_rank_correlation"] == pytest.approx(0.339, abs=0.002)
    assert abs(error(slurm)) < abs(error(easy))
    assert slurm["overall"]["wait_rank_correlation"] > easy["overall"]["wait_rank_correlation"] + 0.5
    for name in ("debug", "short", "long"):
        assert abs(error(slurm, name)) < abs(error(easy, name))


def test_the_backfill_decisions_of_the_second_sites_log_follow_the_policys_rule():
    """The check of tests/engine/policies/test_slurm_debug_log.py on this site's log (bf_resolution
    30 s, 12 CPUs, three partitions): every backfill decision (start now or not) is the one the
    ``slurm`` policy's whole-node reservations give. Left out, as not decisions of the table: a
    job the pass tested and then skipped for bf_max_job_user (3: "have already checked 3 jobs for
    user ...; skipping", 4,681 lines) or held for a limit after select (normal's MaxTRESPU cpu=6,
    wide's MaxJobsPU 1: "being held"); counted, they are 312 of 7,455 "disagreements"."""
    from tests.engine.policies.test_slurm_debug_log import _decisions, read_events

    events = read_events(DATA / "slurmctld_sched.log.gz")
    first = min(t for t, kind, _ in events if kind == "submit")
    with open(DATA / "submitted.tsv", newline="") as f:
        jobs = {r["jobid"]: (int(r["cpus"]), 60 * int(r["limit"])) for r in csv.DictReader(f, delimiter="\t")}
    resolution = api.read_slurm_site(DATA / "slurm.conf").conf.scheduler["bf_resolution"]
    assert resolution == 30
    log = [e for e in events if e[0] >= first]
    assert _decisions(log, jobs, CPUS, resolution, CPUS) == (2658, 0)


def test_the_main_scheduler_at_events_tests_default_queue_depth_plus_one_jobs():
    """job_scheduler.c _schedule breaks on `job_depth++ > def_job_limit`: the job after
    default_queue_depth + 1 tested ones, printing its job_depth after the increment. This log's
    every depth-limited run that ran out of depth (default_queue_depth=50) says 52."""
    text = gzip.open(DATA / "slurmctld_sched.log.gz", "rt").read()
    depth = int(re.search(r"default_queue_depth=(\d+)", (DATA / "slurm.conf").read_text()).group(1))
    tested = [int(n) for n in re.findall(r"sched: already tested (\d+) jobs, breaking out", text)]
    assert len(tested) >= 100 and set(tested) == {depth + 2}
