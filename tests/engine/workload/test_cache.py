"""The .npz cache gives back exactly the workload that was saved."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
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


SACCT_HEADER = ("JobID|JobIDRaw|Partition|Account|User|Submit|Start|End|Elapsed|State|NNodes|NCPUS|ReqMem|"
                "Timelimit|NodeList")


def _sacct_dump(jobs: int, *, wide_job: int, wide_nodelist: str = "n[0001-2048]", wide_partition: str = "") -> str:
    """A real-looking sacct dump: jobs on 1-8 nodes of n0001..n2048, one job (``wide_job``) on
    ``wide_nodelist`` and in ``wide_partition`` when given."""
    lines = [SACCT_HEADER]
    for job in range(1, jobs + 1):
        nodes = (1, 1, 2, 4, 8)[job % 5]
        first = job * 7 % (2048 - nodes) + 1
        nodelist = f"n{first:04d}" if nodes == 1 else f"n[{first:04d}-{first + nodes - 1:04d}]"
        partition = ("short", "long", "gpu")[job % 3]
        if job == wide_job:
            nodes, nodelist, partition = 2048, wide_nodelist, wide_partition or partition
        submit = f"2026-01-{1 + job // 1440 % 28:02d}T{job // 60 % 24:02d}:{job % 60:02d}:00"
        lines.append(f"{job}|{job}|{partition}|proj{job % 40}|user{job % 200}|{submit}|{submit}|{submit}|00:00:00|"
                     f"COMPLETED|{nodes}|{32 * nodes}|4000M|02:00:00|{nodelist}")
    return "\n".join(lines) + "\n"


def test_the_cache_follows_the_data_not_the_widest_row(tmp_path):
    """20,000 jobs, one on n[0001-2048] (12 KB of host names): version 1 stored every row at that
    width (990 MB); codes and one buffer of distinct texts stay under 50 MB, and give the frame back."""
    dump = tmp_path / "sacct.txt"
    dump.write_text(_sacct_dump(20_000, wide_job=10_000))
    workload = load_workload(dump)
    assert len(workload) == 20_000
    assert max(len(h) for h in workload.jobs["exec_hosts"]) == len(";".join(f"n{i:04d}" for i in range(1, 2049)))
    path = tmp_path / "sacct.npz"

    save(workload, path)

    assert path.stat().st_size < 50e6
    total_text = sum(len(text) for name in workload.jobs.columns if workload.jobs[name].dtype == "str"
                     for text in workload.jobs[name].drop_duplicates())
    assert path.stat().st_size < 2 * (total_text + 30 * 8 * 20_000)   # the text once, plus 30 int64 columns
    pd.testing.assert_frame_equal(load(path).jobs, workload.jobs, check_exact=True)


def test_one_very_long_queue_name_stays_small(tmp_path):
    """A 25 KB .gz with one 40 KB queue name made an 801 MB cache (every row 40 K characters wide);
    this one of 2,000 jobs would have made 320 MB."""
    dump = tmp_path / "sacct.txt.gz"
    with gzip.open(dump, "wt") as out:
        out.write(_sacct_dump(2_000, wide_job=3, wide_nodelist="n0001", wide_partition="q" * 40_000))
    assert dump.stat().st_size < 60_000
    workload = load_workload(dump)
    assert workload.jobs["queue_name"].str.len().max() == 40_000
    path = tmp_path / "long.npz"

    save(workload, path)

    assert path.stat().st_size < 2e6
    pd.testing.assert_frame_equal(load(path).jobs, workload.jobs, check_exact=True)


def test_text_with_nul_characters_and_non_ascii_comes_back(tmp_path):
    workload = load_workload(DEMO)
    names = ["a\0", "ünïcødé ✓", "", "a\0"] * (len(workload.jobs) // 4)
    names += ["x"] * (len(workload.jobs) - len(names))
    workload.jobs["queue_name"] = pd.Series(names, dtype="str")
    path = tmp_path / "text.npz"

    save(workload, path)

    pd.testing.assert_frame_equal(load(path).jobs, workload.jobs, check_exact=True)


def test_a_version_1_cache_still_loads(tmp_path):
    """Caches written before text was coded (fixed-width unicode arrays) are read as they were."""
    workload = load_workload(DEMO)
    workload.jobs["queue_name"] = workload.jobs["queue"].map({1: "batch", 2: "large"}).astype("str")
    columns = list(workload.jobs.columns)
    arrays = {f"col{i}": (workload.jobs[name].to_numpy() if workload.jobs[name].dtype.kind in "biuf"
                          else np.asarray(workload.jobs[name].to_numpy(), dtype=np.str_))
              for i, name in enumerate(columns)}
    info = {"format": "schedlab-workload-cache", "version": 1, "columns": columns,
            "dtypes": [str(workload.jobs[name].dtype) for name in columns], "metadata": workload.metadata,
            "report": workload.report.to_dict(), "source": workload.source}
    arrays["__info__"] = np.frombuffer(json.dumps(info).encode(), dtype=np.uint8)
    path = tmp_path / "v1.npz"
    np.savez(path, **arrays)

    pd.testing.assert_frame_equal(load(path).jobs, workload.jobs, check_exact=True)
