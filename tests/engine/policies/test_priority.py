"""Linear multifactor priority: P = w_size x processors + w_age x minutes eligible (+ fair-share, queue).

Hand-worked cases state the priorities at the decision instant; the presets of the SFS paper's §9
must flip the order of a big young job and a small old one.
"""

from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.policies.priority import LinearPriorityQueue
from engine.run import simulate
from engine.sim.simulator import Simulation
from tests.engine.conftest import make_workload


def starts(schedule: pd.DataFrame) -> dict[int, int]:
    return dict(zip(schedule.job_id.tolist(), schedule.start.tolist()))


# Machine of 4: J1 holds all 4 until t=60. J2 (2 procs, submitted at 0) and J3 (3 procs, submitted
# at 30) cannot run together. At t=60 J2 has waited 1 minute, J3 half a minute.
CONTEST = [(0, 60, 60, 4), (0, 10, 10, 2), (30, 10, 10, 3)]


def test_node_count_dominant_starts_the_bigger_job_first():
    # weights size 20, age 1: J2 = 20 x 2 + 1 x 1.0 = 41; J3 = 20 x 3 + 1 x 0.5 = 60.5 -> J3 first
    result = starts(simulate(make_workload(CONTEST), 4, "linear-size").schedule)
    assert result == {1: 0, 2: 70, 3: 60}


def test_eligible_time_dominant_starts_the_older_job_first():
    # weights size 1, age 20: J2 = 1 x 2 + 20 x 1.0 = 22; J3 = 1 x 3 + 20 x 0.5 = 13 -> J2 first
    result = starts(simulate(make_workload(CONTEST), 4, "linear-age").schedule)
    assert result == {1: 0, 2: 60, 3: 70}


def queue_for(rows, params, *, users=None, context=None) -> LinearPriorityQueue:
    workload = make_workload(rows, users=users)
    sim = Simulation(workload, 8, context=context)
    return LinearPriorityQueue(sim, params)


def test_priority_is_the_weighted_sum_of_size_and_minutes_eligible():
    queue = queue_for([(0, 10, 10, 4)], {"weight_size": 2.0, "weight_age": 3.0})
    queue.sim.now = 120
    assert queue.priority(0) == 2 * 4 + 3 * 2      # 4 processors, 2 minutes eligible


def test_max_age_caps_the_age_factor():
    queue = queue_for([(0, 10, 10, 1)], {"weight_size": 0.0, "weight_age": 1.0, "max_age": 1.0})
    queue.sim.now = 3 * 3600
    assert queue.priority(0) == 60.0                # capped at one hour = 60 minutes


def test_queue_priority_comes_from_the_context():
    workload = make_workload([(0, 10, 10, 1), (0, 10, 10, 1)])
    workload.jobs["queue"] = [1, 2]
    sim = Simulation(workload, 8, context={"queue_priorities": {2: 500}})
    queue = LinearPriorityQueue(sim, {"weight_size": 0.0, "weight_age": 0.0, "weight_queue": 1.0})
    for job in (0, 1):
        queue.add(job)
    assert queue.priority(0) == 0.0 and queue.priority(1) == 500.0
    assert queue.jobs() == [1, 0]            # queue 2 first although job 0 arrived first


def test_history_based_fair_share_lowers_the_user_whose_job_finished():
    # Machine of 2. User 1's J1 runs 0-10. J2 (user 1, submitted 1) and J3 (user 2, submitted 2)
    # wait. At t=10 user 1 has used 2 x 10 = 20 processor-seconds of 20 in all, with a share of 1/2:
    # factor 2^(-1 / 0.5) = 0.25 -> J2 = 1000 x 0.25 + 0.15 = 250.15; user 2: 2^0 = 1 -> J3 = 1000.13.
    rows = [(0, 10, 10, 2), (1, 10, 10, 2), (2, 10, 10, 2)]
    users = [1, 1, 2]
    plain = {"preset": "linear-age", "params": {"weight_age": 1.0, "weight_size": 0.0}}
    fair = {"preset": "linear-age", "params": {"weight_age": 1.0, "weight_size": 0.0, "weight_fairshare": 1000.0}}
    assert starts(simulate(make_workload(rows, users=users), 2, plain).schedule) == {1: 0, 2: 10, 3: 20}
    assert starts(simulate(make_workload(rows, users=users), 2, fair).schedule) == {1: 0, 2: 20, 3: 10}


job = st.tuples(st.integers(0, 3000), st.integers(1, 600), st.integers(1, 900), st.integers(1, 8))


@settings(max_examples=25, deadline=None)
@given(st.lists(job, min_size=1, max_size=30))
def test_recomputed_order_equals_the_static_keys_when_age_never_caps(rows):
    """A finite but unreachable max_age switches to re-sorting at every instant: same schedule."""
    rows = [(s, min(r, q), q, p) for s, r, q, p in rows]
    static = simulate(make_workload(rows), 8, "linear-size").schedule
    resorted = simulate(make_workload(rows), 8, {"preset": "linear-size", "params": {"max_age": 1e6}}).schedule
    pd.testing.assert_frame_equal(static, resorted)
