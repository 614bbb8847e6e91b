"""What PBS's server refuses at submission (engine.platform.pbsrules.refusal, followed by the ``pbs``
policy): a queue's resources_min / resources_max and the server's resources_max on walltime and
ncpus, a disabled queue, a route queue no destination of which takes the job; and an entity's own
limit replacing the generic one (max_run, max_queued), as OpenPBS's server and scheduler do."""

from __future__ import annotations

from engine.platform.pbsrules import RESOURCE_LIMITS_MESSAGE, ROUTE_REJECTED_MESSAGE, refusal
from tests.engine.policies import test_pbs
from tests.engine.policies.test_pbs import QUEUES, replayed, starts

site = test_pbs.site            # the fixture: a PbsServer from print server, sched_config, resource_group texts


def refused(result) -> dict[int, tuple[str, str]]:  # noqa: ANN001
    rejected = result.rejected_jobs
    return {} if rejected is None else dict(zip(rejected["job_id"], zip(rejected["reason"], rejected["limit"])))


def test_a_job_asking_more_walltime_than_its_queue_allows_is_refused_and_named(site, workload):
    # workq resources_max.walltime 01:00:00: job 2 asks 3601 s, refused with the server's message;
    # jobs 1 (3600 s: the bound itself is allowed) and 3 run, 3 at once on the second core
    server = site(QUEUES + "set queue workq resources_max.walltime = 01:00:00\n")
    rows = [(0, 100, 3600, 1), (1, 10, 3601, 1), (2, 10, 60, 1)]
    result = replayed(workload(rows), server, capacity=2, queues=["workq"] * 3, users=[1, 2, 3])
    assert refused(result) == {2: (RESOURCE_LIMITS_MESSAGE, "queue workq resources_max.walltime = 01:00:00")}
    assert dict(zip(result.schedule["job_id"], result.schedule["start"])) == {1: 0, 3: 2}
    assert result.meta["summary"]["pbs_refused"] == {RESOURCE_LIMITS_MESSAGE: 1}


def test_resources_min_and_max_ncpus_and_the_servers_resources_max(site, workload):
    # workq: 2..4 CPUs; the server's walltime bound 2 h holds where the queue sets none (job 4);
    # queue long sets its own 1 day, which replaces the server's (job 5 asks 3 h: admitted)
    server = site(QUEUES + "set queue workq resources_min.ncpus = 2\nset queue workq resources_max.ncpus = 4\n"
                  "create queue long\nset queue long resources_max.walltime = 24:00:00\n"
                  "set server resources_max.walltime = 02:00:00\n")
    rows = [(0, 10, 60, 1), (0, 10, 60, 2), (0, 10, 60, 5), (0, 10, 7201, 2), (0, 10, 10800, 1)]
    result = replayed(workload(rows), server, capacity=8, queues=["workq"] * 4 + ["long"], users=[1] * 5)
    assert refused(result) == {1: (RESOURCE_LIMITS_MESSAGE, "queue workq resources_min.ncpus = 2"),
                               3: (RESOURCE_LIMITS_MESSAGE, "queue workq resources_max.ncpus = 4"),
                               4: (RESOURCE_LIMITS_MESSAGE, "server resources_max.walltime = 02:00:00")}
    assert sorted(result.schedule["job_id"]) == [2, 5]


def test_a_route_queue_no_destination_of_which_takes_the_job_refuses_it(site, workload):
    # route -> short (<= 1 h) or medium (<= 4 h): a 5-h job fits neither: refused, both bounds named;
    # a 2-h job goes to medium and runs
    server = site("""create queue route
set queue route queue_type = Route
set queue route route_destinations = short
set queue route route_destinations += medium
create queue short
set queue short resources_max.walltime = 01:00:00
create queue medium
set queue medium resources_max.walltime = 04:00:00
set server default_queue = route
""")
    assert refusal(server, "route", 7200, 1) == ("", "")
    assert refusal(server, "route", 18000, 1) == (
        ROUTE_REJECTED_MESSAGE, "route queue route: queue short resources_max.walltime = 01:00:00; "
                                "queue medium resources_max.walltime = 04:00:00")
    result = replayed(workload([(0, 10, 7200, 1), (0, 10, 18000, 1)]), server, queues=["route"] * 2, users=[1, 1])
    assert list(refused(result)) == [2] and result.schedule["job_id"].tolist() == [1]


