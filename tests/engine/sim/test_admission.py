"""Admission at submission (engine.sim.admission): every queue limit a job's request exceeds
rejects it, or routes it where the configuration routes; jobs no configuration could start are
rejected, never a failed run."""

from __future__ import annotations

import numpy as np
import pytest

from engine.platform.queues import parse_queue_config
from engine.run import simulate
from engine.sim.nodes import REJECT_NO_CLUSTER
from engine.workload.errors import WorkloadError
from tests.engine.sim.node_workloads import GB, machine, node_workload

TWO = machine(("a", 2, 4, 16 * GB), ("b", 1, 16, 64 * GB))     # 8 + 16 cores


def run(rows, text, policy="fcfs", machine_=TWO):
    return simulate(node_workload(rows), None, policy, machine=machine_, queues=parse_queue_config(text))


def admitted(result) -> dict:
    return result.meta["summary"]["admission"]


def test_a_request_over_the_walltime_is_rejected_at_submission_and_listed():
    rows = [{"submit": 0, "runtime": 60, "requested": 3000, "queue_name": "short", "user": 1},
            {"submit": 5, "runtime": 60, "requested": 7200, "queue_name": "short", "user": 2},
            {"submit": 9, "runtime": 60, "requested": 3601, "queue_name": "short", "user": 2},
            {"submit": 9, "runtime": 60, "requested": 7200, "queue_name": "long", "user": 2}]
    result = run(rows, "queues:\n  - {name: short, walltime: 1h}\n  - {name: long, walltime: 10h}\n")
    assert result.schedule["job_id"].tolist() == [0, 3]           # 7200 s and 3601 s are over short's 3600 s
    table = admitted(result)
    assert (table["rejected_total"], table["routed_total"]) == (2, 0)
    assert table["lines"] == ["2 jobs of 1 user ask for more than short's 1 h: rejected at submission"]
    assert table["per_queue"] == {"short": {"rejected": 2, "routed": 0}}
    assert table["per_user"] == {"2": {"rejected": 2, "routed": 0}}
    listed = result.rejected_jobs
    assert listed[["job_id", "queue", "reason", "limit"]].values.tolist() == [
        [1, "short", "walltime", "walltime 1 h"], [2, "short", "walltime", "walltime 1 h"]]
    assert result.meta["rejected"]["refused at submission by queue short (walltime)"] == 2
    assert result.meta["summary"]["validation"]["ok"]


def test_a_refused_job_is_routed_to_the_first_queue_that_accepts_it():
    # short refuses the 5 h job; its route_to tries mid (4 h: refuses), then long (accepts)
    rows = [{"submit": 0, "runtime": 60, "requested": 5 * 3600, "queue_name": "short"},
            {"submit": 0, "runtime": 60, "requested": 1800, "queue_name": "short"}]
    result = run(rows, """queues:
  - {name: short, walltime: 1h, route_to: [mid, long]}
  - {name: mid, walltime: 4h}
  - {name: long, walltime: 10h}
""")
    schedule = result.schedule.sort_values("job_id")
    assert schedule["queue"].tolist() == ["long", "short"]
    assert schedule["routed_from"].tolist() == ["short", ""]
    assert admitted(result)["lines"] == ["1 job of 1 user asks for more than short's 1 h: routed to long"]
    assert result.rejected_jobs.empty


def test_routing_follows_destinations_routes_depth_first_and_a_routing_queue_runs_nothing():
    config = """queues:
  - {name: entry, route_to: [small, big]}
  - {name: small, walltime: 1h, job_max_cores: 2, route_to: [medium]}
  - {name: medium, walltime: 1h, job_max_cores: 4}
  - {name: big, walltime: 1d}
"""
    rows = [{"submit": 0, "runtime": 10, "requested": 600, "ppn": 1, "queue_name": "entry"},      # small
            {"submit": 0, "runtime": 10, "requested": 600, "ppn": 3, "queue_name": "entry"},      # medium (small's route)
            {"submit": 0, "runtime": 10, "requested": 600, "ppn": 8, "queue_name": "entry"},      # big
            {"submit": 0, "runtime": 10, "requested": 2 * 86400, "ppn": 1, "queue_name": "entry"}]  # nobody
    result = run(rows, config)
    schedule = result.schedule.sort_values("job_id")
    assert schedule["queue"].tolist() == ["small", "medium", "big"]
    assert schedule["routed_from"].tolist() == ["entry"] * 3
    assert result.rejected_jobs[["job_id", "queue", "limit"]].values.tolist() == [[3, "entry", "route_to small, big"]]
    assert admitted(result)["lines"][0] == \
        "1 job of 1 user is accepted by none of routing queue entry's destinations (small, big): rejected at submission"


