"""slurmctld's time-limit check in the ``slurm`` replay (job_mgr.c job_time_limit every 30 s,
OverTimeLimit from slurm.conf): hand-worked end times of jobs that ran into their limit."""

from __future__ import annotations

import pytest

from engine.errors import WorkloadError
from engine.platform.slurmconf import parse_slurm_conf
from tests.engine.policies.test_slurm_rules import BASE, PARTITIONS, run, site, starts


def ends(result) -> dict[int, int]:
    return dict(zip(result.schedule["job_id"], result.schedule["end"]))


def timeouts(workload, rows, cut):
    """The rows as a workload whose ``cut`` jobs the reader cut at their limit (TIMEOUT, overruns cut)."""
    def make(rows_):
        w = workload(rows_)
        w.jobs["killed"] = cut
        return w
    return make


def test_a_job_cut_at_its_limit_holds_its_cpus_until_the_next_check(workload):
    # checks every 30 s from the first submission (t=0). Job 1 (16 CPUs, limit 100 s, cut: TIMEOUT)
    # starts at 0, its limit ends at 100: killed at the check of 120. Job 2 (16 CPUs) waits for it:
    # it starts at 120, not 100; it ends by itself (runtime 50 <= limit) at 170.
    result = run(timeouts(workload, None, [True, False]), [(0, 100, 100, 16), (1, 50, 100, 16)], site())
    assert ends(result)[1] == 120 and starts(result)[2] == 120 and ends(result)[2] == 170
    schedule = result.schedule.set_index("job_id")
    assert schedule.loc[1, "runtime"] == 120 and bool(schedule.loc[1, "killed"])
    assert not bool(schedule.loc[2, "killed"])


def test_over_time_limit_and_the_checks_phase_move_the_kill(workload):
    # OverTimeLimit=1 (minute): due at 100 + 60 = 160, the checks at 0, 30, ..., 180: killed at 180;
    # the partition's own OverTimeLimit=2 overrides it: due at 220, killed at 240; with the checks'
    # grid 7 s later (limit_check_phase=7: checks at 7, 37, ..., 217, 247) at 187 and 247
    conf = BASE + "OverTimeLimit=1\n" + PARTITIONS.replace("PriorityJobFactor=1\n", "PriorityJobFactor=1 OverTimeLimit=2\n")
    rows = [(0, 100, 100, 8), (0, 100, 100, 8)]
    make = timeouts(workload, None, [True, True])
    assert ends(run(make, rows, site(conf=conf), partitions=["short", "long"])) == {1: 180, 2: 240}
    assert ends(run(make, rows, site(conf=conf), partitions=["short", "long"], limit_check_phase=7)) == {1: 187, 2: 247}
    # UNLIMITED: never killed by the check; the cut job then ends at its limit, as read
    unlimited = BASE + "OverTimeLimit=UNLIMITED\n" + PARTITIONS
    assert ends(run(make, rows, site(conf=unlimited), partitions=["short", "long"])) == {1: 100, 2: 100}


def test_a_job_read_with_its_recorded_overrun_keeps_it_and_the_check_can_be_switched_off(workload):
    # job 1 ran 107 s on a 100-s limit in the recording (read with overruns kept): it keeps 107 s;
    # job 2 was cut at its limit: with time_limit_check off it ends there, at 100
    rows = [(0, 107, 100, 8), (0, 100, 100, 8)]
    make = timeouts(workload, None, [False, True])
    assert ends(run(make, rows, site())) == {1: 107, 2: 120}
    assert ends(run(make, rows, site(), time_limit_check=False)) == {1: 107, 2: 100}


def test_over_time_limit_is_read_from_slurm_conf():
    conf = parse_slurm_conf(BASE + "OverTimeLimit=3\n" + PARTITIONS.replace(
        "MaxTime=00:20:00", "MaxTime=00:20:00 OverTimeLimit=UNLIMITED"), "t.conf")
    assert conf.over_time_limit == 180
    assert conf.over_time("short") == 180 and conf.over_time("long") is None
    assert parse_slurm_conf(BASE + PARTITIONS, "t.conf").over_time("short") == 0     # Slurm's default
    assert "OverTimeLimit" not in parse_slurm_conf(BASE + "OverTimeLimit=3\n" + PARTITIONS, "t.conf").unmodelled
    with pytest.raises(WorkloadError) as error:
        parse_slurm_conf(BASE + "OverTimeLimit=soon\n" + PARTITIONS, "t.conf")
    assert error.value.field == "OverTimeLimit" and error.value.line == 8
