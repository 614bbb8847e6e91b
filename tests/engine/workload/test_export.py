"""Any trace to SWF / extended SWF and back: the same jobs, names and recorded schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main
from engine.run import simulate
from engine.workload import load_workload
from engine.workload.export import write_swf
from engine.workload.names import names_of
from engine.workload.timebase import epoch_origin
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
        if column == "submit":     # the same instants (SWF counts from UnixStartTime, extended SWF in epochs)
            assert epochs(again).tolist() == epochs(original).tolist()
            continue
        assert again.jobs[column].tolist() == original.jobs[column].tolist(), column
    assert names_of(again.metadata, "user") == names_of(original.metadata, "user")
    if extended and "queue_name" in original.jobs:
        assert again.jobs["queue_name"].replace("-", "").tolist() == original.jobs["queue_name"].tolist()
        assert (again.jobs["mem"] == original.jobs["mem"]).all()


def epochs(workload):
    """Each submit as a Unix time (engine.workload.timebase)."""
    submit = workload.jobs["submit"]
    return submit + epoch_origin(workload.metadata, int(submit.min()))


def test_swf_of_an_accounting_log_counts_from_its_unix_start_time_once(tmp_path):
    """The log's submits are epochs: the SWF writes them from the first submit, with it as
    UnixStartTime (another reader adds it once), and its extended SWF writes the epochs without it."""
    log = load_workload(TRACES[0])
    first = int(log.jobs["submit"].min())
    write_swf(log, tmp_path / "o.swf")
    write_swf(log, tmp_path / "e.swf", extended=True)
    plain, extended = (tmp_path / "o.swf").read_text(), (tmp_path / "e.swf").read_text()
    assert f"; UnixStartTime: {first}\n" in plain and "UnixStartTime" not in extended
    rows = [line.split() for line in plain.splitlines() if not line.startswith(";")]
    assert int(rows[0][1]) == 0 and int(rows[-1][1]) == int(log.jobs["submit"].max()) - first
    assert int(next(line for line in extended.splitlines() if not line.startswith(";")).split()[1]) == first


def test_recorded_run_is_the_same_from_the_log_and_from_its_swf(tmp_path):
    log = load_workload(TRACES[0])
    write_swf(log, tmp_path / "o.swf")
    swf = load_workload(tmp_path / "o.swf")
    a = simulate(log, 4, "recorded").schedule
    b = simulate(swf, 4, "recorded").schedule
    shift = int(log.jobs["submit"].min())        # the SWF counts from the log's first submit
    assert (a["start"] - shift).tolist() == b["start"].tolist() and (a["end"] - shift).tolist() == b["end"].tolist()


def test_cli_convert(tmp_path, capsys):
    assert main(["convert", str(TRACES[1]), "--out", str(tmp_path / "e.swf"), "--extended"]) == 0
    assert "5 jobs written" in capsys.readouterr().err
    assert len(load_workload(tmp_path / "e.swf")) == 5
