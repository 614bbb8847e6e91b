"""A Slurm site's limits and scheduler parameters (engine.policies.slurm, slurmlimits), each on a
tiny hand-worked case from Slurm's documented semantics (slurm.conf(5), sched_config.html,
resource_limits.html): which jobs are refused at submission, which are held and with what pending
reason, and when each job starts."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.platform.slurmconf import Association, Qos, SlurmSite, parse_slurm_conf
from engine.policies.slurm import RESERVED_FOR_HIGHER, SlurmPriorityQueue
from engine.policies.slurmlimits import ACCOUNTING_POLICY, INVALID_ACCOUNT, PARTITION_NOT_AVAILABLE
from engine.run import simulate

BASE = ("NodeName=n1 CPUs=16\nAccountingStorageEnforce=associations,limits\nPriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
        "PriorityWeightPartition=2000\nPriorityMaxAge=00:20:00\nPriorityCalcPeriod=1\n")
PARTITIONS = ("PartitionName=short Nodes=n1 Default=YES MaxTime=00:05:00 PriorityJobFactor=2\n"
              "PartitionName=long Nodes=n1 MaxTime=00:20:00 PriorityJobFactor=1\n")


def site(scheduler: str = "bf_interval=5", *, qos: Qos | None = None, assoc: list[Association] | None = None,
         conf: str = BASE + PARTITIONS) -> SlurmSite:
    text = conf + f"SchedulerParameters={scheduler}\n"
    return SlurmSite(parse_slurm_conf(text, "t.conf"), qos={"normal": qos or Qos("normal")},
                     associations=assoc or [Association("c", "acct", shares=1), Association("c", "acct", "u1"),
                                            Association("c", "acct", "u2")])


def run(workload, rows, site_: SlurmSite, *, users=None, partitions=None, nodes=None, accounts=None, capacity=16,
        mem_mb=None, gpus=None, qos=None, **params):
    """Jobs of (submit, runtime, requested_time, procs); users 1 (u1) and account acct unless given;
    ``mem_mb`` and ``gpus``: each job's memory (MB) and GPUs on its one node."""
    w = workload(rows)
    if mem_mb is not None:
        w.jobs["mem"] = [m * 1024 for m in mem_mb]         # the workload's KB per node
    if gpus is not None:
        w.jobs["gpus"] = gpus
    w.jobs["queue_name"] = partitions or ["short"] * len(rows)
    w.jobs["account"] = accounts or ["acct"] * len(rows)
    w.jobs["user"] = users or [1] * len(rows)
    if nodes is not None:
        w.jobs["nodes"] = nodes
    if qos is not None:
        w.jobs["qos"] = qos
    w.metadata["user_names"] = {"1": "u1", "2": "u2", "3": "u3"}
    result = simulate(w, capacity, {"preset": "slurm", "params": params}, context={"slurm_site": site_})
    assert result.meta["summary"]["validation"]["ok"]
    return result


def starts(result) -> dict[int, int]:
    return dict(zip(result.schedule["job_id"], result.schedule["start"]))


def reasons(result) -> dict[int, str]:
    return dict(zip(result.schedule["job_id"], result.schedule["slurm_reason"].fillna("")))


# ----------------------------------------------------------------------------- limits


def test_a_time_limit_above_the_partitions_maxtime_is_refused_with_partition_time_limit(workload):
    # short's MaxTime is 5 min: job 2 asks 10 min; Slurm would leave it pending for ever
    result = run(workload, [(0, 10, 60, 1), (0, 10, 600, 1), (0, 10, 600, 1)], site(),
                 partitions=["short", "short", "long"])
    assert starts(result) == {1: 0, 3: 0}
    rejected = result.rejected_jobs
    assert rejected["job_id"].tolist() == [2]
    assert rejected["reason"].tolist() == ["PartitionTimeLimit"]
    assert rejected["limit"].tolist() == ["partition short MaxTime 00:05:00"]
    assert result.meta["rejected"]["PartitionTimeLimit"] == 1
    assert result.meta["summary"]["slurm_refused"] == {"PartitionTimeLimit": 1}


def test_nodes_above_the_partitions_maxnodes_are_refused_with_partition_node_limit(workload):
    conf = BASE.replace("NodeName=n1 CPUs=16", "NodeName=n[1-2] CPUs=8") + \
        "PartitionName=short Nodes=n[1-2] Default=YES MaxNodes=1\n"
    result = run(workload, [(0, 10, 60, 8), (0, 10, 60, 16)], site(conf=conf), nodes=[1, 2])
    assert starts(result) == {1: 0}
    assert result.rejected_jobs["reason"].tolist() == ["PartitionNodeLimit"]


def test_a_time_limit_above_the_qos_maxwall_is_refused(workload):
    result = run(workload, [(0, 10, 120, 1), (0, 10, 240, 1)], site(qos=Qos("normal", max_wall=180)))
    assert starts(result) == {1: 0}
    assert result.rejected_jobs["reason"].tolist() == ["QOSMaxWallDurationPerJobLimit"]
    assert result.rejected_jobs["limit"].tolist() == ["QOS normal MaxWall 00:03:00"]


def test_max_submit_per_user_refuses_at_submission_counting_pending_and_running_jobs(workload):
    # MaxSubmitPU 2: u1's jobs at 0 and 1 are accepted (one runs, one waits behind a 16-CPU
    # job), the one at 2 is refused; u2 is not limited by u1's; at 150 u1's first job has ended
    # (t=100), so the job then is accepted
    rows = [(0, 100, 100, 8), (1, 100, 100, 16), (2, 10, 100, 1), (3, 10, 100, 1), (150, 10, 100, 1)]
    result = run(workload, rows, site(qos=Qos("normal", max_submit_per_user=2)), users=[1, 1, 1, 2, 1],
                 sched_cycle=0)
    assert result.rejected_jobs["job_id"].tolist() == [3]
    assert result.rejected_jobs["reason"].tolist() == ["QOSMaxSubmitJobPerUserLimit"]
    assert set(starts(result)) == {1, 2, 4, 5}


def test_max_tres_per_user_holds_a_job_until_the_users_cpus_go_down(workload):
    # MaxTRESPU cpu=4: u1's third 2-CPU job waits for the first to end at 100 though 10 CPUs
    # are free, with Slurm's reason QOSMaxCpuPerUserLimit; u2 runs at once
    rows = [(0, 100, 100, 2), (0, 200, 200, 2), (0, 10, 100, 2), (0, 10, 100, 2)]
    result = run(workload, rows, site(qos=Qos("normal", max_tres_per_user={"cpu": 4})), users=[1, 1, 1, 2],
                 sched_cycle=0)
    assert starts(result) == {1: 0, 2: 0, 3: 100, 4: 0}
    assert reasons(result)[3] == "QOSMaxCpuPerUserLimit"
    assert result.meta["summary"]["slurm_pending"]["QOSMaxCpuPerUserLimit"] == {"jobs": 1, "hours": round(100 / 3600, 3)}


def test_a_job_larger_than_max_tres_per_user_is_refused(workload):
    result = run(workload, [(0, 10, 100, 2), (0, 10, 100, 6)], site(qos=Qos("normal", max_tres_per_user={"cpu": 4})))
    assert result.rejected_jobs["reason"].tolist() == ["QOSMaxCpuPerUserLimit"]


def test_qos_grp_tres_holds_across_users(workload):
    # GrpTRES cpu=6 on the QOS: u1's 4 CPUs run, u2's 4 would make 8: held (QOSGrpCpuLimit)
    # until u1's job ends at 50
    result = run(workload, [(0, 50, 100, 4), (0, 10, 100, 4)], site(qos=Qos("normal", grp_tres={"cpu": 6})),
                 users=[1, 2], sched_cycle=0)
    assert starts(result) == {1: 0, 2: 50}
    assert reasons(result)[2] == "QOSGrpCpuLimit"


def test_association_grp_tres_holds_the_accounts_users_together(workload):
    assoc = [Association("c", "acct", shares=1, grp_tres={"cpu": 6}), Association("c", "acct", "u1"),
             Association("c", "acct", "u2")]
    result = run(workload, [(0, 50, 100, 4), (0, 10, 100, 4)], site(assoc=assoc), users=[1, 2], sched_cycle=0)
    assert starts(result) == {1: 0, 2: 50}
    assert reasons(result)[2] == "AssocGrpCpuLimit"


def test_qos_max_jobs_per_user_is_the_reason_of_a_held_job(workload):
    rows = [(0, 100, 100, 1), (0, 10, 100, 1)]
    result = run(workload, rows, site(qos=Qos("normal", max_jobs_per_user=1)), sched_cycle=0)
    assert starts(result) == {1: 0, 2: 100}
    assert reasons(result) == {1: "", 2: "QOSMaxJobsPerUserLimit"}


def test_qos_max_jobs_per_account_holds_the_accounts_users_together(workload):
    # MaxJobsPA 2 on QOS normal: u1 and u2 (both of acct) start one job each at 0; u1's second
    # job waits for the first of them to end (t=50) with 22.05's reason MaxJobsPerAccount, though
    # 14 CPUs are free; u3's job (account other) is not held
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1"), Association("c", "acct", "u2"),
             Association("c", "other", shares=1), Association("c", "other", "u3")]
    rows = [(0, 50, 100, 1), (0, 100, 100, 1), (1, 10, 100, 1), (1, 10, 100, 1)]
    w_users, accounts = [1, 2, 1, 3], ["acct", "acct", "acct", "other"]
    s = site(qos=Qos("normal", max_jobs_per_account=2), assoc=assoc)
    result = run(workload, rows, s, users=w_users, accounts=accounts, sched_cycle=0)
    assert starts(result) == {1: 0, 2: 0, 3: 50, 4: 1}
    assert reasons(result)[3] == "MaxJobsPerAccount"


def test_qos_max_submit_per_account_refuses_at_submission(workload):
    # MaxSubmitPA 2: acct's jobs at 0 (u1, runs) and 1 (u2, waits behind a 16-CPU job) are
    # accepted; u1's at 2 is refused (MaxSubmitJobsPerAccount); at 150 two of acct's jobs have
    # ended, so the job then is accepted
    rows = [(0, 100, 100, 8), (1, 100, 100, 16), (2, 10, 100, 1), (150, 10, 100, 1)]
    result = run(workload, rows, site(qos=Qos("normal", max_submit_per_account=2)), users=[1, 2, 1, 1], sched_cycle=0)
    assert result.rejected_jobs["job_id"].tolist() == [3]
    assert result.rejected_jobs["reason"].tolist() == ["MaxSubmitJobsPerAccount"]
    assert set(starts(result)) == {1, 2, 4}


def test_qos_max_tres_per_user_mem_holds_by_the_jobs_memory(workload):
    # MaxTRESPU mem=8G: u1's jobs ask 4 GB each (1 CPU): two run, the third waits for the first to
    # end (t=100) with 22.05's reason QOSMaxMemoryPerUser though 13 CPUs are free; u2's runs at once
    rows = [(0, 100, 100, 1), (0, 200, 200, 1), (0, 10, 100, 1), (0, 10, 100, 1)]
    result = run(workload, rows, site(qos=Qos("normal", max_tres_per_user={"mem": 8192})), users=[1, 1, 1, 2],
                 mem_mb=[4096] * 4, sched_cycle=0)
    assert starts(result) == {1: 0, 2: 0, 3: 100, 4: 0}
    assert reasons(result)[3] == "QOSMaxMemoryPerUser"


def test_qos_grp_tres_gpus_hold_only_jobs_asking_gpus(workload):
    # GrpTRES gres/gpu=2 on the QOS: u1's 2-GPU job runs until 50; u2's 1-GPU job waits for it
    # (QOSGrpGRES); u2's job without GPUs is not held
    rows = [(0, 50, 100, 1), (0, 10, 100, 1), (0, 10, 100, 1)]
    result = run(workload, rows, site(qos=Qos("normal", grp_tres={"gres/gpu": 2})), users=[1, 2, 2], gpus=[2, 1, 0],
                 sched_cycle=0)
    assert starts(result) == {1: 0, 2: 50, 3: 0}
    assert reasons(result)[2] == "QOSGrpGRES"


