"""Allocations files: targets from awards (the SFS paper's eqs. 1-2), job mapping, line-level errors."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from engine.platform.allocations import DEFAULT, parse_allocations, read_allocations
from engine.workload import WorkloadError

HEADER = "allocation,members,award,period_days,target_factor,target\n"


def test_target_is_twice_the_ideal_occupancy_by_default():
    # The paper's eq. 1: 1e6 processor-hours over 365 days -> 1e6 / (365 x 24) = 114.16 processors;
    # eq. 2: target = 2 x ideal = 228.3 processors.
    allocations = parse_allocations(HEADER + "alice,user:1,1000000,365,,\n")
    alice = allocations.allocations[0]
    assert alice.ideal == pytest.approx(114.155, abs=1e-3)
    assert alice.target == pytest.approx(228.31, abs=1e-2)


def test_a_target_factor_or_a_direct_target_replaces_the_default():
    allocations = parse_allocations(HEADER + "a,user:1,2400,10,3,\nb,group:5,,,,58\n")
    # a: ideal = 2400 / (10 x 24) = 10 processors, x 3 = 30; b: given directly, no award needed
    assert allocations.targets() == {"a": 30.0, "b": 58.0}
    assert allocations.allocations[1].ideal is None


def test_jobs_map_through_user_then_group_and_the_rest_go_to_default_counted():
    allocations = parse_allocations(HEADER + "# comment lines and blank lines are skipped\n\n"
                                    "alice,user:1;user:2,,,,100\nphysics,group:7,,,,50\n")
    jobs = pd.DataFrame({"user": [1, 2, 3, 1, 9], "group": [7, 0, 7, 7, 8]})
    assigned = allocations.assign(jobs)
    # job 0: user 1 is alice's even though group 7 is physics' (the user is more specific)
    assert list(assigned.labels()) == ["alice", "alice", "physics", "alice", DEFAULT]
    assert assigned.unmapped == 1
    assert assigned.targets[assigned.names.index(DEFAULT)] == math.inf


def test_a_default_line_gives_unmapped_jobs_a_target():
    allocations = parse_allocations(HEADER + "alice,user:1,,,,100\ndefault,,,,,20\n")
    assigned = allocations.assign(pd.DataFrame({"user": [1, 2], "group": [-1, -1]}))
    assert list(assigned.labels()) == ["alice", "default"]
    assert assigned.targets == (100.0, 20.0)


@pytest.mark.parametrize(("text", "line", "field", "words"), [
    ("allocation,members,award\n", 1, None, "header must be"),
    (HEADER + "a,user:1,100,10,,\nb,user:x,100,10,,\n", 3, "members", "user:ID or group:ID"),
    (HEADER + "a,person:1,100,10,,\n", 2, "members", "user:ID or group:ID"),
    (HEADER + "a,user:1,-5,10,,\n", 2, "award", "number >= 0"),
    (HEADER + "a,user:1,100,0,,\n", 2, "period_days", "positive"),
    (HEADER + "a,user:1,100,ten,,\n", 2, "period_days", "positive"),
    (HEADER + "a,user:1,,10,,\n", 2, "award", "needed to compute the target"),
    (HEADER + "a,user:1,100,10,2\n", 2, None, "expected 6 comma-separated fields"),
    (HEADER + "a,user:1,,,,5\na,user:2,,,,5\n", 3, "allocation", "already defined on line 2"),
    (HEADER + "a,user:1,,,,5\nb,user:1,,,,5\n", 3, "members", "already a member of an allocation on line 2"),
    (HEADER + ",user:1,,,,5\n", 2, "allocation", "needs a name"),
    (HEADER + "default,user:1,,,,5\n", 2, "members", "leave its members empty"),
    ("\n# nothing\n", 1, None, "empty"),
])
def test_bad_files_name_the_line_and_field(text, line, field, words):
    with pytest.raises(WorkloadError) as caught:
        parse_allocations(text, source="alloc.csv")
    error = caught.value
    assert (error.file, error.line, error.field) == ("alloc.csv", line, field)
    assert words in str(error)
    assert str(error).startswith(f"alloc.csv, line {line}:")


def test_reading_a_file_names_it_in_errors(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(HEADER + "a,user:1,100,10,,\nb,user:2,abc,10,,\n")
    with pytest.raises(WorkloadError, match=r"mine.csv, line 3: field award"):
        read_allocations(path)
    with pytest.raises(WorkloadError, match="cannot read"):
        read_allocations(tmp_path / "missing.csv")
