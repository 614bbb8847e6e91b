"""Mutated machine descriptions (Alea, AleaNG, YAML, CSV), queue configurations and allocations
files (issue 13 §2): read, or a WorkloadError naming file, line and field, each within a second of
CPU."""

from __future__ import annotations

import pytest

from engine.api import read_allocations, read_machines, read_queue_config
from tests.engine.fuzz import (
    allocations_corpus,
    cases,
    check_reader,
    machines_corpus,
    mutants,
    queues_corpus,
)

READERS = {
    "machines": (read_machines, machines_corpus),
    "queues": (read_queue_config, queues_corpus),
    "allocations": (read_allocations, allocations_corpus),
}


@pytest.mark.parametrize("kind, indices", cases(dict.fromkeys(READERS, 5_000)))
def test_platform_readers_on_mutated_files(kind, indices):
    read, corpus = READERS[kind]
    outcome = check_reader(read, mutants(corpus(), kind, indices))
    assert outcome.accepted and outcome.rejected