def test_a_job_above_an_associations_max_tres_mem_is_refused(workload):
    # the account's MaxTRES mem=4G applies to each job of its users: a 6 GB job never runs
    assoc = [Association("c", "acct", shares=1, max_tres_per_job={"mem": 4096}), Association("c", "acct", "u1"),
             Association("c", "acct", "u2")]
    result = run(workload, [(0, 10, 100, 1), (0, 10, 100, 1)], site(assoc=assoc), mem_mb=[4096, 6144])
    assert set(starts(result)) == {1}
    assert result.rejected_jobs["reason"].tolist() == ["AssocMaxMemPerJob"]


def test_a_down_partition_starts_none_of_its_jobs(workload):
    # long is State=DOWN: Slurm queues its jobs and never starts them (PartitionDown); here they are
    # refused at submission with that reason, as other jobs that can never run; short's jobs run
    conf = BASE + "PartitionName=short Nodes=n1 Default=YES\nPartitionName=long Nodes=n1 State=DOWN\n"
    result = run(workload, [(0, 10, 100, 4), (0, 10, 100, 4), (5, 10, 100, 4)], site(conf=conf),
                 partitions=["short", "long", "short"], sched_cycle=0)
    assert starts(result) == {1: 0, 3: 5}
    assert result.rejected_jobs["job_id"].tolist() == [2]
    assert result.rejected_jobs["reason"].tolist() == ["PartitionDown"]


@pytest.mark.parametrize("state", ["DRAIN", "INACTIVE"])
def test_a_drained_or_inactive_partition_refuses_new_jobs(workload, state):
    conf = BASE + f"PartitionName=short Nodes=n1 Default=YES\nPartitionName=long Nodes=n1 State={state}\n"
    result = run(workload, [(0, 10, 100, 4), (0, 10, 100, 4)], site(conf=conf), partitions=["long", "short"],
                 sched_cycle=0)
    assert starts(result) == {2: 0}
    assert result.rejected_jobs["reason"].tolist() == [PARTITION_NOT_AVAILABLE]
    assert PARTITION_NOT_AVAILABLE == "Required partition not available (inactive or drain)"


# ----------------------------------------------------------------------------- the schedulers


def test_backfill_reservations_start_on_bf_resolutions_grid_and_a_job_ending_at_one_overlaps_it(workload):
    # backfill.c (_attempt_backfill, 22.05): a pending job's reservation in the backfill table runs
    # from its start rounded down to bf_resolution to its start + limit rounded down; a job to
    # start now overlaps a table entry that begins at or before its end (``begin_time <=
    # end_time``); the running jobs' ends are exact (cons_common's will-run test: end_time).
    # A (8 CPUs, limit 95) runs; B (16 CPUs) is reserved at A's end, 95; C (8 CPUs) asks at 1.
    def c_starts(limit: int, resolution: int) -> int:
        rows = [(0, 95, 95, 8), (1, 50, 50, 16), (1, limit, limit, 8)]
        result = run(workload, rows, site(f"bf_resolution={resolution}"), sched_cycle=0, sched_interval=0)
        assert starts(result)[2] == 95
        return starts(result)[3]

    assert c_starts(93, 1) == 1         # ends at 94, before B's entry [95, 145)
    assert c_starts(94, 1) == 145       # ends at 95: overlaps B's entry, waits for B (95 + 50)
    assert c_starts(93, 10) == 145      # B's entry begins at 90: C's end 94 overlaps it
    assert c_starts(89, 10) == 145      # ends at 90: overlaps it
    assert c_starts(88, 10) == 1        # ends at 89


def test_the_main_scheduler_runs_at_submissions_and_ends_batch_sched_delay_apart(workload):
    # controller.c _slurmctld_background: a submission (proc_req.c _slurm_rpc_submit_batch_job) or
    # a job's end (the terminate agent's reply, agent.c) calls queue_job_scheduler(), which only
    # counts the request (job_sched_cnt++); the background loop, which sleeps 10 x 100 ms between
    # its checks, runs schedule() at its next check once batch_sched_delay seconds have passed since
    # it last did (its full pass every sched_interval included): 0-1 s after the request, in whole
    # seconds the same one by default, the next with request_delay=1.
    # sched_interval 1000 (full passes at 0 and 1000), no backfill pass but the first.
    # A (16 CPUs) starts at 0; B (16) submitted at 1: the pass at 3 (0 + 3) finds no room; C (16)
    # at 9: a pass at 9; A ends at 10: 9 + 3 -> the pass at 12 starts B; B ends at 17: C at 17.
    rows = [(0, 10, 10, 16), (1, 5, 5, 16), (9, 5, 5, 16)]
    conf = "bf_interval=1000,sched_interval=1000"
    assert starts(run(workload, rows, site(conf))) == {1: 0, 2: 12, 3: 17}
    # without the delay, at each end: B at 10, C at 15
    assert starts(run(workload, rows, site(conf + ",batch_sched_delay=0"))) == {1: 0, 2: 10, 3: 15}
    # each request run a second later: C's at 10 (9 + 1; 3 + 3 passed), after A's end at 10: B
    # starts at 10; B's end at 15 asks: C at 16
    assert starts(run(workload, rows, site(conf), request_delay=1)) == {1: 0, 2: 10, 3: 16}
    # the full pass every sched_interval runs while nothing waits too: with sched_interval 10, a job
    # submitted at 11 waits for 13 (the pass of 10, + 3)
    rows = [(0, 5, 5, 1), (11, 5, 5, 1)]
    assert starts(run(workload, rows, site("bf_interval=1000,sched_interval=10"))) == {1: 0, 2: 13}


def test_bf_window_bounds_how_far_ahead_backfill_reserves(workload):
    # A (8 CPUs) runs until 100; B (16 CPUs) could start at 100; C (8 CPUs, 200 s) at 1 would
    # delay it. bf_window 120 min: B is reserved, C waits for B; bf_window 1 min: B's start is
    # beyond the window, not reserved, and C starts at once
    rows = [(0, 100, 100, 8), (1, 50, 50, 16), (1, 200, 200, 8)]
    assert starts(run(workload, rows, site("bf_window=120"), sched_cycle=0, sched_interval=0)) == {1: 0, 2: 100, 3: 150}
    assert starts(run(workload, rows, site("bf_window=1"), sched_cycle=0, sched_interval=0)) == {1: 0, 2: 201, 3: 1}


def test_bf_max_job_user_bounds_each_users_jobs_per_backfill_pass(workload):
    # passes every 5 s; u1's two jobs submitted at 1: both start at the pass of 5, or with
    # bf_max_job_user=1 one per pass (5 and 10)
    rows = [(0, 100, 100, 4), (1, 50, 50, 4), (1, 50, 50, 4)]
    assert starts(run(workload, rows, site("bf_interval=5"), sched_interval=0)) == {1: 0, 2: 5, 3: 5}
    assert starts(run(workload, rows, site("bf_interval=5,bf_max_job_user=1"), sched_interval=0)) == {1: 0, 2: 5, 3: 10}


# Per-partition caps of both schedulers. The backfill pass (backfill.c _job_exceeds_max_bf_param: a job
# past either count is passed over untested): job 1 holds 4 CPUs until 100; at 1: 2 (u1, short),
# 3 (u2, short), 4 (u1, long), 5 (u1, long), 3 CPUs each; passes every 5 s, no main scheduler.
BACKFILL_CAPS = ([(0, 100, 100, 4)] + [(1, 50, 50, 3)] * 4, dict(sched_interval=0))
# The main scheduler (job_scheduler.c _schedule 1549, partition_job_depth): A (16 CPUs) until 100;
# 2, 3 (short) and 4, 5 (long), 4 CPUs, 30 s each, wait; the main scheduler at each submission and end,
# no backfill.
MAIN_DEPTH = ([(0, 100, 100, 16)] + [(1, 30, 30, 4)] * 4, dict(sched_interval=0, main_at_events=True))


@pytest.mark.parametrize("case, scheduler, expected", [
    (BACKFILL_CAPS, "bf_interval=5", {1: 0, 2: 5, 3: 5, 4: 5, 5: 5}),
    # one job per partition a pass: short's 2 and long's 4 at 5, 3 and 5 at 10
    (BACKFILL_CAPS, "bf_interval=5,bf_max_job_part=1", {1: 0, 2: 5, 3: 10, 4: 5, 5: 10}),
    # one job per user in each partition: u1's 2 (short) and 4 (long), u2's 3 (short) at 5; u1's 5 at 10
    (BACKFILL_CAPS, "bf_interval=5,bf_max_job_user_part=1", {1: 0, 2: 5, 3: 5, 4: 5, 5: 10}),
    # both caps: the tighter of the two for each job
    (BACKFILL_CAPS, "bf_interval=5,bf_max_job_part=2,bf_max_job_user_part=1", {1: 0, 2: 5, 3: 5, 4: 5, 5: 10}),
    (MAIN_DEPTH, "bf_interval=1000", {1: 0, 2: 100, 3: 100, 4: 100, 5: 100}),
    # one job of each partition a pass: short's 2 and long's 4 at 100, 3 and 5 at the next pass (their
    # ends, 130)
    (MAIN_DEPTH, "bf_interval=1000,partition_job_depth=1", {1: 0, 2: 100, 3: 130, 4: 100, 5: 130}),
    # the jobs passed over do not count towards default_queue_depth (1: two jobs a pass at events):
    # at 100 short's 2 is tested, short's 3 passed over, long's 4 tested: 2 and 4 start (were 3
    # counted, 4 would be past the depth), 3 and 5 at 130
    (MAIN_DEPTH, "bf_interval=1000,partition_job_depth=1,default_queue_depth=1", {1: 0, 2: 100, 3: 130, 4: 100, 5: 130}),
    (MAIN_DEPTH, "bf_interval=1000,default_queue_depth=1", {1: 0, 2: 100, 3: 100, 4: 130, 5: 130}),
])
def test_per_partition_caps_bound_the_jobs_a_pass_tests(workload, case, scheduler, expected):
    rows, params = case
    result = run(workload, rows, site(scheduler), users=[1, 1, 2, 1, 1], partitions=["short"] * 3 + ["long"] * 2,
                 **params)
    assert starts(result) == expected


def test_bf_max_job_start_ends_a_backfill_pass_after_that_many_starts(workload):
    # backfill.c 2799: passes every 5 s; A holds 4 CPUs until 100; B, C, D (4 CPUs) at 1 all fit:
    # the pass of 5 starts them all, or with bf_max_job_start=2 B and C, D at the pass of 10
    rows = [(0, 100, 100, 4), (1, 50, 50, 4), (1, 50, 50, 4), (1, 50, 50, 4)]
    assert starts(run(workload, rows, site("bf_interval=5"), sched_interval=0)) == {1: 0, 2: 5, 3: 5, 4: 5}
    assert starts(run(workload, rows, site("bf_interval=5,bf_max_job_start=2"), sched_interval=0)) == \
        {1: 0, 2: 5, 3: 5, 4: 10}


def test_sched_max_job_start_ends_a_main_scheduler_pass_after_that_many_starts(workload):
    # job_scheduler.c 1527: the main scheduler at each submission and end (no backfill before 1000 s);
    # A (16 CPUs) until 100; B, C, D (4 CPUs) wait; at 100 one pass starts them all, or with
    # sched_max_job_start=1 only B; C and D at the next passes, at B's end (130) and C's (160)
    rows = [(0, 100, 100, 16), (1, 30, 30, 4), (1, 30, 30, 4), (1, 30, 30, 4)]
    plain = run(workload, rows, site("bf_interval=1000"), sched_interval=0, main_at_events=True)
    assert starts(plain) == {1: 0, 2: 100, 3: 100, 4: 100}
    capped = run(workload, rows, site("bf_interval=1000,sched_max_job_start=1"), sched_interval=0, main_at_events=True)
    assert starts(capped) == {1: 0, 2: 100, 3: 130, 4: 160}


