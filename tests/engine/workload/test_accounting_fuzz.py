"""Mutated PBS/Torque accounting logs and Slurm sacct dumps (issue 13 §2): read, or a WorkloadError
naming file, line and field, each within a second of CPU; the same for the upload check. The Slurm
reader costs some 20 ms a file, so fewer of its mutants run outside the slow set."""

from __future__ import annotations

import pytest

from engine.api import read_trace
from tests.engine.fuzz import cases, check_reader, mutants, pbs_corpus, slurm_corpus
from tests.engine.workload.test_swf_fuzz import upload_check

CORPORA = {"pbs": pbs_corpus, "slurm": slurm_corpus}


@pytest.mark.parametrize("kind, indices", cases({"pbs": 500, "slurm": 200}))
def test_load_workload_on_mutated_accounting_logs(kind, indices):
    outcome = check_reader(read_trace, mutants(CORPORA[kind](), kind, indices, gzip_too=True))
    assert outcome.accepted and outcome.rejected


@pytest.mark.parametrize("kind, indices", cases({"pbs": 1_000, "slurm": 200}))
def test_upload_check_on_mutated_accounting_logs(kind, indices):
    outcome = check_reader(upload_check, mutants(CORPORA[kind](), f"{kind}-head", indices, gzip_too=True))
    assert outcome.accepted and outcome.rejected
