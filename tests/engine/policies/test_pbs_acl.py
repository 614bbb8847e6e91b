"""PBS's access lists at submission (engine.platform.pbsrules.acl_allows / acl_refusal /
server_acl_refusal, followed by the ``pbs`` policy): a queue's acl_users (acl_user_enable) and
acl_groups (acl_group_enable), from_route_only, the server's acl_users, as OpenPBS's svr_chkque,
authenticate_user and acl_check do; a route queue passing a job a destination's lists refuse to the
next destination."""

from __future__ import annotations

import pandas as pd
import pytest

from engine.platform.pbsconf import describe_pbs_site, pbs_unmodelled_keys
from engine.platform.pbsrules import (
    PERMISSION_MESSAGE,
    ROUTE_ONLY_MESSAGE,
    ROUTE_REJECTED_MESSAGE,
    acl_allows,
    refusal,
    route,
)
from engine.workload.errors import WorkloadError
from tests.engine.policies import test_pbs
from tests.engine.policies.test_pbs import QUEUES, replayed
from tests.engine.policies.test_pbs_admission import refused

site = test_pbs.site            # the fixture: a PbsServer from print server, sched_config, resource_group texts

GPU = QUEUES + "create queue gpu\n"
ROUTED = """create queue route
set queue route queue_type = Route
set queue route route_destinations = gpu
set queue route route_destinations += workq
create queue gpu
create queue workq
set server default_queue = route
"""


def with_groups(w, groups: list[int]):  # noqa: ANN001, ANN201
    """The workload with each job's group (1 physics, 2 gpuusers)."""
    w.jobs["group"] = groups
    w.metadata["group_names"] = {"1": "physics", "2": "gpuusers"}
    return w


def test_a_user_not_in_acl_users_is_refused_and_one_in_it_is_accepted(site, workload):
    # gpu: acl_user_enable True, acl_users ann: ann's job runs, bob's is refused as qsub refuses it
    # (svr_chkque 5a, PBSE_PERM "Unauthorized Request"), the list named; cid's in workq runs
    server = site(GPU + "set queue gpu acl_user_enable = True\nset queue gpu acl_users = ann\n")
    result = replayed(workload([(0, 10, 60, 1)] * 3), server, queues=["gpu", "gpu", "workq"], users=[1, 2, 3])
    assert refused(result) == {2: (PERMISSION_MESSAGE, "queue gpu acl_users = ann")}
    assert sorted(result.schedule["job_id"]) == [1, 3]
    assert result.meta["summary"]["pbs_refused"] == {PERMISSION_MESSAGE: 1}


def test_acl_user_enable_false_or_unset_leaves_the_list_unchecked(site, workload):
    # the same list with acl_user_enable False, or not set (False in OpenPBS): bob's job runs
    for enable in ("set queue gpu acl_user_enable = False\n", ""):
        server = site(GPU + enable + "set queue gpu acl_users = ann\n")
        result = replayed(workload([(0, 10, 60, 1)] * 2), server, queues=["gpu", "gpu"], users=[1, 2])
        assert refused(result) == {} and sorted(result.schedule["job_id"]) == [1, 2]
    # enabled with no list at all: acl_check's empty list lets nobody in
    server = site(GPU + "set queue gpu acl_user_enable = True\n")
    assert refusal(server, "gpu", 60, 1, "ann", "") == (PERMISSION_MESSAGE, "queue gpu acl_users = (empty: nobody)")


def test_acl_groups_follow_the_jobs_group(site, workload):
    # gpu: acl_group_enable True, acl_groups gpuusers: ann's job of group gpuusers runs, her job of
    # group physics is refused (svr_chkque 5b); acl_group_enable False: both run
    server = site(GPU + "set queue gpu acl_group_enable = True\nset queue gpu acl_groups = gpuusers\n")
    w = with_groups(workload([(0, 10, 60, 1)] * 2), [2, 1])
    result = replayed(w, server, queues=["gpu", "gpu"], users=[1, 1])
    assert refused(result) == {2: (PERMISSION_MESSAGE, "queue gpu acl_groups = gpuusers")}
    server = site(GPU + "set queue gpu acl_group_enable = False\nset queue gpu acl_groups = gpuusers\n")
    result = replayed(with_groups(workload([(0, 10, 60, 1)] * 2), [2, 1]), server, queues=["gpu", "gpu"], users=[1, 1])
    assert refused(result) == {}


