"""slurmctld's periodic time-limit check (engine.sim.timelimit): hand-worked kill times."""

from __future__ import annotations

from engine.sim.timelimit import TimeLimitCheck, first_check


def test_first_check_is_the_first_grid_point_at_or_after_the_due_time():
    # checks at 100, 130, 160, ...
    assert first_check(100, 100) == 100
    assert first_check(101, 100) == 130
    assert first_check(130, 100) == 130
    assert first_check(131, 100) == 160
    assert first_check(50, 100) == 100          # before the first check: the first one
    assert first_check(107, 100, period=10) == 110


def test_a_job_cut_at_its_limit_ends_at_the_first_check_after_limit_plus_over_time_limit():
    # job 0: limit 60 s, no grace, cut at its limit by the reader (a TIMEOUT job): started at 105, its
    # limit ends at 165, the checks run at 100, 130, 160, 190: killed at 190, 85 s after its start
    # job 1: the same with OverTimeLimit 1 min: due at 225, killed at the check of 250
    # job 2: UNLIMITED OverTimeLimit: never killed by the check (runs what it was given)
    # job 3: not cut: its runtime as read, also one past its limit (its recorded run, which Slurm's
    # own check ended)
    check = TimeLimitCheck(limit=[60, 60, 60, 60], grace=[0, 60, None, 0], cut=[True, True, True, False], origin=100)
    assert check.runtime(0, 105, 60) == (85, True)
    assert check.runtime(0, 70, 60) == (60, True)       # due at 130 = a check: killed at its limit
    assert check.runtime(1, 105, 60) == (145, True)
    assert check.runtime(2, 105, 60) == (60, False)
    assert check.runtime(3, 105, 40) == (40, False)
    assert check.runtime(3, 105, 77) == (77, False)
    assert TimeLimitCheck([-1], [0], [True], 0).runtime(0, 5, 9) == (9, False)     # no limit: never killed


def test_without_renumbers_the_other_jobs():
    check = TimeLimitCheck(limit=[1, 2, 3], grace=[0, None, 60], cut=[True, False, True], origin=7, period=10)
    kept = check.without({1})
    assert (kept.limit, kept.grace, kept.cut, kept.origin, kept.period) == ([1, 3], [0, 60], [True, True], 7, 10)