@pytest.mark.parametrize("scheduler, expected", [
    ("bf_interval=5", {1: 0, 2: 105, 3: 210}),
    # B has waited 4 s at the pass of 5: under bf_min_age_reserve=60 it is tested for now only, no
    # reservation, and C starts; B then waits for C's end (205, seen by the pass of 210)
    ("bf_interval=5,bf_min_age_reserve=60", {1: 0, 2: 210, 3: 5}),
    # B's priority at 5 is its price at submission, 2000 (partition short 2/2 x 2000, age 0): under 2500
    ("bf_interval=5,bf_min_prio_reserve=2500", {1: 0, 2: 210, 3: 5}),
    ("bf_interval=5,bf_min_prio_reserve=2000", {1: 0, 2: 105, 3: 210}),
])
def test_bf_min_age_and_prio_reserve_leave_young_or_low_jobs_without_a_reservation(workload, scheduler, expected):
    # backfill.c 2047-2054 (TEST_NOW_ONLY): A (12 CPUs) until 100; B (16 CPUs) at 1 is reserved the
    # node from 100, so C (4 CPUs, 200 s, at 2), which fits now, would delay it and waits (B starts at
    # the pass of 105: the pass of 100 does not see A's end of its own second)
    rows = [(0, 100, 100, 12), (1, 100, 100, 16), (2, 200, 200, 4)]
    assert starts(run(workload, rows, site(scheduler), sched_interval=0)) == expected


@pytest.mark.parametrize("scheduler, expected", [("bf_interval=1000", {1: 0, 2: 100, 3: 200}),
                                                 ("bf_interval=1000,bf_min_age_reserve=60", {1: 0, 2: 202, 3: 2})])
def test_the_main_scheduler_does_not_fail_the_partition_of_a_job_under_bf_min_age_reserve(workload, scheduler,
                                                                                         expected):
    # job_scheduler.c 1955: B (16 CPUs, at 1) does not fit beside A (12 CPUs until 100) and fails its
    # partition, so C (4 CPUs, at 2) waits; B waited 1 s only (< 60): the partition does not fail, C starts
    rows = [(0, 100, 100, 12), (1, 100, 100, 16), (2, 200, 200, 4)]
    assert starts(run(workload, rows, site(scheduler), sched_interval=0, main_at_events=True)) == expected


def test_bf_continue_changes_nothing_as_a_pass_takes_no_simulated_time(workload):
    rows = [(0, 100, 100, 8), (1, 50, 50, 16), (2, 30, 30, 4), (3, 200, 200, 4)]
    plain = starts(run(workload, rows, site("bf_interval=5")))
    assert plain == starts(run(workload, rows, site("bf_interval=5,bf_continue")))


def test_sched_interval_runs_the_main_scheduler_between_backfill_passes(workload):
    # backfill only every 1000 s: a job submitted at 3 on a free node starts at the main pass its
    # submission asks for (at 3: batch_sched_delay=3 after the full pass of 0; at 4 with
    # request_delay=1, the background loop's next check); with a longer
    # batch_sched_delay at the main scheduler's next full pass (every sched_interval=10 s from the
    # first submission); at the backfill pass of 1000 without a main scheduler
    rows = [(0, 10, 100, 1), (3, 10, 100, 1)]
    assert starts(run(workload, rows, site("bf_interval=1000,sched_interval=10"))) == {1: 0, 2: 3}
    assert starts(run(workload, rows, site("bf_interval=1000,sched_interval=10"), request_delay=1)) == {1: 0, 2: 4}
    assert starts(run(workload, rows, site("bf_interval=1000,sched_interval=10,batch_sched_delay=60"))) == {1: 0, 2: 10}
    assert starts(run(workload, rows, site("bf_interval=1000"), sched_interval=0)) == {1: 0, 2: 1000}


@pytest.mark.parametrize("depth, expected", [(100, {1: 0, 2: 100, 3: 100, 4: 100}), (2, {1: 0, 2: 100, 3: 100, 4: 100}),
                                             (1, {1: 0, 2: 100, 3: 100, 4: 130}), (0, {1: 0, 2: 100, 3: 130, 4: 160})])
def test_default_queue_depth_bounds_the_main_scheduler_at_events(workload, depth, expected):
    # A (16 CPUs) runs until 100; B, C and D (4 CPUs each) wait. At A's end the event-triggered main
    # pass tests default_queue_depth + 1 jobs (job_scheduler.c _schedule: `job_depth++ > def_job_limit`
    # breaks at the job after them; tests/data/slurm_replay_site2's log, default_queue_depth=50, says
    # "already tested 52 jobs, breaking out"): 1 starts B and C (D at their end, 130), 0 B only (C at
    # 130, D at 160)
    rows = [(0, 100, 100, 16), (1, 30, 30, 4), (1, 30, 30, 4), (1, 30, 30, 4)]
    result = run(workload, rows, site(f"bf_interval=1000,default_queue_depth={depth}"), sched_interval=0,
                 main_at_events=True)
    assert starts(result) == expected


TIERS = ("PartitionName=high Nodes=n1 PriorityTier=2\nPartitionName=low Nodes=n1 Default=YES PriorityTier=1\n")


def test_a_lower_tier_partition_sharing_the_nodes_waits_behind_a_blocked_higher_one(workload):
    # A (16 CPUs) runs until 100; B (high tier, 16 CPUs) does not fit; C (low tier, 4 CPUs, 10 s)
    # fits now but the main scheduler reserved the node for B: it waits with squeue's text
    rows = [(0, 100, 100, 8), (1, 50, 50, 16), (1, 10, 10, 4)]
    result = run(workload, rows, site("bf_interval=1000", conf=BASE + TIERS), partitions=["high", "high", "low"],
                 sched_interval=0, main_at_events=True)
    assert starts(result) == {1: 0, 2: 100, 3: 150}
    assert reasons(result) == {1: "", 2: "Resources", 3: RESERVED_FOR_HIGHER}


def test_only_the_first_job_of_a_partition_whose_nodes_were_taken_shows_the_reserved_text(workload):
    # job_scheduler.c _schedule(): B (high, 16 CPUs) does not fit and takes the node; C, the first
    # low job, finds no node left: Resources with the text "Nodes required ... reserved for jobs in
    # higher priority partitions", and fails its partition (fail_by_part); D, behind it, waits with
    # Priority (_failed_partition). Neither fits in front of B's backfill reservation
    rows = [(0, 100, 100, 8), (1, 50, 50, 16), (1, 200, 200, 4), (1, 200, 200, 4)]
    result = run(workload, rows, site("bf_interval=1000", conf=BASE + TIERS), partitions=["high", "high", "low", "low"],
                 sched_interval=0, main_at_events=True)
    assert starts(result) == {1: 0, 2: 100, 3: 150, 4: 150}
    assert reasons(result) == {1: "", 2: "Resources", 3: RESERVED_FOR_HIGHER, 4: "Priority"}
    # the low partition with a node of its own is not blocked: C starts at once
    conf = BASE.replace("NodeName=n1 CPUs=16", "NodeName=n[1-2] CPUs=16") + \
        "PartitionName=high Nodes=n1 PriorityTier=2\nPartitionName=low Nodes=n[1-2] Default=YES PriorityTier=1\n"
    result = run(workload, [(0, 100, 100, 16), (1, 50, 50, 32), (1, 10, 10, 4)], site("bf_interval=1000", conf=conf),
                 partitions=["high", "high", "low"], capacity=32, sched_interval=0, main_at_events=True)
    assert starts(result)[3] == 1


def test_jobs_behind_a_blocked_job_of_their_partition_wait_with_reason_priority(workload):
    rows = [(0, 100, 100, 8), (1, 50, 50, 16), (2, 10, 200, 8)]
    result = run(workload, rows, site(), sched_cycle=0, sched_interval=0)
    assert reasons(result) == {1: "", 2: "Resources", 3: "Priority"}
    assert result.meta["summary"]["slurm_pending"]["Priority"]["jobs"] == 1


def test_backfill_reservations_take_whole_nodes(workload):
    # one 16-CPU node: A (8 CPUs) runs until 100; B (12 CPUs) is reserved from 100; C (4 CPUs,
    # 200 s) would fit beside B in CPUs, but Slurm's backfill reserves B the whole node: C may not
    # run into it and starts beside B when B starts; counting only processors it starts at once
    rows = [(0, 100, 100, 8), (1, 50, 50, 12), (1, 200, 200, 4)]
    exact = site("bf_interval=5,bf_resolution=1")
    assert starts(run(workload, rows, exact, sched_cycle=0, sched_interval=0)) == {1: 0, 2: 100, 3: 100}
    assert starts(run(workload, rows, exact, sched_cycle=0, sched_interval=0,
                      whole_node_reservations=False)) == {1: 0, 2: 100, 3: 1}


@pytest.mark.parametrize("scheduler", ["bf_interval=5", "bf_interval=5,bf_resolution=30"])
def test_every_run_keeps_its_jobs(workload, scheduler):
    rows = [(t, 20 + 7 * (t % 5), 60, 1 + t % 16) for t in range(0, 200, 3)]
    result = run(workload, rows, site(scheduler, qos=Qos("normal", max_jobs_per_user=3)), users=[1 + t % 2 for t in range(0, 200, 3)])
    assert len(result.schedule) == len(rows) and (result.schedule["start"] >= result.schedule["submit"]).all()


def test_a_partitions_qos_limits_its_jobs_whatever_their_own_qos(workload):
    # long has QOS=longq (MaxJobsPU 1): u1's second job in long waits for the first (ends at 100),
    # its job in short is not held; the jobs' own QOS normal has no limit
    conf = BASE + "PartitionName=short Nodes=n1 Default=YES\nPartitionName=long Nodes=n1 QOS=longq\n"
    s = site(conf=conf)
    s.qos["longq"] = Qos("longq", max_jobs_per_user=1)
    result = run(workload, [(0, 100, 100, 1), (0, 10, 100, 1), (0, 10, 100, 1)], s,
                 partitions=["long", "long", "short"], sched_cycle=0)
    assert starts(result) == {1: 0, 2: 100, 3: 0}
    assert reasons(result)[2] == "QOSMaxJobsPerUserLimit"


def test_an_associations_max_jobs_and_max_submit(workload):
    # u1's association: MaxJobs 1 (the second waits: AssocMaxJobsLimit), MaxSubmit 2 (the third,
    # submitted while two are pending or running, is refused: AssocMaxSubmitJobLimit)
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", max_jobs=1, max_submit=2),
             Association("c", "acct", "u2")]
    result = run(workload, [(0, 100, 100, 1), (0, 10, 100, 1), (1, 10, 100, 1), (2, 10, 100, 1)], site(assoc=assoc),
                 users=[1, 1, 1, 2], sched_cycle=0)
    assert starts(result) == {1: 0, 2: 100, 4: 2}
    assert reasons(result)[2] == "AssocMaxJobsLimit"
    assert result.rejected_jobs["reason"].tolist() == ["AssocMaxSubmitJobLimit"]