def test_a_route_queue_passes_a_job_its_first_destinations_acl_refuses_to_the_next(site, workload):
    # route -> gpu (acl_users ann), workq: bob's job goes on to workq (PBSE_PERM is a refusal for good:
    # should_retry_route -1, default_router tries the next destination); ann's stays in gpu. With
    # workq closed to bob too, no destination takes him: "Job rejected by all possible destinations"
    server = site(ROUTED + "set queue gpu acl_user_enable = True\nset queue gpu acl_users = ann\n")
    assert route(server, "route", 60, 1, "bob", "") == "workq"
    assert route(server, "route", 60, 1, "ann", "") == "gpu"
    result = replayed(workload([(0, 10, 60, 1)] * 2), server, queues=["route"] * 2, users=[1, 2])
    assert refused(result) == {} and sorted(result.schedule["job_id"]) == [1, 2]
    server = site(ROUTED + "set queue gpu acl_user_enable = True\nset queue gpu acl_users = ann\n"
                  "set queue workq acl_group_enable = True\nset queue workq acl_groups = physics\n")
    w = with_groups(workload([(0, 10, 60, 1)] * 3), [2, 2, 1])
    result = replayed(w, server, queues=["route"] * 3, users=[1, 2, 2])
    assert refused(result) == {2: (ROUTE_REJECTED_MESSAGE, "route queue route: queue gpu acl_users = ann; "
                                   "queue workq acl_groups = physics")}


def test_a_route_queue_whose_destinations_all_refuse_for_good_refuses_whatever_their_counts(site, workload):
    # route -> gpu (acl_users ann; max_queued [o:PBS_ALL=1], full with ann's job), workq (up to 1 h):
    # bob's 2-h job: gpu refuses him for good (svr_chkque 5a comes before the counts, 7a), workq for
    # its bound: "Job rejected by all possible destinations", not gpu's count message
    server = site(ROUTED + "set queue gpu acl_user_enable = True\nset queue gpu acl_users = ann\n"
                  "set queue gpu max_queued = [o:PBS_ALL=1]\nset queue workq resources_max.walltime = 01:00:00\n")
    result = replayed(workload([(0, 100, 100, 1), (1, 10, 7200, 1)]), server, queues=["gpu", "route"], users=[1, 2])
    assert refused(result) == {2: (ROUTE_REJECTED_MESSAGE, "route queue route: queue gpu acl_users = ann; "
                                   "queue workq resources_max.walltime = 01:00:00")}


def test_plus_equal_lines_add_to_acl_users_and_minus_equal_takes_off(site, workload):
    # print server writes a list of several as "acl_users = ann" then "acl_users += cid": both are let
    # in, bob is not; "-= ann" then takes ann off
    text = GPU + "set queue gpu acl_user_enable = True\nset queue gpu acl_users = ann\nset queue gpu acl_users += cid\n"
    server = site(text)
    assert server.queues["gpu"].acl_users == ["ann", "cid"]
    result = replayed(workload([(0, 10, 60, 1)] * 3), server, queues=["gpu"] * 3, users=[1, 2, 3])
    assert refused(result) == {2: (PERMISSION_MESSAGE, "queue gpu acl_users = ann,cid")}
    server = site(text + "set queue gpu acl_users -= ann\n")
    assert refusal(server, "gpu", 60, 1, "ann", "")[0] == PERMISSION_MESSAGE
    assert refusal(server, "gpu", 60, 1, "cid", "") == ("", "")


def test_plus_and_minus_entries_and_user_at_host(site):
    # acl_check: the first entry naming the user decides, "-name" refusing; a lone "+" lets in the
    # users no entry names; "user@host" names the user (the log keeps no submission host)
    assert acl_allows(["+", "-bob"], "bob") is False
    assert acl_allows(["+", "-bob"], "ann") is True
    assert acl_allows(["-", "ann"], "ann") is True and acl_allows(["-", "ann"], "bob") is False
    assert acl_allows(["ann@login1.example.org"], "ann") is True
    assert acl_allows(["ann"], "annie") is False and acl_allows([], "ann") is False
    # kept sorted by name as qmgr keeps them (set_allacl's user_order): "-bob" before "zed"
    server = site(GPU + "set queue gpu acl_users = zed,-bob,+\n")
    assert server.queues["gpu"].acl_users == ["+", "-bob", "zed"]


def test_an_entry_twice_is_refused_as_qmgr_refuses_it(site):
    with pytest.raises(WorkloadError, match="twice"):
        site(GPU + "set queue gpu acl_users = ann\nset queue gpu acl_users += ann\n")


def test_from_route_only_refuses_a_job_submitted_straight_to_the_queue(site, workload):
    # svr_chkque 3: qsub (MOVE_TYPE_Move) to gpu is refused, PBSE_QACESS; through the route queue
    # (MOVE_TYPE_Route) the job gets in
    server = site(ROUTED + "set queue gpu from_route_only = True\n")
    result = replayed(workload([(0, 10, 60, 1)] * 2), server, queues=["gpu", "route"], users=[1, 1])
    assert refused(result) == {1: (ROUTE_ONLY_MESSAGE, "queue gpu from_route_only = True")}
    assert route(server, "route", 60, 1, "ann", "") == "gpu"


