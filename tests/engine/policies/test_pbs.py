"""The ``pbs`` policy (engine.policies.pbs) on hand-worked jobs: routing, max_run limits, strict order
with backfill_depth, fair-share down the resource_group tree, queue order; and the OpenPBS log of
/work/shared/data replayed from a site's files (tests/data/pbs_site)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from engine.platform.pbsconf import (
    QUEUE_LIMIT,
    RESOURCES,
    SERVER_LIMIT,
    STRICT_ORDER,
    TOP_JOB,
    PbsServer,
    read_pbs_site,
)
from engine.platform.pbsrules import run_limit_hold
from engine.policies.pbs import FairShareTree, route
from engine.run import simulate
from tests.shared_data import SHARED_DATA

SITE = Path(__file__).resolve().parents[2] / "data" / "pbs_site"
QUEUES = """create queue workq
set queue workq queue_type = Execution
set server default_queue = workq
"""


@pytest.fixture
def site(tmp_path):
    def make(server: str = QUEUES, sched: str = "", groups: str = "") -> PbsServer:
        paths = {}
        for name, text in (("print_server", server), ("sched_config", sched), ("resource_group", groups)):
            paths[name] = tmp_path / name
            paths[name].write_text(text)
        return read_pbs_site(paths["print_server"], sched_config=paths["sched_config"] if sched else None,
                             resource_group=paths["resource_group"] if groups else None)
    return make


def replayed(workload, server: PbsServer, *, capacity: int = 4, queues: list[str] | None = None,
             users: list[int] | None = None, **params):
    w = workload
    if queues is not None:
        w.jobs["queue_name"] = queues
    if users is not None:
        w.jobs["user"] = users
    w.metadata["user_names"] = {"1": "ann", "2": "bob", "3": "cid"}
    result = simulate(w, capacity, {"preset": "pbs", "params": {"cycle": 0, **params}}, context={"pbs_site": server})
    assert result.meta["summary"]["validation"]["ok"]
    return result


def starts(workload, server: PbsServer, **kwargs) -> list[int]:
    return replayed(workload, server, **kwargs).schedule.sort_values("job_id")["start"].tolist()


def test_route_queue_sends_a_job_to_the_first_destination_that_admits_it(site):
    server = site("""create queue route
