"""Slurm's multifactor priority (engine.policies.slurm) against Slurm's documented formulas
(slurm.schedmd.com/priority_multifactor.html, fair_tree.html) and a real 22.05's sprio."""

from __future__ import annotations

import pytest

from engine.platform.slurmconf import Association, Qos, SlurmSite, parse_slurm_conf
from engine.policies.slurm import (HELD_QOS_USER, age_factor, association_tree, classic_factors,
                                   fair_tree_factors, job_size_factor, multifactor, users_of)
from engine.run import simulate

WEIGHTS = {"age": 1000.0, "fairshare": 10000.0, "jobsize": 1000.0, "partition": 2000.0, "qos": 0.0}


def test_age_factor_grows_to_one_at_max_age():
    assert age_factor(600, 1200) == 0.5
    assert age_factor(5000, 1200) == 1.0
    assert age_factor(-3, 1200) == 0.0
    assert age_factor(10, 0) == 1.0          # PriorityMaxAge 0: full age at once


def test_job_size_factor_is_the_mean_of_node_and_cpu_fractions():
    # 1 of 1 node and 8 of 16 CPUs: (1 + 0.5) / 2; favouring small: ((1-1)/1 + (16-8)/16) / 2
    assert job_size_factor(8, 1, 16, 1, False) == 0.75
    assert job_size_factor(8, 1, 16, 1, True) == 0.25
    assert job_size_factor(1, 1, 16, 1, False) == pytest.approx(17 / 32)


def test_priority_is_the_truncated_sum_as_a_real_slurm_showed_it():
    # sprio of tests/data/slurm_replay: "13|dave|short|2000|8473|9|5714|750|0" (age 9/1000, 4 of 7 ranks)
    assert multifactor(WEIGHTS, {"age": 0.009, "fairshare": 4 / 7, "jobsize": 0.75, "partition": 1.0}) == 8473
    # "7|alice|short|2000|7285|0|4286|1000|0": 7285.71 is truncated, not rounded
    assert multifactor(WEIGHTS, {"age": 0.0, "fairshare": 3 / 7, "jobsize": 1.0, "partition": 1.0}) == 7285


def tree(usage: dict[str, float]):
    """Accounts A (60: a1, a2), B (30: b1), C (10: c1) under root; usage per user."""
    rows = [Association("c", "A", shares=60), Association("c", "B", shares=30), Association("c", "C", shares=10),
            Association("c", "A", "a1"), Association("c", "A", "a2"), Association("c", "B", "b1"),
            Association("c", "C", "c1")]
    root = association_tree(rows)
    for user in users_of(root):
        user.usage = usage[user.user]
    return root


def test_fair_tree_ranks_by_level_fairshare_depth_first():
    # usage A 40 (a1 30, a2 10), B 50, C 10 of 100: LF A = .6/.4 = 1.5, C = .1/.1 = 1, B = .3/.5 = .6
    # -> A's users first: a2 (.5/.25 = 2) then a1 (.5/.75); then C's c1; then B's b1; factor rank / 4
    factors = fair_tree_factors(tree({"a1": 30, "a2": 10, "b1": 50, "c1": 10}))
    assert factors == {("A", "a2"): 1.0, ("A", "a1"): 0.75, ("C", "c1"): 0.5, ("B", "b1"): 0.25}


def test_fair_tree_ties_share_a_rank_and_the_next_rank_skips():
    factors = fair_tree_factors(tree({"a1": 20, "a2": 20, "b1": 50, "c1": 10}))
    assert factors[("A", "a1")] == factors[("A", "a2")] == 1.0
    assert factors[("C", "c1")] == 0.5 and factors[("B", "b1")] == 0.25


def test_classic_fairshare_is_two_to_the_minus_usage_over_shares():
    factors = classic_factors(tree({"a1": 30, "a2": 10, "b1": 50, "c1": 10}))
    # a1: S = .6 x .5 = .3, U = .3 -> 2^-1; b1: S = .3, U = .5; c1: S = .1, U = .1 -> 2^-1
    assert factors[("A", "a1")] == pytest.approx(0.5)
    assert factors[("B", "b1")] == pytest.approx(2 ** (-0.5 / 0.3))
    assert factors[("C", "c1")] == pytest.approx(0.5)
    assert factors[("A", "a2")] == pytest.approx(2 ** (-0.1 / 0.3))