def test_the_backfill_threads_timing(workload):
    # bf_interval=5, no main scheduler. Slurm's backfill thread (backfill.c backfill_agent) sleeps
    # bf_interval after a pass, then runs the next if _more_work(): a job updated since the last
    # pass (last_job_update >= last_backfill_time, whole seconds); else it looks again every
    # second. A pass that tests a job updates it in its own second (_start_job; a planned start
    # moved), so while jobs wait the passes come every bf_interval (767 of the 770 passes that
    # tested jobs in tests/data/slurm_replay_debug's log); one with no job to test updates none.
    # The pass at 0 starts A; B (submitted at 2) at the pass of 5, which started a job: a pass at
    # 10, with no job to test; B's end at 8 came before it: nothing more. C (17) at once, 7 s after
    # the pass of 10; D (19) at 22 (17 + 5). The job that ends in a pass's second defers nothing:
    # job_is_completing() looks only with CompleteWait set. On the grid of bf_interval from the
    # first submission (backfill_agent off): C and D at 20
    rows = [(0, 20, 20, 1), (2, 3, 10, 1), (17, 10, 10, 1), (19, 10, 10, 1)]
    assert starts(run(workload, rows, site("bf_interval=5"), sched_interval=0)) == {1: 0, 2: 5, 3: 17, 4: 22}
    assert starts(run(workload, rows, site("bf_interval=5"), sched_interval=0, backfill_agent=False)) == \
        {1: 0, 2: 5, 3: 20, 4: 20}
    # while a job waits every pass tests it: one every 5 s (0, 5, ..., 30, 35); A's end at 32 is
    # seen by the pass of 35, not at once
    rows = [(0, 32, 40, 16), (1, 10, 10, 16)]
    assert starts(run(workload, rows, site("bf_interval=5"), sched_interval=0)) == {1: 0, 2: 35}


def will_run_start(now: int, size: int, running: list[tuple[int, int, int]], cpus: int) -> int:
    """cons_common's will-run test (_will_run_test) on one node: now if ``size`` CPUs are free;
    else the running jobs leave in batches by expected end, the first up to the first end raised
    to the next multiple of 30, plus 30 s; each later window doubled (and doubled again while the
    next end lies beyond it); the job starts at the last end of the batch after which it fits."""
    ends = sorted((e, c) for _, e, c in running)
    free = cpus - sum(c for _, c in ends)
    if free >= size:
        return now
    barrier, window, k = ends[0][0] + (30 - ends[0][0] % 30), 30, 0
    while True:
        free += ends[k][1]
        k += 1
        while k < len(ends) and ends[k][0] <= barrier + window:
            free += ends[k][1]
            k += 1
        if free >= size:
            return max(ends[k - 1][0], now + 1)
        window *= 2
        while ends[k][0] > barrier + window:
            window *= 2


def slurm_backfill_reference(rows: list[tuple[int, int, int, int]], resolution: int, cpus: int = 16) -> dict[int, int]:
    """Slurm 22.05's backfill pass on one node, written out naively from backfill.c
    (_attempt_backfill, _add_reservation) and cons_common's will-run test, run at every
    submission and job end: jobs in submission order (their priority order here); a job may start
    at its will-run start (:func:`will_run_start`) or later at the end of a backfill table entry
    (TRY_LATER), the first of these where no entry [begin, end) has begin <= start + limit and
    end > start (``begin_time <= end_time``); it starts if that is now, else its entry takes the
    node from its start to its start + limit, both rounded down to bf_resolution, at least one
    bf_resolution long."""
    jobs = [(s, r, lim, c, k + 1) for k, (s, r, lim, c) in enumerate(rows)]
    pending: list[tuple[int, int, int, int, int]] = []
    running: list[tuple[int, int, int]] = []          # (end, expected end, cpus)
    start: dict[int, int] = {}
    times = sorted({s for s, *_ in jobs})
    while times:
        now = times.pop(0)
        running = [r for r in running if r[0] > now]
        pending += [j for j in jobs if j[0] == now]
        table: list[tuple[int, int]] = []
        for job in list(pending):
            _, runtime, limit, size, number = job
            first = will_run_start(now, size, running, cpus)
            for at in sorted({first, *(e for _, e in table if e > first)}):
                if not any(b <= at + limit and e > at for b, e in table):
                    break
            if at == now:
                start[number] = now
                pending.remove(job)
                running.append((now + runtime, now + limit, size))
                times = sorted(set(times) | {now + runtime})
            else:
                begin = at - at % resolution
                table.append((begin, max((at + limit) - (at + limit) % resolution, begin + resolution)))
    return start


@pytest.mark.parametrize("seed", range(12))
def test_the_backfill_pass_starts_what_slurms_rules_written_out_start(workload, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(int(rng.integers(8, 30))):
        limit = int(rng.integers(5, 120))
        rows.append((int(rng.integers(0, 300)), int(rng.integers(1, limit + 1)), limit,
                     int(rng.choice([1, 2, 4, 8, 12, 16]))))
    rows.sort(key=lambda row: row[0])
    resolution = int(rng.choice([1, 10, 30]))
    result = run(workload, rows, site(f"bf_interval=5,bf_resolution={resolution}"), sched_cycle=0, sched_interval=0)
    assert starts(result) == slurm_backfill_reference(rows, resolution)


# ----------------------------------------------------------------------------- GrpSubmit, TRES-minutes


def test_qos_grp_submit_refuses_at_submission_counting_the_qos_pending_and_running_jobs(workload):
    # GrpSubmit 2 on the QOS, whoever submits: u1's 8-CPU job runs (0-100), u2's 16-CPU job waits
    # for it; u2's job at 2 would be the QOS's third: sbatch refuses it (QOSGrpSubmitJobsLimit).
    # At 150 job 1 has ended (one in the QOS): u1's job is accepted, and waits for job 2 (100-200)
    rows = [(0, 100, 100, 8), (1, 100, 100, 16), (2, 10, 100, 1), (150, 10, 100, 1)]
    result = run(workload, rows, site(qos=Qos("normal", grp_submit=2)), users=[1, 2, 2, 1], sched_cycle=0)
    assert starts(result) == {1: 0, 2: 100, 4: 200}
    assert result.rejected_jobs["job_id"].tolist() == [3]
    assert result.rejected_jobs["reason"].tolist() == ["QOSGrpSubmitJobsLimit"]
    assert result.rejected_jobs["limit"].tolist() == ["QOS normal GrpSubmit 2"]
    assert result.meta["summary"]["slurm_refused"] == {"QOSGrpSubmitJobsLimit": 1}


def test_an_accounts_grp_submit_counts_all_its_users_jobs_unless_a_qos_grp_submit_overrides_it(workload):
    # GrpSubmit 2 on account acct (u1 and u2 under it): the same three jobs as above, the third
    # refused with AssocGrpSubmitJobsLimit. With a GrpSubmit on the job's QOS (3) the association's
    # is not checked (acct_policy_validate: the QOS's limit overrides it) and the third is accepted;
    # its 100 s would run into job 2's reservation at 100, so it starts after job 2 (200)
    rows = [(0, 100, 100, 8), (1, 100, 100, 16), (2, 10, 100, 1)]
    assoc = [Association("c", "acct", shares=1, grp_submit=2), Association("c", "acct", "u1"),
             Association("c", "acct", "u2")]
    result = run(workload, rows, site(assoc=assoc), users=[1, 2, 2], sched_cycle=0)
    assert result.rejected_jobs["reason"].tolist() == ["AssocGrpSubmitJobsLimit"]
    assert result.rejected_jobs["limit"].tolist() == ["association acct GrpSubmit 2"]
    overridden = run(workload, rows, site(assoc=assoc, qos=Qos("normal", grp_submit=3)), users=[1, 2, 2],
                     sched_cycle=0)
    assert overridden.rejected_jobs.empty
    assert starts(overridden) == {1: 0, 2: 100, 3: 200}


def test_max_tres_mins_per_job_refuses_a_job_whose_cpus_times_its_time_limit_exceed_it(workload):
    # MaxTRESMins cpu=20 (CPU-minutes of CPUs x time limit, the limit in whole minutes): 2 CPUs x
    # 10 min = 20 runs; 3 x 10 = 30 does not (Slurm: pending for ever, QOSMaxCpuMinutesPerJobLimit);
    # 10 CPUs x 61 s = 10 x 2 min = 20 runs; 10 x 121 s = 30 does not
    rows = [(0, 10, 600, 2), (0, 10, 600, 3), (0, 10, 61, 10), (0, 10, 121, 10)]
    result = run(workload, rows, site(qos=Qos("normal", max_tres_mins_per_job={"cpu": 20})), sched_cycle=0,
                 partitions=["long"] * 4)
    assert set(starts(result)) == {1, 3}
    assert result.rejected_jobs["job_id"].tolist() == [2, 4]
    assert result.rejected_jobs["reason"].tolist() == ["QOSMaxCpuMinutesPerJobLimit"] * 2
    assert result.rejected_jobs["limit"].tolist() == ["QOS normal MaxTRESMins cpu=20"] * 2
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", max_tres_mins_per_job={"cpu": 20}),
             Association("c", "acct", "u2")]
    result = run(workload, rows, site(assoc=assoc), sched_cycle=0, partitions=["long"] * 4, users=[1, 1, 2, 1])
    assert set(starts(result)) == {1, 3}          # u2's 30 CPU-minutes are not u1's association's
    assert result.rejected_jobs["job_id"].tolist() == [2, 4]
    assert result.rejected_jobs["reason"].tolist() == ["AssocMaxCpuMinutesPerJobLimit"] * 2
    # a MaxTRESMins cpu=40 on the job's QOS wins over the association's 20: none is refused (30 <=
    # 40); a QOS limit of memory only leaves the association's of cpu in force
    result = run(workload, rows, site(assoc=assoc, qos=Qos("normal", max_tres_mins_per_job={"cpu": 40})),
                 sched_cycle=0, partitions=["long"] * 4, users=[1, 1, 2, 1])
    assert result.rejected_jobs.empty
    result = run(workload, rows, site(assoc=assoc, qos=Qos("normal", max_tres_mins_per_job={"mem": 10 ** 6})),
                 sched_cycle=0, partitions=["long"] * 4, users=[1, 1, 2, 1])
    assert result.rejected_jobs["job_id"].tolist() == [2, 4]


def test_max_tres_mins_per_job_of_memory_and_gpus(workload):
    # MaxTRESMins mem=1000 (MB-minutes), gres/gpu=20 (GPU-minutes): 100 MB x 10 min = 1000 runs, 200 MB x
    # 10 min does not (QOSMaxMemoryMinutesPerJob); 2 GPUs x 10 min = 20 runs, 3 x 10 does not
    # (QOSMaxGRESMinutesPerJob); the job without GPUs or memory is not concerned
    rows = [(0, 10, 600, 1)] * 5
    result = run(workload, rows, site(qos=Qos("normal", max_tres_mins_per_job={"mem": 1000, "gres/gpu": 20})),
                 sched_cycle=0, partitions=["long"] * 5, mem_mb=[100, 200, 0, 0, 0], gpus=[0, 0, 2, 3, 0])
    assert set(starts(result)) == {1, 3, 5}
    assert result.rejected_jobs["reason"].tolist() == ["QOSMaxMemoryMinutesPerJob", "QOSMaxGRESMinutesPerJob"]
    assert result.rejected_jobs["limit"].tolist() == ["QOS normal MaxTRESMins mem=1000", "QOS normal MaxTRESMins gres/gpu=20"]


