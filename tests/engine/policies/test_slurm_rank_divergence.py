"""scripts/slurm_rank_divergence.py's pieces on hand-worked cases (issue 24 §3)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from engine.platform.slurmconf import Qos

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
from slurm_rank_divergence import (  # noqa: E402  (scripts/ is not a package)
    band, group_table, held_by_maxjobs, rank_differences, scaled_ranks, self_agreement, within)


def test_scaled_ranks_average_ties_from_0_to_1() -> None:
    # waits 5, 0, 5, 9: ranks 2.5, 1, 2.5, 4 -> (r - 1) / 3
    assert scaled_ranks(np.array([5.0, 0.0, 5.0, 9.0])) == pytest.approx([0.5, 0.0, 0.5, 1.0])


def test_rank_difference_is_the_mean_over_runs_of_the_rank_moved() -> None:
    reference = np.array([0.0, 10.0, 20.0])              # ranks 0, 0.5, 1
    runs = np.array([[0.0, 10.0, 20.0],                  # the same order: 0, 0, 0
                     [20.0, 10.0, 0.0]])                 # reversed: +1, 0, -1
    assert rank_differences(reference, runs) == pytest.approx([0.5, 0.0, -0.5])


def test_within_and_self_agreement() -> None:
    jobs = pd.DataFrame({"partition": ["a", "a", "a", "b", "b", "b"]})
    reference = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0])
    runs = np.array([[1.0, 2.0, 3.0, 3.0, 2.0, 1.0]])
    assert within(jobs, "partition", reference, runs) == pytest.approx({"a": 1.0, "b": -1.0})
    # three runs: two equal, the third reversed: pairs +1, -1, -1
    three = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    assert self_agreement(three) == pytest.approx(-1 / 3)


def test_bands() -> None:
    bands = ((2, "<=2"), (5, "3-5"), (float("inf"), ">5"))
    assert [band(v, bands) for v in (1, 2, 2.5, 5, 6)] == ["<=2", "<=2", "3-5", "3-5", ">5"]


def test_held_by_maxjobs_counts_the_users_running_jobs_of_the_qos() -> None:
    """MaxJobsPU 2: job 2 (submit 10, start 50) waits while jobs 0 and 1 of its user and QOS run over 20-40:
    held; job 3 waits over 60-70 with one job of the user running: not held; job 4 is another QOS's."""
    site = SimpleNamespace(qos={"bulk": Qos(name="bulk", max_jobs_per_user=2), "normal": Qos(name="normal")})
    jobs = pd.DataFrame({"user": ["u"] * 5, "qos": ["bulk"] * 4 + ["normal"],
                         "submit": [0, 0, 10, 60, 0], "start": [20, 20, 50, 70, 25],
                         "end": [40, 40, 80, 75, 90]})
    held = held_by_maxjobs(jobs, site, jobs["start"].to_numpy())
    assert held.tolist() == [False, False, True, False, False]
    # job 1 started at 45 instead (runs to 65): job 2 sees one job at 20 and one at 45: not held; job 3, at
    # its submission (60), sees jobs 1 (45-65) and 2 (50-80): held
    moved = jobs["start"].to_numpy().copy()
    moved[1] = 45
    assert held_by_maxjobs(jobs, site, moved).tolist() == [False, False, False, True, False]


def test_group_table_means_per_value() -> None:
    jobs = pd.DataFrame({"user": ["a", "a", "b"], "account": "x", "qos": "normal", "partition": "p", "cpus": 1,
                         "limit": "<=2 min", "held_real": False, "held_other": [False, True, False],
                         "wait": [0.0, 10.0, 20.0], "other": [5.0, 5.0, 5.0]})
    table = group_table(jobs, np.array([0.2, 0.4, -0.6])).set_index(["key", "value"])
    assert table.loc[("user", "a"), "mean_diff"] == pytest.approx(0.3)
    assert table.loc[("user", "b"), "abs_diff"] == pytest.approx(0.6)
    assert table.loc[("held", "other only"), "jobs"] == 1
    assert table.loc[("waited", "11-60 s"), "mean_diff"] == pytest.approx(-0.6)
