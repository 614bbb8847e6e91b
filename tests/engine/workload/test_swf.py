"""The SWF reader: header, fields, plain and gzip, and a clear error for every kind of bad line."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.workload import WorkloadError
from engine.workload import swf
from engine.workload.swf import SWF_FIELDS, check_head, parse_header, read_swf

from .swf_lines import HEADER, job_line, write_swf

DEMO = Path(__file__).parents[2] / "data" / "demo.swf"
HEADER_LINES = HEADER.count("\n")  # job lines in write_swf files start after these


# --------------------------------------------------------------------------- good input


def test_demo_trace_has_thirty_jobs_and_its_header():
    trace = read_swf(DEMO)

    assert trace.lines == 30 and trace.bad_lines == 0
    assert list(trace.jobs.columns) == list(SWF_FIELDS)
    assert trace.metadata["MaxProcs"] == "16"
    assert trace.metadata["TimeZoneString"] == "Europe/Prague"
    assert trace.metadata["UnixStartTime"] == "1700000000"
    assert trace.metadata["Queue"] == "1  batch\n2  large"


def test_all_eighteen_fields_are_read_with_their_types(tmp_path):
    line = "7 100 20 3600 16 3550.75 2048 32 7200 4096 1 12 3 9 2 1 5 60"
    trace = read_swf(write_swf(tmp_path / "one.swf", [line]))

    row = trace.jobs.iloc[0].to_dict()
    assert row == {
        "job_number": 7, "submit_time": 100, "wait_time": 20, "run_time": 3600,
        "allocated_procs": 16, "avg_cpu_time": 3550.75, "used_memory": 2048,
        "requested_procs": 32, "requested_time": 7200, "requested_memory": 4096, "status": 1,
        "user_id": 12, "group_id": 3, "executable": 9, "queue": 2, "partition": 1,
        "preceding_job": 5, "think_time": 60,
    }
    assert trace.jobs["avg_cpu_time"].dtype == np.float64
    assert all(trace.jobs[name].dtype == np.int64 for name in SWF_FIELDS if name != "avg_cpu_time")


def test_floats_in_integer_fields_are_accepted_and_rounded(tmp_path):
    line = "1.0 10.00 -1.00 99.6 4.0 -1 -1 4 200.0 -1 1 1 1 -1 1 1 -1 -1"
    jobs = read_swf(write_swf(tmp_path / "floats.swf", [line])).jobs

    assert jobs.loc[0, ["job_number", "submit_time", "wait_time", "run_time", "requested_time"]].tolist() == [
        1, 10, -1, 100, 200]
    assert jobs["run_time"].dtype == np.int64


def test_any_whitespace_separates_fields(tmp_path):
    spaced = "   1     0   5  100   4  -1  -1   4  200  -1  1  1  1  -1  1  1  -1  -1"
    tabbed = "2\t10\t5\t100\t4\t-1\t-1\t4\t200\t-1\t1\t1\t1\t-1\t1\t1\t-1\t-1"
    path = tmp_path / "ws.swf"
    path.write_bytes((HEADER + spaced + "\r\n\n" + tabbed + " \t\r\n").encode())

    trace = read_swf(path)

    assert trace.jobs["job_number"].tolist() == [1, 2]
    assert trace.jobs["requested_time"].tolist() == [200, 200]


def test_gzip_and_plain_give_identical_results(tmp_path):
    lines = [job_line(i, submit=10 * i) for i in range(1, 6)]
    plain = read_swf(write_swf(tmp_path / "t.swf", lines))
    zipped = read_swf(write_swf(tmp_path / "t.swf.gz", lines, gz=True))

    pd.testing.assert_frame_equal(plain.jobs, zipped.jobs)
    assert plain.metadata == zipped.metadata


def test_gzip_is_recognised_by_content_not_by_name(tmp_path):
    lines = [job_line(1), job_line(2)]
    gzip_named_swf = read_swf(write_swf(tmp_path / "really-gzip.swf", lines, gz=True))
    plain_named_gz = read_swf(write_swf(tmp_path / "really-plain.swf.gz", lines))

    pd.testing.assert_frame_equal(gzip_named_swf.jobs, plain_named_gz.jobs)


def test_negative_sizes_are_not_a_parse_error(tmp_path):
    trace = read_swf(write_swf(tmp_path / "neg.swf", [job_line(1, run=-1, alloc=-1, req_procs=-1)]))

    assert trace.jobs.loc[0, ["run_time", "allocated_procs", "requested_procs"]].tolist() == [-1, -1, -1]


def test_comment_lines_between_jobs_are_ignored(tmp_path):
    trace = read_swf(write_swf(tmp_path / "c.swf", [job_line(1), "; a note in the middle", job_line(2)]))

    assert trace.jobs["job_number"].tolist() == [1, 2]


# --------------------------------------------------------------------------- header


def test_header_keys_repeats_and_continuation_lines():
    header = parse_header(
        [
            "; Version: 2.2\n",
            ";   MaxProcs: 1664 (72, 1368, 224)\n",
            "; Note: first note\n",
            ";       which wraps onto a second line\n",
            ";\n",
            "; Note: second note\n",
            ";\tsee: http://example.org/\n",
        ]
    )

    assert header == {
        "Version": "2.2",
        "MaxProcs": "1664 (72, 1368, 224)",
        "Note": "first note\nwhich wraps onto a second line\nsecond note\nsee: http://example.org/",
    }


def test_header_text_that_continues_no_key_is_kept_as_comment():
    assert parse_header(["; --- converted from sacct ---\n", "; Version: 2.2\n"]) == {
        "Comment": "--- converted from sacct ---",
        "Version": "2.2",
    }


def test_header_text_in_utf8_reads_as_written_and_latin1_still_reads(tmp_path):
    path = tmp_path / "notes.swf"
    path.write_bytes("; Note: the SFS paper's §9 scenario\n".encode() + b"; Comment: caf\xe9 in latin-1\n"
                     + job_line(1).encode() + b"\n")

    header = read_swf(path).metadata

    assert header["Note"] == "the SFS paper's §9 scenario"   # not "Â§9"
    assert header["Comment"] == "café in latin-1"


def test_a_file_without_header_has_empty_metadata(tmp_path):
    trace = read_swf(write_swf(tmp_path / "bare.swf", [job_line(1)], header=""))

    assert trace.metadata == {}
    assert len(trace.jobs) == 1


# --------------------------------------------------------------------------- bad input


def error_from(path: Path, **kwargs) -> WorkloadError:
    with pytest.raises(WorkloadError) as caught:
        read_swf(path, **kwargs)
    return caught.value


def test_short_line_names_its_line_and_the_first_missing_field(tmp_path):
    short = " ".join(job_line(2).split()[:16])
    error = error_from(write_swf(tmp_path / "short.swf", [job_line(1), short, job_line(3)]))

    assert error.line == HEADER_LINES + 2
    assert error.field == "preceding_job"
    assert "16 fields, expected 18" in str(error)
    assert str(error).startswith(f"{tmp_path / 'short.swf'}, line {HEADER_LINES + 2}:")


def test_too_many_fields(tmp_path):
    error = error_from(write_swf(tmp_path / "long.swf", [job_line(1), job_line(2) + " 99"]))

    assert error.line == HEADER_LINES + 2
    assert error.field == "think_time"
    assert "19 fields, expected 18" in error.message and "'99'" in error.message


def test_too_many_fields_on_the_first_line(tmp_path):
    error = error_from(write_swf(tmp_path / "long.swf", [job_line(1) + " 7", job_line(2)]))

    assert (error.line, error.field) == (HEADER_LINES + 1, "think_time")


@pytest.mark.parametrize("bad", ["abc", "1.5x", "nan", "inf", "1_000", "--1", "TRUE", "NA", "0x10", "1e999"])
def test_text_in_a_numeric_field_names_the_field(tmp_path, bad):
    error = error_from(write_swf(tmp_path / "text.swf", [job_line(1), job_line(2, req_time=bad)]))

    assert error.line == HEADER_LINES + 2
    assert error.field == "requested_time"
    assert f"expected a number, got {bad!r}" in error.message


def test_line_numbers_are_physical_lines_counting_comments_and_blanks(tmp_path):
    path = tmp_path / "physical.swf"
    path.write_text("; Version: 2.2\n\n" + job_line(1) + "\n; note\n\n" + job_line(2, req_procs="x") + "\n")

    error = error_from(path)

    assert (error.line, error.field) == (6, "requested_procs")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.swf"
    path.write_text("")

    error = error_from(path)

    assert "no jobs" in error.message and error.file == str(path)


def test_file_with_only_a_header_has_no_jobs(tmp_path):
    assert "no jobs" in error_from(write_swf(tmp_path / "header-only.swf", [])).message


def test_gzip_magic_with_a_corrupt_stream(tmp_path):
    path = tmp_path / "broken.swf.gz"
    path.write_bytes(b"\x1f\x8b" + b"definitely not deflate data" * 10)

    error = error_from(path)

    assert "gzip" in error.message and "corrupt" in error.message


def test_truncated_gzip_names_the_line_where_the_stream_broke(tmp_path):
    lines = [job_line(i, submit=i) for i in range(1, 20001)]
    whole = write_swf(tmp_path / "whole.swf.gz", lines, gz=True).read_bytes()
    path = tmp_path / "truncated.swf.gz"
    path.write_bytes(whole[: len(whole) // 2])

    error = error_from(path)

    assert "gzip stream is corrupt or truncated" in error.message
    assert error.line is not None and HEADER_LINES < error.line < HEADER_LINES + 20000


def test_named_gz_but_binary_content(tmp_path):
    path = tmp_path / "image.swf.gz"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

    error = error_from(path)

    assert "not an SWF text file" in error.message
    assert "name ends in .gz but the content is not gzip" in error.message


def test_named_gz_but_plain_text_that_is_not_swf(tmp_path):
    path = tmp_path / "notes.swf.gz"
    path.write_text("these are my notes\n")

    error = error_from(path)

    assert (error.line, error.field) == (1, "job_number")
    assert "name ends in .gz but the content is not gzip" in error.message


def test_missing_file(tmp_path):
    assert "cannot read the file" in error_from(tmp_path / "nowhere.swf").message


# --------------------------------------------------------------------------- skip_bad_lines


def test_skip_bad_lines_counts_every_bad_line_and_keeps_the_rest(tmp_path):
    lines = [
        job_line(1),
        " ".join(job_line(2).split()[:10]),  # short
        job_line(3, req_time="abc"),         # text
        job_line(4),
        job_line(5) + " 1 2",                # too long
        job_line(6),
    ]
    trace = read_swf(write_swf(tmp_path / "mixed.swf", lines), skip_bad_lines=True)

    assert trace.jobs["job_number"].tolist() == [1, 4, 6]
    assert trace.bad_lines == 3
    assert trace.lines == 6
    assert [(e.line, e.field) for e in trace.bad_line_errors] == [
        (HEADER_LINES + 2, "status"),  # 10 fields: status is the first missing
        (HEADER_LINES + 3, "requested_time"),
        (HEADER_LINES + 5, "think_time"),
    ]


def test_skip_bad_lines_still_fails_when_no_line_is_good(tmp_path):
    error = error_from(write_swf(tmp_path / "bad.swf", ["1 2 3", "x"]), skip_bad_lines=True)

    assert "no jobs: all 2 job lines are bad" in error.message


# --------------------------------------------------------------------------- check_head


def test_check_head_on_a_good_file_returns_its_header_and_no_errors():
    metadata, errors = check_head(DEMO)

    assert errors == []
    assert metadata["MaxProcs"] == "16"


def test_check_head_lists_problems_by_line_and_field(tmp_path):
    lines = [job_line(1), job_line(2, run="soon"), "1 2 3", job_line(4, alloc="x", req_time="y")]
    metadata, errors = check_head(write_swf(tmp_path / "upload.swf", lines))

    assert metadata["MaxProcs"] == "64"
    assert [(e.line, e.field) for e in errors] == [
        (HEADER_LINES + 2, "run_time"),
        (HEADER_LINES + 3, "run_time"),  # "1 2 3": short from run_time on
        (HEADER_LINES + 4, "allocated_procs"),
        (HEADER_LINES + 4, "requested_time"),
    ]


def test_check_head_stops_at_max_errors_and_max_lines(tmp_path):
    lines = [job_line(i, user="?") for i in range(1, 51)]
    path = write_swf(tmp_path / "bad.swf", lines)

    assert len(check_head(path, max_errors=5)[1]) == 5
    assert len(check_head(path, max_lines=3)[1]) == 3


def test_check_head_only_reads_the_head(tmp_path):
    lines = [job_line(i) for i in range(1, 301)] + ["garbage"]

    assert check_head(write_swf(tmp_path / "late.swf", lines), max_lines=200)[1] == []


def test_check_head_reports_gzip_and_empty_problems(tmp_path):
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00garbage")
    empty = tmp_path / "empty.swf"
    empty.write_text("; Version: 2.2\n")

    assert "corrupt" in check_head(broken)[1][0].message
    assert "no jobs" in check_head(empty)[1][0].message


def test_check_head_reads_gzip(tmp_path):
    metadata, errors = check_head(write_swf(tmp_path / "ok.swf.gz", [job_line(1)], gz=True))

    assert (metadata["MaxProcs"], errors) == ("64", [])


def test_check_head_on_real_gzip_bytes_matches_reader(tmp_path):
    path = write_swf(tmp_path / "x.swf.gz", [job_line(1), job_line(2)], gz=True)

    assert gzip.decompress(path.read_bytes()).startswith(b"; Version")
    assert check_head(path)[0] == read_swf(path).metadata


# --------------------------------------------------------------------------- the two reading paths agree


def read_without_fast_path(path: Path):
    """read_swf as it reads a file the C parser could not vouch for."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(swf, "_read_fast", lambda source, texts=None: None)
        return read_swf(path)


def test_validating_pass_reads_the_demo_exactly_like_the_fast_path():
    pd.testing.assert_frame_equal(read_without_fast_path(DEMO).jobs, read_swf(DEMO).jobs)


number_texts = st.one_of(
    st.integers(-10**12, 10**12).map(str),
    st.floats(-1e9, 1e9, allow_nan=False).map(lambda x: f"{x:.2f}"),
    st.sampled_from(["-1", "-1.00", "1e3", "+7", ".5", "3."]),
)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(number_texts, min_size=18, max_size=18), min_size=1, max_size=5),
       st.sampled_from([" ", "\t", "   "]))
def test_both_paths_agree_on_any_numeric_lines(tmp_path_factory, rows, separator):
    path = tmp_path_factory.mktemp("agree") / "t.swf"
    path.write_text("".join(separator.join(row) + "\n" for row in rows))
    assert swf._read_fast(swf._inspect(path)) is not None  # the C parser really read this file

    pd.testing.assert_frame_equal(read_without_fast_path(path).jobs, read_swf(path).jobs)