def test_grp_tres_run_mins_holds_a_job_until_the_running_jobs_minutes_left_make_room(workload):
    # GrpTRESRunMins cpu=100 on the QOS; the decay thread takes the running jobs' time off every
    # PriorityCalcPeriod (1 = one minute: at 0, 60, 120, ...). A: 10 CPUs x 10 min = 100 CPU-minutes
    # from 0; B asks 1 x 2 min: held while floor(R / 60) + 2 > 100, R = 10 x (600 - t) CPU-seconds
    # left as of the tick t: 102 at t=0, 92 at t=60 -> B starts at 60 (QOSGrpCPURunMinutesLimit).
    # C asks 6 x 20 min = 120 > 100: never, refused. A ends at 300 and its whole time limit leaves
    # the counter (what the ticks took off comes back). E: 4 x 20 min = 80 from 400; F asks 5 x 5
    # = 25 at 401: R = 4 x (1200 - (t - 400)): 78 + 25 = 103 at the tick 420, 74 + 25 = 99 at 480:
    # F starts at 480. Were A's time not given back whole, the counter would be 3000 too low and F
    # would start at the first pass after 401
    rows = [(0, 300, 600, 10), (0, 10, 120, 1), (0, 10, 1200, 6), (400, 500, 1200, 4), (401, 10, 300, 5)]
    result = run(workload, rows, site(qos=Qos("normal", grp_tres_run_mins={"cpu": 100})), partitions=["long"] * 5,
                 users=[1, 2, 1, 1, 2])
    assert starts(result) == {1: 0, 2: 60, 4: 400, 5: 480}
    assert result.rejected_jobs["job_id"].tolist() == [3]
    assert result.rejected_jobs["reason"].tolist() == ["QOSGrpCPURunMinutesLimit"]
    assert reasons(result)[2] == reasons(result)[5] == "QOSGrpCPURunMinutesLimit"
    assert result.meta["summary"]["slurm_pending"]["QOSGrpCPURunMinutesLimit"]["jobs"] == 2


def test_an_accounts_grp_tres_run_mins_counts_its_users_running_jobs(workload):
    # the same A and B as above, u1 and u2 under account acct with GrpTRESRunMins cpu=100: B
    # (u2's) waits for the tick at 60 behind A (u1's)
    assoc = [Association("c", "acct", shares=1, grp_tres_run_mins={"cpu": 100}), Association("c", "acct", "u1"),
             Association("c", "acct", "u2")]
    result = run(workload, [(0, 300, 600, 10), (0, 10, 120, 1)], site(assoc=assoc), partitions=["long"] * 2,
                 users=[1, 2])
    assert starts(result) == {1: 0, 2: 60}
    assert reasons(result)[2] == "AssocGrpCPURunMinutesLimit"
    # a GrpTRESRunMins cpu on the job's QOS (1000) overrides the association's (acct_policy checks
    # an association's only for TRES no QOS of the job limits): B starts at once
    result = run(workload, [(0, 300, 600, 10), (0, 10, 120, 1)],
                 site(assoc=assoc, qos=Qos("normal", grp_tres_run_mins={"cpu": 1000})), partitions=["long"] * 2,
                 users=[1, 2])
    assert starts(result) == {1: 0, 2: 0}



@pytest.mark.parametrize("on_account", [False, True])
def test_an_associations_grp_tres_mins_holds_its_jobs_until_the_decayed_usage_falls_below_it(workload, on_account):
    # GrpTRESMins cpu=10 on u1's association (or on account acct: u2's jobs count and are held
    # too). Usage is the fair-share's decayed CPU-seconds, as the decay thread keeps it every
    # PriorityCalcPeriod (1 = a minute: ticks at 0, 60, 120, ...), half-life 5 minutes: d = 1 -
    # 0.693 / 300 per second. A (u1, 8 CPUs, 0-120): 480 d^60 CPU-seconds at the tick 60, then
    # (480 d^60 + 480 d^60) d^60 = 727 (12.1 minutes) at 120: over 10, B (u1, at 130) is held with
    # AssocGrpCPUMinutesLimit; 10.6 minutes at 180, 9.2 at 240: B starts at 240 (a pass is asked for
    # at each tick while the usage holds jobs, though nothing runs)
    d = 1 - 0.693 / 300
    usage, tick = 2 * 480 * d ** 60 * d ** 60, 120          # the reference: the usage after A's end
    while int(usage / 60) >= 10:
        usage, tick = usage * d ** 60, tick + 60
    assert tick == 240
    conf = BASE.replace("PriorityCalcPeriod=1", "PriorityCalcPeriod=1\nPriorityDecayHalfLife=5") + PARTITIONS
    limit = {"cpu": 10}
    assoc = [Association("c", "acct", shares=1, grp_tres_mins=limit if on_account else {}),
             Association("c", "acct", "u1", grp_tres_mins={} if on_account else limit), Association("c", "acct", "u2")]
    rows = [(0, 120, 120, 8), (130, 10, 60, 1), (130, 10, 60, 1)]
    result = run(workload, rows, site(conf=conf, assoc=assoc), users=[1, 1, 2])
    assert starts(result) == {1: 0, 2: tick, 3: tick if on_account else 130}
    assert reasons(result)[2] == "AssocGrpCPUMinutesLimit"
    assert result.meta["summary"]["slurm_pending"]["AssocGrpCPUMinutesLimit"]["jobs"] == (2 if on_account else 1)


# ----------------------------------------------------------------------------- QOS UsageFactor, DenyOnLimit
# slurmctld 22.05.8: priority_multifactor.c _apply_new_usage multiplies a running job's usage (the
# fair-share's, usage_tres_raw, grp_used_wall) and the TRES-seconds it takes off
# grp_used_tres_run_secs by its QOS's UsageFactor, acct_policy.c _adjust_limit_usage the time limit
# it puts there at its start; acct_policy_validate checks strictly when a QOS of the job has DenyOnLimit.


def two_qos_site(conf: str, cheap: Qos, *, assoc: list[Association] | None = None,
                 normal: Qos | None = None) -> SlurmSite:
    """``conf`` with QOS normal (UsageFactor 1 unless given) and ``cheap``, users u1 and u2 under acct."""
    return SlurmSite(parse_slurm_conf(conf + "SchedulerParameters=bf_interval=5\n", "t.conf"),
                     qos={"normal": normal or Qos("normal"), cheap.name: cheap},
                     associations=assoc or [Association("c", "acct", shares=1), Association("c", "acct", "u1"),
                                            Association("c", "acct", "u2")])


@pytest.mark.parametrize("factor, first", [(1.0, 4), (0.25, 3), (0.0, 3)])
def test_a_qos_usage_factor_scales_the_fair_share_usage_its_jobs_add(workload, factor, first):
    # No decay (PriorityDecayHalfLife=0), usage taken every minute (ticks at 0, 60, 120, 180, ...),
    # Fair Tree: u1 and u2 share acct equally, the one with less usage ranks first (factor 1 against
    # 0.5, x PriorityWeightFairshare 10000). Job 1 (u1, QOS cheap, 16 CPUs, 0-100) adds 16 x 100 x
    # UsageFactor CPU-seconds; job 2 (u2, QOS normal, 8 CPUs, 100-200) has added 8 x 80 = 640 by the
    # tick at 180. Jobs 3 (u1) and 4 (u2), 16 CPUs each, wait from 150 for job 2's end at 200, equal
    # in every other factor: UsageFactor 1: u1 1600 > 640, job 4 starts first; 0.25: 400 < 640 and
    # 0: 0 < 640, job 3 does. The second one starts at 300.
    conf = BASE.replace("PriorityCalcPeriod=1", "PriorityCalcPeriod=1\nPriorityDecayHalfLife=0\n"
                        "PriorityWeightFairshare=10000") + PARTITIONS
    site_ = two_qos_site(conf, Qos("cheap", usage_factor=factor))
    rows = [(0, 100, 100, 16), (100, 100, 100, 8), (150, 100, 100, 16), (150, 100, 100, 16)]
    result = run(workload, rows, site_, users=[1, 2, 1, 2], qos=["cheap", "normal", "normal", "normal"])
    assert 16 * 100 * factor < 8 * 80 if first == 3 else 16 * 100 * factor > 8 * 80
    assert starts(result) == {1: 0, 2: 100, first: 200, 7 - first: 300}


@pytest.mark.parametrize("factor", [1.0, 0.5])
def test_a_qos_usage_factor_scales_the_usage_grp_tres_mins_reads(workload, factor):
    # GrpTRESMins cpu=20 on u1's association, half-life 5 min (d = 1 - 0.693 / 300 per second),
    # ticks every minute. Job 1 (u1, QOS cheap, 16 CPUs, 0-100) adds 960 d^60 at the tick 60, then
    # 640 d^40 at its end, decayed by d^60 at the tick 120: 1235 CPU-seconds (20.6 minutes) with
    # UsageFactor 1, times 0.5 with 0.5 (10.3). Job 2 (u1, QOS normal, 1 CPU, at 130): held with
    # AssocGrpCPUMinutesLimit until the usage's whole minutes fall below 20 (180: 17.9) with
    # UsageFactor 1; started at once with 0.5
    d = 1 - 0.693 / 300
    usage, tick = (960 * d ** 60 + 640 * d ** 40) * d ** 60 * factor, 120
    while int(usage / 60) >= 20:
        usage, tick = usage * d ** 60, tick + 60
    assert (tick == 180) == (factor == 1.0)
    conf = BASE.replace("PriorityCalcPeriod=1", "PriorityCalcPeriod=1\nPriorityDecayHalfLife=5") + PARTITIONS
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", grp_tres_mins={"cpu": 20}),
             Association("c", "acct", "u2")]
    site_ = two_qos_site(conf, Qos("cheap", usage_factor=factor), assoc=assoc)
    result = run(workload, [(0, 100, 100, 16), (130, 10, 60, 1)], site_, qos=["cheap", "normal"])
    assert starts(result) == {1: 0, 2: max(tick, 130)}
    assert reasons(result)[2] == ("AssocGrpCPUMinutesLimit" if factor == 1.0 else "")


@pytest.mark.parametrize("factor, expected", [(1.0, {1: 0, 2: 60, 3: 0}), (0.5, {1: 0, 2: 0, 3: 0})])
def test_a_qos_usage_factor_scales_grp_tres_run_mins_and_zero_clears_it(workload, factor, expected):
    # GrpTRESRunMins cpu=100 on account acct, ticks every minute. Job 1 (u1, QOS a, 10 CPUs, time
    # limit 10 min, runs 0-300) puts 10 x 600 x UsageFactor CPU-seconds in the counter at its start
    # (int(600 x 0.5) = 300 each with 0.5). Job 2 (u2, QOS normal, 1 CPU x 2 min): held while
    # floor(R / 60) + 2 > 100: 100 + 2 at 0 with UsageFactor 1, started at the tick 60 (90 + 2);
    # 50 + 2 with 0.5: at once. Job 3 (u2, QOS free, UsageFactor 0, 1 CPU x 2 min): slurmctld reads
    # the usage and the run minutes as 0 for a job of a QOS whose UsageFactor is 0: it starts at 0
    # either way (2 <= 100)
    assoc = [Association("c", "acct", shares=1, grp_tres_run_mins={"cpu": 100}), Association("c", "acct", "u1"),
             Association("c", "acct", "u2")]
    site_ = two_qos_site(BASE + PARTITIONS, Qos("a", usage_factor=factor), assoc=assoc)
    site_.qos["free"] = Qos("free", usage_factor=0.0)
    rows = [(0, 300, 600, 10), (0, 10, 120, 1), (0, 10, 120, 1)]
    result = run(workload, rows, site_, partitions=["long"] * 3, users=[1, 2, 2], qos=["a", "normal", "free"])
    assert starts(result) == expected
    assert reasons(result)[2] == ("AssocGrpCPURunMinutesLimit" if factor == 1.0 else "")