def test_a_disabled_queue_refuses_new_jobs(site, workload):
    server = site(QUEUES + "create queue old\nset queue old enabled = False\n")
    result = replayed(workload([(0, 10, 60, 1), (0, 10, 60, 1)]), server, queues=["workq", "old"], users=[1, 1])
    assert refused(result) == {2: ("Queue is not enabled", "queue old enabled = False")}


def test_a_users_own_max_run_replaces_the_generic_one(site, workload):
    # [u:PBS_GENERIC=1],[u:ann=2]: ann runs two jobs at once (her own limit, not also the generic
    # 1), bob one; with [u:ann=1] and generic 3 ann is held to one (her own, lower)
    rows = [(0, 100, 100, 1)] * 2 + [(0, 50, 50, 1)] * 2
    users = [1, 1, 2, 2]
    server = site(QUEUES + "set queue workq max_run = [u:PBS_GENERIC=1],[u:ann=2]\n")
    assert starts(workload(rows), server, queues=["workq"] * 4, users=users) == [0, 0, 0, 50]
    server = site(QUEUES + "set queue workq max_run = [u:PBS_GENERIC=3],[u:ann=1]\n")
    assert starts(workload(rows), server, queues=["workq"] * 4, users=users) == [0, 100, 0, 0]


def test_a_users_own_max_queued_replaces_the_generic_one(site, workload):
    # one core; max_queued [u:PBS_GENERIC=1],[u:ann=3]: ann's three jobs are let in, bob's second is
    # refused (the generic limit, with the server's message for it)
    server = site(QUEUES + "set queue workq max_queued = [u:PBS_GENERIC=1],[u:ann=3]\n")
    rows = [(0, 10, 10, 1), (1, 10, 10, 1), (2, 10, 10, 1), (3, 10, 10, 1), (4, 10, 10, 1)]
    result = replayed(workload(rows), server, capacity=1, queues=["workq"] * 5, users=[1, 1, 1, 2, 2])
    assert refused(result) == {5: ("would exceed queue workq's per-user limit",
                                   "queue workq max_queued = [u:PBS_GENERIC=1]")}


def test_a_count_limit_is_checked_before_the_resource_bounds(site, workload):
    # svr_chkque: max_queued (7a) before resources_max (7e): a job over both is refused for the count
    server = site(QUEUES + "set queue workq max_queued = [o:PBS_ALL=1]\n"
                  "set queue workq resources_max.walltime = 00:01:00\n")
    result = replayed(workload([(0, 60, 60, 1), (1, 10, 120, 1)]), server, capacity=1, queues=["workq"] * 2,
                      users=[1, 2])
    assert refused(result) == {2: ("Maximum number of jobs already in queue workq", "queue workq max_queued = "
                                   "[o:PBS_ALL=1]")}


def test_the_command_line_says_how_many_jobs_were_refused_and_why(capsys):
    import pandas as pd

    from engine.cli import refused_note
    rejected = pd.DataFrame({"job_id": [1, 2, 3], "reason": [RESOURCE_LIMITS_MESSAGE] * 2 + ["Queue is not enabled"]})
    refused_note(rejected, None)
    assert capsys.readouterr().err == (f"3 jobs refused at submission, not in the schedule (2 {RESOURCE_LIMITS_MESSAGE}; "
                                       "1 Queue is not enabled): --rejected-out FILE lists them\n")
    refused_note(rejected.iloc[:0], None)
    assert capsys.readouterr().err == ""


def test_a_disabled_route_queue_refuses_new_jobs_as_an_execution_queue_does(site, workload):
    # svr_chkque checks enabled before anything else whatever the queue's type: qsub to a disabled
    # route queue is refused ("Queue is not enabled") though its destination would take the job;
    # submitted to the destination itself, the job runs
    server = site(QUEUES + "create queue route\nset queue route queue_type = Route\n"
                  "set queue route route_destinations = workq\nset queue route enabled = False\n")
    assert refusal(server, "route", 60, 1) == ("Queue is not enabled", "queue route enabled = False")
    result = replayed(workload([(0, 10, 60, 1), (0, 10, 60, 1)]), server, queues=["route", "workq"], users=[1, 1])
    assert refused(result) == {1: ("Queue is not enabled", "queue route enabled = False")}
    assert result.schedule["job_id"].tolist() == [2]


