"""Slurm sacct --parsable2 dumps: a real dump recorded on this machine (Debian's slurm-wlm 22.05 with
slurmdbd on MariaDB, see tests/data/accounting/README.md) and a sample in the documented format of
older versions (ReqMem n/c suffixes, GPUs, multi-node host lists)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from engine.workload import WorkloadError, load_workload
from engine.workload.loading import check_trace_head, trace_format
from engine.workload.names import names_of
from engine.workload.slurm import (
    HOST_BUDGET, HOSTS_PER_JOB, KEPT_STEPS, REJECT_CANCELLED, REJECT_PENDING, REJECT_RUNNING, _array_size, count_hosts,
    expand_hostlist, load_sacct)

DATA = Path(__file__).resolve().parents[2] / "data" / "accounting"
REAL = DATA / "slurm_real_allocations.txt"
REAL_STEPS = DATA / "slurm_real_with_steps.txt"
REAL_SUBSET = DATA / "slurm_real_parsable1_subset.txt"
DOCUMENTED = DATA / "slurm_documented_format.txt"
HEADER = "JobID|Submit|Start|End|NCPUS|State|Timelimit"


@pytest.fixture(scope="module")
def real():
    return load_workload(REAL)


def job(workload, jobid: str):
    rows = workload.jobs[workload.jobs["jobid"] == jobid]
    assert len(rows) == 1, f"{jobid} is not one job of the workload"
    return rows.iloc[0]


def test_real_dump_recognised_by_content_and_jobs_that_never_ran_counted(real):
    assert trace_format(REAL) == "slurm"
    assert real.report.rejected == {REJECT_CANCELLED: 6, REJECT_PENDING: 4, REJECT_RUNNING: 1}
    assert len(real) == 16 and real.metadata["format"] == "slurm"


def test_real_dump_arrays_timeout_and_cancelled_while_running(real):
    assert [job(real, f"3_{i}").runtime for i in range(4)] == [4, 4, 4, 4]
    timeout = job(real, "8")                 # TIMEOUT 1:16 on a 1:00 limit: cleaning kills at the limit
    assert (timeout.wait_trace, timeout.requested_time, timeout.runtime, bool(timeout.killed)) == (419, 60, 60, True)
    cancelled = job(real, "16")              # CANCELLED after it started: a job that ran, status 5
    assert (cancelled.runtime, cancelled.status) == (3, 5)
    assert (job(real, "4").status, job(real, "1").status) == (0, 1)     # FAILED, COMPLETED
    assert job(real, "1").mem == 200 * 1024                  # plain 200M with ReqTRES mem=200M: the job's total
    assert set(names_of(real.metadata, "user").values()) == {"alice", "bob", "root"}
    assert set(real.jobs["queue_name"]) == {"short", "long"} and set(real.jobs["exec_hosts"]) == {"vm"}


def test_real_dumps_with_steps_and_parsable1_subset_give_the_same_jobs(real):
    with_steps = load_workload(REAL_STEPS)
    subset = load_workload(REAL_SUBSET)          # --parsable (trailing |), columns reordered, UID/GID
    assert with_steps.report.kept[KEPT_STEPS] == 17
    for other in (with_steps, subset):
        for column in ("jobid", "submit", "wait_trace", "runtime", "procs", "requested_time"):
            assert other.jobs[column].tolist() == real.jobs[column].tolist(), column


def test_documented_format_memory_gpus_het_and_host_lists():
    workload = load_workload(DOCUMENTED)
    assert workload.report.rejected == {REJECT_PENDING: 4, REJECT_CANCELLED: 1, REJECT_RUNNING: 1}
    assert workload.report.kept[KEPT_STEPS] == 3
    big = job(workload, "1001")
    assert (big.nodes, big.ppn, big.mem, big.requested_time) == (4, 16, 4000 * 1024, 86400)   # 4000Mn per node
    assert big.exec_hosts == "n001;n002;n003;n004"
    gpu = job(workload, "1002_1")
    assert (gpu.mem, gpu.gpus) == (2000 * 1024 * 8, 2)        # 2000Mc x 8 CPUs; gres/gpu:a100=2
    het0, het1 = job(workload, "1004+0"), job(workload, "1004+1")
    assert (het0.mem, het0.nodes, het1.gpus) == (32 * 1024 * 1024, 2, 1)   # 64G for the job over 2 nodes
    long = job(workload, "1007")
    assert long.runtime == 2 * 86400 + 7200 and long.exec_hosts == "n020;n021;m5"
    assert long.requested_time == long.runtime               # Partition_Limit: none, set to the runtime


@pytest.mark.parametrize("line, field", [
    ("7|2024-03-01T08:00:00|yesterday|2024-03-01T09:00:00|4|COMPLETED|01:00:00", "Start"),
    ("7|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|four|COMPLETED|01:00:00", "NCPUS"),
    ("7|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|4|COMPLETED|1 hour", "Timelimit"),
    ("7|2024-03-01T08:00:00|2024-03-01T08:00:00", "End"),
    # found by fuzzing (OverflowError, IntCastingNaNError)
    ("7|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|inf|COMPLETED|01:00:00", "NCPUS"),
    ("7|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|99999999999|COMPLETED|01:00:00", "NCPUS"),
    ("7|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|4|COMPLETED|999999999999999:00:00", "Timelimit"),
])
def test_errors_name_file_line_and_field(tmp_path, line, field):
    path = tmp_path / "bad.txt"
    good = "6|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|4|COMPLETED|01:00:00"
    path.write_text(f"{HEADER}\n{good}\n{line}\n")
    with pytest.raises(WorkloadError) as caught:
        load_sacct(path)
    assert (caught.value.file, caught.value.line, caught.value.field) == (str(path), 3, field)


@pytest.mark.parametrize("header, nodelist, field", [
    (HEADER + "|NCPUS", "n1", "NCPUS"),                        # a column named twice (AttributeError)
    (HEADER + "|NodeList", "n[1-99999999999]", "NodeList"),    # expanding it hung
    (HEADER + "|AllocTRES", "cpu=" + "9" * 400, "AllocTRES"),  # ValueError: int from 400 digits
])
def test_found_by_fuzzing_headers_host_lists_and_tres(tmp_path, header, nodelist, field):
    path = tmp_path / "bad.txt"
    path.write_text(f"{header}\n6|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|0|COMPLETED|01:00:00|"
                    f"{nodelist}\n")
    with pytest.raises(WorkloadError) as caught:
        load_sacct(path)
    assert caught.value.field == field and caught.value.line in (1, 2)


def test_a_header_without_needed_columns_names_them(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("JobID|Submit|State\n1|2024-03-01T08:00:00|COMPLETED\n")
    with pytest.raises(WorkloadError) as caught:
        load_sacct(path)
    assert (caught.value.line, caught.value.field) == (1, "Start")


def test_skip_bad_lines_counts_them(tmp_path):
    path = tmp_path / "bad.txt"
    good = "6|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|4|COMPLETED|01:00:00"
    path.write_text(f"{HEADER}\n{good}\n7|x|y\n8|2024-03-01T08:00:00|soon|2024-03-01T09:00:00|4|COMPLETED|01:00:00\n")
    workload = load_sacct(path, skip_bad_lines=True)
    assert len(workload) == 1 and workload.report.bad_lines == 2


def test_upload_check(tmp_path):
    assert check_trace_head(REAL) == ({}, [], "slurm")
    path = tmp_path / "bad.txt"
    path.write_text(f"{HEADER}\n6|2024-03-01T08:00:00|soon|2024-03-01T09:00:00|4|COMPLETED|01:00:00\n")
    _, problems, fmt = check_trace_head(path)
    assert fmt == "slurm" and [(p.line, p.field) for p in problems] == [(2, "Start")]


def test_helpers():
    assert expand_hostlist("n[001-003,010],gpu5") == ["n001", "n002", "n003", "n010", "gpu5"]
    assert expand_hostlist("None assigned") == [] and expand_hostlist("vm") == ["vm"]
    assert [_array_size(t) for t in ("1_[5-9]", "1_[5-9%2]", "1_[1,3,7-8]", "1_[0-10:5]")] == [5, 5, 4, 3]


def test_count_hosts_agrees_with_expanding_them():
    for text in ("n[001-003,010],gpu5", "vm", "None assigned", "", "a[1-2]b,c[x],d[07-09]", "n[5-3]"):
        assert count_hosts(text) == len(expand_hostlist(text)), text


def _dump_line(job: int, nodelist: str) -> str:
    return (f"{job}|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|4|COMPLETED|01:00:00|"
            f"{nodelist}")


def test_host_lists_naming_too_many_hosts_in_all_are_refused_before_expanding(tmp_path):
    """A 2.4 KB .gz of 300 lines each on n[1-99990] took 15 s and 780 MB (8.2 GB for a 17.8 KB one):
    the total is counted first and the line passing the budget named."""
    path = tmp_path / "bomb.txt.gz"
    per_job = 99_990
    jobs = 300
    with gzip.open(path, "wt") as out:
        out.write(HEADER + "|NodeList\n")
        out.writelines(_dump_line(job, f"n[1-{per_job}],x{job}") + "\n" for job in range(1, jobs + 1))
    with pytest.raises(WorkloadError, match="more than") as caught:
        load_sacct(path)
    budget = HOST_BUDGET + HOSTS_PER_JOB * jobs
    first_over = next(job for job in range(1, jobs + 1) if job * (per_job + 1) > budget)
    assert (caught.value.field, caught.value.line) == ("NodeList", first_over + 1)


def test_host_lists_within_the_budget_are_expanded(tmp_path):
    path = tmp_path / "wide.txt"
    lines = [_dump_line(1, "n[0001-2048]")] + [_dump_line(job, f"n{job:04d}") for job in range(2, 50)]
    path.write_text(HEADER + "|NodeList\n" + "\n".join(lines) + "\n")
    hosts = load_sacct(path).jobs["exec_hosts"].tolist()
    assert hosts[0].split(";") == [f"n{i:04d}" for i in range(1, 2049)] and hosts[5] == "n0006"
