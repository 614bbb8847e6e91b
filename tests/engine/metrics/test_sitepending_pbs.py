"""The recorded run's estimated PBS pending reasons (engine.metrics.sitepending) follow the pbs policy's
own max_run rule (engine.platform.pbsrules): queue and server max_run and max_run_res.ncpus by user,
group, project and overall, each job in the queue its submission queue routes it to."""

from __future__ import annotations

import pandas as pd
import pytest

from engine.metrics.sitepending import PBS_TURN, pending_reasons
from engine.platform.pbsconf import QUEUE_LIMIT, RESOURCES, SERVER_LIMIT
from engine.platform.sitefiles import site_from_texts

# workq: 1 running job per group; the server: project "chem" at most 3 CPUs running; jobs submitted to
# no queue the server knows go to the default queue, workq
PRINT_SERVER = """create queue workq
set queue workq queue_type = Execution
set queue workq max_run = [g:PBS_GENERIC=1]
set server default_queue = workq
set server max_run_res.ncpus = [p:chem=3]
"""


def test_group_project_and_ncpus_limits_hold_the_recorded_runs_jobs():
    # 8 CPUs. Jobs (submit, start, end, procs, user, group, project, queue):
    # 1 ann  g1 phys workq 0-100,  1 CPU
    # 2 bob  g1 phys workq submitted 0, starts 100: group g1 runs job 1 in workq, [g:PBS_GENERIC=1]
    #   -> Queue max_run limit 0-100 (100 s)
    # 3 cid  g2 chem workq 0-300, 2 CPUs
    # 4 dan  g3 chem workq submitted 10, starts 300, 2 CPUs: chem runs 2 CPUs, 2 + 2 > 3 ->
    #   Server max_run limit 10-300 (290 s); its group g3 runs nothing in workq
    # 5 eve  g1 phys, queue "" (routed to workq) submitted 150, starts 200: g1 runs job 2 (100-200)
    #   -> Queue max_run limit 150-200 (50 s)
    # 6 fay  g4 phys workq submitted 20, starts 30, 1 CPU: nothing holds it, 5 CPUs free -> turn 10 s
    # 7 gus  g5 chem workq submitted 300, starts 400, 1 CPU: chem runs job 4's 2 CPUs, 2 + 1 = 3 is
    #   not over 3, and 8 - 2 = 6 CPUs free -> its turn (100 s)
    # The old estimate (max_run by user and overall only, no routing) said "Waiting for its turn"
    # for jobs 2, 4 and 5: no user or overall limit is set.
    site = site_from_texts("pbs", {"print server": PRINT_SERVER})
    schedule = pd.DataFrame({"job_id": [1, 2, 3, 4, 5, 6, 7],
                             "submit": [0, 0, 0, 10, 150, 20, 300], "start": [0, 100, 0, 300, 200, 30, 400],
                             "end": [100, 200, 300, 400, 250, 500, 450], "procs": [1, 1, 2, 2, 1, 1, 1]})
    jobs = pd.DataFrame({"job_id": [1, 2, 3, 4, 5, 6, 7], "user": [1, 2, 3, 4, 5, 6, 7],
                         "group": [11, 11, 12, 13, 11, 14, 15],
                         "account": ["phys", "phys", "chem", "chem", "phys", "phys", "chem"],
                         "queue_name": ["workq", "workq", "workq", "workq", "", "workq", "workq"],
                         "requested_time": [600] * 7})
    groups = {"11": "g1", "12": "g2", "13": "g3", "14": "g4", "15": "g5"}
    held = pending_reasons(schedule, jobs, site, 8, group_names=groups).set_index("job_id")
    zero = {QUEUE_LIMIT: 0, SERVER_LIMIT: 0, RESOURCES: 0, PBS_TURN: 0}
    assert held.loc[2].to_dict() == {**zero, QUEUE_LIMIT: 100}
    assert held.loc[4].to_dict() == {**zero, SERVER_LIMIT: 290}
    assert held.loc[5].to_dict() == {**zero, QUEUE_LIMIT: 50}
    assert held.loc[6].to_dict() == {**zero, PBS_TURN: 10}
    assert held.loc[7].to_dict() == {**zero, PBS_TURN: 100}
    assert sorted(held.index) == [2, 4, 5, 6, 7]


