"""Any trace to SWF / extended SWF and back: the same jobs, names and recorded schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main
from engine.run import simulate
from engine.workload import load_workload
from engine.workload.export import write_swf
from engine.workload.names import names_of
from tests.shared_data import SHARED_DATA

DATA = Path(__file__).resolve().parents[2] / "data" / "accounting"
TRACES = [SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log", DATA / "pbs_edge_cases.log",
          DATA / "slurm_real_allocations.txt", DATA / "slurm_documented_format.txt",
          SHARED_DATA / "metacentrum" / "aleang" / "NGI_CZ_journal_PBSeasy.swf"]
SAME = ["job_id", "submit", "wait_trace", "runtime", "procs", "requested_time", "user", "group", "status"]


@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
@pytest.mark.parametrize("extended", [False, True], ids=["swf", "extended"])
def test_round_trip_keeps_the_jobs_and_the_names(tmp_path, trace, extended):
    original = load_workload(trace, procs=4 if trace.suffix == ".swf" else None)
    out = tmp_path / "out.swf"
    write_swf(original, out, extended=extended)
    again = load_workload(out)
    assert again.metadata.get("format", "swf") == ("metacentrum" if extended else "swf")
    for column in SAME:
        assert again.jobs[column].tolist() == original.jobs[column].tolist(), column
    assert names_of(again.metadata, "user") == names_of(original.metadata, "user")
    if extended and "queue_name" in original.jobs:
        assert again.jobs["queue_name"].replace("-", "").tolist() == original.jobs["queue_name"].tolist()
        assert (again.jobs["mem"] == original.jobs["mem"]).all()


def test_recorded_run_is_the_same_from_the_log_and_from_its_swf(tmp_path):
    log = load_workload(TRACES[0])
    write_swf(log, tmp_path / "o.swf")
    a = simulate(log, 4, "recorded").schedule
    b = simulate(load_workload(tmp_path / "o.swf"), 4, "recorded").schedule
    assert a["start"].tolist() == b["start"].tolist() and a["end"].tolist() == b["end"].tolist()


def test_cli_convert(tmp_path, capsys):
    assert main(["convert", str(TRACES[1]), "--out", str(tmp_path / "e.swf"), "--extended"]) == 0
    assert "5 jobs written" in capsys.readouterr().err
    assert len(load_workload(tmp_path / "e.swf")) == 5
