"""Mutated SWF traces (issue 13 §2): the engine's face (read_trace, check_upload) answers every one with a
WorkloadError naming file, line and field, or read it, each within a second of CPU."""

from __future__ import annotations

import pytest

from engine.api import check_upload, read_trace
from tests.engine.fuzz import cases, check_reader, mutants, raise_first, swf_corpus


def upload_check(path):
    """What the web runs on an upload before storing it: problems are returned, not raised."""
    raise_first(check_upload(path)[1])


@pytest.mark.parametrize("kind, indices", cases({"swf": 500}))
def test_load_workload_on_mutated_swf(kind, indices):
    outcome = check_reader(read_trace, mutants(swf_corpus(), kind, indices, gzip_too=True))
    assert outcome.accepted and outcome.rejected


@pytest.mark.parametrize("kind, indices", cases({"swf": 1_000}))
def test_upload_check_on_mutated_swf(kind, indices):
    outcome = check_reader(upload_check, mutants(swf_corpus(), f"{kind}-head", indices, gzip_too=True))
    assert outcome.accepted and outcome.rejected
