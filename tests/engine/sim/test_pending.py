"""Pending reasons (engine.sim.pending): what held each waiting job, worked by hand on small runs;
the pool run's numpy path against the kernel; held times always add up to the wait."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from engine.platform.queues import parse_queue_config
from engine.run import simulate
from engine.sim.pending import HELD_COLUMNS, HELD_REASONS
from engine.workload.model import Workload
from tests.engine.sim.node_workloads import (GB, QUEUES, bursty_node_workload, machine, node_workload,
                                             windowed_machine)


def held(result) -> list[dict]:
    """Per job (by job_id): the reasons it was held by, in seconds (zeros left out), and held_by."""
    schedule = result.schedule.sort_values("job_id")
    rows = []
    for _, row in schedule.iterrows():
        rows.append({reason: int(row[f"held_{reason}"]) for reason in HELD_REASONS if row[f"held_{reason}"]}
                    | ({"by": row["held_by"]} if row["held_by"] else {}))
    return rows


def test_the_queue_core_limit_holds_a_job_although_nodes_are_free():
    # 2 nodes x 4 cores; q may hold 4 cores: job 1 waits for job 0 although node 1 is free
    rows = [{"submit": 0, "runtime": 100, "ppn": 4, "queue_name": "q"},
            {"submit": 0, "runtime": 50, "ppn": 4, "queue_name": "q"}]
    result = simulate(node_workload(rows), None, "fcfs", machine=machine(("a", 2, 4, 0)),
                      queues=parse_queue_config("queues:\n  - {name: q, walltime: 1h, max_cores: 4}\n"))
    assert held(result) == [{}, {"queue_limit": 100, "by": "queue_limit"}]
    summary = result.meta["summary"]["pending"]
    assert summary["per_queue"] == {"q": {"queue_limit": round(100 / 3600, 3), "user_limit": 0.0, "pool": 0.0,
                                          "resources": 0.0, "priority": 0.0}}
    assert summary["jobs"]["queue_limit"] == 1


def test_per_user_limits_hold_only_that_users_jobs():
    # user 1 may run one job in q: its second waits 100 s; user 2's job starts at once beside them
    rows = [{"submit": 0, "runtime": 100, "user": 1, "queue_name": "q"},
            {"submit": 0, "runtime": 100, "user": 1, "queue_name": "q"},
            {"submit": 0, "runtime": 100, "user": 2, "queue_name": "q"}]
    result = simulate(node_workload(rows), None, "easy", machine=machine(("a", 1, 8, 0)),
                      queues=parse_queue_config("queues:\n  - {name: q, walltime: 1h, user_max_jobs: 1}\n"))
    assert held(result) == [{}, {"user_limit": 100, "by": "user_limit"}, {}]
    per_user = result.meta["summary"]["pending"]["per_user"]
    assert list(per_user) == ["1"] and per_user["1"]["user_limit"] == round(100 / 3600, 3)


def test_resources_then_priority_under_fcfs():
    # one node of 4 cores. Job 0 (3 cores) runs 0-100; job 1 (4 cores) has no room until 100, then
    # runs 100-200; job 2 (1 core) has room until 100 (one core free) but waits behind job 1 (FCFS):
    # priority 0-100, then resources 100-200 (job 1 holds all 4 cores); held_by: a tie goes to the
    # reason checked first
    rows = [{"submit": 0, "runtime": 100, "ppn": 3}, {"submit": 0, "runtime": 100, "ppn": 4},
            {"submit": 0, "runtime": 10, "ppn": 1}]
    result = simulate(node_workload(rows), None, "fcfs", machine=machine(("a", 1, 4, 0)))
    assert held(result) == [{}, {"resources": 100, "by": "resources"},
                            {"priority": 100, "resources": 100, "by": "resources"}]


def test_room_is_counted_node_by_node():
    # 2 nodes x 4 cores; job 0 takes 3 cores on each: 2 cores free, but no node has the 2 job 1 asks
    rows = [{"submit": 0, "runtime": 100, "nodes": 2, "ppn": 3}, {"submit": 5, "runtime": 10, "ppn": 2}]
    result = simulate(node_workload(rows), None, "easy", machine=machine(("a", 2, 4, 0)))
    assert held(result) == [{}, {"resources": 95, "by": "resources"}]


def test_a_pool_holds_a_job_while_another_cluster_has_room():
    # qa may use cluster a only: job 1 waits for job 0 although b is empty; job 2 (qb) backfills on b
    rows = [{"submit": 0, "runtime": 100, "ppn": 4, "queue_name": "qa"},
            {"submit": 0, "runtime": 10, "ppn": 1, "queue_name": "qa"},
            {"submit": 20, "runtime": 200, "ppn": 4, "queue_name": "qb"},
            {"submit": 30, "runtime": 10, "ppn": 1, "queue_name": "qa"}]
    config = parse_queue_config("queues:\n  - {name: qa, walltime: 1h, pool: [a]}\n  - {name: qb, walltime: 1h}\n")
    result = simulate(node_workload(rows), None, "easy", machine=machine(("a", 1, 4, 0), ("b", 1, 4, 0)),
                      queues=config)
    # job 1: pool 0-20 (b empty), resources 20-100 (job 2 fills b at 20); job 3: resources 30-100,
    # then it starts beside job 1 on a
    assert held(result) == [{}, {"pool": 20, "resources": 80, "by": "resources"}, {},
                            {"resources": 70, "by": "resources"}]


def test_a_cluster_outside_its_window_has_no_room():
    # cluster a opens at t=50: the job waits 50 s for resources
    result = simulate(node_workload([{"submit": 0, "runtime": 10}]), None, "fcfs",
                      machine=machine(("a", 1, 4, 0, 0, 50)))
    assert held(result) == [{"resources": 50, "by": "resources"}]


def random_pool_workload(seed: int, n: int = 300) -> Workload:
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, 5000, n))
    runtime = rng.integers(1, 2000, n)
    frame = pd.DataFrame({"job_id": np.arange(n), "submit": submit, "runtime": runtime,
                          "requested_time": runtime + rng.integers(0, 500, n), "procs": rng.choice([1, 2, 4, 8, 16], n),
                          "user": rng.integers(0, 5, n), "group": -1, "queue": -1, "partition": -1, "killed": False})
    return Workload(frame, {"procs": 16})


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "sjf"])
@pytest.mark.parametrize("seed", range(6))
def test_a_pool_runs_numpy_path_agrees_with_the_kernel_and_adds_up_to_the_wait(seed, policy, monkeypatch):
    workload = random_pool_workload(seed)
    run_module = sys.modules["engine.run"]     # (engine.run is also the name of a function in engine)
    monkeypatch.setattr(run_module, "use_kernel", lambda *arrays: False)
    plain = simulate(workload, 16, policy).schedule
    monkeypatch.setattr(run_module, "use_kernel", lambda *arrays: True)
    compiled = simulate(workload, 16, policy).schedule
    pd.testing.assert_frame_equal(plain[list(HELD_COLUMNS)], compiled[list(HELD_COLUMNS)])
    assert (plain[list(HELD_COLUMNS)].sum(axis=1) == plain["wait"]).all()
    assert plain["held_queue_limit"].eq(0).all() and plain["held_pool"].eq(0).all()
    assert (plain["wait"] > 0).sum() > 20                  # jobs did wait


def naive_resources(schedule: pd.DataFrame, capacity: int) -> list[int]:
    """Seconds each job waited with fewer free processors than it asks for, second by second."""
    horizon = int(schedule["end"].max()) + 1
    used = np.zeros(horizon, dtype=np.int64)
    for row in schedule.itertuples():
        used[row.start:row.end] += row.alloc
    free = capacity - used
    return [int((free[row.submit:row.start] < row.alloc).sum()) for row in schedule.itertuples()]


@pytest.mark.parametrize("seed", range(3))
def test_resources_on_a_pool_second_by_second(seed):
    workload = random_pool_workload(seed, n=120)
    schedule = simulate(workload, 16, "easy").schedule
    assert schedule["held_resources"].tolist() == naive_resources(schedule, 16)


@pytest.mark.parametrize("seed", range(3))
def test_resources_on_a_pool_with_bursts_apart_second_by_second(seed):
    """Bursts of jobs with idle hours between them: each size's waits fall into several stretches apart
    (the numpy path sums each stretch on its own)."""
    workload = random_pool_workload(seed, n=150)
    jobs = workload.jobs
    jobs["submit"] = (jobs["submit"] // 10) + (np.arange(len(jobs)) // 30) * 20_000   # 5 bursts, 20,000 s apart
    schedule = simulate(workload, 16, "easy").schedule
    assert (schedule["wait"] > 0).sum() > 20
    assert schedule["held_resources"].tolist() == naive_resources(schedule, 16)


def test_time_sharing_and_recorded_runs_have_no_pending_reasons():
    workload = random_pool_workload(0, n=20)
    assert "held_by" not in simulate(workload, 16, "tss").schedule


def test_memory_shortage_is_counted_as_priority_not_followed():
    # one node with 16 GB: job 1 (1 core, 10 GB) has cores free but not memory while job 0 runs
    rows = [{"submit": 0, "runtime": 100, "mem": 10 * GB}, {"submit": 0, "runtime": 10, "mem": 10 * GB}]
    result = simulate(node_workload(rows), None, "fcfs", machine=machine(("a", 1, 8, 16 * GB)))
    assert held(result) == [{}, {"priority": 100, "by": "priority"}]


# --------------------------------------------------------------------------- the sweep against a naive reference


def naive_held(submit: np.ndarray, start: np.ndarray, end: np.ndarray, sweep) -> np.ndarray:
    """The module docstring's rules written out plainly: at every instant of the run, the state
    rebuilt from the jobs running then (start <= t < end), and every waiting job's reason checked
    on its own (no groups, classes or counts kept from one instant to the next)."""
    ran = [j for j in range(len(submit)) if start[j] >= 0]
    instants = sorted({int(x) for j in ran for x in (submit[j], start[j], end[j])})
    info = sweep.cluster_info.tolist()
    held = np.zeros((len(submit), len(HELD_REASONS)), dtype=np.int64)
    for t, following in zip(instants, instants[1:]):
        running = [j for j in ran if start[j] <= t < end[j]]
        node_free = {node: cores for offset, nodes, cores, _, _ in info for node in range(offset, offset + nodes)}
        cluster_free = [nodes * cores for _, nodes, cores, _, _ in info]
        q_used: dict[int, int] = {}
        p_jobs: dict[int, int] = {}
        p_cores: dict[int, int] = {}
        for j in running:
            if sweep.cluster[j] >= 0:
                cluster_free[sweep.cluster[j]] -= sweep.held[j]
            for i in range(sweep.first[j], sweep.first[j] + sweep.count[j]):
                node_free[int(sweep.pick[i])] -= int(sweep.take[i])
            q_used[sweep.queue[j]] = q_used.get(sweep.queue[j], 0) + sweep.cores[j]
            p_jobs[sweep.pair[j]] = p_jobs.get(sweep.pair[j], 0) + 1
            p_cores[sweep.pair[j]] = p_cores.get(sweep.pair[j], 0) + sweep.cores[j]
        for j in ran:
            if not submit[j] <= t < start[j]:
                continue
            k = sweep.job_class[j]
            q, p, cores = sweep.queue[j], sweep.pair[j], sweep.cores[j]
            if sweep.limited and q_used.get(q, 0) + cores > sweep.queue_limit[q]:
                reason = "queue_limit"
            elif sweep.limited and (p_jobs.get(p, 0) + 1 > sweep.pair_jobs[p]
                                    or p_cores.get(p, 0) + cores > sweep.pair_cores[p]):
                reason = "user_limit"
            elif room(sweep, k, sweep.class_list[sweep.class_start[k]:sweep.class_start[k + 1]], t, node_free,
                      cluster_free):
                reason = "priority"
            elif room(sweep, k, sweep.open_list[sweep.open_start[k]:sweep.open_start[k + 1]], t, node_free,
                      cluster_free):
                reason = "pool"
            else:
                reason = "resources"
            held[j, HELD_REASONS.index(reason)] += following - t
    return held


def room(sweep, k: int, clusters: np.ndarray, t: int, node_free: dict[int, int], cluster_free: list[int]) -> bool:
    """Whether class k has room at t on one of ``clusters``, from each node's free cores."""
    nodes, ppn, procs, exclusive = sweep.class_shape[k].tolist()
    for c in clusters.tolist():
        offset, count, whole, opens, closes = sweep.cluster_info[c].tolist()
        if not opens <= t < closes:
            continue
        frees = [node_free[node] for node in range(offset, offset + count)]
        if nodes == 0:
            fits = cluster_free[c] >= procs
        elif exclusive:
            fits = sum(free == whole for free in frees) >= nodes
        else:
            fits = cluster_free[c] >= nodes * ppn and sum(free >= ppn for free in frees) >= nodes
        if fits:
            return True
    return False


