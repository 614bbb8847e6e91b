"""Node-level placement: ppn per node, RAM, GPUs, exclusive nodes, cluster rules, windows, limits,
backfilling on clusters; and whole runs of the real wagap-2013 trace that never over-commit."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from engine.platform.machines import read_machines
from engine.platform.queues import load_queue_config, parse_queue_config
from engine.run import simulate
from engine.sim.nodes import REJECT_NO_CLUSTER, prepare, rows_by_first_appearance
from engine.workload import load_workload
from tests.engine.sim.node_invariants import violations
from tests.engine.sim.node_workloads import GB, machine, node_workload
from tests.shared_data import SHARED_DATA

DATA = (SHARED_DATA / "metacentrum/alea")


def starts(rows, machine_, policy="fcfs", **options):
    return simulate(node_workload(rows), None, policy, machine=machine_, **options).schedule


def test_ppn_cores_must_be_free_on_each_node():
    # 2 nodes x 4 cores. Job 0 takes 3 cores on each node; job 1 wants 2 cores on ONE node:
    # 2 cores are free in total (1 + 1) but no node has 2, so it waits for job 0 (ends at 10).
    schedule = starts([{"submit": 0, "runtime": 10, "nodes": 2, "ppn": 3},
                       {"submit": 0, "runtime": 5, "nodes": 1, "ppn": 2}], machine(("a", 2, 4, 0)))
    assert schedule["start"].tolist() == [0, 10]
    assert schedule["nodes"].tolist() == ["a-0;a-1", "a-0"]


def test_ram_per_node_is_a_limit():
    # one node, 8 cores, 16 GB: two 1-core jobs of 10 GB cannot share it
    schedule = starts([{"submit": 0, "runtime": 10, "mem": 10 * GB}, {"submit": 0, "runtime": 10, "mem": 10 * GB}],
                      machine(("a", 1, 8, 16 * GB)))
    assert schedule["start"].tolist() == [0, 10]


def test_gpus_per_node_are_a_limit():
    schedule = starts([{"submit": 0, "runtime": 10, "gpus": 2}, {"submit": 0, "runtime": 10, "gpus": 1}],
                      machine(("g", 1, 8, 0, 2)))
    assert schedule["start"].tolist() == [0, 10]


def test_an_exclusive_job_takes_whole_free_nodes():
    # job 0 (1 core) sits on node 0; the exclusive job 1 takes node 1 entirely, so job 2 (1 core)
    # still fits on node 0 but not on node 1
    schedule = starts([{"submit": 0, "runtime": 10}, {"submit": 0, "runtime": 20, "exclusive": True},
                       {"submit": 0, "runtime": 5}], machine(("a", 2, 4, 0)))
    assert schedule["nodes"].tolist() == ["a-0", "a-1", "a-0"]
    assert schedule["start"].tolist() == [0, 0, 0]
    assert schedule["alloc"].tolist() == [1, 1, 1]


def test_cluster_rules_and_the_cheapest_suitable_cluster():
    two = machine(("small", 1, 8, 16 * GB), ("big", 1, 32, 256 * GB))
    schedule = starts([{"submit": 0, "runtime": 1, "ppn": 2, "mem": 4 * GB},      # price 2 on both: file order
                       {"submit": 0, "runtime": 1, "ppn": 1, "mem": 8 * GB},      # cheaper on big (1 vs 4)
                       {"submit": 0, "runtime": 1, "ppn": 1, "clusters": "small"}], two)
    assert schedule["cluster"].tolist() == ["small", "big", "small"]


def test_jobs_no_cluster_can_run_are_rejected_and_counted():
    workload = node_workload([{"submit": 0, "runtime": 1, "ppn": 64}, {"submit": 0, "runtime": 1}])
    kept, _, rejected = prepare(workload, machine(("a", 2, 32, 0)))
    assert len(kept) == 1 and rejected == {REJECT_NO_CLUSTER: 1}


def test_a_cluster_that_appears_later_wakes_the_scheduler():
    # cluster b is available from t=50; the job needs b and nothing else happens before then
    schedule = starts([{"submit": 0, "runtime": 10, "clusters": "b"}], machine(("a", 1, 4, 0), ("b", 1, 4, 0, 0, 50)))
    assert schedule["start"].tolist() == [50]


def test_easy_backfills_around_the_reserved_nodes():
    # 2 nodes x 4 cores. Job 0 fills node 0 until 100. Job 1 (2 whole nodes) is the blocked head:
    # reserved at 100 on both nodes. Job 2 (ends at 1 + 50 = 51 <= 100) backfills on node 1;
    # job 3 (would end at 202 > 100, and both nodes are reserved) must wait until job 1 ends at 200.
    rows = [{"submit": 0, "runtime": 100, "ppn": 4}, {"submit": 1, "runtime": 100, "nodes": 2, "ppn": 4},
            {"submit": 1, "runtime": 50, "ppn": 4}, {"submit": 2, "runtime": 200, "ppn": 4}]
    schedule = starts(rows, machine(("a", 2, 4, 0)), "easy")
    assert schedule["start"].tolist() == [0, 100, 1, 200]


def test_easy_backfills_on_another_cluster_whatever_it_takes():
    # the head (job 1) can only use cluster a; job 2, longer than the reservation, runs on b at once
    rows = [{"submit": 0, "runtime": 100, "ppn": 4, "clusters": "a"},
            {"submit": 1, "runtime": 100, "ppn": 4, "clusters": "a"},
            {"submit": 2, "runtime": 500, "ppn": 4}]
    schedule = starts(rows, machine(("a", 1, 4, 0), ("b", 1, 4, 0)), "easy")
    assert schedule["start"].tolist() == [0, 100, 2]


def test_conservative_keeps_every_reservation():
    # as the EASY case, plus job 4 (submitted at 3, short): conservative gives every job a
    # reservation at arrival on core profiles, so job 3 is reserved after job 1 (at 200) and
    # job 4 (4 cores for 10 s) fits node 1 now without delaying anyone
    rows = [{"submit": 0, "runtime": 100, "ppn": 4}, {"submit": 1, "runtime": 100, "nodes": 2, "ppn": 4},
            {"submit": 1, "runtime": 50, "ppn": 4}, {"submit": 2, "runtime": 200, "ppn": 4},
            {"submit": 3, "runtime": 10, "ppn": 4}]
    schedule = starts(rows, machine(("a", 2, 4, 0)), "conservative")
    assert schedule["start"].tolist() == [0, 100, 1, 200, 51]


def test_per_user_running_job_limit():
    queues = parse_queue_config("queues:\n  - {name: q, walltime: 1d, user_max_jobs: 1}\n")
    rows = [{"submit": 0, "runtime": 10, "queue_name": "q", "user": 1},
            {"submit": 0, "runtime": 10, "queue_name": "q", "user": 1},
            {"submit": 0, "runtime": 10, "queue_name": "q", "user": 2}]
    schedule = starts(rows, machine(("a", 1, 8, 0)), "easy", queues=queues)
    # user 1's second job waits although 6 cores are free; user 2 is not held back by it
    assert schedule["start"].tolist() == [0, 10, 0]


def test_queue_core_limit_and_priority_mode():
    queues = parse_queue_config("""mode: priority
