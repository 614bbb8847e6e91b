"""Held against a real PBS, job by job: AleaNG's five OpenPBS runs (NGI_CZ_journal_PBS*.swf).

The authors of AleaNG ran these workloads on a real OpenPBS test cluster (nodes of 2 cores) and
published the schedules it produced (the SWF wait field). The log shows PBS ordered the jobs by
**fair-share**: user_B's jobs, submitted two hours after user_A's, start between user_A's older
ones, and user_A's jobs also start between job ends (PBS's periodic scheduling cycle, as running
jobs' usage grows). So the replay is fair-share ordered, usage charged while jobs run
(``charge_running``), a cycle every 600 s (PBS's default ``scheduler_iteration``), EASY for the
``easy`` runs and strict order (no backfilling) for the ``strict`` ones, each on its own
machine description. Plain FCFS/EASY reach a rank correlation of only 0.72-0.80.

**A cycle per job end** (``pass_per_end``). PBS's scheduler runs a cycle for every event the
server sends it (a job ending, a job queued) and on its timer; two jobs never end at the same
instant on a real server, so each end gets its own cycle. The recorded starts come 0 or 1 s after
the event that triggered them (about half each: dispatch latency below the log's 1-s resolution),
which the simulation does not have, so it often ends two jobs in the same second that PBS ended a
second apart. On PBSeasy at 10,832 s (simulated) jobs 14 (user_A, 1 core) and 102 (user_B, 3
cores) end together; one pass for both gives the 4 free cores to user_B's two 2-core jobs, while
PBS (ends at 10,834 and 10,835) first backfilled user_A's 1-core job 16 on the one free core, then
started user_B's job 103 and user_A's job 17: without the pass per end PBSeasy's mean wait is
+6.4 %, with it +5.0 %. PBSeasy4 moves from -0.8 % to -2.6 % (rank 0.990 -> 0.972): which of the
merged ends PBS saw first is not in the log (the simulation takes start order). PBSstrict and
PBSstrict4 do not change. Held to the issue's aim (mean wait within 5 %, rank correlation >= 0.95).

**PBSstrict3 is not a schedule of its machine** (5 nodes x 2 cores = 10). Its 9 user_C jobs ask
for 4-10 cores each, and the recording starts four of them (8 + 4 + 8 + 8 = 28 cores) together at
1,804 s, running to 5,704 s, and four more (10 + 4 + 8 + 10 = 32 cores) together at 9,022 s to
12,922 s: user_C alone holds 28, then 32 cores on a 10-core machine, 35 with users A and B. And
user_A/user_B's 201 jobs start at exactly the seconds (from the first submit) of the 4-core
PBSstrict run: PBSstrict with user_C's jobs spliced in, not a run of its own. So it is checked for
that and the fidelity report says so (``recording.fits`` False, the warning first), not replayed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.metrics.fidelity import fidelity, spearman
from engine.platform.machines import read_machines
from engine.platform.queues import load_queue_config
from engine.policies.registry import resolve
from engine.run import simulate
from engine.workload import load_workload
from tests.shared_data import SHARED_DATA

ALEANG = SHARED_DATA / "metacentrum" / "aleang"
PBS_LIKE = {"charge_running": True, "cycle": 600, "pass_per_end": True}   # the presets pbs-easy and pbs-strict

#: run -> (preset, mean wait within, rank correlation of start times at least): the figures reached
#: (PBSeasy +5.0 % / 0.984, PBSeasy4 -2.6 % / 0.972, PBSstrict +1.8 % / 1.000, PBSstrict4 -1.2 % / 0.999)
REACHED = {
    "PBSeasy": ("pbs-easy", 0.05, 0.98),
    "PBSeasy4": ("pbs-easy", 0.03, 0.97),
    "PBSstrict": ("pbs-strict", 0.02, 0.99),
    "PBSstrict4": ("pbs-strict", 0.02, 0.99),
}


def run(name: str, policy: str | dict) -> pd.DataFrame:
    """The run's schedule under ``policy`` on its own machine description (``recorded``: the real one)."""
    path = ALEANG / f"NGI_CZ_journal_{name}.swf"
    machine = read_machines(f"{path}.machines")
    workload = load_workload(path, procs=machine.cores)
    return simulate(workload, None, policy, machine=machine).schedule


def recorded(name: str) -> pd.DataFrame:
    return run(name, "recorded")