def test_a_users_ncpus_limit_on_the_queue_and_an_overall_job_limit_on_the_server():
    # workq: ann at most 2 CPUs running; the server: 2 jobs running in all. 8 CPUs.
    # 1 ann 0-100 2 CPUs; 2 ann submitted 0, 1 CPU, starts 100: 2 + 1 > 2 (queue ncpus) 0-100, and
    # two jobs run (1 and 3, then 1 and 4) 0-60: the scheduler checks every max_run before any
    # max_run_res (limits.cpp limfuncs) -> Server limit 0-60, Queue limit 60-100
    # 3 bob 0-50 1 CPU; 4 bob submitted 10, starts 50: two jobs run (1, 3) -> Server limit 40 s
    site = site_from_texts("pbs", {"print server": "create queue workq\nset server default_queue = workq\n"
                                                   "set queue workq max_run_res.ncpus = [u:ann=2]\n"
                                                   "set server max_run = [o:PBS_ALL=2]\n"})
    schedule = pd.DataFrame({"job_id": [1, 2, 3, 4], "submit": [0, 0, 0, 10], "start": [0, 100, 0, 50],
                             "end": [100, 150, 50, 60], "procs": [2, 1, 1, 1]})
    jobs = pd.DataFrame({"job_id": [1, 2, 3, 4], "user": [1, 1, 2, 2], "queue_name": ["workq"] * 4})
    held = pending_reasons(schedule, jobs, site, 8, {"1": "ann", "2": "bob"}).set_index("job_id")
    assert held.loc[2, SERVER_LIMIT] == 60 and held.loc[2, QUEUE_LIMIT] == 40 and held.loc[2].sum() == 100
    assert held.loc[4, SERVER_LIMIT] == 40 and held.loc[4].sum() == 40


LIMITED = """create queue workq
set queue workq queue_type = Execution
create queue big
set queue big queue_type = Execution
set queue big resources_min.ncpus = 3
create queue routeq
set queue routeq queue_type = Route
set queue routeq route_destinations = big
set queue routeq route_destinations += workq
set server default_queue = routeq
set queue workq max_run = [u:PBS_GENERIC=2],[g:g1=1]
set queue workq max_run_res.ncpus = [p:PBS_GENERIC=4]
set queue big max_run = [o:PBS_ALL=2]
set server max_run_res.ncpus = [g:PBS_GENERIC=7]
set server max_run = [p:beta=3]
"""


def test_on_the_pbs_policys_own_schedule_the_estimate_finds_the_limits_it_held_jobs_by():
    """The policy replays random jobs (users, groups, projects, queues routed or named) on a machine
    with room for all, so only a max_run limit ever holds a job; estimated from the schedule it made,
    every second each job waited is held by a limit, as many seconds in all as the policy counted.

    Which limit (the queue's or the server's) may differ for a while: the policy notes a job's reason
    when its cycle reaches it, before the jobs after it in that cycle start (a job held by a server
    limit can then be held by its queue's too), while the schedule shows only the state once the
    cycle's jobs have started; the estimate takes that state."""
    import numpy as np

    from tests.engine.conftest import make_workload

    from engine.run import simulate

    rng = np.random.default_rng(7)
    n = 60
    rows = [(int(s), int(r), int(r), int(p)) for s, r, p in
            zip(np.sort(rng.integers(0, 2000, n)), rng.integers(50, 400, n), rng.integers(1, 5, n))]
    w = make_workload(rows, users=rng.integers(1, 5, n).tolist())
    w.jobs["group"] = rng.integers(1, 4, n)
    w.jobs["account"] = rng.choice(["alpha", "beta"], n)
    w.jobs["queue_name"] = rng.choice(["workq", "routeq", ""], n)
    w.metadata["user_names"] = {"1": "ann", "2": "bob", "3": "cid", "4": "dan"}
    w.metadata["group_names"] = {"1": "g1", "2": "g2", "3": "g3"}
    server = site_from_texts("pbs", {"print server": LIMITED})
    capacity = int(w.jobs["procs"].sum())
    result = simulate(w, capacity, {"preset": "pbs", "params": {"cycle": 0}}, context={"pbs_site": server})
    schedule = result.schedule
    held = pending_reasons(schedule, w.jobs, server, capacity, w.metadata["user_names"],
                           w.metadata["group_names"]).set_index("job_id")
    waited = schedule[schedule["start"] > schedule["submit"]].set_index("job_id").sort_index()
    assert held.index.sort_values().tolist() == waited.index.tolist()
    assert held[[RESOURCES, PBS_TURN]].to_numpy().sum() == 0
    assert (held[QUEUE_LIMIT] + held[SERVER_LIMIT]).sort_index().tolist() == (waited["start"] - waited["submit"]).tolist()
    pending = result.meta["summary"]["pbs_pending"]
    assert set(pending) == {QUEUE_LIMIT, SERVER_LIMIT}          # the case exercises both
    assert held[SERVER_LIMIT].gt(0).sum() > 0 and held[QUEUE_LIMIT].gt(0).sum() > 0
    policy_hours = pending[QUEUE_LIMIT]["hours"] + pending[SERVER_LIMIT]["hours"]
    assert policy_hours == pytest.approx(held[[QUEUE_LIMIT, SERVER_LIMIT]].to_numpy().sum() / 3600, abs=1e-3)