@pytest.mark.parametrize("limit, reason, text", [
    ("job_max_cores: 4", "job_cores", "job_max_cores 4"),
    ("max_cores: 6", "queue_cores", "max_cores 6"),
    ("max_share: 0.25", "queue_cores", "max_cores 6"),        # floor(0.25 x 24 cores)
    ("user_max_cores: 5", "user_cores", "user_max_cores 5"),
    ("job_max_mem: 10 GiB", "memory", "job_max_mem 10 GiB"),
    ("pool: [a]", "pool", "pool a"),                          # 8 cores on one node: only b has such nodes
])
def test_each_core_memory_and_pool_limit_rejects_what_could_never_start(limit, reason, text):
    rows = [{"submit": 0, "runtime": 60, "ppn": 8, "mem": 12 * GB, "queue_name": "q"},     # over the limit
            {"submit": 0, "runtime": 60, "ppn": 2, "mem": 1 * GB, "queue_name": "q"}]      # within it
    result = run(rows, f"queues:\n  - name: q\n    walltime: 1h\n    {limit}\n", policy="easy")
    assert result.schedule["job_id"].tolist() == [1]
    assert result.rejected_jobs[["job_id", "queue", "reason", "limit"]].values.tolist() == [[0, "q", reason, text]]


def test_a_single_node_queue_refuses_a_job_routed_to_it_on_several_nodes():
    rows = [{"submit": 0, "runtime": 60, "nodes": 2, "ppn": 1, "requested": 600, "queue_name": "short"}]
    result = run(rows, """queues:
  - {name: short, walltime: 300, route_to: [single, wide]}
  - {name: single, walltime: 1h, single_node: true}
  - {name: wide, walltime: 1h}
""")
    assert result.schedule["queue"].tolist() == ["wide"]


def test_a_job_no_cluster_can_run_is_rejected_by_the_machine_not_by_a_queue():
    rows = [{"submit": 0, "runtime": 60, "ppn": 32, "queue_name": "q"},      # no node has 32 cores
            {"submit": 0, "runtime": 60, "ppn": 1, "queue_name": "q"}]
    result = run(rows, "queues:\n  - {name: q, walltime: 1h, job_max_cores: 4}\n")
    assert result.meta["rejected"] == {REJECT_NO_CLUSTER: 1}
    assert result.rejected_jobs[["job_id", "queue", "reason"]].values.tolist() == [[0, "", "machine"]]
    assert admitted(result)["rejected_total"] == 0


def test_counts_per_queue_and_per_user_name_the_users():
    workload = node_workload([{"submit": t, "runtime": 60, "requested": 7200, "queue_name": q, "user": u}
                              for t, (q, u) in enumerate([("short", 1), ("short", 1), ("short", 2), ("mid", 2),
                                                          ("mid", 3), ("long", 3)])])
    workload.metadata["user_names"] = {"1": "alice", "2": "bob", "3": "carol"}
    config = parse_queue_config("""queues:
  - {name: short, walltime: 1h}
  - {name: mid, walltime: 90m, route_to: [long]}
  - {name: long, walltime: 1d}
""")
    table = simulate(workload, None, "fcfs", machine=TWO, queues=config).meta["summary"]["admission"]
    assert table["per_queue"] == {"mid": {"rejected": 0, "routed": 2}, "short": {"rejected": 3, "routed": 0}}
    assert table["per_user"] == {"alice": {"rejected": 2, "routed": 0}, "bob": {"rejected": 1, "routed": 1},
                                 "carol": {"rejected": 0, "routed": 1}}
    assert table["lines"] == ["3 jobs of 2 users ask for more than short's 1 h: rejected at submission",
                              "2 jobs of 2 users ask for more than mid's 90 min: routed to long"]


@pytest.mark.parametrize("text, field", [
    ("queues:\n  - {name: a, walltime: 1h, route_to: [nosuch]}\n", "route_to"),
    ("queues:\n  - {name: a, walltime: 1h, route_to: [a]}\n", "route_to"),
    ("queues:\n  - {name: a, walltime: 1h, route_to: 3}\n", "route_to"),
    ("queues:\n  - {name: a}\n", "walltime"),
    ("queues:\n  - {name: a, route_to: [b]}\n  - {name: b, route_to: [a]}\n", "walltime"),
    ("queues:\n  - {name: a, walltime: 1h, job_max_mem: lots}\n", "job_max_mem"),
    ("queues:\n  - {name: a, walltime: 1h, job_max_mem: 0}\n", "job_max_mem"),
    ("queues:\n  - {name: a, walltime: 1h, job_max_cores: 0}\n", "job_max_cores"),
])
def test_bad_routing_and_limits_are_named(text, field):
    with pytest.raises(WorkloadError) as error:
        parse_queue_config(text, source="q.yaml")
    assert error.value.field == field and error.value.line is not None


