"""Cleaning rules, load_workload's machine size and describe(): every decision is counted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.workload import CANONICAL_COLUMNS, WorkloadError, describe, load_workload
from engine.workload.swf import read_swf
from engine.workload.transforms import EXTRA_COLUMNS, clean

from .swf_lines import job_line, write_swf

DEMO = Path(__file__).parents[2] / "data" / "demo.swf"


def cleaned(tmp_path: Path, lines: list[str], *, machine_procs: int = 64, **options):
    trace = read_swf(write_swf(tmp_path / "trace.swf", lines))
    return clean(trace, machine_procs=machine_procs, **options)


# --------------------------------------------------------------------------- output shape


def test_output_has_canonical_then_extra_columns_with_int64_and_bool(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, wait=42, status=0)])

    assert list(workload.jobs.columns) == [*CANONICAL_COLUMNS, *EXTRA_COLUMNS]
    assert workload.jobs["killed"].dtype == bool
    assert all(workload.jobs[c].dtype == np.int64 for c in workload.jobs.columns if c != "killed")
    row = workload.jobs.iloc[0]
    assert (row["wait_trace"], row["status"], row["requested_procs"], row["allocated_procs"]) == (42, 0, 4, 4)


def test_jobs_are_sorted_by_submit_and_ties_keep_file_order(tmp_path):
    lines = [job_line(1, 50), job_line(2, 10), job_line(3, 50), job_line(4, 10), job_line(5, 0)]
    workload = cleaned(tmp_path, lines)

    assert workload.jobs["job_id"].tolist() == [5, 2, 4, 1, 3]
    assert workload.jobs.index.tolist() == [0, 1, 2, 3, 4]


def test_metadata_keeps_the_header_and_records_the_machine_size(tmp_path):
    workload = cleaned(tmp_path, [job_line(1)], machine_procs=48)

    assert workload.metadata["Version"] == "2.2"
    assert workload.metadata["procs"] == 48
    assert workload.source == str(tmp_path / "trace.swf")


def test_a_clean_job_is_untouched_and_nothing_is_counted(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, run=100, alloc=4, req_time=200)])

    row = workload.jobs.iloc[0]
    assert (row["runtime"], row["procs"], row["requested_time"], row["killed"]) == (100, 4, 200, False)
    assert workload.report.to_dict() == {"rejected": {}, "repaired": {}, "bad_lines": 0, "kept": {}}


# --------------------------------------------------------------------------- one test per rule


def test_negative_submit_is_rejected(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, -1), job_line(2, 10)])

    assert workload.jobs["job_id"].tolist() == [2]
    assert workload.report.rejected == {"submit time missing or negative": 1}


def test_missing_or_negative_runtime_is_rejected(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, run=-1), job_line(2, run=-5), job_line(3)])

    assert workload.jobs["job_id"].tolist() == [3]
    assert workload.report.rejected == {"runtime missing or negative": 2}


def test_runtime_zero_is_kept_and_counted(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, run=0)])

    assert workload.jobs["runtime"].tolist() == [0]
    assert workload.report.kept == {"runtime 0 (kept)": 1}


def test_missing_allocation_falls_back_to_requested_processors(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, alloc=-1, req_procs=8), job_line(2, alloc=0, req_procs=2)])

    assert workload.jobs["procs"].tolist() == [8, 2]
    assert workload.report.repaired == {"processors taken from requested_procs (allocated missing)": 2}


def test_allocation_wins_over_request_when_both_are_given(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, alloc=6, req_procs=8)])

    assert workload.jobs["procs"].tolist() == [6]


def test_no_processor_count_at_all_is_rejected(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, alloc=-1, req_procs=-1), job_line(2, alloc=0, req_procs=0)])

    assert len(workload) == 0
    assert workload.report.rejected == {"processors missing (allocated and requested both <= 0)": 2}


def test_missing_requested_time_becomes_the_runtime_but_at_least_one_second(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, run=300, req_time=-1), job_line(2, run=0, req_time=0)])

    assert workload.jobs["requested_time"].tolist() == [300, 1]
    assert workload.jobs["killed"].tolist() == [False, False]
    assert workload.report.repaired == {"requested time missing, set to the runtime": 2}


def test_oversize_jobs_are_rejected_by_default(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, alloc=65), job_line(2, alloc=64)], machine_procs=64)

    assert workload.jobs["job_id"].tolist() == [2]
    assert workload.report.rejected == {"more processors than the machine": 1}


def test_oversize_clip_clips_to_the_machine(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, alloc=65), job_line(2, alloc=64)], machine_procs=64, oversize="clip")

    assert workload.jobs["procs"].tolist() == [64, 64]
    assert workload.jobs["allocated_procs"].tolist() == [65, 64]
    assert workload.report.repaired == {"processors clipped to the machine size": 1}
    assert workload.report.rejected == {}


def test_overrun_jobs_are_killed_at_their_requested_time_by_default(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, run=250, req_time=200), job_line(2, run=200, req_time=200)])

    assert workload.jobs["runtime"].tolist() == [200, 200]
    assert workload.jobs["killed"].tolist() == [True, False]
    assert workload.report.repaired == {"killed at requested time": 1}


def test_overrun_run_lets_them_run_and_counts_them(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, run=250, req_time=200)], overrun="run")

    row = workload.jobs.iloc[0]
    assert (row["runtime"], row["requested_time"], row["killed"]) == (250, 200, False)
    assert workload.report.kept == {"runtime over requested time, left to run (overrun=run)": 1}
    assert workload.report.repaired == {}


def test_a_job_is_counted_under_the_first_rule_that_rejects_it(tmp_path):
    workload = cleaned(tmp_path, [job_line(1, -5, run=-1, alloc=-1, req_procs=-1)])

    assert workload.report.rejected == {"submit time missing or negative": 1}


def test_kept_rows_plus_rejected_equals_lines(tmp_path):
    lines = [job_line(1, -1), job_line(2, run=-1), job_line(3, alloc=-1, req_procs=-1),
             job_line(4, alloc=100), job_line(5), job_line(6, run=0)]
    trace = read_swf(write_swf(tmp_path / "t.swf", lines))
    workload = clean(trace, machine_procs=64)

    assert len(workload) + workload.report.total_rejected == trace.lines == 6


@pytest.mark.parametrize("options", [{"oversize": "shrink"}, {"overrun": "pause"}])
def test_unknown_options_are_refused(tmp_path, options):
    with pytest.raises(ValueError, match="must be one of"):
        cleaned(tmp_path, [job_line(1)], **options)


@pytest.mark.parametrize("size", [0, -4, 2.5, "many"])
def test_machine_size_must_be_a_positive_integer(tmp_path, size):
    with pytest.raises(WorkloadError, match="machine size must be a positive integer"):
        cleaned(tmp_path, [job_line(1)], machine_procs=size)


# --------------------------------------------------------------------------- load_workload


def test_load_workload_on_the_demo_trace():
    workload = load_workload(DEMO)

    assert workload.metadata["procs"] == 16
    assert len(workload) == 28  # job 9 (runtime -1) and job 30 (32 procs) are rejected
    assert workload.report.rejected == {"runtime missing or negative": 1, "more processors than the machine": 1}
    assert workload.report.repaired == {
        "processors taken from requested_procs (allocated missing)": 1,
        "killed at requested time": 2,
    }


def test_procs_argument_overrides_the_header(tmp_path):
    path = write_swf(tmp_path / "t.swf", [job_line(1, alloc=100)])

    assert load_workload(path, procs=128).metadata["procs"] == 128


def test_machine_size_from_max_procs_takes_the_leading_integer(tmp_path):
    header = "; MaxNodes: 184  ( 6,  171,   7)\n; MaxProcs: 1664 (72, 1368, 224)\n"
    path = write_swf(tmp_path / "ds.swf", [job_line(1)], header=header)

    assert load_workload(path).metadata["procs"] == 1664


def test_machine_size_falls_back_to_max_nodes(tmp_path):
    path = write_swf(tmp_path / "nodes.swf", [job_line(1)], header="; MaxNodes: 256\n; MaxProcs: -1\n")

    assert load_workload(path).metadata["procs"] == 256


def test_machine_size_unknown_without_header_or_procs(tmp_path):
    path = write_swf(tmp_path / "bare.swf", [job_line(1)], header="")

    with pytest.raises(WorkloadError) as caught:
        load_workload(path)

    assert caught.value.message == (
        "machine size unknown: the trace has no MaxProcs or MaxNodes header; give --procs")
    assert caught.value.file == str(path)


@pytest.mark.parametrize("digits", [30, 5000])       # 5,000 digits: a ValueError from int() before
def test_a_machine_size_of_too_many_digits_is_named(tmp_path, digits):
    path = write_swf(tmp_path / "huge.swf", [job_line(1)], header=f"; MaxProcs: {'9' * digits}\n")

    with pytest.raises(WorkloadError, match="its MaxProcs header is not a whole number") as caught:
        load_workload(path)

    assert caught.value.field == "MaxProcs"


def test_load_workload_passes_skipped_lines_into_the_report(tmp_path):
    path = write_swf(tmp_path / "t.swf", [job_line(1), "1 2 3", job_line(3)])

    workload = load_workload(path, skip_bad_lines=True)

    assert len(workload) == 2
    assert workload.report.bad_lines == 1


# --------------------------------------------------------------------------- describe


def test_describe_is_json_able_and_summarises_the_demo():
    summary = describe(load_workload(DEMO))

    assert json.loads(json.dumps(summary)) == summary
    assert summary["jobs"] == 28
    assert summary["procs"] == 16
    assert (summary["first_submit"], summary["last_submit"]) == (0, 17400)
    assert summary["span_seconds"] == 17400
    assert summary["span_days"] == round(17400 / 86400, 3)
    assert summary["users"] == 9 and summary["groups"] == 3
    assert summary["size"]["min"] == 1 and summary["size"]["max"] == 16
    assert summary["runtime"]["min"] == 0 and summary["requested_time"]["max"] == 7200
    assert summary["metadata"]["MaxProcs"] == "16"
    assert summary["report"]["rejected"]["more processors than the machine"] == 1
    jobs = load_workload(DEMO).jobs
    assert summary["core_hours"] == round(float((jobs["procs"] * jobs["runtime"]).sum()) / 3600, 1)
