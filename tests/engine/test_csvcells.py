"""Formula-leading text cells are made inert in every CSV export (engine.csvcells): the schedule CSV
of the command line and the web, the web's metrics and study CSVs."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest

from engine import api
from engine.cli import main
from engine.csvcells import neutralised, safe_cells
from engine.sim.schedule_csv import write_schedule_csv

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo.swf"


@pytest.mark.parametrize("text, expected", [
    ("=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"), ("=1+2", "'=1+2"), ("@SUM(A1)", "'@SUM(A1)"),
    ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"), ("-2+3", "'-2+3"), ("\tx", "'\tx"), ("\r=1", "'\r=1"),
    ("-5", "-5"), ("+1.5e3", "+1.5e3"), ("-.5", "-.5"), ("-inf", "-inf"), ("-", "-"), ("=", "="),
    ("alice", "alice"), ("a=1", "a=1"), ("", ""), ("'=1", "'=1"),
])
def test_what_is_neutralised(text, expected):
    assert neutralised(text) == expected


def test_rows_keep_numbers_and_other_values():
    assert safe_cells([1, -2.5, "=1+2", None, "ok", True]) == [1, -2.5, "'=1+2", None, "ok", True]


@pytest.mark.parametrize("rows", [3, 40_000])      # the numpy layout / pandas, and the compiled kernel
def test_the_schedule_csv_writes_formula_cells_inert(tmp_path, rows):
    names = ["=HYPERLINK(\"http://evil\",\"x\")", "@SUM(1)", "-x", "plain", "-7"]
    frame = pd.DataFrame({"job_id": range(rows), "start": range(rows),
                          "allocation": pd.Series([names[i % len(names)] for i in range(rows)], dtype="str")})
    path = tmp_path / "s.csv"
    write_schedule_csv(frame, str(path))
    cells = [row[2] for row in csv.reader(io.StringIO(path.read_text()))][1:]
    expected = ["'=HYPERLINK(\"http://evil\",\"x\")", "'@SUM(1)", "'-x", "plain", "-7"]
    assert cells == [expected[i % len(names)] for i in range(rows)]


def test_allocation_names_reach_schedule_csv_inert(tmp_path):
    """An allocation named like a formula (issue 27: =HYPERLINK, =1+2, @SUM reached schedule.csv)."""
    jobs = api.read_trace(DEMO).jobs
    users = sorted(set(jobs["user"].tolist()))
    allocations = tmp_path / "allocations.csv"
    allocations.write_text("allocation,members,award,period_days,target_factor,target\n"
                           f'"=HYPERLINK(""http://evil"",""x"")",user:{users[0]},,,,100\n'
                           f"=1+2,user:{users[1]},,,,100\n@SUM(A1),user:{users[2]},,,,100\n")
    out = tmp_path / "schedule.csv"
    assert main(["simulate", str(DEMO), "--policy", "sfs", "--allocations", str(allocations), "--out", str(out),
                 "--no-parse-cache"]) == 0
    schedule = pd.read_csv(out)
    written = set(schedule["allocation"].dropna())
    assert {"'=HYPERLINK(\"http://evil\",\"x\")", "'=1+2", "'@SUM(A1)"} <= written
    assert not any(str(name).startswith(("=", "@", "+")) for name in written)
