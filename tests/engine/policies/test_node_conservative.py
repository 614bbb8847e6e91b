"""Node-level conservative backfilling (engine.policies.heterogeneous.NodeConservative) when a
cluster's availability window closes on a reserved job: the reservation is made again over the job's
clusters, worked by hand and against the plain code in node_conservative_reference.py."""

from __future__ import annotations

from contextlib import nullcontext

import pytest

from engine.platform.machines import Cluster, Machine
from engine.platform.queues import parse_queue_config
from engine.run import simulate
from tests.engine.policies.node_conservative_reference import assert_same, both, reference_conservative
from tests.engine.sim.node_workloads import QUEUES, bursty_node_workload, node_workload, windowed_machine

ONE_JOB_PER_USER = parse_queue_config("queues:\n  - {name: q, walltime: 1h, user_max_jobs: 1}\n")


def closing_b() -> Machine:
    """a: one node of 4 cores, always there; b: the same, there until t=1000."""
    return Machine((Cluster("a", 1, 4, 0), Cluster("b", 1, 4, 0, available_to=1000)), source="hand-made")


@pytest.mark.parametrize("plain", [False, True])
def test_a_job_held_on_a_cluster_whose_window_closes_starts_on_another(plain):
    # user 1 may run one job at a time. Job 0 takes a 0-2000. Job 1's earliest start is 0 on b (a is
    # full until 2000): due at 0, the user limit holds it there. At 2000 job 0 ends: started then on
    # b, job 1 would end past b's window (1000), so its reservation is made again: on a at 2000.
    # (Before the fix it stayed on b for ever: "job 1 never started ... the machine idle".)
    rows = [{"submit": 0, "runtime": 2000, "ppn": 4, "queue_name": "q"},
            {"submit": 0, "runtime": 100, "ppn": 4, "queue_name": "q"}]
    with reference_conservative() if plain else nullcontext():
        schedule = simulate(node_workload(rows), None, "conservative", machine=closing_b(),
                            queues=ONE_JOB_PER_USER).schedule.sort_values("job_id")
    assert schedule["start"].tolist() == [0, 2000]
    assert schedule["end"].tolist() == [2000, 2100]


@pytest.mark.parametrize("seed", range(4))
def test_bursty_runs_with_a_closing_window_start_every_job_as_the_plain_code_does(seed):
    # seeds 2 and 3 once left a job held on b after b closed, the machine idle
    fast, plain = both(bursty_node_workload(seed), "conservative", machine=windowed_machine(),
                       queues=parse_queue_config(QUEUES))
    assert not isinstance(fast, str), fast
    assert_same(fast, plain)
    assert (fast["start"] >= 0).all()
