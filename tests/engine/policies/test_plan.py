"""Plan-based scheduling by simulated annealing (PLAN 1/2/3): the planner kernel and the policy.

The kernel is checked against brute force (every permutation of up to 7 jobs) and against a plain
annealer that re-plans every neighbour from scratch: snapshots, convergence, early rejection and
the lower-bound stop must not change which permutation is chosen.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from engine.policies.plan import running_profile
from engine.policies.registry import build_scheduler, resolve
from engine.run import simulate
from engine.sim import planner
from engine.sim.planner import (MAKESPAN, MEAN_SQUARED_WAIT, MEAN_WAIT, SCALE_ABSOLUTE, SCALE_CURRENT,
                                SCALE_INITIAL, best_plan, lower_bound, plan_cost, temperature_schedule)
from engine.sim.simulator import Simulation
from engine.workload import load_workload
from engine.workload.window import select_days
from tests.engine.conftest import make_workload
from tests.engine.sim.test_invariants import assert_valid
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"
KINDS = (MEAN_WAIT, MEAN_SQUARED_WAIT, MAKESPAN)
PAPER_TEMPERATURES = temperature_schedule(1.0, 1e-4, 0.9)


def random_instance(seed: int, n: int, *, capacity: int = 16, running: int = 5):
    """Waiting jobs (durations, sizes, time already waited) and a running-jobs profile from now=100."""
    rng = np.random.default_rng(seed)
    now = 100
    sizes = rng.integers(1, capacity // 2 + 1, running)
    keep = np.cumsum(sizes) <= capacity
    ends = np.sort(rng.integers(now + 1, now + 60, running))[keep]
    times, free = [now], [capacity - int(sizes[keep].sum())]
    for end, size in zip(ends.tolist(), sizes[keep].tolist()):
        if end == times[-1]:
            free[-1] += size
        else:
            times.append(end)
            free.append(free[-1] + size)
    duration = rng.integers(1, 40, n).astype(np.int64)
    size = rng.integers(1, capacity + 1, n).astype(np.int64)
    waited = rng.integers(0, 30, n).astype(np.int64)
    base_t, base_f = np.array(times, dtype=np.int64), np.array(free, dtype=np.int64)
    return duration, size, waited, base_t, base_f, capacity


def base_cost(kind: int, base_t: np.ndarray) -> float:
    return float(base_t[-1] - base_t[0]) if kind == MAKESPAN else 0.0


def cost_of(order, instance, kind) -> tuple[float, np.ndarray]:
    duration, size, waited, base_t, base_f, _ = instance
    starts = np.empty(len(duration), dtype=np.int64)
    cost = plan_cost(np.asarray(order, dtype=np.int64), duration, size, waited, kind, base_t, base_f, len(base_t),
                     base_cost(kind, base_t), starts)
    return cost, starts


def anneal(instance, kind, *, seed=0, temperatures=PAPER_TEMPERATURES, moves=100, scale=SCALE_INITIAL):
    duration, size, waited, base_t, base_f, _ = instance
    return best_plan(duration, size, waited, kind, base_t, base_f, base_cost(kind, base_t),
                     temperatures=temperatures, moves_per_temperature=moves, scale_mode=scale,
                     rng=np.random.default_rng(seed))


# -- a hand-worked plan ------------------------------------------------------------------------------

def test_the_three_costs_prefer_different_plans_hand_worked():
    """4 processors; at now = 1 job R (2 processors) runs until 10; A (4 processors, 5 s) and
    B (2 processors, 20 s) were just submitted.

    [A, B]: A waits for R: starts 10 (wait 9), ends 15. B needs 2 free for 20 s: [1, 10) is only
            9 s and A holds all 4 on [10, 15), so B starts 15 (wait 14), ends 35.
            wait sum 9 + 14 = 23, squared 81 + 196 = 277, makespan 35 - 1 = 34.
    [B, A]: B starts 1 (2 free until 10, 4 after), ends 21; A needs 4: starts 21 (wait 20), ends 26.
            wait sum 0 + 20 = 20, squared 400, makespan 26 - 1 = 25.
    So PLAN 1 and PLAN 3 start B now; PLAN 2 starts nothing now, then A at 10 and B at 15 —
    the same schedule as EASY (B would end after A's reservation at 10, so it cannot backfill).
    """
    base_t, base_f = np.array([1, 10], dtype=np.int64), np.array([2, 4], dtype=np.int64)
    instance = (np.array([5, 20]), np.array([4, 2]), np.array([0, 0]), base_t, base_f, 4)
    instance = tuple(np.asarray(x, dtype=np.int64) if isinstance(x, np.ndarray) else x for x in instance)
    assert cost_of([0, 1], instance, MEAN_WAIT)[0] == 23 and cost_of([1, 0], instance, MEAN_WAIT)[0] == 20
    assert cost_of([0, 1], instance, MEAN_SQUARED_WAIT)[0] == 277 and cost_of([1, 0], instance, MEAN_SQUARED_WAIT)[0] == 400
    assert cost_of([0, 1], instance, MAKESPAN)[0] == 34 and cost_of([1, 0], instance, MAKESPAN)[0] == 25
    assert cost_of([0, 1], instance, MEAN_WAIT)[1].tolist() == [9, 14]    # start offsets from now

    workload = make_workload([(0, 10, 10, 2), (1, 5, 5, 4), (1, 20, 20, 2)])
    starts = {policy: simulate(workload, 4, policy).schedule.start.tolist()
              for policy in ("plan1", "plan2", "plan3", "easy")}
    assert starts["plan1"] == starts["plan3"] == [0, 21, 1]
    assert starts["plan2"] == starts["easy"] == [0, 10, 15]


# -- the kernel ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [1, 2])
def test_annealing_finds_the_brute_force_optimum_for_seven_jobs(kind, seed):
    instance = random_instance(seed, 7)
    optimum = min(cost_of(order, instance, kind)[0] for order in itertools.permutations(range(7)))
    plan = anneal(instance, kind, seed=seed)   # 8,800 moves for 5,040 permutations
    assert plan.cost == optimum
    assert cost_of(plan.order, instance, kind)[0] == plan.cost


@pytest.mark.parametrize("seed", range(6))
def test_every_plan_respects_capacity_and_starts_each_job_as_early_as_it_fits(seed):
    duration, size, waited, base_t, base_f, capacity = instance = random_instance(seed, 12)
    order = np.random.default_rng(seed).permutation(12)
    _, starts = cost_of(order, instance, MEAN_WAIT)
    now = int(base_t[0])
    busy = np.zeros(400, dtype=np.int64)        # processors in use per second from now
    for t, f in zip(range(len(base_t)), base_f):   # the running jobs: capacity - free until the next step
        end = base_t[t + 1] - now if t + 1 < len(base_t) else 400
        busy[base_t[t] - now:end] += capacity - f
    for job in order:
        window = slice(starts[job], starts[job] + duration[job])
        earliest = next(t for t in range(400) if (busy[t:t + duration[job]] + size[job] <= capacity).all())
        assert starts[job] == earliest, "a job was planned later than its earliest fit"
        busy[window] += size[job]
        assert busy.max() <= capacity


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scale", [SCALE_INITIAL, SCALE_CURRENT, SCALE_ABSOLUTE])
def test_the_chosen_plan_is_never_worse_than_the_queue_order(kind, scale):
    for seed in range(4):
        instance = random_instance(seed, 15)
        plan = anneal(instance, kind, seed=seed, temperatures=temperature_schedule(100.0, 1.0, 0.5),
                      moves=20, scale=scale)   # hot and short: most moves are accepted, good or bad
        initial = cost_of(range(15), instance, kind)[0]
        assert plan.initial_cost == initial
        assert plan.cost <= initial
        assert cost_of(plan.order, instance, kind)[0] == plan.cost
        assert sorted(plan.order.tolist()) == list(range(15))


def plain_annealer(instance, kind, *, seed, temperatures, moves, scale_mode):
    """Algorithm 1 with every neighbour planned from scratch, drawing the same moves as best_plan."""
    n = len(instance[0])
    rng = np.random.default_rng(seed)
    total = len(temperatures) * moves
    pick, put, draw = rng.integers(0, n, total), rng.integers(0, n - 1, total), rng.random(total)
    order = list(range(n))
    cost = initial = best = cost_of(order, instance, kind)[0]
    best_order = list(order)
    bound = lower_bound(instance[0], instance[2], kind, base_cost(kind, instance[3]))
    m = 0
    for temperature in temperatures:
        for _ in range(moves):
            if best <= bound:
                return best_order, best
            i, j, u = pick[m], put[m], draw[m]
            m += 1
            j = j + 1 if j >= i else j
            candidate = order[:i] + order[i + 1:]
            candidate.insert(j, order[i])
            new = cost_of(candidate, instance, kind)[0]
            scale = {SCALE_INITIAL: initial, SCALE_CURRENT: cost, SCALE_ABSOLUTE: 1.0}[scale_mode]
            limit = math.inf if u <= 0 else cost - temperature * scale * math.log(u)
            if new <= cost or new < limit:
                order, cost = candidate, new
                if cost < best:
                    best, best_order = cost, list(order)
    return best_order, best


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("every", [1, 3])
def test_incremental_evaluation_chooses_what_planning_every_neighbour_from_scratch_chooses(kind, every, monkeypatch):
    monkeypatch.setattr(planner, "SNAPSHOT_EVERY", every)
    temperatures = temperature_schedule(1.0, 1e-3, 0.6)
    for seed in range(3):
        instance = random_instance(seed, 14, capacity=32, running=10)
        plan = anneal(instance, kind, seed=seed, temperatures=temperatures, moves=40, scale=SCALE_CURRENT)
        order, cost = plain_annealer(instance, kind, seed=seed, temperatures=temperatures, moves=40,
                                     scale_mode=SCALE_CURRENT)
        assert (plan.cost, plan.order.tolist()) == (cost, order)


def test_a_plan_at_the_lower_bound_stops_the_annealing():
    # two 1-processor jobs on an idle 4-processor machine both start now: nothing can be better
    instance = (np.array([5, 7]), np.array([1, 1]), np.array([3, 0]), np.array([0]), np.array([4]), 4)
    instance = tuple(np.asarray(x, dtype=np.int64) if isinstance(x, np.ndarray) else x for x in instance)
    plan = anneal(instance, MEAN_SQUARED_WAIT)
    assert plan.evaluated == 0 and plan.cost == 9.0    # 3² + 0²


# -- the policy ------------------------------------------------------------------------------------

def test_presets_and_parameters_are_registered():
    spec = resolve({"preset": "plan2", "params": {"cooling": 0.8, "window": 50}})
    assert spec.algorithm == "plan" and spec.params["objective"] == "squared-wait"
    assert {resolve(p).params["objective"] for p in ("plan1", "plan2", "plan3")} == {"wait", "squared-wait", "makespan"}
    assert resolve("plan1").params["window"] == math.inf
    assert len(temperature_schedule(1.0, 1e-4, 0.9)) * resolve("plan1").params["moves_per_temperature"] == 8800


def test_cooling_must_be_below_one():
    from engine.policies import PolicyError

    with pytest.raises(PolicyError, match="cooling"):
        simulate(make_workload([(0, 5, 5, 1)]), 4, {"preset": "plan2", "params": {"cooling": 1.0}})


def test_a_decision_with_an_empty_queue_costs_nothing():
    sim = Simulation(make_workload([(0, 5, 5, 1)]), 4)
    scheduler = build_scheduler(resolve("plan2"), sim)
    scheduler.schedule()
    assert scheduler.summary() == {"decisions": 0, "annealed_decisions": 0, "evaluated_permutations": 0,
                                   "mean_decision_ms": None, "max_decision_ms": None}


def test_when_nothing_fits_now_the_annealing_is_skipped():
    # job 0 holds all 4 processors until 50; jobs 1 and 2 arrive at 1 and 2 and cannot start before
    result = simulate(make_workload([(0, 50, 50, 4), (1, 5, 5, 2), (2, 5, 5, 3)]), 4, "plan2")
    summary = result.meta["summary"]
    # decisions: at 0 (job 0 alone: one permutation), at 1 and 2 (nothing fits: skipped), at 50
    # (jobs 1 and 2: annealed; only job 1 fits beside nothing, 2 + 3 > 4) and at 55 (job 2 alone)
    assert result.schedule.start.tolist() == [0, 50, 55]
    assert summary["decisions"] == 5 and summary["annealed_decisions"] == 1
    assert summary["max_decision_ms"] >= summary["mean_decision_ms"] > 0


def test_the_same_seed_gives_the_same_schedule():
    rng = np.random.default_rng(7)
    rows = [(int(s), int(r), int(r) + 5, int(p)) for s, r, p in
            zip(np.sort(rng.integers(0, 300, 60)), rng.integers(1, 90, 60), rng.integers(1, 9, 60))]
    workload = make_workload(rows)
    policy = {"preset": "plan2", "params": {"cooling": 0.5}}   # 14 temperatures: quicker, as random
    first = simulate(workload, 8, policy, seed=3).schedule
    pd.testing.assert_frame_equal(first, simulate(workload, 8, policy, seed=3).schedule)
    assert_valid(first, 8)


def test_a_window_of_one_job_is_planning_in_queue_order():
    """With window=1 nothing is annealed (one job has one permutation): the same as no moves at all."""
    rng = np.random.default_rng(11)
    rows = [(int(s), int(r), int(r), int(p)) for s, r, p in
            zip(np.sort(rng.integers(0, 200, 40)), rng.integers(1, 60, 40), rng.integers(1, 9, 40))]
    workload = make_workload(rows)
    windowed = simulate(workload, 8, {"preset": "plan1", "params": {"window": 1}})
    no_moves = simulate(workload, 8, {"preset": "plan1", "params": {"moves_per_temperature": 0}})
    pd.testing.assert_frame_equal(windowed.schedule, no_moves.schedule)
    assert windowed.meta["summary"]["evaluated_permutations"] == 0


def test_the_running_profile_counts_overrunning_jobs_as_ending_in_one_second():
    sim = Simulation(make_workload([(0, 30, 10, 3), (0, 5, 20, 1)]), 4)
    sim.start(0)
    sim.start(1)
    sim.now = 12          # job 0 was expected to end at 10; job 1 at 20
    times, free, cost = running_profile(sim, MAKESPAN)
    assert times.tolist() == [12, 13, 20] and free.tolist() == [0, 3, 4] and cost == 8.0


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["plan1", "plan2", "plan3"])
def test_two_days_of_a_real_trace_keep_every_invariant(policy):
    workload = select_days(load_workload(SWF / "SDSC-BLUE-2000-4.2-cln.swf.gz"), 0, 2)
    capacity = int(workload.metadata["procs"])
    result = simulate(workload, capacity, policy, seed=1)
    assert len(result.schedule) == len(workload.jobs)
    assert_valid(result.schedule, capacity)
    assert result.meta["summary"]["annealed_decisions"] > 0
