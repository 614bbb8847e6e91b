"""Every trace in the shared data folder loads, and no job goes unaccounted for:
kept rows + rejected jobs == the job lines that SOURCES.md lists for the file."""

from __future__ import annotations

import re

import pytest

from engine.workload import WorkloadError, load_workload
from tests.shared_data import SHARED_DATA

DATA = (SHARED_DATA / "swf")
#: Traces whose header was stripped, with the machine size to give (from SOURCES.md).
HEADERLESS = {"METACENTRUM-2009-2.swf.gz": 60, "RICC-2010-2.swf.gz": 8192}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (DATA / "SOURCES.md").exists(), reason="shared SWF traces not available"),
]


def job_lines_from_sources() -> dict[str, int]:
    """file name -> job lines, from the table in SOURCES.md (| file | origin | jobs | ...)."""
    counts: dict[str, int] = {}
    if not (DATA / "SOURCES.md").exists():
        return counts
    for row in (DATA / "SOURCES.md").read_text().splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) > 2 and cells[0].endswith(".swf.gz") and re.fullmatch(r"[\d,]+", cells[2]):
            counts[cells[0]] = int(cells[2].replace(",", ""))
    return counts


JOB_LINES = job_lines_from_sources()


def test_sources_table_covers_every_trace_file():
    assert sorted(JOB_LINES) == sorted(p.name for p in DATA.glob("*.swf.gz"))


@pytest.mark.parametrize("name", sorted(JOB_LINES))
def test_trace_loads_and_accounts_for_every_job_line(name):
    workload = load_workload(DATA / name, procs=HEADERLESS.get(name))

    assert len(workload) + workload.report.total_rejected == JOB_LINES[name]
    assert workload.report.bad_lines == 0
    assert workload.jobs["submit"].is_monotonic_increasing
    assert (workload.jobs["procs"] >= 1).all()
    assert (workload.jobs["procs"] <= workload.metadata["procs"]).all()
    assert (workload.jobs["runtime"] <= workload.jobs["requested_time"]).all()


@pytest.mark.parametrize("name", sorted(HEADERLESS))
def test_headerless_trace_needs_procs(name):
    with pytest.raises(WorkloadError, match="machine size unknown.*give --procs"):
        load_workload(DATA / name)
