"""The command line's parse cache (engine.workload.cache.read_through) gives back the workload a read
makes, whatever the file's name; a changed file, other options or a workload the .npz cannot keep
exactly are read again."""

from __future__ import annotations

import gzip
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from engine import api
from engine.api import Cleaning
from engine.workload import cache
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"
DEMO = Path(__file__).parents[2] / "data" / "demo.swf"


def assert_same(a, b) -> None:
    pd.testing.assert_frame_equal(a.jobs, b.jobs, check_exact=True)
    assert list(a.jobs.dtypes) == list(b.jobs.dtypes)
    assert (a.metadata, a.report, a.source) == (b.metadata, b.report, b.source)


def reads(monkeypatch) -> list[str]:
    """The paths engine.workload.loading actually parses from now on."""
    from engine.workload import loading
    parsed: list[str] = []
    original = loading.load_workload

    def counting(path, **options):
        parsed.append(str(path))
        return original(path, **options)
    monkeypatch.setattr(loading, "load_workload", counting)
    return parsed


@pytest.mark.parametrize("name", ["KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-Par-1996-3.1-cln.swf.gz"])
def test_a_kept_trace_is_the_trace_read(name, tmp_path, monkeypatch):
    path = tmp_path / name
    shutil.copy(SWF / name, path)
    parsed = reads(monkeypatch)
    reference = api.read_trace(path)

    cold = api.read_trace(path, cache=tmp_path / "kept")
    warm = api.read_trace(path, cache=tmp_path / "kept")

    assert parsed == [str(path), str(path)]          # the warm read parsed nothing
    assert_same(cold, reference)
    assert_same(warm, reference)


def test_an_extended_trace_with_text_columns_is_kept_exactly(tmp_path, monkeypatch):
    path = SHARED_DATA / "metacentrum" / "alea" / "wagap-2013.swf"
    reference = api.read_trace(path)
    assert any(str(dtype) == "str" for dtype in reference.jobs.dtypes)
    parsed = reads(monkeypatch)

    cold = api.read_trace(path, cache=tmp_path / "kept")
    warm = api.read_trace(path, cache=tmp_path / "kept")

    assert parsed == [str(path)]
    assert_same(cold, reference)
    assert_same(warm, reference)


def test_the_same_content_under_another_name_is_found_and_named_as_given(tmp_path, monkeypatch):
    first, second = tmp_path / "a.swf", tmp_path / "b.swf"
    shutil.copy(DEMO, first)
    shutil.copy(DEMO, second)
    api.read_trace(first, cache=tmp_path / "kept")
    parsed = reads(monkeypatch)

    again = api.read_trace(second, cache=tmp_path / "kept")

    assert parsed == []
    assert_same(again, api.read_trace(second))


def test_a_changed_file_or_other_options_are_read_again(tmp_path, monkeypatch):
    path = tmp_path / "t.swf"
    shutil.copy(DEMO, path)
    api.read_trace(path, cache=tmp_path / "kept")
    parsed = reads(monkeypatch)

    clipped = api.read_trace(path, procs=4, cleaning=Cleaning(oversize="clip"), cache=tmp_path / "kept")
    path.write_text(DEMO.read_text().replace("\n1 ", "\n1  ", 1) + "\n")
    changed = api.read_trace(path, cache=tmp_path / "kept")

    assert parsed == [str(path), str(path)]
    assert_same(clipped, api.read_trace(path, procs=4, cleaning=Cleaning(oversize="clip")))
    assert_same(changed, api.read_trace(path))


def test_a_damaged_kept_file_is_read_again_and_replaced(tmp_path):
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(DEMO.read_bytes()))
    api.read_trace(path, cache=tmp_path / "kept")
    (kept,) = (tmp_path / "kept").glob("*.npz")
    kept.write_bytes(b"not a zip")

    assert_same(api.read_trace(path, cache=tmp_path / "kept"), api.read_trace(path))
    assert cache.load(kept) is not None