def sweep_inputs(monkeypatch, *args, **kwargs):
    """Run simulate and return its schedule with what the sweep was given and answered."""
    run_module = sys.modules["engine.run"]
    seen = []
    real = run_module.held_times

    def spy(submit, start, end, sweep):
        seen.append((submit, start, end, sweep, real(submit, start, end, sweep)))
        return seen[-1][-1]
    monkeypatch.setattr(run_module, "held_times", spy)
    schedule = simulate(*args, **kwargs).schedule
    assert len(seen) == 1
    return schedule, seen[0]


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
@pytest.mark.parametrize("seed", range(4))
def test_the_sweep_equals_the_naive_reference_on_bursty_node_runs(seed, policy, monkeypatch):
    schedule, (submit, start, end, sweep, fast) = sweep_inputs(
        monkeypatch, bursty_node_workload(seed), None, policy, machine=windowed_machine(),
        queues=parse_queue_config(QUEUES))
    reference = naive_held(submit, start, end, sweep)
    assert np.array_equal(fast, reference)
    waited = (start >= 0) & (start > submit)
    assert waited.sum() > 20                                           # jobs did wait, for several reasons
    assert (reference.sum(axis=1) == np.where(start >= 0, start - submit, 0)).all()
    assert (reference.sum(axis=0) > 0).all()                         # each of the five reasons held some job
    assert (schedule[list(HELD_COLUMNS)].sum(axis=1) == schedule["wait"]).all()


@pytest.mark.parametrize("seed", range(3))
def test_the_sweep_equals_the_naive_reference_on_a_pool(seed, monkeypatch):
    workload = random_pool_workload(seed, n=120)
    monkeypatch.setattr(sys.modules["engine.run"], "use_kernel", lambda *arrays: True)
    _, (submit, start, end, sweep, fast) = sweep_inputs(monkeypatch, workload, 16, "easy")
    assert np.array_equal(fast, naive_held(submit, start, end, sweep))
