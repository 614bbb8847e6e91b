"""The fuzz harness's CPU limit per reader call (tests/engine/fuzz.py check_reader): a reader slow at
every call fails it; one slow only once (a collection or a stall of the host at that call) does not,
as the least of three timings is taken."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.engine.fuzz import Mutant, check_reader


def burn(seconds: float) -> None:
    began = time.process_time()
    while time.process_time() - began < seconds:
        pass


def inputs() -> list[Mutant]:
    return [Mutant("x#1", "as it is", b"1\n"), Mutant("x#2", "as it is", b"2\n")]


def test_a_reader_slow_at_every_call_fails_the_limit():
    with pytest.raises(AssertionError, match=r"x#1 \[as it is\]: took 0\.\d\d s of CPU \(limit 0\.05 s\)"):
        check_reader(lambda path: burn(0.08), iter(inputs()), limit=0.05)


def test_a_reader_slow_once_is_timed_again():
    calls: list[str] = []

    def read(path: Path) -> None:
        calls.append(path.read_text())
        if len(calls) == 1:
            burn(0.08)

    outcome = check_reader(read, iter(inputs()), limit=0.05)
    assert outcome.accepted == 2 and calls == ["1\n", "1\n", "1\n", "2\n"]
    assert outcome.slowest < 0.05
