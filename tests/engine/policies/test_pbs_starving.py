"""sched_config's help_starving_jobs and max_starve in the ``pbs`` policy, on hand-worked schedules (4 cores,
max_starve 100 s), each against the same jobs without it. As OpenPBS 20 followed them (the support was
removed from OpenPBS in 2021, commit 530960706): job_info.cpp job_starving (waited more than
max_starve, since queued or eligible_time), sort.cpp cmp_sort / cmp_starving_jobs (the longest starving
first after the preemption class), fifo.cpp next_job / find_non_normal_job_ind (with by_queue, before
every queue's jobs), should_backfill_with_job (a reservation while backfill_depth allows, strict order
or not) and main_sched_loop (no backfilling: a starving job that does not run stops the cycle)."""

from __future__ import annotations

import pytest

from engine.platform.pbsconf import RESOURCES, STARVING, STRICT_ORDER, TOP_JOB, max_starve, read_pbs_site
from engine.run import simulate

QUEUES = """create queue workq
set queue workq queue_type = Execution
set server default_queue = workq
"""
STARVE = "help_starving_jobs: true ALL\nmax_starve: 100\n"


@pytest.fixture
def site(tmp_path):
    def make(server: str = QUEUES, sched: str = ""):
        (tmp_path / "server").write_text(server)
        (tmp_path / "sched").write_text(sched)
        return read_pbs_site(tmp_path / "server", sched_config=tmp_path / "sched" if sched else None)
    return make


def replayed(workload, rows, server, *, queues=None, users=None, **params):
    w = workload(rows)
    if queues is not None:
        w.jobs["queue_name"] = queues
    if users is not None:
        w.jobs["user"] = users
        w.metadata["user_names"] = {"1": "ann", "2": "bob"}
    result = simulate(w, 4, {"preset": "pbs", "params": {"cycle": 0, **params}}, context={"pbs_site": server})
    assert result.meta["summary"]["validation"]["ok"]
    return result.schedule.sort_values("job_id")


def starts(*args, **kwargs) -> list[int]:
    return replayed(*args, **kwargs)["start"].tolist()


#: job 1 holds 3 cores 0-300; job 2 (4 cores) waits for them and starves from 102 (waited > 100);
#: job 3 takes the free core 50-150; job 4 (200 s) comes at 160, job 5 (100 s) at 170
RESERVE = [(0, 300, 300, 3), (1, 100, 100, 4), (50, 100, 100, 1), (160, 200, 200, 1), (170, 100, 100, 1)]


def test_a_starving_job_gets_a_reservation_without_strict_ordering(site, workload):
    # help_starving_jobs: at 160 job 2 is starving and reserved at 300: job 4 (160-360) would delay it
    # and waits; job 5 (170-270) ends before 300 and is backfilled. Job 2 runs 300-400, job 4 from 400
    assert starts(workload, RESERVE, site(sched=STARVE)) == [0, 300, 50, 400, 170]
    reasons = replayed(workload, RESERVE, site(sched=STARVE))["pbs_reason"].tolist()
    assert reasons == ["", RESOURCES, "", TOP_JOB, ""]


@pytest.mark.parametrize("sched", ["help_starving_jobs: false ALL\nmax_starve: 100\n", "max_starve: 100\n", ""])
def test_without_help_starving_jobs_first_fit_delays_the_wide_job(site, workload, sched):
    # false, or the line absent (OpenPBS's default: off): first fit, no reservation. Job 4 takes the
    # free core at 160 (to 360), job 5 waits for a core until 300; job 2 gets its 4 cores at 400
    assert starts(workload, RESERVE, site(sched=sched)) == [0, 400, 50, 160, 300]


def test_the_parameters_override_the_site(site, workload):
    # the Params: help_starving_jobs true over a site without it; false over a site with it; a max_starve
    # of 200 s leaves job 2 not starving at 160 and 170 (waited 159, 169): job 4 takes the free core
    # (160-360); at 300 job 2 starves, is reserved at 360 and job 5 (300-400) waits for it to end at 460
    assert starts(workload, RESERVE, site(), help_starving_jobs="true", max_starve=100) == [0, 300, 50, 400, 170]
    assert starts(workload, RESERVE, site(sched=STARVE), help_starving_jobs="false") == [0, 400, 50, 160, 300]
    assert starts(workload, RESERVE, site(sched=STARVE), max_starve=200) == [0, 360, 50, 160, 460]


