"""Names where SWF wants numbers (AleaNG's user_A, Tohoku's queue sxf): numbered, kept for display."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.workload import WorkloadError, load_workload
from engine.workload import swf
from engine.workload.names import encode_column, encode_names, names_of, number_names
from engine.workload.swf import check_head, read_swf
from tests.engine.workload.swf_lines import job_line, write_swf
from tests.shared_data import SHARED_DATA

ALEANG = SHARED_DATA / "metacentrum" / "aleang"


def test_names_are_numbered_in_sorted_order_whatever_the_line_order():
    assert number_names(["user_B", "user_A", "user_B"]) == {"user_A": 1, "user_B": 2}
    assert number_names(["zed", "amy"], after=7) == {"amy": 8, "zed": 9}


def test_names_come_after_the_largest_number_of_the_same_column():
    column = np.array([5.0, np.nan, 2.0, np.nan])
    encoded, mapping = encode_column(column, {1: "bob", 3: "alice"})
    assert encoded.tolist() == [5, 7, 2, 6]
    assert mapping == {6: "alice", 7: "bob"}


def test_an_all_text_column_empty_names_unknown():
    codes, mapping = encode_names(["jdoe", "", "amy", "jdoe"])
    assert codes.tolist() == [2, -1, 1, 2]
    assert mapping == {1: "amy", 2: "jdoe"}


def test_swf_with_user_and_queue_names_loads_and_keeps_the_names(tmp_path):
    lines = [job_line(1, user="user_B", queue="long"), job_line(2, user="user_A", queue="short"),
             job_line(3, user="user_B", queue="long")]
    workload = load_workload(write_swf(tmp_path / "named.swf", lines))
    assert workload.jobs["user"].tolist() == [2, 1, 2]
    assert names_of(workload.metadata, "user") == {1: "user_A", 2: "user_B"}
    assert names_of(workload.metadata, "queue") == {1: "long", 2: "short"}


def test_both_reading_paths_number_names_alike(tmp_path):
    lines = [job_line(1, user="bob"), job_line(2, user=7), job_line(3, user="amy")]
    path = write_swf(tmp_path / "mixed.swf", lines)
    fast = read_swf(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(swf, "_read_fast", lambda source, texts=None: None)
        slow = read_swf(path)
    pd.testing.assert_frame_equal(fast.jobs, slow.jobs)
    assert fast.names == slow.names == {"user": {8: "amy", 9: "bob"}}
    assert fast.jobs["user_id"].tolist() == [9, 7, 8]


def test_text_in_a_numeric_field_is_still_an_error_naming_line_and_field(tmp_path):
    path = write_swf(tmp_path / "bad.swf", [job_line(1, user="amy"), job_line(2, req_time="soon")])
    with pytest.raises(WorkloadError) as caught:
        read_swf(path)
    assert (caught.value.field, "soon" in caught.value.message) == ("requested_time", True)


def test_upload_check_accepts_names(tmp_path):
    _, problems = check_head(write_swf(tmp_path / "n.swf", [job_line(1, user="user_A")]))
    assert problems == []


@pytest.mark.parametrize("name", ["PBSeasy", "PBSeasy4", "PBSstrict", "PBSstrict3", "PBSstrict4"])
def test_every_aleang_pbs_run_loads_with_its_users_named(name):
    workload = load_workload(ALEANG / f"NGI_CZ_journal_{name}.swf", procs=256)
    names = set(names_of(workload.metadata, "user").values())
    assert names and names <= {"user_A", "user_B", "user_C"}
    assert workload.report.total_rejected == 0
    assert (workload.jobs["user"] > 0).all()
