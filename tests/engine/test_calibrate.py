"""Calibrating a Slurm site's replay against its accounting log (engine.calibrate, issue 24 §3)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine.calibrate import (Candidate, _row, candidates, idle_with_waiting, most_running, priority_phase_from_sprio,
                              reason_shares, squeue_reasons)
from engine.cli import main
from engine.platform.slurmconf import Qos, SlurmSite, parse_slurm_conf
from engine.policies.slurm import RESERVED_FOR_HIGHER
from engine.workload.model import Workload

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm_replay"
#: the test site's (bf_interval 5 s) candidates that slurmctld's debug log contradicts, as labelled
GRID_10 = "backfill every 10 s (Slurm's log: every 5 s)"
THREAD_10 = "Slurm's backfill thread, 10 s apart (Slurm's log: 5 s)"
EVERY_EVENT = "backfill at every event (Slurm's log: every 5 s)"


def test_idle_with_waiting_counts_only_seconds_with_a_queue_and_nothing_running():
    # job 1 runs 0-10; job 2 waits from 5 and starts at 20 (10-20: waiting, nothing runs);
    # job 3 submitted at 30 on an empty machine starts at 32 (2 more seconds)
    recorded = pd.DataFrame({"submit": [0, 5, 30], "start": [0, 20, 32], "end": [10, 25, 40]})
    assert idle_with_waiting(recorded) == 12


def test_most_running_per_association_counts_an_end_before_a_start_at_the_same_second():
    # u in A: 0-10, 5-20, 10-30 (the first ends as the third starts): at most 2 at once; u in B: 1
    recorded = pd.DataFrame({"user_name": ["u", "u", "u", "u"], "start": [0, 5, 10, 0], "end": [10, 20, 30, 50]})
    assert most_running(recorded, ["A", "A", "A", "B"]) == {("A", "u"): 2, ("B", "u"): 1}


def test_the_distance_adds_the_mean_errors_and_the_rank_correlations_shortfall():
    def part(rec, sim):
        return {"recorded": {"mean_wait": rec}, "simulated": {"mean_wait": sim}}
    figures = {"overall": {**part(400, 440), "wait_rank_correlation": 0.8},
               "per_queue": {"a": part(100, 90), "b": part(700, 910)}}
    row = _row(Candidate("x", "y"), figures)
    # |+10 %| + (|-10 %| + |+30 %|) / 2 + (1 - 0.8)
    assert row["distance"] == pytest.approx(0.1 + 0.2 + 0.2)
    assert not row["meets_means"]          # b is 30 % off (target 20 %)


def test_the_candidates_follow_the_sites_parameters():
    conf = parse_slurm_conf("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n"
                            "SchedulerParameters=bf_max_job_test=200,sched_interval=20,bf_resolution=1,bf_interval=7\n")
    found = {c.name: c for c in candidates(SlurmSite(conf, qos={"normal": Qos("normal")}))}
    names = list(found)
    assert names[0] == "as configured" and "backfill on a grid every 7 s from the first submission" in names
    # backfill slower than the site's bf_interval (twice, not sched_interval: that is the main scheduler's
    # timer) is a calibration: the label says what slurmctld's log shows instead
    slower = found["Slurm's backfill thread, 14 s apart (Slurm's log: 7 s)"]
    assert slower.params == {"backfill_agent": True, "sched_cycle": 14}
    assert found["backfill every 14 s (Slurm's log: every 7 s)"].params == {"sched_cycle": 14, "backfill_agent": False}
    assert not any("sched_interval" in name for name in names)
    contradicted = [name for name in names if "Slurm's log" in name]
    assert [found[name].params for name in contradicted] == [{"sched_cycle": 14, "backfill_agent": False},
                                                             {"backfill_agent": True, "sched_cycle": 14},
                                                             {"sched_cycle": 0}, {"main_at_events": True}]
    assert "bf_max_job_test 100" in names and "bf_max_job_test 20" in names
    assert "bf_resolution 1 s" not in names                        # the site's is 1 s already
    assert "without the QOS and association limits" not in names   # it has none
    limited = SlurmSite(conf, qos={"normal": Qos("normal", max_jobs_per_user=2)})
    assert "without the QOS and association limits" in [c.name for c in candidates(limited)]


def test_the_priority_cycles_phase_from_sprios_age_factors(tmp_path):
    # PriorityWeightAge 1000, PriorityMaxAge 20 min, PriorityCalcPeriod 1 min; jobs 1 and 2
    # submitted at 1000 and 1050; slurmctld recalculated at 1073: sprio at 1100 shows ages
    # 1000 x 73 / 1200 = 60.8 and 1000 x 23 / 1200 = 19.2 rounded, 61 and 19, which bound the
    # calculation to [1072.6, 1073.8) and [1072.2, 1073.4): 73 s after the first submission, 13 s
    # into the 60 s cycle
    conf = parse_slurm_conf("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\nPriorityWeightAge=1000\n"
                            "PriorityMaxAge=00:20:00\nPriorityCalcPeriod=1\n")
    jobs = pd.DataFrame({"jobid": ["1", "2"], "submit": [1000, 1050]})
    sprio = tmp_path / "sprio.txt"
    sprio.write_text("# 1100\n1|u|p|0|61|61|0|0|0\n2|u|p|0|19|19|0|0|0\n# 1120\n")
    assert priority_phase_from_sprio(sprio, Workload(jobs, {}), SlurmSite(conf)) == 13
    # no age weight: nothing to read the phase from
    flat = parse_slurm_conf("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n")
    assert priority_phase_from_sprio(sprio, Workload(jobs, {}), SlurmSite(flat)) is None


def test_squeue_reasons_are_shares_of_the_pending_rows(tmp_path):
    squeue = tmp_path / "squeue.txt"
    squeue.write_text("# 100\n1|u|p|normal|RUNNING|None|1|x|y\n2|u|p|normal|PENDING|Resources|1|x|y\n"
                      "3|u|p|normal|PENDING|Priority|1|x|y\n# 120\n3|u|p|normal|PENDING|Priority|1|x|y\n"
                      "4|v|p|normal|PENDING|QOSMaxJobsPerUserLimit|1|x|y\n")
    assert squeue_reasons(squeue) == {"Priority": 0.5, "QOSMaxJobsPerUserLimit": 0.25, "Resources": 0.25}
    summary = {"slurm_pending": {"Priority": {"jobs": 2, "hours": 3.0}, "Resources": {"jobs": 1, "hours": 1.0}}}
    assert reason_shares(summary) == {"Priority": 0.75, "Resources": 0.25}


@pytest.mark.slow
def test_the_calibrate_command_on_the_real_slurm_recording(tmp_path, capsys):
    out = tmp_path / "cal.json"
    assert main(["calibrate", str(DATA / "sacct.txt"), "--slurm-conf", str(DATA / "slurm.conf"),
                 "--qos", str(DATA / "qos.txt"), "--assoc", str(DATA / "assoc.txt"), "--sprio", str(DATA / "sprio.txt.gz"),
                 "--squeue", str(DATA / "squeue.txt.gz"), "--phases", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    import json
    report = json.loads(out.read_text())
    rows = {r["name"]: r for r in report["candidates"]}
    # the site as configured, this command reading sacct with the overruns of the 4 jobs Slurm killed
    # at their time limit cut: since the replay kills them at slurmctld's time-limit check (every
    # 30 s from the first submission, engine.sim.timelimit) rather than at their limit, 419.1 s,
    # 0.868, distance 0.212 (killed at the limit: 394.6 s, 0.895, distance 0.229; read with their
    # recorded runtimes, as tests/engine/policies/test_slurm_replay.py replays them: 394.4 s, 0.879).
    # A 3-8 s longer hold of 4 jobs moves this one phase by 24 s: the phases spread 324-419 s (the
    # next test); before a backfill pass stopped seeing the job ends of its own second it gave
    # 313.2 s, 0.818, distance 0.693
    assert rows["as configured"]["mean_wait"] == pytest.approx(419.1, abs=1)
    assert rows["as configured"]["rank_correlation"] == pytest.approx(0.868, abs=0.002)
    assert rows["as configured"]["meets_means"] and not rows["as configured"]["meets_all"]
    assert rows["backfill on a grid every 5 s from the first submission"]["mean_wait"] == pytest.approx(417.5, abs=1)
    # reserving processors rather than whole nodes (-27 %), or a pass at every event (-23 %), is far off
    assert rows["reservations of processors, not whole nodes"]["error"] < -0.2
    assert rows[EVERY_EVENT]["error"] < -0.2
    # the closest at this phase: backfill on the 5-s grid (distance 0.1745, backfill every 10 s
    # 0.1746; the site as configured 0.212, backfill timed as Slurm's backfill thread 10 s apart
    # 0.359); ten candidates meet the targets for the means
    assert report["best"] == "backfill on a grid every 5 s from the first submission"
    assert rows["as configured"]["distance"] == pytest.approx(0.212, abs=0.005)
    assert rows[THREAD_10]["distance"] == pytest.approx(0.359, abs=0.005)
    assert report["trust"]["long"]["models"] == 10
    # each user's MaxJobs as the log shows it running at once: about as close as the site's own limits
    assert rows["MaxJobs per user as the log shows it"]["mean_wait"] == pytest.approx(388.8, abs=1)
    assert report["trust"]["long"]["model_bound"] == pytest.approx(0.173, abs=0.005)
    # the recording's own priority phase (12 s after the first submission, read from sprio) puts
    # the replay at 403 s (-5.0 %); the six phases give 324-419 s
    assert report["sprio_phase"] == 12
    assert rows["priority cycle at sprio's phase (12 s)"]["mean_wait"] == pytest.approx(403.1, abs=1)
    assert report["phase_mean_wait"]["low"] == pytest.approx(324.4, abs=1)
    assert report["phase_mean_wait"]["high"] == pytest.approx(419.1, abs=1)
    assert report["trust"]["long"]["phase_low"] == pytest.approx(673.5, abs=1)
    assert report["trust"]["long"]["bound"] == pytest.approx(0.173, abs=0.005)
    assert "closest: backfill on a grid every 5 s from the first submission (distance 0.175" in text
    assert "short: recorded 215 s" in text
    assert "to replay with it: python -m engine simulate ... --policy slurm --set backfill_agent=false" in text
    # pending reasons as Slurm names them: squeue's shares of the waiting time against the replay's
    # (the replay's Priority 0.929 and QOSMaxJobsPerUserLimit 0.018 before a job of a failed
    # partition kept its limit's reason in the main scheduler, as _failed_partition in
    # job_scheduler.c 1623 lets it: slurmkernels.main_walk; 0.927 and 0.020 with it before the 4 TIMEOUT
    # jobs were killed at the time-limit check rather than at their limit)
    recorded, replayed = report["squeue_reasons"], rows["as configured"]["reasons"]
    assert recorded["Priority"] == pytest.approx(0.911, abs=0.001) and replayed["Priority"] == pytest.approx(0.924, abs=0.002)
    assert recorded["Resources"] == pytest.approx(0.029, abs=0.001) and replayed["Resources"] == pytest.approx(0.028, abs=0.002)
    assert recorded["QOSMaxJobsPerUserLimit"] == pytest.approx(0.034, abs=0.001)
    assert replayed["QOSMaxJobsPerUserLimit"] == pytest.approx(0.023, abs=0.001)
    assert recorded[RESERVED_FOR_HIGHER] == pytest.approx(0.027, abs=0.001)
    assert replayed[RESERVED_FOR_HIGHER] == pytest.approx(0.024, abs=0.002)


@pytest.mark.slow
def test_averaged_over_the_priority_cycles_phases_the_backfill_thread_10_s_apart_is_closest():
    """Averaged over six phases of the priority cycle the site as configured is 10.3 % short
    (381 s, rank correlation 0.896: the means just outside the 10 % target; 383 s and 0.903, within
    it, while the 4 jobs Slurm killed at their time limit ended at it rather than at slurmctld's
    next 30-s time-limit check: engine.sim.timelimit; 370 s and 0.877 before backfill was timed as
    Slurm's backfill thread, 342 s and 0.822 before a backfill pass stopped seeing the job ends of
    its own second); backfill passes 10 s apart rather than bf_interval's 5 s give -11.2 % on the
    grid (377 s) and +6.5 % timed as Slurm's backfill thread (452 s, rank correlation 0.890): the
    closest (-0.5 % and 0.909 with the kills at the limit). A real run's debug log shows the thread
    every 5.0 s while jobs wait (it is a calibration, not Slurm's rule)."""
    from engine import api
    from engine.calibrate import calibrate

    site = api.read_slurm_site(DATA / "slurm.conf", qos=DATA / "qos.txt", assoc=DATA / "assoc.txt")
    workload = api.read_trace(str(DATA / "sacct.txt"), procs=16)
    report = calibrate(workload, site, phases=6, tried=[
        Candidate("as configured", "the site's files"),
        *[c for c in candidates(site) if c.name in (GRID_10, THREAD_10)]])
    rows = {r["name"]: r for r in report["candidates"]}
    assert rows["as configured"]["mean_wait"] == pytest.approx(380.7, abs=1)
    assert rows["as configured"]["rank_correlation"] == pytest.approx(0.896, abs=0.002)
    assert not rows["as configured"]["meets_all"]
    assert (rows["as configured"]["mean_wait_low"], rows["as configured"]["mean_wait_high"]) == pytest.approx((324, 419), abs=1)
    cycle = rows[GRID_10]
    assert cycle["mean_wait"] == pytest.approx(376.8, abs=1) and cycle["error"] == pytest.approx(-0.112, abs=0.002)
    assert cycle["per_partition"]["long"]["error"] == pytest.approx(-0.135, abs=0.002)
    assert cycle["per_partition"]["short"]["error"] == pytest.approx(-0.070, abs=0.002)
    assert cycle["rank_correlation"] == pytest.approx(0.835, abs=0.002) and not cycle["meets_all"]
    # timed as Slurm's backfill thread (10 s after the previous pass, then at the first change):
    # closest, +6.5 %, long +13.6 %, short -6.3 %, rank correlation 0.890
    thread = rows[THREAD_10]
    assert thread["mean_wait"] == pytest.approx(451.9, abs=1) and thread["rank_correlation"] == pytest.approx(0.890, abs=0.002)
    assert thread["per_partition"]["long"]["error"] == pytest.approx(0.136, abs=0.002)
    assert not thread["meets_all"]
    assert report["best"] == THREAD_10


def test_the_progress_callback_counts_every_replay_up_to_one():
    """calibrate(progress=...) is called after each replay with the fraction done: here the site as
    configured and the limits inferred per user at two phases each (4 replays)."""
    from engine import api
    from engine.calibrate import calibrate

    site = api.read_slurm_site(DATA / "slurm.conf", qos=DATA / "qos.txt", assoc=DATA / "assoc.txt")
    workload = api.read_trace(str(DATA / "sacct.txt"), procs=16)
    calls: list[float] = []
    report = calibrate(workload, site, phases=2, tried=[Candidate("as configured", "the site's files")],
                       progress=calls.append)
    assert [row["name"] for row in report["candidates"]] == ["as configured", "MaxJobs per user as the log shows it"]
    assert calls == [0.25, 0.5, 0.75, 1.0]
