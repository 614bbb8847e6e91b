"""The ``slurm`` queue's order kept with its int64 keys (slurmkernels.keyed_merge): the jobs that left
filtered out and the arrivals merged in give the order the long way (_merged, or a full sort) gives,
on random queues full of ties, as the head a main pass walks (keyed_head) gives its first jobs; and a
whole run gives the same schedule and pending reasons with and without them."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from engine.platform.slurmconf import Association, Qos, SlurmSite, parse_slurm_conf
from engine.policies import slurm, slurmkernels
from engine.policies.slurm import SlurmPriorityQueue
from engine.run import simulate


def bare_queue(n: int, tiers: list[int], high: int) -> SlurmPriorityQueue:
    """A queue with only what the order's sorting and merging read."""
    queue = SlurmPriorityQueue.__new__(SlurmPriorityQueue)
    queue.sim = SimpleNamespace(n=n)     # type: ignore[assignment]
    ranks = sorted(set(tiers), reverse=True)
    queue.tier_rank = np.array([ranks.index(t) for t in tiers], dtype=np.int64)
    queue.tiers = len(ranks)
    queue.key_high = high
    queue.submit = np.arange(n, dtype=np.int64)
    return queue


def naive(jobs: list[int], priority: dict[int, int], rank: np.ndarray) -> list[int]:
    return sorted(jobs, key=lambda j: (int(rank[j]), -priority[j], j))


def keyed_merge(queue, order, priority, keys, arrived, arrived_priority, member=None):
    left = member is not None
    member = member if left else np.ones(queue.sim.n, dtype=bool)
    return slurmkernels.keyed_merge(order, priority, keys, member, left, arrived, arrived_priority, queue.tier_rank,
                                    queue.key_high, queue.sim.n)


@pytest.mark.parametrize("seed", range(40))
def test_an_arrivals_merge_is_the_long_merge_and_the_naive_sort(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 300)
    high = rng.choice([3, 10, 100_000])
    tiers = [rng.choice([1, 1, 1, 5, 9]) for _ in range(n)]
    queue = bare_queue(n, tiers, high)
    values = [rng.randint(0, high) for _ in range(4)]       # few distinct priorities: many ties
    priority = {j: rng.choice(values + [rng.randint(0, high)]) for j in range(n)}
    jobs = list(range(n))
    rng.shuffle(jobs)
    cut = rng.randint(0, n - 1)
    waiting, arrived = jobs[:cut], jobs[cut:]
    order = np.array(naive(waiting, priority, queue.tier_rank), dtype=np.int64)
    order_priority = np.array([priority[j] for j in order.tolist()], dtype=np.int64)
    keys = queue._keyed(order, order_priority)
    assert keys is not None
    new = np.array(arrived, dtype=np.int64)
    new_priority = np.array([priority[j] for j in arrived], dtype=np.int64)
    kept, *inserted = keyed_merge(queue, order, order_priority, keys, new, new_priority)
    merged = queue._merged(order, order_priority, new, new_priority)
    assert kept and merged is not None
    assert inserted[0].tolist() == merged[0].tolist() == naive(jobs, priority, queue.tier_rank)
    assert inserted[1].tolist() == merged[1].tolist()
    expected_keys = queue._keyed(inserted[0], inserted[1])
    assert expected_keys is not None and inserted[2].tolist() == expected_keys.tolist()


@pytest.mark.parametrize("seed", range(20))
def test_the_merge_drops_the_jobs_that_left_as_the_naive_sort_of_those_waiting(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 200)
    queue = bare_queue(n, [rng.choice([1, 2]) for _ in range(n)], 50)
    priority = {j: rng.randint(0, 50) for j in range(n)}
    jobs = list(range(n))
    rng.shuffle(jobs)
    cut = rng.randint(0, n)
    waiting, arrived = jobs[:cut], jobs[cut:cut + rng.choice([0, 1, 3])]
    member = np.zeros(n, dtype=bool)
    still = [j for j in waiting if rng.random() < 0.6] + arrived
    member[still] = True
    order = np.array(naive(waiting, priority, queue.tier_rank), dtype=np.int64)
    order_priority = np.array([priority[j] for j in order.tolist()], dtype=np.int64)
    keys = queue._keyed(order, order_priority)
    kept, merged, merged_priority, merged_keys = keyed_merge(
        queue, order, order_priority, keys, np.array(arrived, dtype=np.int64),
        np.array([priority[j] for j in arrived], dtype=np.int64), member)
    assert kept and merged.tolist() == naive(still, priority, queue.tier_rank)
    assert merged_priority.tolist() == [priority[j] for j in merged.tolist()]
    assert merged_keys.tolist() == queue._keyed(merged, merged_priority).tolist()


