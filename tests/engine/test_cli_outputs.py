"""``python -m engine simulate`` writes the same schedule (byte for byte) and the same summary as
before the work around the simulation was made fast (faster parse, CSV writer, lazy imports):
tests/data/command_outputs.json holds what main wrote then, for KTH, SDSC windows and HPC2N.

The summary's floating-point figures are compared to 12 significant digits: their last bits follow
the summation order of the numpy build (numpy 2.4's reductions moved jain_bsld by one unit in the
last place), while every count, time and the schedule itself are compared exactly."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from engine.cli import main
from tests.shared_data import SHARED_DATA

GOLDEN = json.loads((Path(__file__).parents[1] / "data" / "command_outputs.json").read_text())["cases"]
#: what changes from run to run (timings) or machine to machine (the trace's path)
VOLATILE = ("wall_seconds", "parse_seconds", "trace")


#: what issue 23 added after these were recorded: the pending reasons (the schedule's last columns
#: and the summary's ``pending``), checked here against the waits instead
PENDING_COLUMNS = ("held_queue_limit", "held_user_limit", "held_pool", "held_resources", "held_priority", "held_by")


def without_pending(text: str) -> bytes:
    """The schedule CSV without its pending-reason columns (after checking that each job's held
    seconds add up to its wait)."""
    lines = text.splitlines()
    header = lines[0].split(",")
    held = [header.index(name) for name in PENDING_COLUMNS]
    assert held == list(range(held[0], held[0] + len(PENDING_COLUMNS)))     # side by side, in this order
    wait = header.index("wait")
    kept = []
    for number, line in enumerate(lines):
        cells = line.split(",")
        if number:
            assert sum(int(cells[i]) for i in held[:-1]) == int(cells[wait])
        kept.append(",".join(cells[:held[0]] + cells[held[-1] + 1:]) + "\n")
    return "".join(kept).encode()


def command_outputs(args: list[str], tmp_path: Path) -> tuple[str, dict]:
    """The schedule's SHA-256 and the summary without its timings, for ``simulate TRACE ARGS...``
    (both without the pending reasons, which came later: see :func:`without_pending`)."""
    out, summary_path = tmp_path / "schedule.csv", tmp_path / "summary.json"
    trace, *options = args
    status = main(["simulate", str(SHARED_DATA / "swf" / trace), *options, "--out", str(out),
                   "--summary", str(summary_path), "--no-progress"])
    assert status == 0
    summary = json.loads(summary_path.read_text())
    for key in VOLATILE:
        summary.pop(key)
    summary["validation"].pop("seconds")
    pending = summary.pop("pending")
    assert math.isclose(sum(pending["hours"].values()), summary["mean_wait"] * summary["jobs"] / 3600, rel_tol=1e-6)
    return hashlib.sha256(without_pending(out.read_text())).hexdigest(), summary


def same_summary(got: object, expected: object) -> bool:
    """Equal, floats to a relative 1e-12 (see the module docstring)."""
    if isinstance(got, float) and isinstance(expected, float):
        return math.isclose(got, expected, rel_tol=1e-12)
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(same_summary(got[key], expected[key]) for key in got)
    if isinstance(got, list) and isinstance(expected, list):
        return len(got) == len(expected) and all(map(same_summary, got, expected))
    return type(got) is type(expected) and got == expected


def test_same_summary_tolerates_only_the_last_digits():
    assert same_summary({"a": [0.304750728599709, 2]}, {"a": [0.30475072859970903, 2]})
    assert not same_summary({"a": 0.30475072859}, {"a": 0.30475072860})
    assert not same_summary({"a": 1}, {"a": 1.0}) and not same_summary({"a": 1}, {"a": 1, "b": 2})


@pytest.mark.parametrize("case", [name for name in GOLDEN if not name.startswith("hpc2n")])
def test_command_writes_what_it_wrote_before(case, tmp_path):
    schedule_sha, summary = command_outputs(GOLDEN[case]["args"], tmp_path)

    assert same_summary(summary, GOLDEN[case]["summary"]), (summary, GOLDEN[case]["summary"])
    assert schedule_sha == GOLDEN[case]["schedule_sha256"]


@pytest.mark.slow
def test_hpc2n_command_writes_what_it_wrote_before(tmp_path):
    schedule_sha, summary = command_outputs(GOLDEN["hpc2n-easy"]["args"], tmp_path)

    assert same_summary(summary, GOLDEN["hpc2n-easy"]["summary"]), (summary, GOLDEN["hpc2n-easy"]["summary"])
    assert schedule_sha == GOLDEN["hpc2n-easy"]["schedule_sha256"]
