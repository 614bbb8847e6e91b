"""What the preview tests share: the real Slurm's sacct dump (tests/data/slurm_replay) as a ready trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.webapp.conftest import make_trace

SLURM = Path(__file__).resolve().parents[2] / "data" / "slurm_replay"


@pytest.fixture
def sacct_trace(alice):  # noqa: ANN001, ANN201
    return make_trace(alice, SLURM / "sacct.txt", name="schedlab sacct", format="slurm")
