"""Load scaling keeps every job, its size and runtimes, and divides only the gaps between arrivals."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.workload import WorkloadError
from engine.workload.load import scale_load
from tests.engine.conftest import make_workload

# (submit, runtime, requested, procs); gaps between arrivals: 10, 0, 30, 5
TRACE = [(100, 50, 60, 4), (110, 7, 9, 1), (110, 20, 20, 2), (140, 3, 5, 8), (145, 1, 1, 16)]


def test_factor_two_halves_every_gap_and_keeps_the_first_submit():
    scaled = scale_load(make_workload(TRACE), 2.0).jobs
    # offsets from 100: 0, 10, 10, 40, 45 -> /2 -> 0, 5, 5, 20, 22.5 -> rounded half up: 23
    assert scaled["submit"].tolist() == [100, 105, 105, 120, 123]


def test_only_submit_times_change_and_every_job_is_kept_in_order():
    original = make_workload(TRACE)
    scaled = scale_load(original, 3.0)
    assert len(scaled) == len(original)
    unchanged = [c for c in original.jobs.columns if c != "submit"]
    assert scaled.jobs[unchanged].equals(original.jobs[unchanged])
    assert scaled.jobs["submit"].is_monotonic_increasing
    assert original.jobs["submit"].tolist() == [100, 110, 110, 140, 145]   # the input is not modified


def test_factor_below_one_spreads_arrivals_out():
    # offsets 0, 10, 10, 40, 45 / 0.5 -> 0, 20, 20, 80, 90
    assert scale_load(make_workload(TRACE), 0.5).jobs["submit"].tolist() == [100, 120, 120, 180, 190]


def test_factor_one_is_the_identity_and_recorded_in_the_metadata():
    scaled = scale_load(make_workload(TRACE), 1)
    assert scaled.jobs["submit"].tolist() == [100, 110, 110, 140, 145]
    assert scaled.metadata["load_factor"] == 1.0


def test_rounding_does_not_accumulate_over_many_gaps():
    """1000 gaps of 1 s at factor 3: per-gap rounding would give 0 s each; cumulative gives 333."""
    rows = [(i, 1, 1, 1) for i in range(1001)]
    assert scale_load(make_workload(rows), 3.0).jobs["submit"].iloc[-1] == 333


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "fast"])
def test_a_bad_factor_is_refused_with_its_value(bad):
    with pytest.raises(WorkloadError, match="load factor must be a positive number"):
        scale_load(make_workload(TRACE), bad)


def test_the_command_line_scales_the_load_and_records_the_factor(tmp_path):
    """`--load 2` on the bundled demo trace: same jobs, submits = first + half the offsets."""
    import json

    import pandas as pd

    from engine.cli import main

    demo = Path(__file__).resolve().parents[2] / "data" / "demo.swf"
    base, fast = tmp_path / "base.csv", tmp_path / "fast.csv"
    assert main(["simulate", str(demo), "--policy", "fcfs", "--out", str(base), "--no-progress"]) == 0
    assert main(["simulate", str(demo), "--policy", "fcfs", "--load", "2", "--out", str(fast),
                 "--summary", str(tmp_path / "s.json"), "--no-progress"]) == 0
    before, after = pd.read_csv(base), pd.read_csv(fast)
    assert after["job_id"].tolist() == before["job_id"].tolist()
    first = before["submit"].iloc[0]
    assert after["submit"].tolist() == [first + (s - first + 1) // 2 for s in before["submit"]]
    assert json.loads((tmp_path / "s.json").read_text())["load_factor"] == 2.0


def test_the_command_line_refuses_a_zero_factor(tmp_path, capsys):
    from engine.cli import main

    demo = Path(__file__).resolve().parents[2] / "data" / "demo.swf"
    assert main(["simulate", str(demo), "--policy", "fcfs", "--load", "0", "--out", str(tmp_path / "x.csv")]) == 2
    assert "load factor must be a positive number" in capsys.readouterr().err