def test_max_starve_absent_is_zero_and_the_site_text_parses(site):
    assert max_starve(site(sched="help_starving_jobs: true ALL\n")) == 0
    assert max_starve(site(sched="max_starve: 24:00:00\n")) == 86400


def test_without_backfilling_a_starving_job_that_does_not_run_stops_the_cycle(site, workload):
    # backfill_depth 0: from 160 job 2 is starving and does not fit: nothing after it starts, jobs 4
    # and 5 wait "Job would conflict with starving job" until job 2 has run (300-400)
    server = site(QUEUES + "set server backfill_depth = 0\n", sched=STARVE)
    result = replayed(workload, RESERVE, server)
    assert result["start"].tolist() == [0, 300, 50, 400, 400]
    assert result["pbs_reason"].tolist() == ["", RESOURCES, "", STARVING, STARVING]
    plain = site(QUEUES + "set server backfill_depth = 0\n")
    assert starts(workload, RESERVE, plain) == [0, 400, 50, 160, 300]


#: strict order without backfilling, job_sort_key ncpus LOW: job 1 (2 cores) runs 0-200; the wide job 2
#: waits; job 3 (2 cores) starts at 2 to 302; job 4 (2 cores, 100 s) comes at 150
ORDERED = [(0, 200, 200, 2), (1, 100, 100, 4), (2, 300, 300, 2), (150, 100, 100, 2)]
SORTED = 'strict_ordering: true ALL\njob_sort_key: "ncpus LOW" ALL\n'


def test_a_starving_job_goes_before_the_sort_keys(site, workload):
    # without: ncpus LOW puts job 4 before the wide job 2: at 200 job 4 takes the 2 free cores (200-300),
    # job 2 runs at 302. With help_starving_jobs job 2 (starving since 102) is first: it does not fit
    # at 200 and strict order holds job 4 behind it until job 2 has run (302-402)
    server = site(QUEUES + "set server backfill_depth = 0\n", sched=SORTED)
    assert starts(workload, ORDERED, server) == [0, 302, 2, 200]
    starving = site(QUEUES + "set server backfill_depth = 0\n", sched=SORTED + STARVE)
    result = replayed(workload, ORDERED, starving)
    assert result["start"].tolist() == [0, 302, 2, 402]
    assert result["pbs_reason"].tolist() == ["", RESOURCES, "", STRICT_ORDER]


#: job 1 holds all 4 cores 0-300; jobs 2 (4 cores) and 3 (3 cores) come at the same second, so starve
#: from the same second; job 4 (1 core, 150 s) one second later
TIED = [(0, 300, 300, 4), (1, 100, 100, 4), (1, 100, 100, 3), (2, 150, 150, 1)]


def test_jobs_starving_since_the_same_second_are_ordered_by_the_sort_keys(site, workload):
    # at 300 all three wait more than 100 s; jobs 2 and 3 waited 299 s each, job 4 298 s. The tie goes
    # to job_sort_key ncpus LOW: job 3 starts (3 cores), job 2 gets the reservation at 400 (depth 1),
    # job 4 (300-450) would delay it and waits until job 2 ends at 500. (Ties broken by submission
    # instead: job 2 first, starting at 300, job 3 reserved at 400.)
    sched = STARVE + 'job_sort_key: "ncpus LOW" ALL\n'
    assert starts(workload, TIED, site(sched=sched)) == [0, 400, 300, 500]
    # ncpus HIGH: job 2 starts, job 3 is reserved at 400, job 4 (300-450) would delay it; at 400 job 3
    # starts and job 4 takes the last core
    assert starts(workload, TIED, site(sched=STARVE + 'job_sort_key: "ncpus HIGH" ALL\n')) == [0, 300, 400, 400]
    # without help_starving_jobs ncpus LOW takes job 4 first (300-450), then job 3; job 2 waits to 450
    assert starts(workload, TIED, site(sched='job_sort_key: "ncpus LOW" ALL\n')) == [0, 450, 300, 300]


#: job 1 holds 2 cores 0-300; the wide job 2 comes at 1; job 3 (250 s) at 101, job 4 (250 s) at 150
BETWEEN = [(0, 300, 300, 2), (1, 100, 100, 4), (101, 250, 250, 1), (150, 250, 250, 1)]


def test_a_job_that_becomes_starving_between_cycles_is_helped_from_the_next_one(site, workload):
    # at 101 job 2 has waited 100 s, not more than max_starve: not starving, job 3 takes a free core
    # (101-351) though it delays job 2. Job 2 starves from 102, but no cycle runs until job 4 comes at
    # 150: job 2 is reserved at 351 and job 4 (150-400) would delay it, so it waits to 451
    assert starts(workload, BETWEEN, site(sched=STARVE)) == [0, 351, 101, 451]
    assert starts(workload, BETWEEN, site()) == [0, 400, 101, 150]