# --------------------------------------------------------------------------- never a failed run


def random_case(seed: int):
    """Up to 40 jobs of 3 users on two clusters, and a random queue configuration: walltimes,
    core limits, per-user limits, per-job limits, pools and routes drawn at random."""
    rng = np.random.default_rng(seed)
    names = ["q0", "q1", "q2"]
    queues = []
    for i, name in enumerate(names):
        entry = [f"name: {name}", f"walltime: {int(rng.choice([300, 1800, 3600, 7200]))}"]
        for key, values in (("max_cores", [1, 2, 4, 8, 30]), ("user_max_cores", [1, 2, 4, 16]),
                            ("user_max_jobs", [1, 2, 5]), ("job_max_cores", [1, 3, 8]),
                            ("job_max_mem", ["1 GiB", "8 GiB"])):
            if rng.random() < 0.4:
                entry.append(f"{key}: {rng.choice(values)}")
        if rng.random() < 0.3:
            entry.append(f"pool: [{rng.choice(['a', 'b'])}]")
        if rng.random() < 0.4:
            entry.append(f"route_to: [{', '.join(n for n in names if n != name and rng.random() < 0.7) or names[i - 1]}]")
        queues.append("  - {" + ", ".join(entry) + "}")
    config = parse_queue_config(f"mode: {rng.choice(['virtual', 'priority'])}\nqueues:\n" + "\n".join(queues) + "\n")
    rows = [{"submit": int(rng.integers(0, 600)), "runtime": int(rng.integers(1, 900)),
             "requested": int(rng.choice([200, 1000, 3000, 7000])), "nodes": int(rng.choice([1, 1, 2])),
             "ppn": int(rng.choice([1, 2, 4, 8])), "mem": int(rng.choice([0, 2, 6])) * GB,
             "user": int(rng.integers(1, 4)), "queue_name": str(rng.choice(names + ["other"]))}
            for _ in range(int(rng.integers(5, 41)))]
    rows.sort(key=lambda r: r["submit"])
    return node_workload(rows), config


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "mrfs-easy"])
@pytest.mark.parametrize("seed", range(25))
def test_no_queue_configuration_ends_in_a_failed_run(seed, policy):
    workload, config = random_case(seed)
    result = simulate(workload, None, policy, machine=TWO, queues=config)    # never a SimulationError
    schedule = result.schedule
    assert len(schedule) + len(result.rejected_jobs) == len(workload.jobs)
    assert result.meta["summary"]["validation"]["ok"]
    queues = {q.name: q for q in config.queues}
    for row in schedule.itertuples():                        # whatever ran, ran within its queue's limits
        queue = queues[row.queue]
        assert row.requested_time <= queue.walltime and row.procs <= queue.core_limit(TWO.cores)
    held = schedule[[c for c in schedule if c.startswith("held_") and c != "held_by"]].sum(axis=1)
    assert (held == schedule["wait"]).all()


def test_if_jobs_ever_wait_for_good_the_failure_names_them_their_queue_and_the_date():
    """The last resort (nothing admission can refuse: a cluster that leaves before the jobs could end)."""
    from engine.platform.machines import Cluster, Machine
    from engine.sim.simulator import SimulationError

    leaving = Machine((Cluster("a", 1, 4, 0, available_to=1734800289 + 50),), source="hand-made")
    workload = node_workload([{"submit": 1734800289, "runtime": 60, "requested": 100, "queue_name": "workq"}] * 7)
    workload.jobs["jobid"] = [str(112461 + i) for i in range(7)]
    workload.metadata.update({"JobIdSuffix": ".server", "TimeZoneString": "UTC+01:00", "TimeBase": "absolute"})
    with pytest.raises(SimulationError) as error:
        simulate(workload, None, "easy", machine=leaving,
                 queues=parse_queue_config("queues:\n  - {name: workq, walltime: 1h}\n"))
    assert str(error.value) == (
        "schedule check failed: jobs: 7 jobs never started: they wait with the machine idle at 2024-12-21 17:58 "
        "(UTC+01:00) and nothing left to happen: "
        + "; ".join(f"{112461 + i}.server (submitted at 2024-12-21 17:58, queue workq: no room on a (it would not end "
                    "within the availability window of a))" for i in range(5))
        + "; and 2 more: the policy never starts them")