@pytest.mark.parametrize("qos, assoc, reason, limit", [
    (Qos("normal", max_tres_per_job={"cpu": 8}), None, "QOSMaxCpuPerJobLimit", "QOS normal MaxTRES cpu=8"),
    (Qos("normal", max_wall=300), None, "QOSMaxWallDurationPerJobLimit", "QOS normal MaxWall 00:05:00"),
    (Qos("normal"), {"max_tres_per_job": {"cpu": 8}}, "AssocMaxCpuPerJobLimit", "association acct/u1 MaxTRES cpu=8"),
])
@pytest.mark.parametrize("deny", [False, True])
def test_deny_on_limit_has_sbatch_refuse_a_job_over_a_limit_with_its_message(workload, qos, assoc, reason, limit,
                                                                             deny):
    # Job 2 (10 CPUs x 10 min) is over a QOS or association limit it could never satisfy. Without
    # DenyOnLimit slurmctld accepts it and leaves it pending for ever with the reason (here: refused,
    # listed with the reason); with DenyOnLimit on its QOS acct_policy_validate fails and sbatch
    # refuses it: ESLURM_ACCOUNTING_POLICY's text, after the reason slurmctld names
    flagged = replace(qos, flags=["DenyOnLimit"]) if deny else qos
    rows_ = [Association("c", "acct", shares=1), Association("c", "acct", "u1", **(assoc or {})),
             Association("c", "acct", "u2")]
    result = run(workload, [(0, 10, 60, 1), (0, 10, 600, 10)], site(qos=flagged, assoc=rows_),
                 partitions=["long"] * 2)
    assert starts(result) == {1: 0}
    refused = result.rejected_jobs
    assert refused["job_id"].tolist() == [2]
    assert refused["reason"].tolist() == [ACCOUNTING_POLICY if deny else reason]
    assert refused["limit"].tolist() == [f"{reason}: {limit}" if deny else limit]
    assert ACCOUNTING_POLICY == "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"


@pytest.mark.parametrize("deny", [False, True])
def test_deny_on_limit_refuses_a_job_whose_own_minutes_exceed_grp_tres_mins_or_a_time_over_grp_wall(workload, deny):
    # QOS normal GrpTRESMins cpu=100 and GrpWall 15 min, no usage yet. Job 1: 12 CPUs x 10 min =
    # 120 CPU-minutes; job 2: 1 CPU x 20 min; job 3: 1 CPU x 1 min. Without DenyOnLimit (and
    # without safe) a usage limit holds only once the usage reaches it: all three run at 0. With
    # it, _qos_policy_validate's strict checking refuses a time limit above GrpTRESMins / the job's
    # CPUs (100 // 12 = 8 min) and above GrpWall (15 min)
    qos = Qos("normal", grp_tres_mins={"cpu": 100}, grp_wall=900, flags=["DenyOnLimit"] if deny else [])
    result = run(workload, [(0, 10, 600, 12), (0, 10, 1200, 1), (0, 10, 60, 1)], site(qos=qos),
                 partitions=["long"] * 3)
    refused = result.rejected_jobs
    if not deny:
        assert starts(result) == {1: 0, 2: 0, 3: 0} and refused.empty
        return
    assert starts(result) == {3: 0}
    assert refused["job_id"].tolist() == [1, 2]
    assert refused["reason"].tolist() == [ACCOUNTING_POLICY] * 2
    assert refused["limit"].tolist() == ["QOSGrpCPUMinutesLimit: QOS normal GrpTRESMins cpu=100",
                                         "QOSGrpWallLimit: QOS normal GrpWall 00:15:00"]


# ----------------------------------------------------------------------------- the limit hierarchy
# resource_limits.html: a limit is taken from the first of partition QOS, job QOS (the other way
# round with OverPartQOS), user association, its accounts up to root, partition, where it is set;
# which QOS limit shadows which association limit is slurmctld 22.05.8's acct_policy.c.

HIERARCHY = BASE + "PartitionName=short Nodes=n1 Default=YES\nPartitionName=long Nodes=n1 QOS=longq\n"


@pytest.mark.parametrize("over_part, expected", [(False, {1: 0, 2: 0, 3: 100}), (True, {1: 0, 2: 100, 3: 200})])
def test_the_partitions_qos_limit_wins_over_the_jobs_qos_unless_over_part_qos(workload, over_part, expected):
    # long's QOS longq: MaxJobsPU 2; the jobs' QOS normal: MaxJobsPU 1. Three jobs of u1 (100 s
    # each) in long: longq's 2 is the limit (normal's is not checked: the first QOS sets it), so two
    # run at once and the third waits for one (100). With OverPartQOS on normal, normal's 1 is the
    # limit (longq's not checked): one at a time, 0, 100, 200.
    s = site(conf=HIERARCHY, qos=Qos("normal", max_jobs_per_user=1, flags=["OverPartQOS"] if over_part else []))
    s.qos["longq"] = Qos("longq", max_jobs_per_user=2)
    result = run(workload, [(0, 100, 600, 1)] * 3, s, partitions=["long"] * 3, sched_cycle=0)
    assert starts(result) == expected
    assert reasons(result)[3] == "QOSMaxJobsPerUserLimit"


def test_the_second_qos_limits_what_the_first_leaves_unset(workload):
    # longq (first) sets MaxJobsPU 2 only; normal sets GrpTRES cpu=4 and MaxJobsPU 1 (shadowed by
    # longq's). u1's two 2-CPU jobs start at once (normal's MaxJobsPU 1 is not checked) and fill
    # normal's 4 CPUs: u2's 2-CPU job waits for them (100, QOSGrpCpuLimit), a limit longq leaves unset
    s = site(conf=HIERARCHY, qos=Qos("normal", max_jobs_per_user=1, grp_tres={"cpu": 4}))
    s.qos["longq"] = Qos("longq", max_jobs_per_user=2)
    result = run(workload, [(0, 100, 600, 2)] * 2 + [(0, 50, 600, 2)], s, partitions=["long"] * 3, users=[1, 1, 2],
                 sched_cycle=0)
    assert starts(result) == {1: 0, 2: 0, 3: 100}
    assert reasons(result)[3] == "QOSGrpCpuLimit"


@pytest.mark.parametrize("qos, expected, reason", [
    (Qos("normal"), {1: 0, 2: 100, 3: 200}, "AssocMaxJobsLimit"),
    (Qos("normal", max_jobs_per_user=2), {1: 0, 2: 0, 3: 100}, "QOSMaxJobsPerUserLimit"),
    (Qos("normal", max_jobs_per_account=2), {1: 0, 2: 0, 3: 100}, "MaxJobsPerAccount"),
])
def test_a_qos_max_jobs_per_user_or_account_overrides_the_associations_max_jobs(workload, qos, expected, reason):
    # u1's association MaxJobs 1: alone it runs u1's three 100 s jobs one after the other; a QOS
    # MaxJobsPU or MaxJobsPA 2 takes its place (acct_policy checks MaxJobs only where the QOS sets
    # neither): two at once
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", max_jobs=1)]
    result = run(workload, [(0, 100, 100, 1)] * 3, site(qos=qos, assoc=assoc), sched_cycle=0)
    assert starts(result) == expected
    assert reasons(result)[3] == reason


@pytest.mark.parametrize("qos, expected, reason", [
    (Qos("normal"), {1: 0, 2: 100, 3: 200}, "AssocGrpCpuLimit"),
    (Qos("normal", grp_tres={"cpu": 8}), {1: 0, 2: 0, 3: 100}, "QOSGrpCpuLimit"),
    (Qos("normal", grp_tres={"mem": 10 ** 6}), {1: 0, 2: 100, 3: 200}, "AssocGrpCpuLimit"),
])
def test_a_qos_grp_tres_overrides_the_accounts_grp_tres_tres_by_tres(workload, qos, expected, reason):
    # account acct GrpTRES cpu=4; three 4-CPU jobs: alone, one at a time. The QOS's GrpTRES cpu=8
    # takes the place of the account's cpu (two at once); a QOS GrpTRES of mem only leaves the
    # account's cpu limit in force
    assoc = [Association("c", "acct", shares=1, grp_tres={"cpu": 4}), Association("c", "acct", "u1")]
    result = run(workload, [(0, 100, 100, 4)] * 3, site(qos=qos, assoc=assoc), sched_cycle=0)
    assert starts(result) == expected
    assert reasons(result)[3] == reason


def test_a_qos_grp_jobs_overrides_every_associations_grp_jobs(workload):
    # the account's GrpJobs 1 would run u1's and u2's jobs one at a time; the QOS's GrpJobs 2
    # replaces it at every level of the tree: two at once
    assoc = [Association("c", "acct", shares=1, grp_jobs=1), Association("c", "acct", "u1"),
             Association("c", "acct", "u2")]
    alone = run(workload, [(0, 100, 100, 1)] * 3, site(assoc=assoc), users=[1, 2, 1], sched_cycle=0)
    assert starts(alone) == {1: 0, 2: 100, 3: 200} and reasons(alone)[3] == "AssocGrpJobsLimit"
    shadowed = run(workload, [(0, 100, 100, 1)] * 3, site(qos=Qos("normal", grp_jobs=2), assoc=assoc), users=[1, 2, 1],
                   sched_cycle=0)
    assert starts(shadowed) == {1: 0, 2: 0, 3: 100} and reasons(shadowed)[3] == "QOSGrpJobsLimit"


@pytest.mark.parametrize("qos, refused", [
    (Qos("normal"), "AssocMaxCpuPerJobLimit"),
    (Qos("normal", max_tres_per_job={"cpu": 8}), None),
    (Qos("normal", max_tres_per_user={"cpu": 8}), "AssocMaxCpuPerJobLimit"),   # MaxTRESPU is another limit
])
def test_an_associations_max_tres_yields_to_the_qos_max_tres_only(workload, qos, refused):
    # u1's association MaxTRES cpu=2; a 4-CPU job: refused, unless a QOS MaxTRES cpu sets the per-job
    # limit instead (acct_policy passes the QOS's max_tres_pj as already imposed, not MaxTRESPU)
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", max_tres_per_job={"cpu": 2})]
    result = run(workload, [(0, 100, 100, 4)], site(qos=qos, assoc=assoc), sched_cycle=0)
    assert result.rejected_jobs["reason"].tolist() == ([refused] if refused else [])
    assert len(result.schedule) == (0 if refused else 1)


@pytest.mark.parametrize("qos, refused", [(Qos("normal"), "AssocMaxWallDurationPerJobLimit"),
                                          (Qos("normal", max_wall=600), None)])
def test_an_associations_max_wall_yields_to_the_qos_max_wall(workload, qos, refused):
    # u1's association MaxWall 2 min; a 5-minute job in long: refused, unless the QOS's MaxWall
    # (10 min) is the limit
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", max_wall=120)]
    result = run(workload, [(0, 100, 300, 1)], site(qos=qos, assoc=assoc), partitions=["long"], sched_cycle=0)
    assert result.rejected_jobs["reason"].tolist() == ([refused] if refused else [])


@pytest.mark.parametrize("own, expected", [(None, {1: 0, 2: 100, 3: 0}), (2, {1: 0, 2: 0, 3: 0})])
def test_an_accounts_max_jobs_applies_to_each_of_its_users_unless_the_users_own_says_otherwise(workload, own,
                                                                                            expected):
    # MaxJobs 1 on the account's row: each user's association inherits it (the database fills it in
    # below), counted per user: u1's second job waits for its first, u2's runs at once. u1's own
    # MaxJobs 2 is the first one the hierarchy meets: both of u1's run.
    assoc = [Association("c", "acct", shares=1, max_jobs=1), Association("c", "acct", "u1", max_jobs=own),
             Association("c", "acct", "u2")]
    result = run(workload, [(0, 100, 100, 1)] * 3, site(assoc=assoc), users=[1, 1, 2], sched_cycle=0)
    assert starts(result) == expected
    if own is None:
        assert reasons(result)[2] == "AssocMaxJobsLimit"