@pytest.mark.parametrize("seed", range(30))
def test_a_passs_head_is_the_first_jobs_of_the_merge_and_of_the_naive_sort(seed):
    """Jobs of the order and jobs queued since may have left (started from an earlier head): the head
    of ``depth`` jobs skips them, as the whole merge later does."""
    rng = random.Random(seed)
    n = rng.randint(2, 200)
    queue = bare_queue(n, [rng.choice([1, 1, 3]) for _ in range(n)], 40)
    priority = {j: rng.randint(0, 40) for j in range(n)}
    jobs = list(range(n))
    rng.shuffle(jobs)
    cut = rng.randint(0, n)
    waiting, arrived = jobs[:cut], jobs[cut:cut + rng.choice([0, 1, 2, 5])]
    still = [j for j in waiting + arrived if rng.random() < 0.7]
    member = np.zeros(n, dtype=bool)
    member[still] = True
    order = np.array(naive(waiting, priority, queue.tier_rank), dtype=np.int64)
    order_priority = np.array([priority[j] for j in order.tolist()], dtype=np.int64)
    keys = queue._keyed(order, order_priority)
    new = np.array(arrived, dtype=np.int64)
    new_priority = np.array([priority[j] for j in arrived], dtype=np.int64)
    expected = naive(still, priority, queue.tier_rank)
    for depth in (0, 1, 3, 100, 1000):
        kept, head = slurmkernels.keyed_head(order, keys, member, new, new_priority, queue.tier_rank, queue.key_high,
                                             n, depth)
        assert kept and head.tolist() == expected[:depth]
    left = [j for j in arrived if member[j]]         # (the queue drops the arrivals that left before the merge)
    kept, merged, _, _ = keyed_merge(queue, order, order_priority, keys, np.array(left, dtype=np.int64),
                                     np.array([priority[j] for j in left], dtype=np.int64), member)
    assert kept and merged.tolist() == expected
    outside = slurmkernels.keyed_head(order, keys, member, np.array([0]), np.array([41]), queue.tier_rank,
                                      queue.key_high, n, 10)
    assert not outside[0] and len(outside[1]) == 0


def test_the_merge_gives_way_outside_its_key_space():
    queue = bare_queue(6, [1] * 6, 10)
    order, priority = np.array([0, 1, 2], dtype=np.int64), np.array([9, 5, 5], dtype=np.int64)
    keys = queue._keyed(order, priority)
    assert keys is not None
    for outside in (11, -1):        # above key_high, below 0: nothing is changed
        kept, same, same_priority, same_keys = keyed_merge(queue, order, priority, keys, np.array([3]),
                                                           np.array([outside]), np.zeros(6, dtype=bool))
        assert not kept and same is order and same_priority is priority and same_keys is keys
    assert queue._keyed(order, np.array([9, 5, 11])) is None
    assert queue._keyed(np.array([1, 0]), np.array([5, 5])) is None     # not by job number within a tie


def site() -> SlurmSite:
    conf = parse_slurm_conf("NodeName=n[1-2] CPUs=8\nPriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
                            "PriorityWeightPartition=2000\nPriorityWeightFairshare=3000\nPriorityMaxAge=00:10:00\n"
                            "PriorityCalcPeriod=60\nAccountingStorageEnforce=limits\n"
                            "SchedulerParameters=bf_interval=30,sched_interval=20,bf_max_job_test=7\n"
                            "PartitionName=short Nodes=n1 Default=YES PriorityJobFactor=2\n"
                            "PartitionName=long Nodes=n[1-2] PriorityJobFactor=1\n"
                            "PartitionName=top Nodes=n2 PriorityJobFactor=1 PriorityTier=2\n", "t.conf")
    return SlurmSite(conf, qos={"normal": Qos("normal", max_jobs_per_user=4)},
                     associations=[Association("c", "acct", shares=1)] +
                                  [Association("c", "acct", f"u{u}") for u in range(1, 5)])