def test_a_job_a_limit_holds_even_alone_is_listed_as_never_running(site, workload):
    # max_run_res.ncpus [u:PBS_GENERIC=2]: ann's 3-CPU job could never start (PBS keeps it queued for
    # ever; before, the replay's 600-s cycles went on for ever); it is listed with the refused jobs,
    # the limit named. Her 2-CPU jobs run one at a time (0, then 10); bob's beside them
    server = site(QUEUES + "set queue workq max_run_res.ncpus = [u:PBS_GENERIC=2]\nset server scheduler_iteration = 600\n")
    rows = [(0, 10, 10, 2), (0, 10, 10, 2), (0, 10, 10, 3), (0, 10, 10, 2)]
    result = simulate_site(workload(rows), server, users=[1, 1, 1, 2])
    assert refused(result) == {3: ("Never runs (PBS keeps it queued): User has reached queue workq ncpus limit",
                                   "queue workq max_run_res.ncpus = [u:PBS_GENERIC=2]")}
    assert dict(zip(result.schedule["job_id"], result.schedule["start"])) == {1: 0, 2: 10, 4: 0}


def simulate_site(w, server, *, users):  # noqa: ANN001, ANN201
    """The pbs policy with the server's own scheduler_iteration (replayed() sets no cycle)."""
    from engine.run import simulate

    w.jobs["queue_name"] = ["workq"] * len(w.jobs)
    w.jobs["user"] = users
    w.metadata["user_names"] = {"1": "ann", "2": "bob"}
    return simulate(w, 4, {"preset": "pbs", "params": {}}, context={"pbs_site": server})


def test_a_started_jobs_usage_counts_at_once_within_its_cycle(site, workload):
    # fair-share on ncpus*walltime; bob's 4-CPU job ran 0-100 (usage 400). At 100 ann (usage 0) is
    # first: her job 2 starts and adds its request at once, 2 CPUs x 300 s = 600 > bob's 400, so the
    # jobs left are sorted again and bob's job 4 takes the other 2 CPUs (OpenPBS: update_usage_on_run,
    # then the re-sort); her job 3 waits to 200. With cput (a request names none) nothing is added and
    # ann's two jobs start together, as before
    groups = "ann 1 root 1\nbob 2 root 1\n"
    rows = [(0, 100, 100, 4), (1, 100, 300, 2), (1, 100, 300, 2), (2, 100, 100, 2)]
    users = [2, 1, 1, 2]
    by_request = site(sched="fair_share: true ALL\nfairshare_usage_res: ncpus*walltime\n", groups=groups)
    assert starts(workload(rows), by_request, users=users) == [0, 100, 200, 100]
    by_cput = site(sched="fair_share: true ALL\nfairshare_usage_res: cput\n", groups=groups)
    assert starts(workload(rows), by_cput, users=users) == [0, 100, 100, 200]


def test_a_route_queue_passes_a_job_its_first_destination_refuses_for_now_to_the_next(site, workload):
    # route -> fast (max_queued [u:PBS_GENERIC=1]), then slow: ann's first job goes to fast, her second
    # would be her second there, so job_route tries slow, which takes it (PBSE_ENTLIMCT is "for now":
    # the next destination is tried). Her third finds both full (slow: [u:PBS_GENERIC=1] too): refused
    # with fast's message (PBS would keep it in the route queue and try again later)
    server = site("""create queue route
set queue route queue_type = Route
set queue route route_destinations = fast
set queue route route_destinations += slow
create queue fast
set queue fast max_queued = [u:PBS_GENERIC=1]
create queue slow
set queue slow max_queued = [u:PBS_GENERIC=1]
set server default_queue = route
""")
    rows = [(0, 100, 100, 1), (1, 100, 100, 1), (2, 100, 100, 1)]
    result = replayed(workload(rows), server, capacity=4, queues=["route"] * 3, users=[1, 1, 1])
    assert dict(zip(result.schedule["job_id"], result.schedule["start"])) == {1: 0, 2: 1}
    assert refused(result) == {3: ("would exceed queue fast's per-user limit", "queue fast max_queued = [u:PBS_GENERIC=1]")}
