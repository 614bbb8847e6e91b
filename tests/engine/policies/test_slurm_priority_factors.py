"""The multifactor priority's TRES, association and job size factors and the PriorityFlags that change
them, each worked by hand from Slurm 22.05's priority_multifactor.c (set_priority_factors,
_get_tres_factors, _get_priority_internal) and assoc_mgr.c (_set_assoc_norm_priority)."""

from __future__ import annotations

import pytest

from engine.platform.slurmconf import Association, Qos, SlurmSite, parse_slurm_conf, unfollowed_keys
from engine.policies.slurm import association_priorities, job_size_factor, tres_factors

from .test_slurm_rules import run, starts

# two partitions: big (n[1-2], 2 x 8 CPUs, 2 x 16000 MB, 2 GPUs on n2) and small (n1 alone)
NODES = "NodeName=n1 CPUs=8 RealMemory=16000\nNodeName=n2 CPUs=8 RealMemory=16000 Gres=gpu:2\n"
PARTS = "PartitionName=big Nodes=n[1-2] Default=YES\nPartitionName=small Nodes=n1\n"


def conf(extra: str = ""):  # noqa: ANN201
    return parse_slurm_conf(NODES + PARTS + extra, "t.conf")


def test_tres_factors_are_each_tres_over_the_partitions_total_times_its_weight():
    # job 0 in big: 4 CPUs of 16 x 1000 = 250, 8000 MB of 32000 x 2000 = 500, 1 GPU of 2 x 3000 = 1500: 2250;
    # job 1 in small: 4 of 8 CPUs x 1000 = 500, 8000 of 16000 MB x 2000 = 1000, no GPU there: 1500
    c = conf("PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000\n")
    counts = {"cpu": [4, 4], "mem": [8000, 8000], "node": [1, 1], "billing": [4, 4], "gres/gpu": [1, 0]}
    assert tres_factors(c, ["big", "small"], counts, raw=False) == [2250.0, 1500.0]
    # NO_NORMAL_TRES: the counts themselves: 4 x 1000 + 8000 x 2000 + 1 x 3000
    assert tres_factors(c, ["big", "small"], counts, raw=True) == [16_007_000.0, 16_004_000.0]


def test_billing_is_the_cpus_without_billing_weights_and_no_weight_no_factor():
    c = conf("PriorityWeightTRES=billing=800,node=100\n")
    counts = {"cpu": [16], "mem": [0], "node": [2], "billing": [16], "gres/gpu": [0]}
    assert tres_factors(c, ["big"], counts, raw=False) == [100.0 + 800.0]     # node 2/2 x 100, billing 16/16 x 800
    assert tres_factors(conf(), ["big"], counts, raw=False) == [0.0]


def test_association_factor_is_its_priority_over_the_largest_inherited_from_its_account():
    site = SlurmSite(conf(), associations=[
        Association("c", "phys", priority=100), Association("c", "phys", "u1", priority=400),
        Association("c", "phys", "u2"), Association("c", "chem", "u3")])
    # u1's own 400 of 400; u2 inherits phys's 100; u3 has none anywhere: 0
    assert association_priorities(site, ["phys", "phys", "chem"], ["u1", "u2", "u3"], ["big"] * 3, raw=False) == \
        [1.0, 0.25, 0.0]
    assert association_priorities(site, ["phys", "phys"], ["u1", "u2"], ["big"] * 2, raw=True) == [400.0, 100.0]


@pytest.mark.parametrize("favor_small, expected", [(False, 0.25), (True, 0.75)])
def test_small_relative_to_time_is_cpus_per_minute_of_the_limit_over_the_clusters_cpus(favor_small, expected):
    # 8 CPUs, 2 minutes, on 16 CPUs: 8 / 2 / 16 = 0.25; one node's share of the CPUs (8) is not more
    assert job_size_factor(8, 1, 16, 2, favor_small, relative_minutes=2) == expected
    # two nodes' share (16 CPUs) counts where it is more than the job's CPUs: 16 / 4 / 16
    assert job_size_factor(2, 2, 16, 2, False, relative_minutes=4) == 0.25
    assert job_size_factor(64, 1, 16, 2, False, relative_minutes=1) == 1.0      # at most 1