def test_a_qos_max_submit_per_user_overrides_the_associations_max_submit(workload):
    # u1's MaxSubmit 1 would refuse its second and third jobs; with the QOS's MaxSubmitPU 2, only the third
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", max_submit=1)]
    alone = run(workload, [(0, 100, 100, 1)] * 3, site(assoc=assoc), sched_cycle=0)
    assert alone.rejected_jobs["reason"].tolist() == ["AssocMaxSubmitJobLimit"] * 2
    shadowed = run(workload, [(0, 100, 100, 1)] * 3, site(qos=Qos("normal", max_submit_per_user=2), assoc=assoc),
                   sched_cycle=0)
    assert shadowed.rejected_jobs["reason"].tolist() == ["QOSMaxSubmitJobPerUserLimit"]


@pytest.mark.parametrize("flags, refused", [([], "PartitionTimeLimit"), (["PartitionTimeLimit"], None)])
def test_the_qos_flag_partition_time_limit_lets_a_job_past_its_partitions_max_time(workload, flags, refused):
    # short's MaxTime is 5 min; a 10-minute job of QOS normal (MaxWall 30 min): refused by the
    # partition, unless normal has Flags=PartitionTimeLimit (then MaxWall bounds it)
    result = run(workload, [(0, 100, 600, 1)], site(qos=Qos("normal", max_wall=1800, flags=flags)), sched_cycle=0)
    assert result.rejected_jobs["reason"].tolist() == ([refused] if refused else [])


@pytest.mark.parametrize("enforce, expected", [("", {1: 0, 2: 0}), ("AccountingStorageEnforce=associations\n", {1: 0, 2: 0}),
                                               ("AccountingStorageEnforce=qos,limits\n", {1: 0, 2: 100}),
                                               ("AccountingStorageEnforce=safe\n", {1: 0, 2: 100})])
def test_association_and_qos_limits_hold_only_with_accounting_storage_enforce_limits(workload, enforce, expected):
    # QOS MaxJobsPU 1: followed only when AccountingStorageEnforce has limits (safe implies it);
    # Slurm's default (unset) and associations alone check no limit
    conf = BASE.replace("AccountingStorageEnforce=associations,limits\n", enforce) + PARTITIONS
    result = run(workload, [(0, 100, 100, 1)] * 2, site(qos=Qos("normal", max_jobs_per_user=1), conf=conf), sched_cycle=0)
    assert starts(result) == expected


@pytest.mark.parametrize("enforce, refused", [("AccountingStorageEnforce=associations\n", [2, 3]), ("", [])])
def test_a_job_without_an_association_is_refused_at_submission_when_associations_are_enforced(workload, enforce, refused):
    # rows: acct, acct/u1, acct/u2. Job 1 (u1, acct) has its row; job 2 (u3: no row at all) and job 3
    # (u1 under account other: no acct other/u1 row) are refused by sbatch with
    # ESLURM_INVALID_ACCOUNT's text, named per job; job 4 (u2, no account named: the user's default)
    # runs. Without AccountingStorageEnforce associations all four run at 0 (16 CPUs free)
    conf = BASE.replace("AccountingStorageEnforce=associations,limits\n", enforce) + PARTITIONS
    rows = [(0, 10, 100, 1)] * 4
    result = run(workload, rows, site(conf=conf), users=[1, 3, 1, 2], accounts=["acct", "acct", "other", ""])
    assert result.rejected_jobs["job_id"].tolist() == refused
    assert result.rejected_jobs["reason"].tolist() == [INVALID_ACCOUNT] * len(refused)
    assert starts(result) == {job: 0 for job in (1, 2, 3, 4) if job not in refused}
    assert result.meta["summary"]["slurm_refused"] == ({INVALID_ACCOUNT: 2} if refused else {})


def test_qos_max_tres_per_account_holds_the_accounts_running_cpus_together(workload):
    # MaxTRESPA cpu=8 on QOS normal: A (u1, acct, 6 CPUs) runs 0-100; B (u2, acct, 4 CPUs, at 1):
    # 6 + 4 > 8, held with MaxCpuPerAccount until A ends (100), though 10 CPUs are free; C (u3,
    # account other, 4 CPUs, at 1) is not held; D (u1, 10 CPUs) is above the limit alone: never
    # runs, refused with the same reason
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1"), Association("c", "acct", "u2"),
             Association("c", "other", shares=1), Association("c", "other", "u3")]
    rows = [(0, 100, 100, 6), (1, 10, 100, 4), (1, 10, 100, 4), (2, 10, 100, 10)]
    s = site(qos=Qos("normal", max_tres_per_account={"cpu": 8}), assoc=assoc)
    result = run(workload, rows, s, users=[1, 2, 3, 1], accounts=["acct", "acct", "other", "acct"], sched_cycle=0)
    assert starts(result) == {1: 0, 2: 100, 3: 1}
    assert reasons(result)[2] == "MaxCpuPerAccount"
    assert result.rejected_jobs["reason"].tolist() == ["MaxCpuPerAccount"]


def test_qos_max_tres_per_node_and_min_tres_refuse_at_submission(workload):
    # two 8-CPU nodes; QOS normal MaxTRESPerNode cpu=4, MinTRES cpu=2. A: 8 CPUs on 1 node (8 per
    # node > 4): QOSMaxCpuPerNode; B: 8 CPUs on 2 nodes (4 per node) runs; C: 1 CPU < 2:
    # QOSMinCpuNotSatisfied; D: 3 CPUs on 1 node runs. Both refused as Slurm leaves them pending
    # for ever (sbatch refuses them only with the DenyOnLimit flag)
    conf = (BASE.replace("NodeName=n1 CPUs=16", "NodeName=n[1-2] CPUs=8")
            + PARTITIONS.replace("Nodes=n1", "Nodes=n[1-2]"))
    s = site(qos=Qos("normal", max_tres_per_node={"cpu": 4}, min_tres_per_job={"cpu": 2}), conf=conf)
    rows = [(0, 10, 100, 8), (0, 10, 100, 8), (0, 10, 100, 1), (0, 10, 100, 3)]
    result = run(workload, rows, s, nodes=[1, 2, 1, 1])
    assert result.rejected_jobs["job_id"].tolist() == [1, 3]
    assert result.rejected_jobs["reason"].tolist() == ["QOSMaxCpuPerNode", "QOSMinCpuNotSatisfied"]
    assert set(starts(result)) == {2, 4}
    # an association's MaxTRESPerNode mem=1G: 2 GB on one node is refused (AssocMaxMemPerNode)
    assoc = [Association("c", "acct", shares=1, max_tres_per_node={"mem": 1024}), Association("c", "acct", "u1"),
             Association("c", "acct", "u2")]
    result = run(workload, [(0, 10, 100, 1)] * 2, site(assoc=assoc, conf=conf), mem_mb=[1024, 2048])
    assert result.rejected_jobs["reason"].tolist() == ["AssocMaxMemPerNode"]


DECAYING = BASE.replace("PriorityCalcPeriod=1", "PriorityCalcPeriod=1\nPriorityDecayHalfLife=5") + PARTITIONS


def test_a_qos_grp_tres_mins_holds_its_jobs_until_the_qos_decayed_usage_falls_below_it(workload):
    # the association case above on QOS normal (GrpTRESMins cpu=10): slurmctld keeps the QOS's own
    # decayed usage (usage_tres_raw), the same sums: A (u1, 8 CPUs, 0-120) makes it 727 CPU-seconds
    # (12.1 minutes) at the tick 120; B (u1) and C (u2, the same QOS) at 130 wait with
    # QOSGrpCPUMinutesLimit until the tick 240 (9.2 minutes); D (u2) at 130 in QOS other is not held
    d = 1 - 0.693 / 300
    usage, tick = 2 * 480 * d ** 60 * d ** 60, 120
    while int(usage / 60) >= 10:
        usage, tick = usage * d ** 60, tick + 60
    assert tick == 240
    s = site(conf=DECAYING, qos=Qos("normal", grp_tres_mins={"cpu": 10}))
    s.qos["other"] = Qos("other")
    rows = [(0, 120, 120, 8), (130, 10, 60, 1), (130, 10, 60, 1), (130, 10, 60, 1)]
    result = run(workload, rows, s, users=[1, 1, 2, 2], qos=["normal", "normal", "normal", "other"])
    assert starts(result) == {1: 0, 2: 240, 3: 240, 4: 130}
    assert reasons(result)[2] == reasons(result)[3] == "QOSGrpCPUMinutesLimit"


def test_a_qos_grp_wall_holds_its_jobs_until_the_decayed_wall_clock_time_falls_below_it(workload):
    # GrpWall 2 minutes on QOS normal: the decayed seconds its jobs ran, each job once whatever its
    # CPUs (grp_used_wall), ticks every minute, half-life 5 minutes. A (1 CPU, 0-180) and A' (4
    # CPUs, 0-60): at the tick 60 W = 60 d^60 d^60 + 60 d^60 (A' ended at 60: added, then decayed
    # with the rest; A's minute added after), then W d^60 + 60 d^60 at 120, (W + 60 d^60) d^60 at
    # 180 (A ended): 2.7 minutes; B at 190 waits with QOSGrpWallLimit while the whole minutes are 2
    # or more: until the tick 360
    d = 1 - 0.693 / 300
    wall = 60 * d ** 60 * d ** 60 + 60 * d ** 60          # the tick 60
    wall = wall * d ** 60 + 60 * d ** 60          # 120
    wall, tick = (wall + 60 * d ** 60) * d ** 60, 180
    assert int(wall / 60) >= 2
    while int(wall / 60) >= 2:
        wall, tick = wall * d ** 60, tick + 60
    assert tick == 360
    s = site(conf=DECAYING, qos=Qos("normal", grp_wall=120))
    result = run(workload, [(0, 180, 180, 1), (0, 60, 60, 4), (190, 10, 60, 1)], s, partitions=["long"] * 3)
    assert starts(result) == {1: 0, 2: 0, 3: tick}
    assert reasons(result)[3] == "QOSGrpWallLimit"


def test_grp_tres_run_mins_of_memory_holds_only_jobs_asking_memory(workload):
    # QOS GrpTRESRunMins mem=1000 (MB-minutes): A asks 100 MB x 10 minutes = 1000 from 0; B asks
    # 10 MB x 2 minutes: floor(R / 60) + 20 > 1000 while R = 100 x (600 - t) MB-seconds as of the
    # tick t: held at 0 (1020), starts at the tick 60 (920) with QOSGrpMemoryRunMinutes; C asks no
    # memory (Slurm skips a TRES the job does not ask): starts at 0. D asks 200 x 10 = 2000: never
    s = site(qos=Qos("normal", grp_tres_run_mins={"mem": 1000}))
    rows = [(0, 300, 600, 1), (0, 10, 120, 1), (0, 10, 120, 1), (0, 10, 600, 1)]
    result = run(workload, rows, s, partitions=["long"] * 4, mem_mb=[100, 10, 0, 200], users=[1, 2, 2, 1])
    assert starts(result) == {1: 0, 2: 60, 3: 0}
    assert reasons(result)[2] == "QOSGrpMemoryRunMinutes"
    assert result.rejected_jobs["reason"].tolist() == ["QOSGrpMemoryRunMinutes"]


@pytest.mark.parametrize("enforce, expected, refused", [("limits", {1: 0, 2: 0, 3: 0}, []),
                                                        ("safe", {1: 0, 2: 120}, [3])])
