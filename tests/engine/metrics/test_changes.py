"""Per-queue and per-user changes between runs, on hand-made schedules."""

from __future__ import annotations

import pandas as pd

from engine.metrics.changes import by_queue, user_changes, wall_clock


def schedule(waits: dict[int, int], users: dict[int, int]) -> pd.DataFrame:
    return pd.DataFrame({"job_id": list(waits), "user": [users[j] for j in waits], "wait": list(waits.values())})


USERS = {1: 10, 2: 10, 3: 20, 4: 30}
QUEUES = {1: "q_2h", 2: "q_2h", 3: "q_1d", 4: "q_1d"}
RUNS = {
    "recorded": schedule({1: 100, 2: 300, 3: 1000, 4: 50}, USERS),
    "current": schedule({1: 200, 2: 400, 3: 600, 4: 0}, USERS),
    "proposed": schedule({1: 0, 2: 0, 3: 1200, 4: 60}, USERS),
}


def test_rows_per_queue_with_the_change_from_current_to_proposed():
    rows = {row["queue"]: row for row in by_queue(RUNS, QUEUES)}
    assert list(rows) == ["overall", "q_1d", "q_2h"]
    assert rows["q_2h"]["mean_wait"] == {"recorded": 200.0, "current": 300.0, "proposed": 0.0}
    assert rows["q_2h"]["change"] == -300.0
    assert rows["q_1d"]["change"] == (1200 + 60) / 2 - (600 + 0) / 2
    assert rows["overall"]["jobs"] == 4 and rows["overall"]["mean_wait"]["recorded"] == 362.5


def test_only_jobs_every_run_has_are_compared():
    runs = dict(RUNS, proposed=RUNS["proposed"][RUNS["proposed"]["job_id"] != 4])   # job 4 rejected
    rows = {row["queue"]: row for row in by_queue(runs, QUEUES)}
    assert rows["q_1d"]["jobs"] == 1 and rows["q_1d"]["mean_wait"]["current"] == 600.0


def test_users_who_gain_and_lose_most():
    changes = user_changes(RUNS)
    assert [(u["user"], u["jobs"], u["change"]) for u in changes["gain"]] == [(10, 2, -300.0)]
    assert [(u["user"], u["change"]) for u in changes["lose"]] == [(20, 600.0), (30, 60.0)]
    assert user_changes(RUNS, top=1)["lose"][0]["user"] == 20


def test_wall_clock_in_the_trace_time_zone():
    # 2013-02-14 10:00 UTC is 11:00 in Prague (CET); 2013-07-01 10:00 UTC is 12:00 (CEST)
    times = wall_clock([1_360_836_000, 1_372_672_800], "Europe/Prague")
    assert [t.strftime("%Y-%m-%d %H:%M") for t in times] == ["2013-02-14 11:00", "2013-07-01 12:00"]


def test_wall_clock_with_a_fixed_offset_as_accounting_logs_give_it():
    assert wall_clock([1_360_836_000], "UTC+01:00")[0].strftime("%H:%M") == "11:00"
    assert wall_clock([1_360_836_000], "Mars/Olympus")[0].strftime("%H:%M") == "10:00"
