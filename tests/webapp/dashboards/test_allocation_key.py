"""Which column the occupancy timelines group by: a preview's runs name their queues (text), a plain
trace numbers them; -1 / "" is "not known" either way."""

from __future__ import annotations

import pandas as pd

from webapp.dashboards.comparison import allocation_key


def test_named_queues_of_a_run_on_clusters_group_the_timelines():
    schedule = pd.DataFrame({"group": [-1, -1, -1], "queue": ["workq", "long", "workq"], "user": [1, 2, 3]})
    assert allocation_key(schedule) == "queue"


def test_one_known_name_is_not_enough_and_the_next_column_is_taken():
    schedule = pd.DataFrame({"queue": ["workq", "", "workq"], "user": [1, 2, -1]})
    assert allocation_key(schedule) == "user"


def test_numbered_groups_still_come_first():
    schedule = pd.DataFrame({"group": [3, 4, -1], "queue": ["a", "b", "c"]})
    assert allocation_key(schedule) == "group"
    assert allocation_key(pd.DataFrame({"group": [-1, -1], "user": [5, 5]})) is None
