"""The schedule CSV is byte for byte what pandas wrote before (``DataFrame.to_csv(path, index=False)``,
kept below as the reference), for hand-made frames, random ones, and real traces' schedules."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.platform.machines import read_machines
from engine.run import simulate
from engine.sim import schedule_csv
from engine.sim.schedule_csv import fast_text, write_schedule_csv
from engine.workload import load_workload
from engine.workload.window import select_days
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"
INT64 = np.iinfo(np.int64)


def pandas_text(frame: pd.DataFrame) -> bytes:
    """The code path this replaced: SimResult.to_csv before the fast writer."""
    if "deadline" in frame:
        frame = frame.assign(deadline=frame["deadline"].round().astype("Int64"))
    return frame.to_csv(index=False).encode("utf-8")


def written(frame: pd.DataFrame, tmp_path: Path) -> bytes:
    path = tmp_path / "schedule.csv"
    write_schedule_csv(frame, str(path))
    return path.read_bytes()


@pytest.fixture(params=["numpy", "compiled", "kernel-as-python"])
def writer(request, monkeypatch):
    """Each way of formatting the rows: the numpy layout, numba's kernel, the kernel run as Python."""
    monkeypatch.setattr(schedule_csv, "compiled_pays", lambda rows: request.param != "numpy")
    if request.param == "kernel-as-python":
        kernel = schedule_csv.format_rows
        monkeypatch.setattr(schedule_csv, "format_rows", getattr(kernel, "py_func", None) or kernel.function)
    return request.param


def test_hand_made_frame_reads_as_pandas_writes_it(tmp_path, writer):
    frame = pd.DataFrame({"job_id": [1, 20, 300], "wait": [0, -1, 10 ** 18], "killed": [True, False, True],
                          "deadline": [np.nan, 86_400.4, 90_000.0]})

    assert written(frame, tmp_path) == (b"job_id,wait,killed,deadline\n1,0,True,\n20,-1,False,86400\n"
                                        b"300,1000000000000000000,True,90000\n")
    assert written(frame, tmp_path) == pandas_text(frame)


@pytest.mark.parametrize("rows", [0, 1, 2, 9, 1000])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_integer_boolean_and_nullable_columns(rows, seed, tmp_path, writer):
    rng = np.random.default_rng(seed)
    edges = np.array([0, -1, 9, 10, -10, 99, 100, 9999, 10_000, 10 ** 18 - 1, 10 ** 18, -10 ** 18,
                      INT64.max, INT64.min + 1], np.int64)
    frame = pd.DataFrame({
        "edge": rng.choice(edges, rows),
        "wide": rng.integers(-10 ** 12, 10 ** 12, rows),
        "small": rng.integers(0, 10, rows).astype(np.int32),
        "unsigned": rng.integers(0, 2 ** 62, rows, dtype=np.uint64),
        "killed": rng.random(rows) < 0.5,
        "deadline": np.where(rng.random(rows) < 0.3, np.nan, rng.integers(0, 10 ** 9, rows) + 0.4),
    })

    assert fast_text(pandas_frame := frame.assign(deadline=frame["deadline"].round().astype("Int64"))) is not None
    assert written(frame, tmp_path) == pandas_text(frame) == fast_text(pandas_frame)


@pytest.mark.parametrize("column", [[0.5, 1.0], ["a", "b,c"], [1, None], [INT64.min, 0]],
                         ids=["fractions", "names", "objects", "int64-min"])
def test_other_columns_go_to_pandas_and_still_match(column, tmp_path, writer):
    frame = pd.DataFrame({"job_id": [1, 2], "other": column})

    if writer == "numpy" or column == [INT64.min, 0]:     # (the compiled writers write names and fractions)
        assert fast_text(frame) is None
    assert written(frame, tmp_path) == pandas_text(frame)


def test_one_column_of_missing_values_is_quoted_as_pandas_does(tmp_path, writer):
    frame = pd.DataFrame({"deadline": [np.nan, 5.0]})

    assert written(frame, tmp_path) == pandas_text(frame) == b'deadline\n""\n5\n'


def real_schedule(name: str, policy: str | dict, days: tuple[float, float] | None = None) -> pd.DataFrame:
    workload = load_workload(SWF / name)
    if days is not None:
        workload = select_days(workload, *days)
    return simulate(workload, int(workload.metadata["procs"]), policy).schedule


@pytest.mark.parametrize(("name", "policy", "days"), [
    ("KTH-SP2-1996-2.1-cln.swf.gz", "easy", None),
    ("SDSC-SP2-1998-4.2-cln.swf.gz", "conservative", (0, 60)),
    ("SDSC-SP2-1998-4.2-cln.swf.gz", {"preset": "dbf", "params": {"deadline_fraction": 0.3}}, (0, 20)),
])
def test_real_trace_schedule_is_byte_identical(name, policy, days, tmp_path, writer):
    schedule = real_schedule(name, policy, days)

    assert written(schedule, tmp_path) == pandas_text(schedule)