queues:
  - {name: low, walltime: 1d, priority: 10}
  - {name: high, walltime: 1d, priority: 90, max_cores: 4}
""")
    rows = [{"submit": 0, "runtime": 10, "ppn": 4, "queue_name": "high"},
            {"submit": 1, "runtime": 10, "ppn": 4, "queue_name": "low"},
            {"submit": 1, "runtime": 10, "ppn": 4, "queue_name": "high"},
            {"submit": 1, "runtime": 10, "ppn": 4, "queue_name": "low"}]
    schedule = starts(rows, machine(("a", 1, 8, 0)), "fairshare-fcfs", queues=queues)
    # at t=1 the high queue comes first, but its 4-core limit is held by job 0: job 2 is skipped
    # (not eligible) and job 1 from the low queue starts; at 10 job 2 goes before job 3 (priority)
    assert schedule["start"].tolist() == [0, 1, 10, 11]
    assert schedule["queue"].tolist() == ["high", "low", "high", "low"]


def test_speed_scaling_stretches_runtimes_on_slow_clusters():
    from engine.platform.machines import Cluster, Machine

    slow_fast = Machine((Cluster("slow", 1, 4, 0, speed=1.0), Cluster("fast", 1, 4, 0, speed=2.0)))
    rows = [{"submit": 0, "runtime": 100, "ppn": 4, "clusters": "slow"}]
    schedule = starts(rows, slow_fast, speed_scaling=True)
    assert schedule[["start", "end", "runtime"]].values.tolist() == [[0, 200, 200]]   # 100 x 2 / 1


@pytest.fixture(scope="module")
def wagap():
    return load_workload(DATA / "wagap-2013.swf"), read_machines(DATA / "wagap-2013.swf.machines")


@pytest.mark.slow
@pytest.mark.parametrize("policy, queues", [
    ("mrfs-easy", "metacentrum-2014"),
    ("mrfs-fcfs", "metacentrum-historical"),
    ("fairshare-easy", "metacentrum-historical"),
    ("fairshare-fcfs", "metacentrum-2014"),
    ("mrfs-conservative", "metacentrum-2014"),
])
def test_whole_wagap_runs_never_over_commit_nodes_or_limits(wagap, policy, queues):
    workload, machine_ = wagap
    config = load_queue_config(queues)
    result = simulate(workload, None, policy, machine=machine_, queues=config)
    simulated, _, _ = prepare(workload, machine_, queues=config)
    schedule = result.schedule
    # 17,898 jobs after cleaning: one no cluster can run, the others run or are refused at submission
    # for asking more than their queue's walltime (the only limit these setups set per job)
    refused = result.rejected_jobs
    assert len(schedule) + len(refused) == 17_898 and (refused["reason"] == "machine").sum() == 1
    assert set(refused["reason"]) <= {"machine", "walltime"} and len(schedule) > 17_800
    assert (schedule["start"] >= schedule["submit"]).all()
    assert violations(schedule, simulated.jobs, machine_, config) == []
    summary = result.meta["summary"]
    assert sum(q["jobs"] for q in summary["per_queue"].values()) == len(schedule)


@pytest.mark.parametrize("policy", ["fcfs", "mrfs-easy", "mrfs-conservative"])
@pytest.mark.parametrize("compiled", [True, False])
def test_cores_anywhere_hold_only_cores_on_nodes(policy, compiled, monkeypatch):
    """A request for cores anywhere (nodes = 0, as PBS's ``-l ncpus=6,mem=10gb`` without a select)
    carries the job's memory, GPUs and exclusive flag, but its cores may land on several nodes: only
    the cores are held there, and the schedule check counts it so (it failed on node RAM before)."""
    from engine.policies.heterogeneous import NodeEasy
    monkeypatch.setattr(NodeEasy, "compiled", compiled)
    rows = [{"submit": 0, "runtime": 100, "nodes": 0, "ppn": 0, "mem": 10 * GB, "gpus": 1},
            {"submit": 0, "runtime": 100, "nodes": 0, "ppn": 0, "mem": 10 * GB, "exclusive": True},
            {"submit": 0, "runtime": 100, "nodes": 0, "ppn": 0, "mem": 10 * GB},
            {"submit": 1, "runtime": 50, "nodes": 1, "ppn": 2, "mem": 6 * GB}]
    workload = node_workload(rows)
    workload.jobs["procs"] = [6, 6, 6, 2]
    result = simulate(workload, None, policy, machine=machine(("a", 2, 8, 16 * GB, 1)))

    schedule = result.schedule.sort_values("job_id")
    # 6 cores on a-0; 2 on a-0 + 4 on a-1; the third waits for 6 free cores; the last job's 2 cores
    # and 6 GB fit on a-1 beside the second's 4 cores (no RAM of the second held there): it
    # backfills at once, or under FCFS starts with the third
    assert schedule["start"].tolist() == [0, 0, 100, 100 if policy == "fcfs" else 1]
    assert result.meta["summary"]["validation"]["ok"]


def test_rows_by_first_appearance_number_groups_as_pandas_does():
    rng = np.random.default_rng(3)
    for n in (1, 2, 50, 2_000):
        keys = rng.integers(0, 3, size=(n, 4))
        codes, first = rows_by_first_appearance(keys)
        frame = pd.DataFrame(keys)
        expected = frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy()
        assert codes.tolist() == expected.tolist()
        assert first.tolist() == pd.Series(np.arange(n)).groupby(expected).first().tolist()


def test_rows_by_first_appearance_when_the_columns_do_not_fold_into_one_number():
    rng = np.random.default_rng(4)
    keys = np.concatenate([rng.integers(0, 2 ** 40, size=(300, 3)), rng.integers(0, 2, size=(300, 1))], axis=1)
    keys[150:] = keys[:150]          # repeated rows
    codes, first = rows_by_first_appearance(keys)
    frame = pd.DataFrame(keys)
    expected = frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy()
    assert codes.tolist() == expected.tolist() and codes.max() == 149
    assert first.tolist() == list(range(150))


def allocator_state(allocator) -> dict:
    """What NodeAllocator works out from the jobs (the request classes and what follows from them)."""
    return {"class_of": allocator.class_of.tolist(), "requests": allocator.requests,
            "class_clusters": allocator.class_clusters, "class_penalty": allocator.class_penalty.tolist(),
            "class_mask": allocator.class_mask, "job_cores": allocator.job_cores, "job_queue": allocator.job_queue,
            "job_pair": allocator.job_pair, "queue_room": allocator.queue_room,
            "pair_jobs_room": allocator.pair_jobs_room, "pair_cores_room": allocator.pair_cores_room,
            "queue_of": None if allocator.queue_of is None else allocator.queue_of.tolist()}


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("with_queues", [False, True])
def test_prepare_keeps_the_request_classes_it_worked_out_for_the_jobs_it_keeps(seed, with_queues):
    """prepare() builds the allocator for the kept jobs from the request classes it worked out for all
    of them (without queues: RequestClasses.kept; with queues: each class in its admitted queue, the
    pool applied): the same as working them out from the kept jobs alone, in the queues admission gave them."""
    from engine.sim.nodes import NodeAllocator
    from tests.engine.sim.test_node_speedups import LIMITS

    rng = np.random.default_rng(seed)
    rows = [{"submit": int(t), "runtime": 60, "requested": int(rng.choice([600, 7200, 90_000])),
             "nodes": int(rng.choice([1, 1, 2, 5])), "ppn": int(rng.choice([1, 4, 8, 64])),
             "mem": int(rng.choice([1, 2, 64])) * GB, "gpus": int(rng.random() < 0.1),
             "user": int(rng.integers(0, 5)), "clusters": "b" if rng.random() < 0.2 else "",
             "queue_name": str(rng.choice(["short", "long", "", "nosuch"]))} for t in range(200)]
    workload = node_workload(rows)
    machine_ = machine(("a", 4, 8, 16 * GB), ("b", 2, 16, 32 * GB, 1))
    queues = LIMITS if with_queues else None
    kept, allocator, rejected = prepare(workload, machine_, queues=queues)
    assert 0 < rejected[REJECT_NO_CLUSTER] < len(rows)     # some jobs fit nowhere (64 cores, 5 nodes, 64 GB)
    afresh = NodeAllocator(machine_, kept, queues=queues, queue_of=allocator.queue_of)
    assert allocator_state(allocator) == allocator_state(afresh)
    assert len(kept) + len(allocator.rejected_jobs) == len(rows)          # every job kept or listed