def replay(name: str, preset: str, params: dict) -> tuple[float, float]:
    """(relative error of the mean wait, rank correlation of start times) of a replay."""
    real = recorded(name)
    simulated = run(name, {"preset": preset, "params": params})
    figures = fidelity(real, simulated)
    assert figures["jobs"]["matched"] == len(real) == len(simulated)
    both = real[["job_id", "start"]].merge(simulated[["job_id", "start"]], on="job_id")
    return figures["overall"]["mean_wait_ratio"] - 1, spearman(both["start_x"].to_numpy(), both["start_y"].to_numpy())


@pytest.mark.parametrize("name", sorted(REACHED))
def test_fair_share_replay_matches_the_real_pbs(name):
    preset, within, correlation = REACHED[name]
    error, rho = replay(name, preset, {})
    assert abs(error) <= within, f"{name}: mean wait {error:+.1%} off the real PBS"
    assert rho >= correlation, f"{name}: rank correlation {rho:.3f}"


@pytest.mark.parametrize("name", sorted(REACHED))
def test_plain_order_cannot_explain_the_real_pbs(name):
    """Without fair-share (FCFS / EASY in submit order) the start order is far from PBS's."""
    plain = "easy" if "easy" in name else "fcfs"
    _, rho = replay(name, plain, {})
    assert rho < 0.85


def test_the_periodic_cycle_starts_jobs_between_events():
    """PBSstrict4: without the cycle, mean wait is 4.6 % too long; the cycle lets user_A's jobs
    start when their usage falls behind, as the real PBS did between job ends."""
    without, _ = replay("PBSstrict4", "fairshare-fcfs", {"charge_running": True})
    with_cycle, _ = replay("PBSstrict4", "fairshare-fcfs", PBS_LIKE)
    assert abs(with_cycle) < abs(without)


def test_a_pass_per_job_end_is_what_brings_pbseasy_within_five_percent():
    """PBSeasy: one pass for two same-second ends gives user_B both 2-core jobs; PBS ran a cycle
    per end and backfilled user_A's 1-core job first (see the module docstring)."""
    merged, _ = replay("PBSeasy", "pbs-easy", {"pass_per_end": False})
    per_end, _ = replay("PBSeasy", "pbs-easy", {})
    assert merged > 0.06 and per_end <= 0.05
    schedule = run("PBSeasy", "pbs-easy").set_index("job_id")
    assert schedule.loc[16, "start"] <= schedule.loc[106, "start"]        # job 16 no longer waits for 106


def test_the_presets_are_fair_share_with_the_pbs_settings():
    for preset, algorithm in (("pbs-easy", "easy"), ("pbs-strict", "none")):
        spec = resolve(preset)
        assert (spec.ordering, spec.algorithm) == ("fairshare", algorithm)
        assert {k: spec.params[k] for k in PBS_LIKE} == PBS_LIKE


def most_at_once(schedule: pd.DataFrame) -> int:
    events = pd.concat([pd.Series(schedule["procs"].to_numpy(), index=schedule["start"].to_numpy()),
                        pd.Series(-schedule["procs"].to_numpy(), index=schedule["end"].to_numpy())])
    return int(events.groupby(level=0).sum().sort_index().cumsum().max())


def test_pbsstrict3_is_not_a_schedule_of_its_machine():
    machine = read_machines(ALEANG / "NGI_CZ_journal_PBSstrict3.swf.machines")
    mixed, strict = recorded("PBSstrict3"), recorded("PBSstrict")
    assert machine.cores == 10 and most_at_once(mixed) == 35
    user_c = 3                                # user_A, user_B, user_C numbered in sorted order
    c_jobs = mixed[mixed["user"] == user_c]
    origin = int(mixed["submit"].min())
    together = c_jobs.groupby([c_jobs["start"] - origin, c_jobs["end"] - origin])["procs"].agg(["size", "sum"])
    runs_together = together[together["size"] > 1]["sum"].to_dict()
    assert runs_together == {(1804, 5704): 28, (9022, 12922): 32}     # user_C alone: 28, then 32 cores at once
    a_and_b = mixed[mixed["user"] != user_c]
    assert np.array_equal(np.sort(a_and_b["start"] - a_and_b["submit"].min()),
                          np.sort(strict["start"] - strict["submit"].min()))