@pytest.mark.slow
@pytest.mark.parametrize("writer", ["numpy", "compiled"], indirect=True)
def test_hpc2n_schedule_is_byte_identical(tmp_path, writer):
    schedule = real_schedule("HPC2N-2002-2.2-cln.swf.gz", "easy")

    # the schedule has a text column (held_by): the compiled writer formats it, the numpy layout
    # (only numbers; used for small schedules) leaves it to pandas
    assert (fast_text(schedule) is None) == (writer == "numpy")
    assert written(schedule, tmp_path) == pandas_text(schedule)
    numbers_only = schedule.drop(columns="held_by")
    assert fast_text(numbers_only) is not None and written(numbers_only, tmp_path) == pandas_text(numbers_only)


#: strings csv must quote (a comma, a quote, line breaks), and strings it must not (spaces, semicolons,
#: other punctuation, non-ASCII, empty)
AWKWARD = ["a", "b,c", 'say "hi"', '"', "line\nbreak", "cr\rhere", "crlf\r\n", " spaced ", "x;y;z", "", "é-node",
           "tab\there", ",", "'single'", "a\\b", "ü,ö"]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rows", [0, 1, 7, 500])
def test_text_columns_are_written_as_pandas_writes_them(rows, seed, tmp_path, writer):
    rng = np.random.default_rng(seed)
    names = np.array(AWKWARD, dtype=object)
    with_missing = names[rng.integers(0, len(names), rows)]
    with_missing[rng.random(rows) < 0.2] = None
    nan_missing = names[rng.integers(0, len(names), rows)].copy()
    nan_missing[rng.random(rows) < 0.2] = np.nan
    frame = pd.DataFrame({
        "job_id": rng.integers(-10 ** 6, 10 ** 6, rows),
        "cluster": names[rng.integers(0, len(names), rows)],
        "killed": rng.random(rows) < 0.5,
        "nodes": [";".join(f"n-{i}" for i in range(k)) for k in rng.integers(0, 4, rows)],
        "queue": with_missing,
        "user_name": nan_missing,
        "deadline": np.where(rng.random(rows) < 0.3, np.nan, rng.integers(0, 10 ** 9, rows) + 0.4),
    })

    assert written(frame, tmp_path) == pandas_text(frame)
    if writer != "numpy" and rows:      # (no rows: pandas makes the empty "nodes" list a float column)
        assert fast_text(frame.assign(deadline=frame["deadline"].round().astype("Int64"))) is not None


@pytest.mark.parametrize("column", [["a", 1], [b"bytes", "a"], [1.5, "a"]], ids=["mixed", "bytes", "float"])
def test_object_columns_of_other_values_go_to_pandas(column, tmp_path, writer):
    frame = pd.DataFrame({"job_id": [1, 2], "other": pd.Series(column, dtype=object)})

    assert fast_text(frame) is None
    assert written(frame, tmp_path) == pandas_text(frame)


def test_one_text_column_goes_to_pandas(tmp_path, writer):
    frame = pd.DataFrame({"cluster": ["a", "", None]})

    assert fast_text(frame) is None
    assert written(frame, tmp_path) == pandas_text(frame)


def test_node_level_schedule_is_byte_identical(tmp_path, writer):
    workload = load_workload(SHARED_DATA / "metacentrum" / "alea" / "hpc2n.swf")
    machine = read_machines(SHARED_DATA / "metacentrum" / "alea" / "hpc2n.swf.machines")
    schedule = simulate(workload, None, "mrfs-easy", machine=machine).schedule

    assert {"cluster", "nodes"} <= set(schedule.columns)
    if writer != "numpy":
        assert fast_text(schedule) is not None
    assert written(schedule, tmp_path) == pandas_text(schedule)


@pytest.mark.parametrize("seed", [0, 1])
def test_fraction_columns_are_written_as_pandas_writes_them(seed, tmp_path, writer):
    rng = np.random.default_rng(seed)
    edges = np.array([0.0, -0.0, 1.0, 30.0, 2.5, 1 / 3, -1e-5, 1e16, 1.5e300, 5e-324, np.inf, -np.inf, np.nan,
                      123456789.123, 0.1 + 0.2], np.float64)
    rows = 300
    frame = pd.DataFrame({"job_id": np.arange(rows), "fairshare_weight": rng.choice(edges, rows),
                          "cluster": rng.choice(np.array(["a", "b"], dtype=object), rows)})

    assert written(frame, tmp_path) == pandas_text(frame)
    if writer != "numpy":
        assert fast_text(frame) is not None