set queue route queue_type = Route
set queue route route_destinations = short
set queue route route_destinations += long
create queue short
set queue short resources_max.walltime = 01:00:00
create queue long
set queue long resources_min.walltime = 01:00:01
set server default_queue = route
""")
    assert route(server, "route", 3600, 1) == "short"
    assert route(server, "route", 3601, 1) == "long"
    assert route(server, "nosuchqueue", 60, 1) == "short"      # unknown queue: the default (a route) queue
    assert route(server, "long", 60, 1) == "long"              # an execution queue keeps its jobs


def test_max_run_per_user_holds_the_users_second_job(site, workload):
    # [u:PBS_GENERIC=1] on workq: ann's second 1-core job waits for her first (ends at 100) although
    # 2 cores are free; bob's job is not held
    server = site(QUEUES + "set queue workq max_run = [u:PBS_GENERIC=1]\n")
    w = workload([(0, 100, 100, 1), (0, 50, 50, 1), (0, 50, 50, 1)])
    assert starts(w, server, queues=["workq"] * 3, users=[1, 1, 2]) == [0, 100, 0]


def test_max_run_overall_and_ncpus_per_user(site, workload):
    server = site(QUEUES + "set queue workq max_run = [o:PBS_ALL=2]\n")
    w = workload([(0, 100, 100, 1), (0, 50, 50, 1), (0, 50, 50, 1)])
    assert starts(w, server, queues=["workq"] * 3, users=[1, 2, 3]) == [0, 0, 50]
    server = site(QUEUES + "set queue workq max_run_res.ncpus = [u:PBS_GENERIC=3]\n")
    w = workload([(0, 100, 100, 2), (0, 50, 50, 2), (0, 50, 50, 2)])
    assert starts(w, server, queues=["workq"] * 3, users=[1, 1, 2], capacity=6) == [0, 100, 0]


def test_max_queued_per_user_refuses_the_submission_as_qsub_does(site, workload):
    # one core; workq max_queued [u:PBS_GENERIC=2] counts ann's jobs queued or running in workq.
    # ann's job 1 runs 0-100, her job 2 (t=10) waits: at t=20 she has 2, so her job 3 is refused;
    # bob's job 4 is not. At t=100 job 1 ends (ends are counted before submissions of the same
    # second): ann has 1 (job 2), so her job 5 is let in. Then by submission: 2 at 100, 4 at 150, 5 at 160.
    server = site(QUEUES + "set queue workq max_queued = [u:PBS_GENERIC=2]\n")
    rows = [(0, 100, 100, 1), (10, 50, 50, 1), (20, 5, 5, 1), (20, 10, 10, 1), (100, 10, 10, 1)]
    result = replayed(workload(rows), server, capacity=1, queues=["workq"] * 5, users=[1, 1, 1, 2, 1])
    schedule = result.schedule.sort_values("job_id")
    assert schedule["job_id"].tolist() == [1, 2, 4, 5]
    assert schedule["start"].tolist() == [0, 100, 150, 160]
    rejected = result.rejected_jobs
    assert rejected["job_id"].tolist() == [3]
    assert rejected["reason"].tolist() == ["would exceed queue workq's per-user limit"]
    assert rejected["limit"].tolist() == ["queue workq max_queued = [u:PBS_GENERIC=2]"]
    assert result.meta["summary"]["pbs_refused"] == {"would exceed queue workq's per-user limit": 1}


def test_max_queued_of_the_server_overall_and_for_one_user(site, workload):
    # the server's [o:PBS_ALL=2]: the third job submitted while two are queued or running is refused
    server = site(QUEUES + "set server max_queued = [o:PBS_ALL=2]\n")
    result = replayed(workload([(0, 100, 100, 1), (1, 10, 10, 1), (2, 10, 10, 1)]), server, capacity=1,
                      users=[1, 2, 3])
    assert result.rejected_jobs["reason"].tolist() == ["Maximum number of jobs already in complex"]
    # [u:bob=1] on the queue: bob's second job is refused, ann's are not limited
    server = site(QUEUES + "set queue workq max_queued = [u:bob=1]\n")
    result = replayed(workload([(0, 100, 100, 1), (1, 10, 10, 1), (2, 10, 10, 1), (3, 10, 10, 1)]), server,
                      capacity=1, queues=["workq"] * 4, users=[2, 1, 1, 2])
    assert result.rejected_jobs["job_id"].tolist() == [4]
    assert result.rejected_jobs["reason"].tolist() == ["Maximum number of jobs for user bob already in queue workq"]


def test_each_cycle_records_what_holds_each_job_in_pbs_words(site, workload):
    # BLOCKED under strict order without backfill: job 2 (4 cores) waits 1-100 for resources; job 3
    # is behind it in strict order 2-100, then at 100 (job 2 started, no core free) short of
    # resources to 150; job 4 is behind strict order 3-150 (at 100 job 3 stops the cycle)
    server = site(sched="strict_ordering: true ALL\n", server=QUEUES + "set server backfill_depth = 0\n")
    result = replayed(workload(BLOCKED), server, users=[1, 2, 1, 2])
    assert result.schedule.sort_values("job_id")["pbs_reason"].tolist() == ["", RESOURCES, STRICT_ORDER, STRICT_ORDER]
    assert result.meta["summary"]["pbs_pending"] == {
        RESOURCES: {"jobs": 2, "hours": round((99 + 50) / 3600, 3)},
        STRICT_ORDER: {"jobs": 2, "hours": round((98 + 147) / 3600, 3)}}


def test_a_job_that_would_delay_the_top_job_waits_for_the_reservation(site, workload):
    # backfill_depth 1: job 2 reserved at 100; job 4 (200 s) finds no core 3-62 (job 3 backfilled),
    # then one core 62-100 that would delay job 2's reservation, then none 100-150
    server = site(sched="strict_ordering: true ALL\n")
    result = replayed(workload(BLOCKED), server, users=[1, 2, 1, 2])
    pending = result.meta["summary"]["pbs_pending"]
    assert pending[TOP_JOB] == {"jobs": 1, "hours": round(38 / 3600, 3)}
    assert pending[RESOURCES] == {"jobs": 2, "hours": round((99 + 59 + 50) / 3600, 3)}


def test_max_run_holds_are_told_apart_queue_and_server(site, workload):
    # ann's second job waits 0-100 behind her first under a max_run of 1 per user: the queue's, then the server's
    rows = [(0, 100, 100, 1), (0, 50, 50, 1)]
    for text, reason in (("set queue workq max_run = [u:PBS_GENERIC=1]\n", QUEUE_LIMIT),
                         ("set server max_run = [u:PBS_GENERIC=1]\n", SERVER_LIMIT)):
        result = replayed(workload(rows), site(QUEUES + text), queues=["workq"] * 2, users=[1, 1])
        assert result.meta["summary"]["pbs_pending"] == {reason: {"jobs": 1, "hours": round(100 / 3600, 3)}}


BLOCKED = [(0, 100, 100, 3), (1, 50, 50, 4), (2, 60, 60, 1), (3, 200, 200, 1)]


def test_strict_ordering_without_backfill_stops_at_the_first_job_that_does_not_fit(site, workload):
    # the 4-core job waits for the 3-core one (ends at 100); strict order, no backfill: the 1-core
    # jobs behind it wait too, although a core is free
    server = site(sched="strict_ordering: true ALL\n", server=QUEUES + "set server backfill_depth = 0\n")
    assert starts(workload(BLOCKED), server, users=[1, 2, 1, 2]) == [0, 100, 150, 150]


def test_strict_ordering_with_backfill_depth_one_backfills_what_ends_before_the_reservation(site, workload):
    # depth 1: the 4-core job is reserved at 100; the 60-s job fits the free core until then and
    # starts at 2; the 200-s job would delay the reservation and waits until the big job has ended
    server = site(sched="strict_ordering: true ALL\n")
    assert starts(workload(BLOCKED), server, users=[1, 2, 1, 2]) == [0, 100, 2, 150]


def test_without_strict_ordering_every_job_that_fits_starts(site, workload):
    # first fit: the 200-s job takes the free core at 3 (after the 60-s job ends at 62), so the 4-core job
    # waits for it: PBS's default, no reservation
    server = site(sched="strict_ordering: false ALL\n")
    assert starts(workload(BLOCKED), server, users=[1, 2, 1, 2]) == [0, 262, 2, 62]


def test_fair_share_keys_walk_the_tree_top_level_first(site):
    # physics 60 (ann 1, bob 1), chem 40 (cid); usage ann 30, bob 10, cid 60 of 100:
    # top level: physics (.4 / .6), chem (.6 / .4); within physics ann (.75 / .5), bob (.25 / .5)
    server = site(groups="physics 10 root 60\nann 11 physics 1\nbob 12 physics 1\nchem 20 root 40\ncid 21 chem 1\n")
    tree = FairShareTree(server, {"ann", "bob", "cid"})
    for user, used in (("ann", 30), ("bob", 10), ("cid", 60)):
        tree.charge(user, used)
    keys = tree.keys()
    assert keys["ann"] == pytest.approx((0.4 / 0.6, 1.5))
    assert keys["bob"] == pytest.approx((0.4 / 0.6, 0.5))
    assert keys["cid"] == pytest.approx((1.5, 1.0))
    assert sorted(keys, key=keys.get) == ["bob", "ann", "cid"]


def test_an_entity_the_tree_does_not_name_shares_the_unknown_group(site):
    server = site(sched="unknown_shares: 0\n", groups="physics 10 root 60\nann 11 physics 1\n")
    keys = FairShareTree(server, {"ann", "zed"}).keys()
    assert math.isinf(keys["zed"][0]) and keys["ann"][0] == 0.0     # no shares: last


def test_fair_share_orders_the_waiting_jobs_by_usage(site, workload):
    # ann has run 100 s on 4 cores; then ann's and bob's 4-core jobs wait for it: bob's (submitted
    # later) goes first, charged while ann's first job ran
    server = site(sched="fair_share: true ALL\n", groups="ann 1 root 1\nbob 2 root 1\n")
    w = workload([(0, 100, 100, 4), (1, 50, 50, 4), (2, 50, 50, 4)])
    assert starts(w, server, users=[1, 1, 2]) == [0, 150, 100]
    server = site(sched="fair_share: false ALL\n")
    w = workload([(0, 100, 100, 4), (1, 50, 50, 4), (2, 50, 50, 4)])
    assert starts(w, server, users=[1, 1, 2]) == [0, 100, 150]


def test_queues_by_priority_then_round_robin(site, workload):
    # a 4-core job runs to 10; two 2-core jobs wait in low (priority 10), two in high (50). by_queue:
    # both high jobs start at 10; round_robin: each cycle takes one job of each queue in turn from
    # the highest, so one high and one low start at 10
    text = "create queue low\nset queue low priority = 10\ncreate queue high\nset queue high priority = 50\n"
    rows = [(0, 10, 10, 4), (1, 10, 10, 2), (1, 10, 10, 2), (2, 10, 10, 2), (2, 10, 10, 2)]
    queues = ["low", "low", "low", "high", "high"]
    assert starts(workload(rows), site(text), queues=queues) == [0, 20, 20, 10, 10]
    robin = site(text, sched="round_robin: true ALL\n")
    assert starts(workload(rows), robin, queues=queues) == [0, 10, 20, 10, 20]


def test_the_policy_needs_the_site(workload):
    with pytest.raises(Exception, match="--pbs-server"):
        simulate(workload([(0, 3, 10, 1)]), 4, "pbs")


def test_the_openpbs_log_replayed_from_the_site_files(tmp_path):
    """The CESNET OpenPBS test server's log (fairsharesim/OpenPBS.log: 200 jobs of two users, 2 nodes
    of 2 cores) replayed from a site as tests/data/pbs_site writes it (fair-share, strict order,
    backfill_depth 1; the real server's files were not published): mean wait +4.2 % of the
    recorded 78,965 s, rank correlation of waits 0.988. Without fair-share (the same as EASY in
    submit order) the order is far: rank 0.77."""
    log = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"
    run = [sys.executable, "-m", "engine"]
    common = ["--procs", "4", "--no-parse-cache"]
    subprocess.run([*run, "simulate", str(log), *common, "--policy", "recorded", "--out", str(tmp_path / "r.csv")],
                   check=True)
    subprocess.run([*run, "simulate", str(log), *common, "--pbs-server", str(SITE / "print_server.txt"),
                    "--sched-config", str(SITE / "sched_config"), "--resource-group", str(SITE / "resource_group"),
                    "--policy", "pbs", "--out", str(tmp_path / "p.csv")], check=True)
    out = subprocess.run([*run, "fidelity", str(tmp_path / "r.csv"), str(tmp_path / "p.csv"), "--capacity", "4"],
                         check=True, capture_output=True, text=True).stdout
    overall = json.loads(out)["overall"]
    assert overall["mean_wait_ratio"] == pytest.approx(1.0416, abs=0.002)
    assert overall["wait_rank_correlation"] >= 0.98


def test_max_queued_res_ncpus_counts_the_users_cpus_queued_or_running(site, workload):
    # four cores; workq max_queued_res.ncpus [u:PBS_GENERIC=4]: ann's 2-CPU jobs at 0 and 10 run
    # (4 CPUs of hers in workq), her 1-CPU job at 20 would make 5: refused with the server's
    # message; bob's at 20 is let in and waits for a core (job 2 ends at 60). At 100 job 1 ends
    # (ends before submissions of the same second): ann has none, her 3-CPU job is let in
    server = site(QUEUES + "set queue workq max_queued_res.ncpus = [u:PBS_GENERIC=4]\n")
    rows = [(0, 100, 100, 2), (10, 50, 50, 2), (20, 10, 10, 1), (20, 10, 10, 1), (100, 10, 10, 3)]
    result = replayed(workload(rows), server, capacity=4, queues=["workq"] * 5, users=[1, 1, 1, 2, 1])
    assert dict(zip(result.schedule["job_id"], result.schedule["start"])) == {1: 0, 2: 10, 4: 60, 5: 100}
    assert result.rejected_jobs["job_id"].tolist() == [3]
    assert result.rejected_jobs["reason"].tolist() == ["would exceed per-user limit on resource ncpus in queue workq"]
    assert result.rejected_jobs["limit"].tolist() == ["queue workq max_queued_res.ncpus = [u:PBS_GENERIC=4]"]


def test_queued_jobs_threshold_counts_only_jobs_not_yet_running(site, workload):
    # one core; workq queued_jobs_threshold [u:PBS_GENERIC=1]: ann's job 1 runs at 0 (no longer
    # in the 'Q' state), so her job 2 at 10 is let in (max_queued 1 would refuse it); her job 3
    # at 20 would be her second queued one: refused. Job 2 starts at 100, so her job 4 at 101 is
    # let in and runs after it (150)
    rows = [(0, 100, 100, 1), (10, 50, 50, 1), (20, 5, 5, 1), (101, 10, 10, 1)]
    server = site(QUEUES + "set queue workq queued_jobs_threshold = [u:PBS_GENERIC=1]\n")
    result = replayed(workload(rows), server, capacity=1, queues=["workq"] * 4, users=[1] * 4)
    assert dict(zip(result.schedule["job_id"], result.schedule["start"])) == {1: 0, 2: 100, 4: 150}
    assert result.rejected_jobs["job_id"].tolist() == [3]
    assert result.rejected_jobs["reason"].tolist() == ["would exceed queue workq's per-user limit of jobs in 'Q' state"]
    assert result.rejected_jobs["limit"].tolist() == ["queue workq queued_jobs_threshold = [u:PBS_GENERIC=1]"]
    counted = replayed(workload(rows), site(QUEUES + "set queue workq max_queued = [u:PBS_GENERIC=1]\n"),
                       capacity=1, queues=["workq"] * 4, users=[1] * 4)
    assert counted.rejected_jobs["job_id"].tolist() == [2, 3]       # running jobs count for max_queued


def test_the_servers_queued_jobs_threshold_res_counts_queued_cpus_of_all(site, workload):
    # two cores; the server's queued_jobs_threshold_res.ncpus [o:PBS_ALL=3]: job 1 (2 CPUs) runs,
    # job 2 (2) waits: 2 queued CPUs; job 3 (2) would make 4: refused; job 4 (1) makes 3: let in.
    # First fit: job 2 at 100, job 4 when it ends (110)
    server = site(QUEUES + "set server queued_jobs_threshold_res.ncpus = [o:PBS_ALL=3]\n")
    rows = [(0, 100, 100, 2), (1, 10, 10, 2), (2, 10, 10, 2), (3, 10, 10, 1)]
    result = replayed(workload(rows), server, capacity=2, users=[1, 2, 3, 1])
    assert dict(zip(result.schedule["job_id"], result.schedule["start"])) == {1: 0, 2: 100, 4: 110}
    assert result.rejected_jobs["reason"].tolist() == ["would exceed limit on resource ncpus in complex for jobs in 'Q' state"]
    assert result.rejected_jobs["limit"].tolist() == ["server queued_jobs_threshold_res.ncpus = [o:PBS_ALL=3]"]


def test_the_messages_on_queued_jobs_are_the_servers():
    from engine.policies.pbs import enqueue_message
    # OpenPBS src/lib/Liblog/pbs_messages.c, msg_et_*
    assert enqueue_message("g", "PBS_GENERIC", None, "", True) == "would exceed complex's per-group limit of jobs in 'Q' state"
    assert enqueue_message("p", "proj", "workq", "", True) == "Maximum number of jobs in 'Q' state for project proj already in queue workq"
    assert enqueue_message("o", "PBS_ALL", "workq", "", True) == "Maximum number of jobs in 'Q' state already in queue workq"
    assert enqueue_message("u", "bob", "workq", "ncpus", False) == "would exceed user bob's limit on resource ncpus in queue workq"
    assert enqueue_message("g", "PBS_GENERIC", None, "ncpus", True) == \
        "would exceed per-group limit on resource ncpus in complex for jobs in 'Q' state"


def test_run_limits_are_checked_in_the_schedulers_order(site):
    # OpenPBS's scheduler (limits.cpp, check_limits' limfuncs): every max_run (the queue's, then the
    # server's) before any max_run_res, each by group, project, overall, then user; the first that
    # holds names the comment. ann (group staff) has 1 job of 2 CPUs running in workq, the only
    # running job. Her next job (1 CPU): the queue's [u:ann=1] and [g:staff=1] both hold: the
    # group's comment; with the server's max_run [o:PBS_ALL=1] and the queue's max_run_res.ncpus
    # [u:ann=2] both holding (and nothing else), the server's max_run comes first
    columns = {"user": ["ann", "ann"], "group": ["staff", "staff"], "account": ["", ""]}
    used = {(where, scope, entity): (1, 2) for where in ("workq", None)
            for scope, entity in (("u", "ann"), ("g", "staff"), ("p", ""), ("o", ""))}
    server = site(QUEUES + "set queue workq max_run = [u:ann=1]\nset queue workq max_run += [g:staff=1]\n")
    assert run_limit_hold(server, "workq", columns, 1, 1, used) == (
        "Group has reached queue workq running job limit", QUEUE_LIMIT)
    server = site(QUEUES + "set queue workq max_run_res.ncpus = [u:ann=2]\nset server max_run = [o:PBS_ALL=1]\n")
    assert run_limit_hold(server, "workq", columns, 1, 1, used) == (
        "Server running job limit has been reached", SERVER_LIMIT)
    # either alone holds with its own comment
    server = site(QUEUES + "set queue workq max_run_res.ncpus = [u:ann=2]\n")
    assert run_limit_hold(server, "workq", columns, 1, 1, used) == (
        "User has reached queue workq ncpus limit", QUEUE_LIMIT)