def test_a_large_tres_weight_puts_the_wider_job_first(workload):
    # A (16 CPUs) runs until 100; B (8 CPUs, submitted at 1) and C (16 CPUs, at 2) wait, no backfill.
    # Without TRES weights B (older) is first at 100 and C, which no longer fits, waits for B's end
    # (150); with PriorityWeightTRES=CPU=100000, C's 16/16 x 100000 beats B's 8/16 x 100000: C at
    # 100, B after it (150)
    text = NODES + PARTS + ("AccountingStorageEnforce=associations\nPriorityType=priority/multifactor\n"
                            "PriorityWeightAge=1000\nPriorityMaxAge=00:20:00\nPriorityCalcPeriod=1\n"
                            "SchedulerParameters=bf_interval=1000\n")
    rows = [(0, 100, 100, 16), (1, 50, 50, 8), (2, 50, 50, 16)]

    def replay(extra: str) -> dict[int, int]:
        site = SlurmSite(parse_slurm_conf(text + extra, "t.conf"), qos={"normal": Qos("normal")},
                         associations=[Association("c", "acct", shares=1), Association("c", "acct", "u1")])
        return starts(run(workload, rows, site, partitions=["big"] * 3, sched_interval=10))

    assert replay("") == {1: 0, 2: 100, 3: 150}
    assert replay("PriorityWeightTRES=CPU=100000\n") == {1: 0, 2: 150, 3: 100}


def test_priority_flags_not_followed_are_listed_with_why():
    site = SlurmSite(conf("PriorityFlags=SMALL_RELATIVE_TO_TIME,INCR_ONLY,MAX_TRES,DEPTH_OBLIVIOUS\n"
                          "PriorityWeightTRES=CPU=10,Energy=5\n"))
    listed = [key for key in unfollowed_keys(site) if key.startswith("Priority")]
    assert [key.split(" (")[0] for key in listed] == ["PriorityWeightTRES energy=5", "PriorityFlags INCR_ONLY",
                                                      "PriorityFlags MAX_TRES", "PriorityFlags DEPTH_OBLIVIOUS"]


FLAGS_CONF = ("NodeName=n1 CPUs=16\nPartitionName=x Nodes=n1 PriorityJobFactor=3\n"
              "PartitionName=y Nodes=n1 Default=YES PriorityJobFactor=1\nAccountingStorageEnforce=associations\n"
              "PriorityType=priority/multifactor\nPriorityMaxAge=00:20:00\nPriorityCalcPeriod=1\n"
              "SchedulerParameters=bf_interval=1000\n")


def flagged_run(workload, rows, extra: str, partitions: list[str]) -> dict[int, int]:  # noqa: ANN001
    site = SlurmSite(parse_slurm_conf(FLAGS_CONF + extra, "t.conf"), qos={"normal": Qos("normal")},
                     associations=[Association("c", "acct", shares=1), Association("c", "acct", "u1")])
    return starts(run(workload, rows, site, partitions=partitions, sched_interval=10))


# NO_NORMAL_PART: A holds the node until 700; Y (partition y, factor 1) at 10, X (x, factor 3) at 610.
# At the calculation of 660: Y age 650 s x 1500/1200 = 812.5, X 62.5. Normalised (x 1, y 1/3, weight
# 1000): Y 1145.8 > X 1062.5; raw (3 and 1): X 3062.5 > Y 1812.5
RAW_PARTITION = ([(0, 700, 700, 16), (10, 100, 100, 16), (610, 100, 100, 16)], ["y", "y", "x"],
                 "PriorityWeightAge=1500\nPriorityWeightPartition=1000\n")
# SMALL_RELATIVE_TO_TIME: A holds the node until 100; J1 (16 CPUs, 60 min) at 1, J2 (16 CPUs, 2 min) at 2:
# the same size factor, J1 first by age; relative to time J2's 16 / 2 / 16 = 0.5 beats J1's 16 / 60 / 16
RELATIVE = ([(0, 100, 100, 16), (1, 50, 3600, 16), (2, 50, 120, 16)], ["y", "y", "y"],
            "PriorityWeightAge=10\nPriorityWeightJobSize=1000\n")


@pytest.mark.parametrize("case, flags, expected", [
    (RAW_PARTITION, "", {1: 0, 2: 700, 3: 800}), (RAW_PARTITION, "PriorityFlags=NO_NORMAL_PART\n", {1: 0, 2: 800, 3: 700}),
    (RELATIVE, "", {1: 0, 2: 100, 3: 150}), (RELATIVE, "PriorityFlags=SMALL_RELATIVE_TO_TIME\n", {1: 0, 2: 150, 3: 100}),
])
def test_priority_flags_change_which_job_goes_first(workload, case, flags, expected):
    rows, partitions, weights = case
    assert flagged_run(workload, rows, weights + flags, partitions) == expected