def site(extra: str = "", max_jobs: int | None = 2) -> SlurmSite:
    conf = parse_slurm_conf("NodeName=n1 CPUs=16\nPriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityWeightPartition=2000\n"
                            "PriorityMaxAge=00:20:00\nPriorityCalcPeriod=1\nAccountingStorageEnforce=limits\n"
                            "SchedulerParameters=bf_interval=5\n"
                            "PartitionName=short Nodes=n1 Default=YES PriorityJobFactor=2\n"
                            "PartitionName=long Nodes=n1 PriorityJobFactor=1\n" + extra, "t.conf")
    return SlurmSite(conf, qos={"normal": Qos("normal", max_jobs_per_user=max_jobs)},
                     associations=[Association("c", "acct", shares=1), Association("c", "acct", "u1"),
                                   Association("c", "acct", "u2")])


def run(workload, site_: SlurmSite, partitions: list[str], users: list[int], **params):
    w = workload
    w.jobs["queue_name"] = partitions
    w.jobs["account"] = "acct"
    w.jobs["user"] = users
    w.metadata["user_names"] = {"1": "u1", "2": "u2"}
    result = simulate(w, 16, {"preset": "slurm", "params": params}, context={"slurm_site": site_})
    assert result.meta["summary"]["validation"]["ok"]      # the schedule checks of every run
    return result


def test_qos_max_jobs_per_user_holds_the_third_job(workload):
    # u1 submits three 1-CPU jobs on an empty 16-CPU node, QOS normal MaxJobsPU 2: the third
    # waits for the first to end (t=100) although 14 CPUs are free; u2's job is not held.
    w = workload([(0, 100, 200, 1), (0, 300, 400, 1), (0, 50, 100, 1), (0, 50, 100, 1)])
    result = run(w, site(), ["short"] * 4, [1, 1, 1, 2], sched_cycle=0)
    starts = result.schedule.sort_values("job_id")["start"].tolist()
    assert starts == [0, 0, 100, 0]
    assert HELD_QOS_USER == "QOSMaxJobsPerUserLimit"


def test_partition_factor_orders_the_queue_and_backfill_reserves(workload):
    # a 16-CPU job runs until 100; then a 16-CPU long job (submitted first) and a 16-CPU short
    # job wait: the short partition's PriorityJobFactor 2 puts its job first.
    w = workload([(0, 100, 100, 16), (1, 50, 50, 16), (2, 50, 50, 16)])
    result = run(w, site(max_jobs=None), ["short", "long", "short"], [1, 1, 2], sched_cycle=0)
    starts = result.schedule.sort_values("job_id")["start"].tolist()
    assert starts == [0, 150, 100]


def test_a_submission_asks_for_the_main_scheduler_else_backfill_passes_run_on_their_cycle(workload):
    # the submission at 7 asks for the main scheduler, which the controller runs at once (its
    # last run, at 0, is batch_sched_delay = 3 s back): the job starts at 7. Without the main
    # scheduler (sched_interval=0, as Slurm's -1) it waits for the backfill pass of 10
    # (bf_interval=5 from the first submission)
    w = workload([(0, 3, 10, 1), (7, 3, 10, 1)])
    result = run(w, site(), ["short", "short"], [1, 2])
    assert result.schedule.sort_values("job_id")["start"].tolist() == [0, 7]
    result = run(w, site(), ["short", "short"], [1, 2], sched_interval=0)
    assert result.schedule.sort_values("job_id")["start"].tolist() == [0, 10]


def test_the_policy_needs_the_site(workload):
    w = workload([(0, 3, 10, 1)])
    with pytest.raises(Exception, match="--slurm-conf"):
        simulate(w, 16, "slurm")


