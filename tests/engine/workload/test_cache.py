"""The .npz cache gives back exactly the workload that was saved."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine.workload import WorkloadError, load_workload
from engine.workload.cache import load, save

DEMO = Path(__file__).parents[2] / "data" / "demo.swf"


def test_round_trip_is_exact(tmp_path):
    original = load_workload(DEMO)
    path = tmp_path / "demo.npz"

    save(original, path)
    restored = load(path)

    pd.testing.assert_frame_equal(restored.jobs, original.jobs, check_exact=True)
    assert list(restored.jobs.dtypes) == list(original.jobs.dtypes)
    assert restored.metadata == original.metadata
    assert restored.report == original.report
    assert restored.source == original.source


def test_text_columns_survive_without_pickle(tmp_path):
    workload = load_workload(DEMO)
    workload.jobs["queue_name"] = workload.jobs["queue"].map({1: "batch", 2: "large"})
    path = tmp_path / "text.npz"

    save(workload, path)

    pd.testing.assert_frame_equal(load(path).jobs, workload.jobs, check_exact=True)


def test_save_replaces_an_existing_cache_and_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "w.npz"
    save(load_workload(DEMO, oversize="clip"), path)
    save(load_workload(DEMO), path)

    assert len(load(path)) == 28
    assert [p.name for p in tmp_path.iterdir()] == ["w.npz"]


def test_save_keeps_the_exact_file_name_even_without_npz_suffix(tmp_path):
    path = tmp_path / "workload.cache"
    save(load_workload(DEMO), path)

    assert path.exists() and len(load(path)) == 28


def test_loading_something_that_is_not_a_cache(tmp_path):
    path = tmp_path / "not-a-cache.npz"
    path.write_text("hello")

    with pytest.raises(WorkloadError, match="cannot read the workload cache"):
        load(path)