def test_the_servers_acl_users_refuses_before_any_queue_and_lets_managers_in(site, workload):
    # authenticate_user: the server's acl_users (acl_user_enable) on every request; bob is not in it
    # but is an operator: let in; cid is refused, even into a disabled queue (the server's check first)
    server = site(QUEUES + "create queue old\nset queue old enabled = False\nset server acl_user_enable = True\n"
                  "set server acl_users = ann\nset server operators = bob@head\n")
    result = replayed(workload([(0, 10, 60, 1)] * 3), server, queues=["workq", "workq", "old"], users=[1, 2, 3])
    assert refused(result) == {3: (PERMISSION_MESSAGE, "server acl_users = ann")}


def test_the_access_lists_refuse_before_the_counts_and_the_resources(site, workload):
    # svr_chkque: 5a/5b (access lists) before 7a (max_queued) and 7e (resources_max): bob's second job
    # is over both and outside the list: refused for the list
    server = site(GPU + "set queue gpu acl_user_enable = True\nset queue gpu acl_users = ann,-bob,+\n"
                  "set queue gpu max_queued = [o:PBS_ALL=1]\nset queue gpu resources_max.walltime = 00:01:00\n")
    result = replayed(workload([(0, 60, 60, 1), (1, 10, 120, 1)]), server, queues=["gpu"] * 2, users=[1, 2])
    assert refused(result) == {2: (PERMISSION_MESSAGE, "queue gpu acl_users = +,ann,-bob")}


def test_the_site_description_says_what_it_understood_of_the_lists(site):
    server = site(ROUTED + "set queue gpu acl_user_enable = True\nset queue gpu acl_users = ann\n"
                  "set queue workq acl_groups = physics\nset queue gpu from_route_only = True\n"
                  "set server acl_user_enable = True\nset server acl_users = ann,bob\n")
    text = "\n".join(describe_pbs_site(server))
    assert "acl_users ann (followed: a user it does not let in is refused, Unauthorized Request)" in text
    assert "acl_groups physics (acl_group_enable not True: not checked)" in text
    assert "from_route_only: a qsub straight to it is refused (Access to queue is denied)" in text
    assert "server acl_users ann,bob: a user it does not let in is refused at qsub" in text
    assert "acl_" not in " ".join(pbs_unmodelled_keys(server)) and "from_route_only" not in text.splitlines()[-1]


ACCOUNTING = """06/01/2024 10:00:00;Q;{n}.srv;queue={queue}
06/01/2024 10:00:00;E;{n}.srv;user={user} group={group} jobname=j queue={queue} ctime=1717228800 qtime=1717228800 \
etime=1717228800 start=1717228800 end=1717228860 exec_host=n1/0 Resource_List.ncpus=1 Resource_List.nodect=1 \
Resource_List.walltime=00:10:00 Exit_status=0 resources_used.walltime=00:01:00
"""


def test_the_command_line_lists_the_jobs_an_access_list_refuses(tmp_path, capsys):
    from engine.cli import main

    jobs = [("ann", "gpuusers", "gpu"), ("bob", "physics", "gpu"), ("bob", "gpuusers", "gpu"), ("cid", "physics", "workq")]
    log = "".join(ACCOUNTING.format(n=n, user=u, group=g, queue=q) for n, (u, g, q) in enumerate(jobs, start=1))
    (tmp_path / "acct.log").write_text(log)
    (tmp_path / "print_server.txt").write_text(GPU + "set queue gpu acl_group_enable = True\n"
                                               "set queue gpu acl_groups = gpuusers\n")
    assert main(["simulate", str(tmp_path / "acct.log"), "--procs", "2", "--no-parse-cache", "--pbs-server",
                 str(tmp_path / "print_server.txt"), "--policy", "pbs", "--out", str(tmp_path / "p.csv"),
                 "--rejected-out", str(tmp_path / "refused.csv")]) == 0
    assert capsys.readouterr().err.startswith(f"1 job refused at submission, not in the schedule (1 {PERMISSION_MESSAGE}): "
                                              "listed in ")
    rows = pd.read_csv(tmp_path / "refused.csv", dtype=str)
    assert rows["native_id"].tolist() == ["2.srv"]
    assert rows[["reason", "limit"]].values.tolist() == [[PERMISSION_MESSAGE, "queue gpu acl_groups = gpuusers"]]
