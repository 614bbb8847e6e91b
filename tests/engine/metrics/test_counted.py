"""Warm-up and cool-down: which jobs of a run its metrics count, worked by hand."""

from __future__ import annotations

import pytest

from engine.errors import WorkloadError
from engine.metrics.counted import Counted, Trim, counted_mask, parse_trim
from tests.engine.metrics.schedules import make_schedule

DAY = 86_400


def schedule_at(submits: list[int]):
    return make_schedule([{"submit": s, "start": s, "end": s + 10, "procs": 1} for s in submits])


# submits: day 0, 0.5, 1 (exactly), 1.5, 3, 4.5, 5 (the last)
SUBMITS = [0, DAY // 2, DAY, 3 * DAY // 2, 3 * DAY, 9 * DAY // 2, 5 * DAY]


def test_a_warmup_in_days_leaves_out_the_jobs_submitted_before_it_ends():
    mask = counted_mask(schedule_at(SUBMITS), Counted(warmup=Trim(1, "days")))
    assert mask.tolist() == [False, False, True, True, True, True, True]   # day 1 itself counts


def test_a_cooldown_in_days_leaves_out_the_jobs_submitted_in_the_last_days():
    mask = counted_mask(schedule_at(SUBMITS), Counted(cooldown=Trim(0.5, "days")))
    assert mask.tolist() == [True, True, True, True, True, True, False]    # 4.5 d is exactly 0.5 d before: counts


def test_jobs_trims_count_by_arrival_from_each_end():
    mask = counted_mask(schedule_at(SUBMITS), Counted(Trim(2, "jobs"), Trim(3, "jobs")))
    assert mask.tolist() == [False, False, True, True, False, False, False]


def test_trims_longer_than_the_run_leave_nothing_and_none_leave_everything():
    assert not counted_mask(schedule_at(SUBMITS), Counted(Trim(10, "jobs"))).any()
    assert counted_mask(schedule_at(SUBMITS), Counted()).all()


@pytest.mark.parametrize("text, trim", [("2d", Trim(2, "days")), ("1.5days", Trim(1.5, "days")),
                                        ("500j", Trim(500, "jobs")), (" 30 jobs ", Trim(30, "jobs")),
                                        ("0", Trim(0, "days"))])
def test_trims_are_read_in_days_or_jobs(text, trim):
    assert parse_trim(text) == trim


@pytest.mark.parametrize("text", ["2", "2h", "-1d", "1.5j", "days", ""])
def test_a_trim_without_its_unit_or_with_another_is_an_input_error(text):
    with pytest.raises(WorkloadError, match="--cooldown"):
        parse_trim(text, name="--cooldown")


def test_what_was_counted_is_said_in_words_and_survives_a_round_trip():
    counted = Counted(Trim(2, "days"), Trim(500, "jobs"))
    assert counted.describe() == ("every job of each run except the first 2 days (warm-up) and the last 500 jobs "
                                  "(cool-down)")
    assert Counted.from_dict(counted.to_dict()) == counted
    assert Counted().describe() == "every job of each run"
