"""PBS Pro / OpenPBS / Torque accounting logs: every record type and edge case, and the real log
checked job by job against the SWF AleaNG's authors converted from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.workload import WorkloadError, load_workload
from engine.workload.accounting import parse_duration, parse_size_kb
from engine.workload.loading import check_trace_head, trace_format
from engine.workload.names import names_of
from engine.workload.pbs import (
    KEPT_ARRAY_PARENT, KEPT_RERUN, REJECT_ABORTED, REJECT_DELETED, REJECT_NEVER_STARTED, REJECT_NO_END,
    REPAIR_RUNTIME_USED, attributes, exec_hosts, load_pbs)
from engine.workload.swf import read_swf
from tests.shared_data import SHARED_DATA

DATA = Path(__file__).resolve().parents[2] / "data" / "accounting"
EDGE = DATA / "pbs_edge_cases.log"
OPENPBS = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"
PBS_EASY = SHARED_DATA / "metacentrum" / "aleang" / "NGI_CZ_journal_PBSeasy.swf"


@pytest.fixture(scope="module")
def edge():
    return load_workload(EDGE)


def job(workload, jobid: str):
    rows = workload.jobs[workload.jobs["jobid"] == jobid]
    assert len(rows) == 1, f"{jobid} is not one job of the workload"
    return rows.iloc[0]


def test_recognised_by_content_not_name(tmp_path):
    renamed = tmp_path / "trace.swf"
    renamed.write_bytes(EDGE.read_bytes())
    assert trace_format(renamed) == "pbs"
    assert len(load_workload(renamed)) == len(load_workload(EDGE))


def test_jobs_that_never_ran_are_left_out_and_counted(edge):
    assert edge.report.rejected == {REJECT_DELETED: 1, REJECT_ABORTED: 1, REJECT_NO_END: 1, REJECT_NEVER_STARTED: 1}
    assert sorted(edge.jobs["jobid"]) == ["100", "101", "200[1]", "300", "500"]
    assert edge.report.kept[KEPT_ARRAY_PARENT] == 1          # 200[] is not a job; 200[1] is


def test_a_plain_job_submit_start_runtime_and_request(edge):
    plain = job(edge, "100")
    assert (plain.submit, plain.wait_trace, plain.runtime) == (1717228800, 10, 3590)   # end - start
    assert (plain.procs, plain.requested_time, plain.mem) == (4, 3600, 2 * 1024 * 1024)
    assert (plain.nodes, plain.exec_hosts) == (0, "n1")      # place=free: cores anywhere
    assert names_of(edge.metadata, "user")[plain.user] == "alice"


def test_torque_nodes_and_a_q_record_holding_only_the_queue(edge):
    torque = job(edge, "101")
    assert (torque.procs, torque.nodes, torque.ppn) == (8, 2, 4)
    assert torque.exec_hosts == "n2;n3"
    assert (torque.queue_name, torque.wait_trace, torque.runtime) == ("batch", 60, 480)


def test_array_sub_job_and_failed_exit_status(edge):
    sub = job(edge, "200[1]")
    assert (sub.runtime, sub.status) == (600, 0)


def test_rerun_keeps_the_last_run_and_quoted_values_are_whole(edge):
    rerun = job(edge, "300")
    assert (rerun.wait_trace, rerun.runtime, rerun.exec_hosts) == (1320, 900, "n7;n8")
    assert rerun.account == "big project"
    assert (rerun.nodes, rerun.ppn, rerun.gpus, bool(rerun.exclusive)) == (2, 1, 1, True)   # scatter:excl
    assert edge.report.kept[KEPT_RERUN] == 1


def test_only_an_end_record_uses_ctime_and_resources_used(edge):
    late = job(edge, "500")
    assert late.submit == 1717227000                         # ctime, not the later qtime
    assert (late.wait_trace, late.runtime) == (1000, 3000)   # no end=: resources_used.walltime
    assert edge.report.repaired[REPAIR_RUNTIME_USED] == 1
    assert (late.nodes, late.ppn, late.requested_time) == (1, 8, 86400)    # place=pack: one node


def test_time_zone_of_the_log_is_kept_for_display(edge):
    assert (edge.metadata["TimeZone"], edge.metadata["TimeZoneString"]) == ("7200", "UTC+02:00")
    assert edge.metadata["format"] == "pbs"


@pytest.mark.parametrize("line, field", [
    ("06/01/2024 10:00:00;E;1.srv;user=a queue=q ctime=soon start=5 end=9", "ctime"),
    ("06/01/2024 10:00:00;E;1.srv;user=a queue=q ctime=1 start=5 end=9 Resource_List.walltime=1h", "Resource_List.walltime"),
    ("06/01/2024 10:00:00;E;1.srv;user=a ctime=1 start=5 end=9 Resource_List.select=2:ncpus=x", "Resource_List.select"),
    ("06/01/2024 10:00:00;E;1.srv;user=a ctime=1 start=5 end=9 Resource_List.mem=lots", "Resource_List.mem"),
    ("06/01/2024 10:00:00;E", "record"),
    ("06/01/2024 10:00:00;Q;abc.srv;queue=q", "jobid"),
    # found by fuzzing (OverflowError into the int64 columns)
    ("06/01/2024 10:00:00;E;1.srv;user=a ctime=1 start=" + "9" * 30 + " end=9", "start"),
    ("06/01/2024 10:00:00;E;1.srv;user=a ctime=1 start=5 end=9 Resource_List.ncpus=99999999999", "Resource_List.ncpus"),
    ("06/01/2024 10:00:00;E;1.srv;user=a ctime=1 start=5 end=9 Resource_List.select=9999999999:ncpus=2",
     "Resource_List.select"),
    ("06/01/2024 10:00:00;E;1.srv;user=a ctime=1 start=5 end=9 Resource_List.select=2000000000:ncpus=2000000000",
     "Resource_List"),
    ("06/01/2024 10:00:00;E;1.srv;user=a ctime=1 start=5 end=9 Resource_List.mem=" + "9" * 400 + "gb", "Resource_List.mem"),
])
def test_errors_name_file_line_and_field(tmp_path, line, field):
    path = tmp_path / "bad.log"
    good = "06/01/2024 09:00:00;E;9.srv;user=a queue=q ctime=1 start=2 end=3"
    path.write_text(f"{good}\n{good.replace('9.srv', '8.srv')}\n{line}\n")
    with pytest.raises(WorkloadError) as caught:
        load_pbs(path)
    assert (caught.value.file, caught.value.line, caught.value.field) == (str(path), 3, field)


def test_skip_bad_lines_counts_them(tmp_path):
    path = tmp_path / "bad.log"
    path.write_text("06/01/2024 09:00:00;E;9.srv;user=a queue=q ctime=1 start=2 end=3\n"
                    "06/01/2024 10:00:00;E;1.srv;user=a queue=q ctime=soon start=5 end=9\n"
                    "garbage without separators\n")
    workload = load_pbs(path, skip_bad_lines=True)
    assert len(workload) == 1 and workload.report.bad_lines == 2


def test_upload_check_names_problems_and_accepts_the_real_log(tmp_path):
    assert check_trace_head(OPENPBS) == ({}, [], "pbs")
    path = tmp_path / "bad.log"
    path.write_text("06/01/2024 09:00:00;E;9.srv;user=a queue=q ctime=1 start=2 end=3\n06/01/2024 10:00:00;Q;x;\n")
    _, problems, fmt = check_trace_head(path)
    assert fmt == "pbs" and [(p.line, p.field) for p in problems] == [(2, "jobid")]


def test_parsing_helpers():
    assert attributes('a=1 jobname="my job" b=\'say "hi"\' c=') == {"a": "1", "jobname": "my job", "b": 'say "hi"', "c": ""}
    assert exec_hosts({"exec_host": "n1.dom/0*2+n2/1+n1.dom/3"}) == ["n1", "n2"]
    assert exec_hosts({"exec_vnode": "(n3[0]:ncpus=1)+(n4:ncpus=2)"}) == ["n3", "n4"]
    assert [parse_duration(t) for t in ("02:00:00", "48:00:00", "30:00", "45", "1-00:00:00")] == \
        [7200, 172800, 1800, 45, 86400]
    assert [parse_size_kb(t) for t in ("600mb", "307200kb", "1gb", "2048", "1w")] == [614400, 307200, 1048576, 2, 1]


# --------------------------------------------------------------------------- the real log


@pytest.fixture(scope="module")
def real():
    return load_workload(OPENPBS)


def test_real_openpbs_log_every_job_read(real):
    assert len(real) == 200 and real.report.total_rejected == 0 and real.report.bad_lines == 0
    assert real.metadata["TimeZoneString"] == "UTC+01:00"     # CET: 17:58:09 local = 16:58:09 UTC
    assert set(names_of(real.metadata, "user").values()) == {"vchlum", "klusacek"}
    assert set(real.jobs["exec_hosts"]) <= {"torque2", "torque3", "torque2;torque3"}


def test_real_log_matches_aleang_conversion_job_by_job(real):
    """AleaNG's NGI_CZ_journal_PBSeasy.swf is this log converted by its authors. Every one of the
    200 jobs agrees field by field: submit (ctime), wait (start - ctime), runtime (end - start, not
    resources_used.walltime, which is ~5 s shorter), processors, walltime; vchlum is their user_A
    and klusacek user_B throughout. The one difference: the SWF has 201 jobs. Its job 1 (user_B,
    1 processor, runtime 1 s, walltime 11 s, wait 0, submitted with the first job) is not in the
    log: every one of the log's 200 jobs (112461-112660) asks for 02:00:00 and runs about 1,800 s.
    The conversion added it (it does not change the schedule: 1 s on a free processor)."""
    converted = read_swf(PBS_EASY)
    extra = converted.jobs[converted.jobs["job_number"] == 1].iloc[0]
    assert (extra.run_time, extra.requested_time, extra.allocated_procs, extra.wait_time) == (1, 11, 1, 0)
    assert (real.jobs["requested_time"] == 7200).all() and real.jobs["runtime"].min() > 1700
    swf = converted.jobs[converted.jobs["job_number"] != 1].reset_index(drop=True)
    ours = real.jobs
    assert len(ours) == len(swf) == 200
    for our_column, swf_column in (("submit", "submit_time"), ("wait_trace", "wait_time"), ("runtime", "run_time"),
                                   ("procs", "allocated_procs"), ("requested_time", "requested_time")):
        differing = np.flatnonzero(ours[our_column].to_numpy() != swf[swf_column].to_numpy())
        assert differing.size == 0, f"{our_column}: jobs {ours['jobid'].iloc[differing].tolist()[:5]} differ"
    our_names = names_of(real.metadata, "user")
    their_names = converted.names["user"]
    pairs = set(zip((our_names[u] for u in ours["user"]), (their_names[u] for u in swf["user_id"])))
    assert pairs == {("vchlum", "user_A"), ("klusacek", "user_B")}
