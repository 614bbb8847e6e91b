"""Fair-share orderings: the multi-resource penalty by hand, who goes first, decay, the series."""

from __future__ import annotations

import pytest

from engine.policies.fairshare import FairShareAccount, priority_series
from engine.run import simulate
from engine.sim.nodes import NodeAllocator
from tests.engine.sim.node_workloads import GB, machine, node_workload

# Two node types: A = 8 cores / 16 GB, B = 32 cores / 256 GB.
TWO_CLUSTERS = machine(("A", 1, 8, 16 * GB), ("B", 1, 32, 256 * GB))


@pytest.mark.parametrize("ppn, mem_gb, expected", [
    # 1 core, 32 GB: A cannot hold it (16 GB); B: max(1/32, 32/256) * 32 = 0.125 * 32 = 4
    (1, 32, 4.0),
    # 2 cores, 4 GB: A: max(2/8, 4/16) * 8 = 0.25 * 8 = 2; B: max(2/32, 4/256) * 32 = 2 -> 2
    (2, 4, 2.0),
    # 1 core, 8 GB: A: max(1/8, 8/16) * 8 = 4; B: max(1/32, 8/256) * 32 = 1 -> 1 (B is cheaper)
    (1, 8, 1.0),
    # 8 cores, no memory: A: 8; B: 8 -> 8 (the CPU-only penalty)
    (8, 0, 8.0),
    # 1 core, 200 GB: B only: max(1/32, 200/256) * 32 = 25
    (1, 200, 25.0),
])
def test_multi_resource_penalty_worked_by_hand(ppn, mem_gb, expected):
    workload = node_workload([{"submit": 0, "runtime": 1, "ppn": ppn, "mem": mem_gb * GB}])
    allocator = NodeAllocator(TWO_CLUSTERS, workload)
    assert allocator.class_penalty[allocator.class_of[0]] == pytest.approx(expected)


def contest(policy: str):
    """User 1 ran a RAM-heavy job (1 core, 200 GB: P = 25), user 2 a CPU job (4 cores, 1 GB: P = 4),
    both for 100 s. Then both want the whole of B; user 2 asked first (job 2 before job 3)."""
    workload = node_workload([
        {"submit": 0, "runtime": 100, "ppn": 1, "mem": 200 * GB, "user": 1},
        {"submit": 0, "runtime": 100, "ppn": 4, "mem": 1 * GB, "user": 2},
        {"submit": 10, "runtime": 100, "ppn": 32, "user": 2},
        {"submit": 10, "runtime": 100, "ppn": 32, "user": 1},
    ])
    return simulate(workload, None, policy, machine=TWO_CLUSTERS).schedule


def test_cpu_fair_share_favours_the_ram_heavy_user():
    # CPU time at t=100: user 1 = 1 core x 100 s = 100, user 2 = 4 x 100 = 400 -> user 1's job 3 first
    schedule = contest("fairshare-fcfs")
    assert schedule["start"].tolist() == [0, 0, 200, 100]


def test_multi_resource_fair_share_charges_the_ram():
    # usage at t=100: user 1 = 25 x 100 = 2500, user 2 = 4 x 100 = 400 -> user 2's job 2 first
    schedule = contest("mrfs-fcfs")
    assert schedule["start"].tolist() == [0, 0, 100, 200]
    assert schedule["fairshare_weight"].tolist() == [25.0, 4.0, 32.0, 32.0]


def test_fair_share_works_on_a_homogeneous_machine_too(workload):
    # 2 processors. User 5 runs 0-100 on both; at t=100 user 5 has 2 x 100 = 200, user 6 has 0,
    # so user 6's job (submitted last) starts first.
    jobs = workload([(0, 100, 100, 2), (10, 10, 10, 2), (20, 10, 10, 2)], users=[5, 5, 6])
    schedule = simulate(jobs, 2, "fairshare-easy").schedule
    assert schedule["start"].tolist() == [0, 110, 100]


def account(**options) -> FairShareAccount:
    weights = {0: 1.0, 1: 2.0}
    return FairShareAccount(weights.__getitem__, [7, 7], [0, 0], origin=0,
                            decay_hours=options.get("decay_hours", 1.0), decay_factor=0.5,
                            charge_running=options.get("charge_running", False))


def test_usage_is_halved_at_every_decay():
    fair = account()
    fair.finished(0, 1000)            # weight 1 x (1000 - 0) s = 1000
    fair.advance(7200)                # halved at 3600 and at 7200
    assert fair.value(7, 7200) == 250.0
    assert [(t, v) for t, _, v in fair.series] == [(1000, 1000.0), (3600, 500.0), (7200, 250.0)]


def test_running_jobs_can_be_charged_as_they_run():
    fair = account(charge_running=True)
    fair.started(1, 0)                              # weight 2
    assert fair.value(7, 1800) == 3600.0            # 2 x 1800 s so far
    fair.finished(1, 5400)                          # 2 x 3600 = 7200, halved at 3600 -> 3600; + 2 x 1800
    assert fair.value(7, 5400) == 7200.0


def test_the_series_rebuilt_from_a_schedule_is_the_one_of_the_run():
    result_schedule = contest("mrfs-fcfs")
    series = priority_series(result_schedule, decay_hours=72, decay_factor=0.5)
    by_user = series.groupby("user")["usage"].last().to_dict()
    # user 1: 25 x 100 + 32 x 100 = 5700; user 2: 4 x 100 + 32 x 100 = 3600 (no decay within 72 h)
    assert by_user == {1: 5700.0, 2: 3600.0}