def test_safe_starts_a_job_only_if_it_can_run_to_its_time_limit_within_grp_tres_mins(workload, enforce, expected,
                                                                                    refused):
    # u1's association: GrpTRESMins cpu=17; ticks every minute, half-life 5 minutes. A (8 CPUs,
    # time limit 2 minutes: 16 CPU-minutes) starts at 0 either way. B (4 CPUs x 1 minute) at 0: the
    # usage (0) is below 17, it starts at 0 with limits; with safe the usage plus the running jobs'
    # whole minutes left (A: 16) plus its own 4 make 20 > 17: held (AssocGrpCPUMinutesLimit); at the
    # tick 60 the usage is int(480 d^60 / 60) = 6, A's minutes left 8: 18 > 17, held; A ends at 120
    # (usage 12 after the tick, 6 before; nothing left running): B starts at 120. C (1 CPU x 20
    # minutes = 20 > 17, at 0) runs with limits; with safe it never could: refused, the same reason
    d = 1 - 0.693 / 300
    assert (int(480 * d ** 60 / 60), int(2 * 480 * d ** 120 / 60)) == (6, 12)
    conf = DECAYING.replace("associations,limits", enforce)
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", grp_tres_mins={"cpu": 17}),
             Association("c", "acct", "u2")]
    result = run(workload, [(0, 120, 120, 8), (0, 60, 60, 4), (0, 10, 1200, 1)], site(conf=conf, assoc=assoc),
                 partitions=["short", "short", "long"])
    assert starts(result) == expected
    assert result.rejected_jobs["job_id"].tolist() == refused
    if enforce == "safe":
        assert reasons(result)[2] == result.rejected_jobs["reason"].tolist()[0] == "AssocGrpCPUMinutesLimit"


def test_a_job_past_its_time_limit_holds_its_cpus_and_backfill_expects_it_to_end_any_second(workload):
    # slurmctld kills a job over its time limit only at its next time-limit check (every
    # PERIODIC_TIMEOUT = 30 s: controller.c _slurmctld_background, job_mgr.c job_time_limit), so a
    # recorded runtime past the limit is kept (--overrun run). A (15 CPUs, limit 60) runs 75 s;
    # B (16 CPUs) waits for all of it; C (1 CPU, 30 s), submitted at 50, fits the free CPU but would
    # run into B's reservation: first at A's limit (60), then, A being overdue, at the will-run
    # test's guess of its end, a second from now (cons_common/job_test.c _guess_job_end: end_time +
    # KillWait, at least now + 1): C never starts beside the overdue A; B starts when A really ends
    rows = [(0, 75, 60, 15), (1, 10, 100, 16), (50, 5, 30, 1)]
    result = run(workload, rows, site("bf_interval=5,bf_resolution=1"))
    assert starts(result) == {1: 0, 2: 75, 3: 85}
    # were A expected to run a whole time limit more once overdue, C would start in the overrun
    assert dict(zip(result.schedule["job_id"], result.schedule["end"]))[1] == 75


@pytest.mark.parametrize("runtime, params, b_starts", [
    (10, {}, 15),                                  # A ends in the second of a pass: the next pass starts B
    (10, {"ends_after_backfill": False}, 10),      # every pass sees the ends of its second
    (10, {"sched_cycle": 0}, 10),                  # a pass made at the end itself sees it
    (12, {}, 15),                                  # an end between two passes: no change
])
def test_a_backfill_pass_does_not_see_the_jobs_that_ended_in_its_own_second(workload, runtime, params, b_starts):
    # slurmctld's backfill thread sleeps bf_interval after each pass (backfill.c backfill_agent), so
    # its passes keep their phase in the second, while a job it started ends its runtime plus some
    # 50 ms later (slurmd's launch and completion message): in the second of the pass that many
    # seconds on, but after it (rec2's debug log: the pass first in 91 of 108 shared seconds).
    # Backfill only (no main scheduler), passes every 5 s from 0: A (16 CPUs) runs 0..runtime,
    # B (16 CPUs) waits for it
    rows = [(0, runtime, runtime, 16), (1, 5, 20, 16)]
    result = run(workload, rows, site("bf_interval=5,bf_resolution=1"), sched_interval=0, **params)
    assert starts(result) == {1: 0, 2: b_starts}


def test_a_daily_usage_reset_lets_the_jobs_a_grp_tres_mins_held_run_from_midnight(workload):
    # no decay (PriorityDecayHalfLife=0), PriorityUsageResetPeriod=DAILY, the trace starting at
    # 23:50 UTC: A (u1, 8 CPUs, 0-120) leaves 960 CPU-seconds = 16 minutes of usage, over u1's
    # GrpTRESMins cpu=10: B (u1, at 130) is held (AssocGrpCPUMinutesLimit) until the calculation at
    # midnight (600 s) resets the usage; with MONTHLY the reset is weeks away: B is still held at 900
    conf = BASE.replace("PriorityCalcPeriod=1", "PriorityCalcPeriod=1\nPriorityDecayHalfLife=0\n"
                        "PriorityUsageResetPeriod=DAILY") + PARTITIONS
    assoc = [Association("c", "acct", shares=1), Association("c", "acct", "u1", grp_tres_mins={"cpu": 10}),
             Association("c", "acct", "u2")]
    starts_of = {}
    for period in ("DAILY", "MONTHLY"):
        w = workload([(0, 120, 120, 8), (130, 10, 60, 1), (900, 10, 60, 1)])
        w.metadata["UnixStartTime"] = "1700005800"
        assert (1700005800 + 600) % 86400 == 0         # (2023-11-15 00:00 UTC)
        result = run(lambda rows, w=w: w, [None] * 3, site(conf=conf.replace("DAILY", period), assoc=assoc),
                     users=[1, 1, 2])
        starts_of[period] = starts(result)
    assert starts_of["DAILY"] == {1: 0, 2: 600, 3: 900}
    assert 2 not in starts_of["MONTHLY"] or starts_of["MONTHLY"][2] > 900



# -- the reason a job has from its submission (job_mgr.c job_allocate: _top_priority, then select_nodes'
#    test-only call and its acct_policy_job_runnable_pre_select), until a pass looks at it

def reasons_at_submission(monkeypatch, workload, rows, site_: SlurmSite, **kw) -> dict[int, str]:
    """Each job's pending reason right after its submission (job ids from 1)."""
    seen: dict[int, str] = {}
    plain_add = SlurmPriorityQueue.add

    def add(self, job):
        plain_add(self, job)
        if self.member[job]:
            seen[job + 1] = self.reasons.names[int(self.reasons.reason[job])]

    monkeypatch.setattr(SlurmPriorityQueue, "add", add)
    run(workload, rows, site_, **kw)
    return seen


def test_a_job_below_a_waiting_job_is_priority_from_its_submission(workload, monkeypatch):
    # A (16 CPUs) runs 0-100. B (short) comes at 11: nothing waits, B is top: None (a pass names it).
    # Both are priced with age 0 until the next calculation (PriorityCalcPeriod 1 min): B 2000 (partition
    # factor 2/2). C (short) at 21 has B's 2000, not below it (_top_priority wants a strictly higher
    # one): None. D (long, factor 1/2: 1000) at 31 shares n1 with B: Priority
    rows = [(0, 100, 100, 16), (11, 10, 100, 8), (21, 10, 100, 8), (31, 10, 100, 8)]
    got = reasons_at_submission(monkeypatch, workload, rows, site(), partitions=["short", "short", "short", "long"])
    assert got == {1: "None", 2: "None", 3: "None", 4: "Priority"}


def test_a_job_over_a_limit_at_submission_has_the_limits_reason(workload, monkeypatch):
    # MaxJobsPU 1: u1's job 1 runs 0-100; its job 2 (at 5) is held by the QOS from its submission
    rows = [(0, 100, 100, 1), (5, 10, 100, 1)]
    got = reasons_at_submission(monkeypatch, workload, rows, site(qos=Qos("normal", max_jobs_per_user=1)))
    assert got == {1: "None", 2: "QOSMaxJobsPerUserLimit"}


def test_only_a_runnable_job_above_in_a_partition_sharing_nodes_makes_a_new_one_priority(workload, monkeypatch):
    # B (short, n1) waits from 1 behind A. C in long on n2 only (at 10) shares no node with B: top,
    # None. D in short at 70: B, aged 59 s at the calculation at 60, is above it: Priority
    conf = BASE.replace("NodeName=n1 CPUs=16", "NodeName=n[1-2] CPUs=16") + \
        "PartitionName=short Nodes=n1 Default=YES\nPartitionName=long Nodes=n2\n"
    rows = [(0, 100, 100, 32), (1, 10, 100, 8), (10, 10, 100, 8), (70, 10, 100, 8)]
    got = reasons_at_submission(monkeypatch, workload, rows, site(conf=conf),
                                partitions=["short", "short", "long", "short"], nodes=[2, 1, 1, 1], capacity=32)
    assert got == {1: "None", 2: "None", 3: "None", 4: "Priority"}
    # a higher PriorityTier is above whatever the priority: "top" (tier 2) on n1; E waits there from
    # 1 (222: factor 1/9); F in short (tier 1, factor 9/9: 2000) at 10 is below it: Priority; G in top
    # at 20 has E's priority (both at age 0 until the calculation at 60): not below it, None
    tiers = BASE + "PartitionName=short Nodes=n1 Default=YES PriorityJobFactor=9\n" \
        "PartitionName=top Nodes=n1 PriorityTier=2 PriorityJobFactor=1\n"
    rows = [(0, 100, 100, 16), (1, 10, 100, 8), (10, 10, 100, 8), (20, 10, 100, 8)]
    got = reasons_at_submission(monkeypatch, workload, rows, site(conf=tiers), partitions=["short", "top", "short", "top"])
    assert got == {1: "None", 2: "None", 3: "Priority", 4: "None"}
    # a job held by a limit is not above: u2's H waits held by MaxJobsPU 1 (its first job runs);
    # u3's J at 30 (long: a lower priority than H's) on the full machine is top: None
    rows = [(0, 100, 100, 1), (0, 100, 100, 15), (1, 10, 100, 1), (30, 10, 100, 1)]
    assoc = [Association("c", "acct", shares=1)] + [Association("c", "acct", f"u{u}") for u in (1, 2, 3)]
    got = reasons_at_submission(monkeypatch, workload, rows, site(qos=Qos("normal", max_jobs_per_user=1), assoc=assoc),
                                users=[2, 1, 2, 3], partitions=["short", "short", "short", "long"])
    assert got[3] == "QOSMaxJobsPerUserLimit" and got[4] == "None"


@pytest.mark.parametrize("seed", range(6))
def test_top_priority_is_the_naive_look_at_every_waiting_job(workload, monkeypatch, seed):
    """SlurmPriorityQueue._top_priority walks the order from its head and stops at the first job not
    above; here every waiting job is looked at, on random queues of three partitions (two tiers,
    nodes shared or not) with a per-user limit holding some."""
    rng = np.random.default_rng(seed)
    conf = BASE.replace("NodeName=n1 CPUs=16", "NodeName=n[1-2] CPUs=8") + \
        "PartitionName=short Nodes=n1 Default=YES PriorityJobFactor=2\nPartitionName=long Nodes=n[1-2]\n" \
        "PartitionName=top Nodes=n2 PriorityTier=2\n"
    n = 120
    rows = [(int(t), int(rng.integers(5, 200)), 200, int(rng.choice([1, 2, 4, 8])))
            for t in np.sort(rng.integers(0, 900, n))]
    answers = []
    plain_top = SlurmPriorityQueue._top_priority

    def checked(self, job):
        got = plain_top(self, job)
        mine = int(self._priorities(np.array([job]), self.sim.now)[0])
        rank = int(self.tier_rank[job])
        above = False
        for other in np.flatnonzero(self.member).tolist():
            if self.reasons.reason[other] > 3 or not self.part_overlap[self.part_number[job], self.part_number[other]]:
                continue
            theirs = int(self._priorities(np.array([other]), self.sim.now)[0])
            other_rank = int(self.tier_rank[other])
            above = above or other_rank < rank or (other_rank == rank and theirs > mine)
        answers.append(got)
        assert got == (not above)
        return got

    monkeypatch.setattr(SlurmPriorityQueue, "_top_priority", checked)
    run(workload, rows, site(conf=conf, qos=Qos("normal", max_jobs_per_user=3)), capacity=16,
        partitions=[str(rng.choice(["short", "long", "top"])) for _ in rows], users=[int(u) for u in rng.integers(1, 3, n)])
    assert True in answers and False in answers