def test_fidelity_on_pbsstrict3_says_the_recording_cannot_be_matched():
    real = recorded("PBSstrict3")
    figures = fidelity(real, run("PBSstrict3", "pbs-strict"), capacity=10)
    assert figures["recording"]["fits"] is False and figures["recording"]["peak_procs"] == 35
    assert figures["recording"]["over_capacity_share"] > 0.15
    assert figures["warning"].startswith("The recording is not a schedule of this machine: it holds 35 processors")
    strict = fidelity(recorded("PBSstrict"), run("PBSstrict", "pbs-strict"), capacity=4)
    assert strict["recording"]["fits"] and strict["warning"] is None     # its 1-s job over 4 cores is rounding


@pytest.mark.slow
def test_pbs_easy_keeps_easys_promise_on_wagap():
    """A pass between two job ends of one second (pass_per_end) sees the second job still running:
    it ends at this very instant, so the head's reservation is now, not a second later (found on
    wagap-2013: head job 14324's reservation moved from t to t+1 and the schedule check failed)."""
    meta = SHARED_DATA / "metacentrum" / "alea"
    result = simulate(load_workload(meta / "wagap-2013.swf"), None, "pbs-easy",
                      machine=read_machines(meta / "wagap-2013.swf.machines"),
                      queues=load_queue_config("metacentrum-2014"))
    verdict = result.meta["summary"]["validation"]
    assert verdict["ok"] and verdict["checks"]["reservation"] == "ok"


#: print server and sched_config of the AleaNG test site as its runs describe it (one execution queue,
#: fair-share per user, strict order; the easy runs backfill behind one top job, the strict ones not;
#: the scheduler's 600-s cycle). The ``pbs`` policy pools the CPUs (no nodes): the presets' figures on
#: the same pool are the ones to match.
SITE_SERVER = """create queue workq
set queue workq queue_type = Execution
set server default_queue = workq
set server scheduler_iteration = 600
set server backfill_depth = {depth}
"""
SITE_SCHED = """strict_ordering: True ALL
fair_share: true ALL
fairshare_entity: euser
fairshare_usage_res: cput
fairshare_decay_time: 72:00:00
fairshare_decay_factor: 0.5
help_starving_jobs: false ALL
"""
#: run -> (mean wait error, rank correlation) of the --pbs-server path and of the preset, both on the pooled CPUs
#: (measured: PBSeasy +4.5 % / 0.991 and +4.5 % / 0.991, PBSeasy4 -3.1 % / 0.984 and -2.7 % / 0.970,
#: PBSstrict +1.8 % / 1.000 both, PBSstrict4 -1.9 % / 0.998 and -1.2 % / 0.999)
SITE_REACHED = {"PBSeasy": (0.045, 0.991), "PBSeasy4": (-0.031, 0.984), "PBSstrict": (0.018, 1.0),
                "PBSstrict4": (-0.019, 0.998)}


def pooled(name: str, policy: str | dict, context: dict | None = None) -> tuple[float, float]:
    """(mean wait error, rank correlation of starts) of ``policy`` on the run's CPUs as one pool."""
    path = ALEANG / f"NGI_CZ_journal_{name}.swf"
    cores = read_machines(f"{path}.machines").cores
    simulated = simulate(load_workload(path, procs=cores), cores, policy, context=context).schedule
    real = recorded(name)
    both = real[["job_id", "start"]].merge(simulated[["job_id", "start"]], on="job_id")
    assert len(both) == len(real) == len(simulated)
    return (fidelity(real, simulated)["overall"]["mean_wait_ratio"] - 1,
            spearman(both["start_x"].to_numpy(), both["start_y"].to_numpy()))


@pytest.mark.parametrize("name", sorted(SITE_REACHED))
def test_the_site_files_path_is_as_close_to_the_real_pbs_as_the_presets(name, tmp_path):
    """The ``pbs`` policy read from a print server and sched_config (--pbs-server) on AleaNG's runs:
    within 0.8 points of mean wait and 0.02 of rank correlation of the preset, and within the
    issue's aim (mean wait within 5 %, rank correlation >= 0.95)."""
    from engine.platform.pbsconf import read_pbs_site

    (tmp_path / "server").write_text(SITE_SERVER.format(depth=1 if "easy" in name else 0))
    (tmp_path / "sched").write_text(SITE_SCHED)
    server = read_pbs_site(tmp_path / "server", sched_config=tmp_path / "sched")
    error, rho = pooled(name, {"preset": "pbs", "params": {}}, {"pbs_site": server})
    assert (error, rho) == pytest.approx(SITE_REACHED[name], abs=0.001)
    preset_error, preset_rho = pooled(name, REACHED[name][0])
    assert abs(error - preset_error) <= 0.008 and abs(rho - preset_rho) <= 0.02
    assert abs(error) <= 0.05 and rho >= 0.95
