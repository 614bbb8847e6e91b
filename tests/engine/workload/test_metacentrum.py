"""The extended MetaCentrum trace: nodespec grammar, detection by content, units, bad lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from engine.workload import WorkloadError, load_workload
from engine.workload.metacentrum import (
    NodeSpec, check_extended_head, detect_format, load_extended, parse_nodespec, read_extended,
)
from tests.shared_data import SHARED_DATA

DATA = (SHARED_DATA / "metacentrum")
WAGAP = DATA / "alea" / "wagap-2013.swf"

# Real lines from the reference (alea-formats-and-policies.md §1.3), host lists shortened.
LINE_1 = "1 1356996695 71 1164297 12 1 1024 12 1209600 91268055040 1 101 1 1 -1 1 1 1 {1129,1129} q_2w 1:ppn=12"
LINE_6 = "6 1357016559 1 33765 64 1 1024 64 86400 8589934592 1 62 1 1 -1 1 1 1 {1273,1255} q_1d 8:ppn=8:x86_64:cl_zegox"
LINE_0 = "0 1356996147 0 56011 64 1 1024 64 86400 68719476736 1 62 1 1 -1 1 1 1 {1241} q_1d 1:ppn=64:x86_64:cl_zewura#excl"
LINE_16 = "16 1357047665 0 86439 1 1 1024 1 86400 161061273600 1 803 1 1 -1 1 1 1 {1244} q_1d 1:ppn=1:brno"


@pytest.mark.parametrize("spec, expected", [
    ("1:ppn=12", NodeSpec(nodes=1, ppn=12)),
    ("8:ppn=8:x86_64:cl_zegox", NodeSpec(nodes=8, ppn=8, clusters=("zegox",), properties=("x86_64",))),
    ("1:ppn=64:x86_64:cl_zewura#excl", NodeSpec(nodes=1, ppn=64, exclusive=True, clusters=("zewura",),
                                                properties=("x86_64",))),
    ("1:ppn=1:brno", NodeSpec(nodes=1, ppn=1, properties=("brno",))),
    # two chunks, 1 + 3 nodes: merged to 4 nodes x the largest ppn (2)
    ("1:ppn=1+3:ppn=2", NodeSpec(nodes=4, ppn=2, chunks=2)),
    ("2:infiniband", NodeSpec(nodes=2, properties=("infiniband",))),
    ("1:ppn=1:^zewura12.cerit-sc.cz", NodeSpec(nodes=1, ppn=1, excluded_hosts=("zewura12",))),
    ("host=zewura10", NodeSpec(hosts=("zewura10",))),
    ("1:ppn=1:mem=3gb", NodeSpec(nodes=1, ppn=1, mem_kb=3 * 1024 ** 2)),
    ("1:ppn=80:nodecpus80", NodeSpec(nodes=1, ppn=80, properties=("nodecpus80",))),
    ("1:ppn=2:debian:nfs4:x86_64:brno", NodeSpec(nodes=1, ppn=2, properties=("debian", "nfs4", "x86_64", "brno"))),
    ("2:ppn=4:x86:linux:cl_minos", NodeSpec(nodes=2, ppn=4, clusters=("minos",), properties=("x86", "linux"))),
    ("1:ppn=1:gpu=1:cl_gram", NodeSpec(nodes=1, ppn=1, gpus=1, clusters=("gram",))),
    ("1:ppn=1:^cl_zewura", NodeSpec(nodes=1, ppn=1, exclude=("zewura",))),
    ("1:ppn=4:cl_zegox=False", NodeSpec(nodes=1, ppn=4, exclude=("zegox",))),
    ("1:ppn=1.5:brno", NodeSpec(nodes=1, ppn=1, properties=("brno",), fractional_ppn=True)),
    ("zewura19.cerit-sc.cz:ppn=12:brno", NodeSpec(ppn=12, hosts=("zewura19",), properties=("brno",))),
    ("1:ppn=1:cl_zewura:cl_zewura:cl_zewura", NodeSpec(nodes=1, ppn=1, clusters=("zewura",))),
    ("1:ncpus=4", NodeSpec(nodes=1, ppn=4)),
])
def test_every_nodespec_form_of_the_reference(spec, expected):
    assert parse_nodespec(spec) == expected


@pytest.mark.parametrize("spec", ["", "1:ppn=x", "0:ppn=1", "1:ppn=1:mem=lots", "1:ppn=1+",
                                  # counts past int64 once multiplied (found by fuzzing: OverflowError)
                                  pytest.param("9" * 400 + ":ppn=2", id="400-digit count"), "1:ppn=99999999999",
                                  "2147483647:ppn=1+1:ppn=1", pytest.param("1:ppn=1:mem=" + "9" * 400 + "gb", id="400-digit mem"),
                                  "1:ppn=1:gpu=²", "٣:ppn=1"])
def test_bad_nodespecs_are_refused(spec):
    with pytest.raises(ValueError):
        parse_nodespec(spec)


def write(tmp_path: Path, name: str, *lines: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_format_is_read_from_the_content_not_the_name(tmp_path):
    assert detect_format(write(tmp_path, "plain.swf", LINE_1)) == "metacentrum"
    assert detect_format(write(tmp_path, "metacentrum.txt", "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1")) == "swf"


def test_the_four_reference_lines_become_node_requests(tmp_path):
    workload = load_workload(write(tmp_path, "trace.txt", LINE_0, LINE_1, LINE_6, LINE_16))
    jobs = workload.jobs.set_index("job_id")
    assert jobs.loc[6, ["nodes", "ppn", "procs", "clusters", "queue_name"]].tolist() == [8, 8, 64, "zegox", "q_1d"]
    assert jobs.loc[0, "exclusive"] and jobs.loc[0, "clusters"] == "zewura"
    # memory in bytes, per node: 68719476736 B / 1024 = 67108864 KB (64 GiB); 91268055040 B = 89128960 KB
    assert jobs.loc[0, "mem"] == 67_108_864
    assert jobs.loc[1, "mem"] == 89_128_960
    assert workload.metadata["memory_unit"] == "bytes"
    # absolute epochs stay as they are
    assert jobs.loc[1, "submit"] == 1356996695


def test_memory_unit_is_an_explicit_option(tmp_path):
    path = write(tmp_path, "trace", LINE_16)
    assert load_extended(path).jobs["mem"].iloc[0] == 161061273600 // 1024            # bytes (default)
    assert load_extended(path, memory_unit="KB").jobs["mem"].iloc[0] == 161061273600  # as given


def test_unknown_memory_written_as_1_is_no_request(tmp_path):
    line = LINE_16.replace("161061273600", "1")
    assert load_extended(write(tmp_path, "t", line)).jobs["mem"].iloc[0] == 0


def test_a_spec_without_ppn_spreads_the_processors_and_is_counted(tmp_path):
    line = "9 100 0 60 2 1 1024 2 120 419430400 1 5 1 1 -1 1 1 1 {1261,1281} q_2h 2:infiniband"
    workload = load_extended(write(tmp_path, "t", line))
    assert workload.jobs[["nodes", "ppn", "procs"]].iloc[0].tolist() == [2, 1, 2]
    assert workload.report.repaired["nodespec without ppn: procs spread over its nodes"] == 1


@pytest.mark.parametrize("line, field", [
    (LINE_1.replace(" q_2w", ""), "nodespec"),                       # 20 fields
    (LINE_1.replace("1356996695", "soon"), "submit_time"),
    (LINE_1.replace("{1129,1129}", "1129"), "hosts"),
    (LINE_1.replace("1:ppn=12", "1:ppn=twelve"), "nodespec"),
    (LINE_1.replace("1:ppn=12", "100000000000:ppn=12"), "nodespec"),
])
def test_bad_lines_name_file_line_and_field(tmp_path, line, field):
    path = write(tmp_path, "bad.swf", LINE_0, line)
    with pytest.raises(WorkloadError) as error:
        read_extended(path, trace_format="metacentrum")
    assert (error.value.line, error.value.field) == (2, field)
    assert "bad.swf" in str(error.value)
    skipped = read_extended(path, trace_format="metacentrum", skip_bad_lines=True)
    assert skipped.swf.bad_lines == 1 and len(skipped.swf.jobs) == 1


def test_a_truncated_gzip_names_the_file_not_eof(tmp_path):
    path = tmp_path / "cut.swf.gz"
    packed = gzip.compress(WAGAP.read_bytes())
    path.write_bytes(packed[:len(packed) // 2])
    with pytest.raises(WorkloadError, match="gzip stream is corrupt or truncated") as error:
        load_workload(path, skip_bad_lines=True)     # the cut line is skipped, then the stream ends
    assert error.value.file == str(path) and error.value.line


def test_upload_check_reports_problems_without_raising(tmp_path):
    path = write(tmp_path, "bad.swf", LINE_0, LINE_1.replace("1:ppn=12", "1:ppn=x"))
    _, problems, kind = check_extended_head(path)
    assert kind == "metacentrum" and [p.line for p in problems] == [2]


def test_aleang_lines_give_gpus_exclusive_and_shape(tmp_path):
    path = write(tmp_path, "ng.swf", "; UnixStartTime: 1735689600",
                 "1 1 0 3609 40 3609 33554432 40 7200 33554432 1 0 0 -1 0 -1 -1 -1 2 3609 all:1x40",
                 "2 1 0 6821 229376 6821 33554432 229376 14400 33554432 1 1 1 -1 1 -1 -1 -1 4096 6821 normal:excl:2048x112")
    jobs = load_workload(path).jobs
    assert jobs[["nodes", "ppn", "gpus", "exclusive"]].values.tolist() == [[1, 40, 2, False], [2048, 112, 2, True]]
    assert jobs["submit"].tolist() == [1735689601, 1735689601]          # relative + UnixStartTime
    assert jobs["mem"].tolist() == [33554432, 33554432]                # KB
    assert jobs["properties"].tolist() == ["", "normal"]


def test_the_real_wagap_trace_loads():
    workload = load_workload(WAGAP)
    assert len(workload) == 17_898                    # 17,900 lines, 2 without a runtime
    assert workload.report.rejected == {"runtime missing or negative": 2}
    assert workload.jobs["queue_name"].nunique() == 11
    assert workload.report.repaired["nodespec with several '+' chunks: total nodes x largest ppn"] == 12