def test_by_queue_a_starving_job_goes_before_a_higher_queues_jobs_but_not_an_express_queues(site, workload):
    # job 1 (low) holds the 4 cores 0-300; job 2 (low, 4 cores) waits from 1, job 3 (high, 4 cores)
    # from 250. At 300: by queue priority job 3 first; starving, job 2 (waited 299 s) goes first. An
    # express queue (priority >= preempt_queue_prio 150, preemptive_sched) stays ahead of it
    rows = [(0, 300, 300, 4), (1, 100, 100, 4), (250, 100, 100, 4)]
    queues = ["low", "low", "high"]
    two = "create queue low\nset queue low priority = 10\ncreate queue high\nset queue high priority = {}\n"
    assert starts(workload, rows, site(two.format(100)), queues=queues) == [0, 400, 300]
    assert starts(workload, rows, site(two.format(100), sched=STARVE), queues=queues) == [0, 300, 400]
    express = site(two.format(200), sched=STARVE + "preemptive_sched: true ALL\n")
    assert starts(workload, rows, express, queues=queues) == [0, 400, 300]
    # not preempting, the express queue is a queue like the others: the starving job goes first
    assert starts(workload, rows, site(two.format(200), sched=STARVE), queues=queues) == [0, 300, 400]


def test_eligible_time_leaves_out_the_time_a_users_limit_held_the_job(site, workload):
    # ann's jobs 1 (0-300, 1 core) and 2 (1 core, from 1) under max_run 1 per user: job 2 is held by
    # her limit until 300. bob's wide job 3 (4 cores, from 2) waits for them. With eligible_time_enable
    # job 2's wait counts from 300: at 300 job 3 (waited 298) is the one starving and starts first
    # (300-400), job 2 after it; counted from submission both starve and job 2 (waited 299) goes first
    rows = [(0, 300, 300, 1), (1, 100, 100, 1), (2, 100, 100, 4)]
    server = QUEUES + "set queue workq max_run = [u:PBS_GENERIC=1]\n"
    users = [1, 1, 2]
    eligible = site(server + "set server eligible_time_enable = True\n", sched=STARVE)
    assert starts(workload, rows, eligible, users=users) == [0, 400, 300]
    assert starts(workload, rows, site(server, sched=STARVE), users=users) == [0, 300, 400]
    assert starts(workload, rows, site(server, sched=STARVE), users=users, eligible_time_enable="true") == [0, 400, 300]


def test_with_fair_share_and_preemption_a_starving_job_goes_first_in_its_own_queue_only(site, workload):
    # fair_share sorts the complex's list queue by queue; preempting, next_job's first pass stops at the
    # first normal job (the high queue's job 3), so job 2 goes first only in the low queue; not
    # preempting, no job has a class and the pass takes every starving job first
    rows = [(0, 300, 300, 4), (1, 100, 100, 4), (250, 100, 100, 4)]
    queues = ["low", "low", "high"]
    two = "create queue low\nset queue low priority = 10\ncreate queue high\nset queue high priority = 100\n"
    fair = STARVE + "fair_share: true ALL\n"
    assert starts(workload, rows, site(two, sched=fair + "preemptive_sched: true ALL\n"), queues=queues) == [0, 400, 300]
    assert starts(workload, rows, site(two, sched=fair), queues=queues) == [0, 300, 400]


def test_starving_jobs_of_several_queues_longest_first_or_queue_by_queue_with_fair_share(site, workload):
    # jobs 2 (low, from 1) and 3 (high, from 2) both starve at 300. Without fair_share the complex's
    # list is sorted whole: job 2 (waited 299 s) before job 3 (298 s). With fair_share (not preempting)
    # the list is the queues' lists one after the other: the high queue's starving job 3 first
    rows = [(0, 300, 300, 4), (1, 100, 100, 4), (2, 100, 100, 4)]
    queues = ["low", "low", "high"]
    two = "create queue low\nset queue low priority = 10\ncreate queue high\nset queue high priority = 100\n"
    assert starts(workload, rows, site(two, sched=STARVE), queues=queues) == [0, 300, 400]
    assert starts(workload, rows, site(two, sched=STARVE + "fair_share: true ALL\n"), queues=queues) == [0, 400, 300]
    assert starts(workload, rows, site(two), queues=queues) == [0, 400, 300]
