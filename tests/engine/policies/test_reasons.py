"""The pending-reason table both site policies keep (engine.policies.reasons), on a hand-worked clock."""

from __future__ import annotations

import numpy as np

from engine.policies.reasons import ReasonTable


def test_each_jobs_seconds_go_to_the_reason_that_held_it_and_ties_go_to_the_first_name():
    clock = [0]
    table = ReasonTable(4, ("Resources", "Priority", "Limit"), lambda: clock[0])
    table.note_name(0, "Priority")          # job 0: Priority 0-10, Resources 10-40, then starts
    table.queued(1, 2)                      # job 1: Limit from 0 (queued with it), still waiting at 60
    clock[0] = 10
    table.note_name(0, "Resources")
    table.note_name(2, "Resources")         # job 2: Resources 10-30, Priority 30-50: a tie, first by name
    clock[0] = 30
    table.note_name(2, "Priority")
    table.note_name(0, "Resources")         # (the same reason again: nothing changes)
    clock[0] = 40
    table.stop(0)
    clock[0] = 50
    table.stop(2)
    clock[0] = 60
    waiting = np.array([1, 3])              # job 3 waits and was never given a reason
    assert table.longest(waiting) == ["Resources", "Limit", "Priority", ""]
    assert table.pending(waiting) == {"Limit": {"jobs": 1, "hours": round(60 / 3600, 3)},
                                      "Priority": {"jobs": 2, "hours": round(30 / 3600, 3)},
                                      "Resources": {"jobs": 2, "hours": round(50 / 3600, 3)}}
    jobs, seconds = table.table(waiting)
    assert jobs.tolist() == [0, 2, 1]       # in the order they first had seconds (job 1's at the end)
    assert seconds.tolist() == [[30, 10, 0], [20, 20, 0], [0, 0, 60]]