def test_fair_tree_ties_between_accounts_as_slurms_code_breaks_them():
    # no usage anywhere: every LF is infinite, everything ties: every user has the top rank
    assert set(fair_tree_factors(tree({"a1": 0, "a2": 0, "b1": 0, "c1": 0})).values()) == {1.0}
    # B and C tie (LF .3/.3 = .1/.1 = 1) below A (.6/.4): b1 takes rank 2 after a2 (4) and a1 (3),
    # and C, tied with B, starts tied: c1 takes rank 2 too
    factors = fair_tree_factors(tree({"a1": 30, "a2": 10, "b1": 45, "c1": 15}))
    assert factors == {("A", "a2"): 1.0, ("A", "a1"): 0.75, ("B", "b1"): 0.5, ("C", "c1"): 0.5}


def custom_tree(rows: list[Association], usage: dict[str, float]):
    root = association_tree(rows)
    for user in users_of(root):
        user.usage = usage[user.user]
    return root


def test_tied_accounts_are_not_merged_as_the_22_05_code_does_it():
    # X (50: x1 10, x2 30) and Y (50: y1 40) tie at LF .5/.5 = 1. fair_tree.html would merge their
    # children and sort x1 (LF 2), y1 (1), x2 (.67) together: 3, 2, 1. 22.05's fair_tree.c never
    # merges (_count_tied_accounts stops at the first account): X's users take 3 and 2, then Y,
    # tied with X, starts tied: y1 takes x2's rank, 2.
    rows = [Association("c", "X", shares=50), Association("c", "Y", shares=50), Association("c", "X", "x1"),
            Association("c", "X", "x2"), Association("c", "Y", "y1")]
    factors = fair_tree_factors(custom_tree(rows, {"x1": 10, "x2": 30, "y1": 40}))
    assert factors == {("X", "x1"): 1.0, ("X", "x2"): pytest.approx(2 / 3), ("Y", "y1"): pytest.approx(2 / 3)}


def test_a_user_tied_with_a_sibling_account_shares_its_rank_with_the_accounts_first_user():
    # under root: user u (1 share, usage 10) and account X (1 share: x1 10, x2 0); LF u = X = 1.
    # Users sort before accounts: u takes rank 3; X is tied with u, so its first user x2 (LF inf)
    # takes rank 3 too (fair_tree.c's third tie rule), and x1 (LF .5/1) the next free rank, 1.
    rows = [Association("c", "root", "u"), Association("c", "X", shares=1), Association("c", "X", "x1"),
            Association("c", "X", "x2")]
    factors = fair_tree_factors(custom_tree(rows, {"u": 10, "x1": 10, "x2": 0}))
    assert factors == {("root", "u"): 1.0, ("X", "x2"): 1.0, ("X", "x1"): pytest.approx(1 / 3)}


def test_an_association_without_shares_has_the_lowest_level_fairshare():
    # X has no shares: LF 0 (fair_tree.c), even with no usage (which would make it infinite);
    # Y's user ranks first
    rows = [Association("c", "X", shares=0), Association("c", "Y", shares=1), Association("c", "X", "x1"),
            Association("c", "Y", "y1")]
    factors = fair_tree_factors(custom_tree(rows, {"x1": 0, "y1": 5}))
    assert factors == {("Y", "y1"): 1.0, ("X", "x1"): 0.5}


def test_a_pass_tests_only_the_first_bf_max_job_test_jobs(workload):
    # bf_max_job_test=1: the pass tests the 16-CPU job at the head only (it waits for the running
    # job), so the small job behind it is not backfilled until the head has started
    s = site("SchedulerParameters=bf_interval=5,bf_max_job_test=1\n", max_jobs=None)
    w = workload([(0, 100, 100, 8), (1, 50, 50, 16), (2, 10, 10, 1)])
    starts = run(w, s, ["short"] * 3, [1, 2, 1], sched_cycle=0).schedule.sort_values("job_id")["start"].tolist()
    assert starts == [0, 100, 150]
    w = workload([(0, 100, 100, 8), (1, 50, 50, 16), (2, 10, 10, 1)])
    starts = run(w, s, ["short"] * 3, [1, 2, 1], sched_cycle=0, backfill_bound=5).schedule.sort_values("job_id")["start"].tolist()
    assert starts == [0, 100, 2]


