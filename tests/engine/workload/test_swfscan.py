"""The compiled SWF pass (engine.workload.swfscan) reads a trace as the pandas path does, job by job and
field by field, or declines it (None) and leaves it to that path: real traces, random tricky lines
(decimals, signs, zeros, tabs, comments, line ends), and the size and numba rules of when it runs."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.workload import swf, swfscan
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"
SMALL_TRACES = ["KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-Par-1996-3.1-cln.swf.gz", "lublin_256.swf.gz",
                "OSC-Clust-2000-3.1-cln.swf.gz"]
LARGE_TRACES = ["HPC2N-2002-2.2-cln.swf.gz", "SDSC-BLUE-2000-4.2-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz",
                "LANL-CM5-1994-4.1-cln.swf.gz", "METACENTRUM-2009-2.swf.gz", "RICC-2010-2.swf.gz",
                "CEA-Curie-2011-2.1-cln.swf.gz"]


def both_ways(path: Path, monkeypatch: pytest.MonkeyPatch, *, kernel=None) -> tuple[object, object, bool]:
    """(read with the compiled pass whatever the size, read without it, whether the pass took it);
    a WorkloadError stands for its read."""
    def read() -> object:
        try:
            return swf.read_swf(path)
        except swf.WorkloadError as error:
            return error
    scanned = swfscan.scan_file(str(path), swf._inspect(path).compressed, force=True) \
        if path.read_bytes()[:2] != b"\0\0" else None
    with monkeypatch.context() as patch:
        patch.setattr(swf, "scan_file", lambda file, compressed: swfscan.scan_file(file, compressed, force=True))
        if kernel is not None:
            patch.setattr(swfscan, "scan", kernel)
        fast = read()
    with monkeypatch.context() as patch:
        patch.setattr(swf, "scan_file", lambda file, compressed: None)
        reference = read()
    return fast, reference, scanned is not None


def assert_same(fast: object, reference: object) -> None:
    if isinstance(reference, Exception):
        assert str(fast) == str(reference)
        return
    assert isinstance(fast, swf.SwfTrace)
    pd.testing.assert_frame_equal(fast.jobs, reference.jobs, check_exact=True)
    assert np.array_equal(np.signbit(fast.jobs["avg_cpu_time"]), np.signbit(reference.jobs["avg_cpu_time"]))
    assert (fast.metadata, fast.bad_lines, fast.names) == (reference.metadata, reference.bad_lines, reference.names)


@pytest.mark.parametrize("name", SMALL_TRACES)
def test_small_real_traces_read_the_same(name, monkeypatch):
    fast, reference, taken = both_ways(SWF / name, monkeypatch)

    assert taken
    assert_same(fast, reference)


@pytest.mark.slow
@pytest.mark.parametrize("name", LARGE_TRACES)
def test_large_real_traces_read_the_same(name, monkeypatch):
    fast, reference, taken = both_ways(SWF / name, monkeypatch)

    assert taken     # every archive trace here is plain: decimals in avg_cpu_time (HPC2N) included
    assert_same(fast, reference)


#: fields the compiled pass reads, and fields it declines (the whole file then goes to pandas)
PLAIN_FIELDS = ["0", "7", "-1", "00", "007", "12345678901234", "123456789012345", "1.5", "2.5", "-2.5", "0.03",
                "552.21", "978.00", "0.1", "-0.10", "3.14159265358979", "99999999999999.9", "0.00000000000001"]
DECLINED_FIELDS = ["-0", "0.000000000000001", "-0.0", "1.", ".5", "1e3", "+3", "1234567890123456", "9007199254740993", "0x1F", "1,5"]


def random_trace(rng: random.Random, path: Path) -> None:
    lines = ["; Version: 2.2", "; MaxProcs: 64", ";"]
    for job in range(rng.randint(1, 12)):
        fields = [str(job + 1), str(rng.randint(0, 5) * 10)] + [
            rng.choice(PLAIN_FIELDS) if rng.random() < 0.1 else
            rng.choice(DECLINED_FIELDS) if rng.random() < 0.005 else str(rng.randint(-1, 100)) for _ in range(16)]
        if rng.random() < 0.01:
            fields.pop()
        separator = rng.choice([" ", " ", "   ", "\t", " \t"])
        line = separator.join(fields)
        twist = rng.random()
        if twist < 0.01:
            line += " ; a comment"
        elif twist < 0.05:
            line = "  " + line + " \t"
        elif twist < 0.06:
            line += "\r"
        lines.append(line)
        if rng.random() < 0.05:
            lines.append(rng.choice(["", "", "; between jobs", "   ", "  ; indented"]))
    text = "\n".join(lines) + rng.choice(["\n", "", "\n\n"])
    data = text.encode("latin-1")
    path.write_bytes(gzip.compress(data) if rng.random() < 0.3 else data)


@pytest.mark.parametrize("seed", range(4))
def test_random_tricky_traces_read_the_same_or_are_declined(seed, tmp_path, monkeypatch):
    rng = random.Random(seed)
    taken = declined = 0
    for case in range(150):
        path = tmp_path / f"case{case}.swf"
        random_trace(rng, path)
        fast, reference, took = both_ways(path, monkeypatch)
        assert_same(fast, reference)
        taken += took
        declined += not took

    assert taken > 10 and declined > 10     # both branches met


def test_the_kernel_run_as_python_reads_the_same(tmp_path, monkeypatch):
    rng = random.Random(99)
    kernel = swfscan.scan
    plain = getattr(kernel, "py_func", None) or kernel.function
    for case in range(60):
        path = tmp_path / f"case{case}.swf"
        random_trace(rng, path)
        assert_same(*both_ways(path, monkeypatch, kernel=plain)[:2])


def test_a_small_file_goes_to_pandas_unless_numba_is_loaded(monkeypatch):
    path = str(SWF / "lublin_256.swf.gz")       # 10,000 jobs: below COMPILED_FROM_LINES
    monkeypatch.delitem(__import__("sys").modules, "numba", raising=False)
    assert swfscan.scan_file(path, True) is None
    monkeypatch.setattr(swfscan, "COMPILED_FROM_LINES", 5_000)
    assert swfscan.scan_file(path, True) is not None


def test_a_corrupt_gzip_stream_is_left_to_the_reader(tmp_path):
    path = tmp_path / "broken.swf.gz"
    path.write_bytes(gzip.compress(b"1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 1 -1 -1\n" * 100)[:-30])

    assert swfscan.scan_file(str(path), True, force=True) is None


@pytest.mark.parametrize("field", ["-0", "-0.0", "-0.00"])
def test_a_negative_zero_is_declined(field, tmp_path, monkeypatch):
    # pandas reads "-0" as 0.0 in a column of whole numbers but as -0.0 in a column with decimals
    lines = [f"{job} 0 5 100 4 {field if job == 2 else avg} -1 4 200 -1 1 1 1 -1 1 1 -1 -1"
             for job, avg in ((1, "1"), (2, None), (3, "2.5"))]
    path = tmp_path / "zero.swf"
    path.write_text("; MaxProcs: 8\n" + "\n".join(lines) + "\n")
    fast, reference, taken = both_ways(path, monkeypatch)

    assert not taken
    assert_same(fast, reference)


def test_hand_made_decimals_read_as_pandas_reads_them(tmp_path, monkeypatch):
    lines = [f"{job} 0 5 {run} 4 {avg} -1 4 200 -1 1 1 1 -1 1 1 -1 -1"
             for job, run, avg in ((1, "978.00", "552.21"), (2, "2.5", "0.03"), (3, "3.5", "-182.97"),
                                   (4, "7", "99999999999999.9"), (5, "-1", "0.00000000000001"))]
    path = tmp_path / "decimals.swf"
    path.write_text("; MaxProcs: 8\n" + "\n".join(lines))
    fast, reference, taken = both_ways(path, monkeypatch)

    assert taken
    assert_same(fast, reference)
    assert fast.jobs["run_time"].tolist() == [978, 2, 4, 7, -1]          # rounded half to even, as before
    assert fast.jobs["avg_cpu_time"].tolist() == [552.21, 0.03, -182.97, 99999999999999.9, 1e-14]
