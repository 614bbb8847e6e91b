"""Jain's fairness index and per-user tables."""

from __future__ import annotations

import math

import pytest

from engine.metrics.fairness import jain_index, per_key, per_user

from .schedules import empty_schedule, three_jobs_on_four_processors


def test_jain_index_of_equal_values_is_one():
    assert jain_index([1, 1, 1, 1]) == 1.0
    assert jain_index([5.0, 5.0]) == 1.0


def test_jain_index_when_one_of_four_gets_everything_is_a_quarter():
    # (1+0+0+0)^2 / (4 * (1+0+0+0)) = 1/4
    assert jain_index([1, 0, 0, 0]) == 0.25


def test_jain_index_of_two_unequal_values():
    # (1+3)^2 / (2 * (1+9)) = 16/20
    assert jain_index([1, 3]) == pytest.approx(0.8)


def test_jain_index_ignores_nan_and_has_no_value_for_nothing():
    assert jain_index([1.0, math.nan, 1.0]) == 1.0
    assert jain_index([]) is None
    assert jain_index([math.nan]) is None
    assert jain_index(x for x in (2, 2)) == 1.0  # any iterable


def test_jain_index_of_all_zeros_is_perfectly_equal():
    assert jain_index([0, 0, 0]) == 1.0


def test_per_user_on_the_worked_example():
    table = per_user(three_jobs_on_four_processors())
    assert table["user"].tolist() == [1, 2]
    assert table["jobs"].tolist() == [2, 1]
    # core-seconds: user 1 = 2*100 (A) + 1*2 (C) = 202, user 2 = 4*50 (B) = 200; total 402
    assert table["core_hours"].tolist() == pytest.approx([202 / 3600, 200 / 3600])
    assert table["share"].tolist() == pytest.approx([202 / 402, 200 / 402])
    # user 1: waits 0, 0; responses 100, 2; bsld 1, 1.   user 2: wait 90, response 140, bsld 2.8
    assert table["mean_wait"].tolist() == pytest.approx([0.0, 90.0])
    assert table["mean_response"].tolist() == pytest.approx([51.0, 140.0])
    assert table["mean_bsld"].tolist() == pytest.approx([1.0, 2.8])


def test_per_key_works_for_any_owner_column():
    schedule = three_jobs_on_four_processors().assign(group=[7, 7, 8])
    assert per_key(schedule, "group")["jobs"].tolist() == [2, 1]


def test_per_user_of_an_empty_schedule_is_an_empty_table():
    table = per_user(empty_schedule())
    assert len(table) == 0
    assert list(table.columns) == ["user", "jobs", "core_hours", "share", "mean_wait", "mean_response", "mean_bsld"]
