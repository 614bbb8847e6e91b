"""The PBS reader's compiled passes read every log exactly as its line-by-line reader does (the
reference, ``careful=True``): the same jobs field by field, the same metadata, the same cleaning
report (counts and their order), the same first error (file, line, field) -- on the real log, the
hand-made edge cases and thousands of mutants of both (tests/engine/fuzz.py), with and without
``--skip-bad-lines``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine.workload.errors import WorkloadError
from engine.workload.pbs import load_pbs
from tests.engine.fuzz import ACCOUNTING, cases, mutants, pbs_corpus
from tests.shared_data import SHARED_DATA

REAL_LOG = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"


def outcome(path: Path, *, careful: bool, skip_bad_lines: bool) -> tuple:
    """What a read gives: the error's line, or the jobs, metadata and report (in order)."""
    try:
        workload = load_pbs(path, careful=careful, skip_bad_lines=skip_bad_lines)
    except WorkloadError as error:
        return ("error", str(error))
    report = workload.report.to_dict()
    return ("read", workload.jobs, workload.metadata,
            {kind: list(counts.items()) if isinstance(counts, dict) else counts for kind, counts in report.items()})


def assert_same(path: Path, *, skip_bad_lines: bool) -> None:
    fast, careful = (outcome(path, careful=c, skip_bad_lines=skip_bad_lines) for c in (False, True))
    assert fast[0] == careful[0], (fast[:2], careful[:2])
    if fast[0] == "error":
        assert fast == careful
        return
    pd.testing.assert_frame_equal(fast[1], careful[1])
    assert fast[2:] == careful[2:]


@pytest.mark.parametrize("path", [REAL_LOG, ACCOUNTING / "pbs_edge_cases.log"], ids=lambda p: p.name)
@pytest.mark.parametrize("skip", [False, True])
def test_real_and_edge_case_logs_read_the_same_both_ways(path, skip):
    assert_same(path, skip_bad_lines=skip)


@pytest.mark.parametrize("kind, indices", cases({"pbs": 300}, total=3_000))
def test_mutated_logs_read_the_same_both_ways(kind, indices, tmp_path):
    for item in mutants(pbs_corpus(), "pbs-fast", indices, gzip_too=True):
        path = tmp_path / "log"
        path.write_bytes(item.data)
        for skip in (False, True):
            try:
                assert_same(path, skip_bad_lines=skip)
            except AssertionError as failure:
                raise AssertionError(f"{item.name} ({item.what}), skip_bad_lines={skip}: {failure}") from None
