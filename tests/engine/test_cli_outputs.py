"""``python -m engine simulate`` writes the same schedule (byte for byte) and the same summary as
before the work around the simulation was made fast (faster parse, CSV writer, lazy imports):
tests/data/command_outputs.json holds what main wrote then, for KTH, SDSC windows and HPC2N."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from engine.cli import main
from tests.shared_data import SHARED_DATA

GOLDEN = json.loads((Path(__file__).parents[1] / "data" / "command_outputs.json").read_text())["cases"]
#: what changes from run to run (timings) or machine to machine (the trace's path)
VOLATILE = ("wall_seconds", "parse_seconds", "trace")


def command_outputs(args: list[str], tmp_path: Path) -> tuple[str, dict]:
    """The schedule's SHA-256 and the summary without its timings, for ``simulate TRACE ARGS...``."""
    out, summary_path = tmp_path / "schedule.csv", tmp_path / "summary.json"
    trace, *options = args
    status = main(["simulate", str(SHARED_DATA / "swf" / trace), *options, "--out", str(out),
                   "--summary", str(summary_path), "--no-progress"])
    assert status == 0
    summary = json.loads(summary_path.read_text())
    for key in VOLATILE:
        summary.pop(key)
    summary["validation"].pop("seconds")
    return hashlib.sha256(out.read_bytes()).hexdigest(), summary


@pytest.mark.parametrize("case", [name for name in GOLDEN if not name.startswith("hpc2n")])
def test_command_writes_what_it_wrote_before(case, tmp_path):
    schedule_sha, summary = command_outputs(GOLDEN[case]["args"], tmp_path)

    assert summary == GOLDEN[case]["summary"]
    assert schedule_sha == GOLDEN[case]["schedule_sha256"]


@pytest.mark.slow
def test_hpc2n_command_writes_what_it_wrote_before(tmp_path):
    schedule_sha, summary = command_outputs(GOLDEN["hpc2n-easy"]["args"], tmp_path)

    assert summary == GOLDEN["hpc2n-easy"]["summary"]
    assert schedule_sha == GOLDEN["hpc2n-easy"]["schedule_sha256"]