def test_what_the_npz_cannot_keep_exactly_is_not_kept(tmp_path):
    workload = api.read_trace(DEMO)
    assert cache.keeps_exactly(workload)
    some = ["batch", None] * (len(workload.jobs) // 2) + ["batch"] * (len(workload.jobs) % 2)
    texts = workload.jobs.assign(queue_name=pd.Series(some, dtype="str"))            # missing text
    objects = workload.jobs.assign(queue_name=pd.Series(["batch"] * len(workload.jobs), dtype=object))
    nul = workload.jobs.assign(queue_name=pd.Series(["a\0"] * len(workload.jobs), dtype="str"))
    tuples = {**workload.metadata, "pair": (1, 2)}
    assert cache.keeps_exactly(type(workload)(workload.jobs.assign(queue_name=pd.Series(["a"] * len(workload.jobs),
                                                                                       dtype="str")),
                                              workload.metadata, workload.report, workload.source))

    assert not cache.keeps_exactly(type(workload)(texts, workload.metadata, workload.report, workload.source))
    assert cache.keeps_exactly(type(workload)(nul, workload.metadata, workload.report, workload.source))
    assert not cache.keeps_exactly(type(workload)(objects, workload.metadata, workload.report, workload.source))
    assert not cache.keeps_exactly(type(workload)(workload.jobs, tuples, workload.report, workload.source))
    assert not cache.keeps_exactly(type(workload)(workload.jobs.iloc[1:], workload.metadata, workload.report,
                                                  workload.source))


def test_the_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SCHEDLAB_PARSE_CACHE", "off")
    assert cache.default_folder() is None
    monkeypatch.setenv("SCHEDLAB_PARSE_CACHE", str(tmp_path))
    assert cache.default_folder() == tmp_path
    monkeypatch.delenv("SCHEDLAB_PARSE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.default_folder() == tmp_path / "xdg" / "schedlab-parse"


def kept_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("*.npz"))


def test_the_folder_keeps_the_most_recently_used_within_its_limit(tmp_path, monkeypatch):
    folder = tmp_path / "kept"
    traces = []
    for i in range(3):     # three different files (the cache is keyed by content)
        path = tmp_path / f"t{i}.swf"
        path.write_bytes(DEMO.read_bytes() + f"; variant {i}\n".encode())
        traces.append(path)
    api.read_trace(traces[0], cache=folder)
    (first,) = kept_files(folder)
    one = (folder / first).stat().st_size
    monkeypatch.setenv("SCHEDLAB_PARSE_CACHE_MB", str(2.5 * one / 2 ** 20))    # room for two entries

    time.sleep(0.05)    # file times move in clock ticks (a few ms): keep the order of use visible
    api.read_trace(traces[1], cache=folder)
    assert len(kept_files(folder)) == 2
    time.sleep(0.05)
    api.read_trace(traces[0], cache=folder)         # used again: now the most recent
    parsed = reads(monkeypatch)
    time.sleep(0.05)
    api.read_trace(traces[2], cache=folder)         # a third: the least recently used (t1) goes
    assert len(kept_files(folder)) == 2
    api.read_trace(traces[0], cache=folder)
    assert parsed == [str(traces[2])]               # t0 was still kept
    api.read_trace(traces[1], cache=folder)
    assert parsed == [str(traces[2]), str(traces[1])]   # t1 was not


def test_an_entry_larger_than_the_limit_is_kept_until_the_next_one(tmp_path):
    folder = tmp_path / "kept"
    path = tmp_path / "t.swf"
    path.write_bytes(DEMO.read_bytes())
    api.read_trace(path, cache=folder)
    (kept,) = folder.glob("*.npz")
    (folder / "old.npz").write_bytes(b"x" * 10)

    assert cache.prune(folder, 0, keep=kept) == [folder / "old.npz"]
    assert kept_files(folder) == [kept.name]
    assert cache.prune(folder, 0) == [kept]


def test_the_limit_follows_the_environment(monkeypatch):
    monkeypatch.delenv("SCHEDLAB_PARSE_CACHE_MB", raising=False)
    assert cache.size_limit() == 2048 * 2 ** 20
    monkeypatch.setenv("SCHEDLAB_PARSE_CACHE_MB", "1.5")
    assert cache.size_limit() == int(1.5 * 2 ** 20)
    monkeypatch.setenv("SCHEDLAB_PARSE_CACHE_MB", "lots")
    assert cache.size_limit() == 2048 * 2 ** 20