def test_the_main_scheduler_at_events_starts_jobs_between_cycles_in_priority_order_only(workload):
    # with main_at_events, the job submitted at 7 on a free node starts at once; a small job
    # behind a blocked 16-CPU head is not started by the main pass (only by the next cycle's backfill)
    w = workload([(0, 3, 10, 1), (7, 3, 10, 1)])
    assert run(w, site(), ["short"] * 2, [1, 2], main_at_events=True).schedule.sort_values("job_id")["start"].tolist() == [0, 7]
    w = workload([(0, 100, 100, 8), (1, 50, 50, 16), (2, 10, 10, 1)])
    starts = run(w, site(max_jobs=None), ["short"] * 3, [1, 2, 1], main_at_events=True).schedule.sort_values("job_id")["start"].tolist()
    assert starts == [0, 100, 5]


def test_usage_accrues_and_decays_as_slurms_decay_thread_does(workload, monkeypatch):
    # PriorityDecayHalfLife 10 min: slurmctld's per-second factor d = 1 - 0.693/600. u1 runs 2 CPUs
    # from 0 to 90, u2 4 CPUs from 0 to 150 (u2's 16-CPU job waits, so the calculations go on
    # every 60 s). At 60: each running job adds CPU-seconds x d^60 (a period's new usage is itself
    # decayed: run_delta * pow(decay_factor, run_delta)). At 120: all usage decays by d^60; u1's
    # job, ended at 90, added 2 x 30 x d^30 at its end, decayed by d^60 too; u2 adds 4 x 60 x d^60.
    from engine.policies.slurm import SlurmPriorityQueue

    seen: dict[int, dict[str, float]] = {}
    accrue = SlurmPriorityQueue.accrue

    def recording(self, now):
        accrue(self, now)
        seen[now] = {user: usage for (_, user), usage in self.usages().items()}

    monkeypatch.setattr(SlurmPriorityQueue, "accrue", recording)
    s = site("PriorityDecayHalfLife=00:10:00\n", max_jobs=None)
    run(workload([(0, 90, 100, 2), (0, 150, 200, 4), (0, 10, 60, 16)]), s, ["long"] * 3, [1, 2, 2])
    d = 1 - 0.693 / 600
    assert seen[0] == {"u1": 0.0, "u2": 0.0}
    assert seen[60]["u1"] == pytest.approx(120 * d ** 60, rel=1e-12)
    assert seen[120]["u1"] == pytest.approx(120 * d ** 120 + 60 * d ** 90, rel=1e-12)
    assert seen[120]["u2"] == pytest.approx(240 * d ** 120 + 240 * d ** 60, rel=1e-12)


def test_calculations_missed_while_nothing_waited_are_caught_up(workload, monkeypatch):
    # u1 runs 2 CPUs from 0 to 200 and nothing waits until u2's 16-CPU job at 130: the replay
    # calculates again only then, but slurmctld's thread ran at 60 and 120 too, adding each
    # period's usage decayed by d^60: at 120, 120 d^60 x d^60 + 120 d^60 (not 240 d^120)
    from engine.policies.slurm import SlurmPriorityQueue

    seen: dict[int, float] = {}
    accrue = SlurmPriorityQueue.accrue

    def recording(self, now):
        accrue(self, now)
        seen[now] = self.usages()[("acct", "u1")]

    monkeypatch.setattr(SlurmPriorityQueue, "accrue", recording)
    s = site("PriorityDecayHalfLife=00:10:00\n", max_jobs=None)
    run(workload([(0, 200, 300, 2), (130, 10, 60, 16)]), s, ["long"] * 2, [1, 2])
    d = 1 - 0.693 / 600
    assert seen[60] == pytest.approx(120 * d ** 60, rel=1e-12)
    assert seen[120] == pytest.approx(120 * d ** 120 + 120 * d ** 60, rel=1e-12)