@pytest.mark.parametrize("seed", range(4))
def test_a_run_with_the_insert_is_the_run_without_it(workload, monkeypatch, seed):
    rng = random.Random(seed)
    rows = [(rng.choice([0, 5, 5, 40, 41, 90]) + 13 * (i // 6), rng.randint(1, 200), 200, rng.choice([1, 2, 4, 8]))
            for i in range(90)]
    calls = {"keyed_merge": 0, "keyed_head": 0}
    kernels = {name: getattr(slurmkernels, name) for name in calls}

    def counted(name):
        def call(*args):
            result = kernels[name](*args)
            calls[name] += bool(result[0])
            return result
        return call

    def schedule() -> pd.DataFrame:
        w = workload(rows)
        w.jobs["queue_name"] = parts
        w.jobs["account"] = "acct"
        w.jobs["user"] = users
        w.metadata["user_names"] = {str(u): f"u{u}" for u in range(1, 5)}
        result = simulate(w, 16, {"preset": "slurm", "params": {}}, context={"slurm_site": site()})
        assert result.meta["summary"]["validation"]["ok"]
        return result.schedule

    parts = [rng.choice(["short", "long", "top"]) for _ in rows]
    users = [rng.randint(1, 4) for _ in rows]
    for name in calls:
        monkeypatch.setattr(slurmkernels, name, counted(name))
    fast = schedule()
    assert calls["keyed_merge"] > 0 and calls["keyed_head"] > 0    # the kept order and the heads served this run
    monkeypatch.setattr(slurmkernels, "keyed_merge", lambda order, priority, keys, *args: (False, order, priority, keys))
    monkeypatch.setattr(slurmkernels, "keyed_head", lambda order, *args: (False, order[:0]))
    plain = schedule()
    assert "slurm_reason" in fast.columns
    pd.testing.assert_frame_equal(fast, plain)


@pytest.mark.parametrize("seed", range(20))
def test_a_few_jobs_priorities_job_by_job_are_the_arrays(seed):
    rng = np.random.default_rng(seed)
    n = 50
    queue = SlurmPriorityQueue.__new__(SlurmPriorityQueue)
    weights = rng.choice([0.0, 1.0, 1000.0, 12345.678, 1e6, 3e9], size=7)
    queue.weights = dict(zip(("age", "assoc", "fairshare", "jobsize", "partition", "qos", "tres"), weights.tolist()))
    queue.max_age = float(rng.choice([0, 600, 604800, 7.5]))
    queue.submit = rng.integers(0, 10_000, n)
    queue.static_factors = tuple(rng.random(n) for _ in range(4))
    queue.tres = rng.random(n) * 5000
    queue.pair_index = rng.integers(0, 7, n)
    queue.pair_fairshare = rng.random(7)
    queue.factors_due = False
    queue.calculated = int(rng.integers(0, 10_000)) if seed % 4 else None
    queue.sim = SimpleNamespace(now=10_000)     # type: ignore[assignment]
    for size in range(1, 9):
        jobs = rng.choice(n, size=size, replace=False).astype(np.int64)
        at = queue.calculated if queue.calculated is not None else 10_000
        arrays = queue.computed(jobs, np.where(queue.submit[jobs] > at, queue.submit[jobs], at))
        few = queue._priorities(jobs, 10_000)
        assert few.dtype == np.int64 and few.tolist() == arrays.tolist()


def hand_queue() -> SlurmPriorityQueue:
    """Three jobs, submitted at 0, 100 and 700; PriorityMaxAge 600 s; weights age 1000, fair-share 10000,
    job size 100, partition 10, QOS 1."""
    queue = SlurmPriorityQueue.__new__(SlurmPriorityQueue)
    queue.weights = {"age": 1000.0, "fairshare": 10000.0, "jobsize": 100.0, "partition": 10.0, "qos": 1.0}
    queue.max_age = 600.0
    queue.submit = np.array([0, 100, 700], dtype=np.int64)
    queue.static_factors = (np.array([0.5, 0.25, 1.0]), np.array([1.0, 0.5, 0.0]), np.array([1.0, 0.0, 0.0]),
                            np.zeros(3))
    queue.tres = np.zeros(3)
    queue.pair_index = np.array([0, 1, 1], dtype=np.int64)
    queue.pair_fairshare = np.array([0.25, 0.125])
    queue.factors_due = False
    return queue


def test_the_priority_formula_by_hand_job_by_job_and_in_arrays():
    """At 400: job 0 is 400 s old (age 1000 x 400/600 = 666.67), fair-share 10000 x 0.25 = 2500, size 50,
    partition 10, QOS 1: 3227.67 -> 3227; job 1 (300 s: 500) + 1250 + 25 + 5 = 1780; job 2 submitted
    after 400: age 0, 1250 + 100 = 1350."""
    queue = hand_queue()
    jobs = np.array([0, 1, 2], dtype=np.int64)
    assert queue._few(jobs, 400).tolist() == [3227, 1780, 1350]
    assert queue.computed(jobs, np.array([400, 400, 700])).tolist() == [3227, 1780, 1350]
    assert queue.computed(jobs, None).tolist() == [2561, 1280, 1350]    # no age


def test_one_definition_of_the_formula_serves_both_ways(monkeypatch):
    """The job-by-job prices and the arrays' both go through slurm.weighted_sum and slurm.age_factor:
    a change of the formula there changes both (here: the age weighed twice)."""
    formula = slurm.weighted_sum

    def doubled_age(weights, factors, start=0.0):
        return formula(weights, {**factors, "age": factors["age"] * 2}, start)

    monkeypatch.setattr(slurm, "weighted_sum", doubled_age)
    queue = hand_queue()
    jobs = np.array([0, 1], dtype=np.int64)
    assert queue._few(jobs, 400).tolist() == [3894, 2280]
    assert queue.computed(jobs, np.array([400, 400])).tolist() == [3894, 2280]


def test_a_job_queued_again_drops_the_keys():
    queue = bare_queue(6, [1] * 6, 10)
    queue.limits = SimpleNamespace(never=lambda j: None, at_submit=lambda j: None,     # type: ignore[assignment]
                                   submitted=lambda j: None)
    queue.reasons = SimpleNamespace(queued=lambda j, code: None)     # type: ignore[assignment]
    queue._submission_reason = lambda j: 0      # type: ignore[method-assign]
    queue.member, queue.queued, queue.waiting, queue.arrived = np.zeros(6, bool), np.zeros(6, bool), 0, []
    keys = queue._keyed(np.array([0, 1]), np.array([5, 5]))
    queue.order_keys = keys
    queue.add(3)
    assert queue.order_keys is keys and queue.arrived == [3]
    queue.add(3)
    assert queue.order_keys is None
