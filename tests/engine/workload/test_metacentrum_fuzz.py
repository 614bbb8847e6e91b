"""Mutated MetaCentrum (21-field, nodespec) and AleaNG traces (issue 13 §2): read, or a
WorkloadError naming file, line and field, each within a second of CPU."""

from __future__ import annotations

import pytest

from engine.api import read_trace
from tests.engine.fuzz import (
    aleang_corpus,
    cases,
    check_reader,
    metacentrum_corpus,
    mutants,
)
from tests.engine.workload.test_swf_fuzz import upload_check

CORPORA = {"metacentrum": metacentrum_corpus, "aleang": aleang_corpus}


@pytest.mark.parametrize("kind, indices", cases({"metacentrum": 500, "aleang": 500}))
def test_load_workload_on_mutated_extended_traces(kind, indices):
    outcome = check_reader(read_trace, mutants(CORPORA[kind](), kind, indices, gzip_too=True))
    assert outcome.accepted and outcome.rejected


@pytest.mark.parametrize("kind, indices", cases({"metacentrum": 1_000, "aleang": 1_000}))
def test_upload_check_on_mutated_extended_traces(kind, indices):
    outcome = check_reader(upload_check, mutants(CORPORA[kind](), f"{kind}-head", indices, gzip_too=True))
    assert outcome.accepted and outcome.rejected
