"""Fidelity of a simulated run to the recorded one, on a hand-worked example."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from engine.cli import main
from engine.metrics.fidelity import fidelity, spearman


def schedule(waits: list[int], queues: list[str], *, runtime: int = 100) -> pd.DataFrame:
    """Jobs 1..n, all submitted at 0 on one processor each, started after their wait."""
    n = len(waits)
    return pd.DataFrame({"job_id": range(1, n + 1), "submit": [0] * n, "start": waits,
                         "end": [w + runtime for w in waits], "procs": [1] * n, "runtime": [runtime] * n,
                         "wait": waits, "queue": queues})


RECORDED = schedule([0, 10, 20, 30], ["a", "a", "b", "b"])
SIMULATED = schedule([0, 20, 10, 1000], ["x", "x", "x", "x"])   # the simulation moved every job to x


def test_hand_worked_figures():
    result = fidelity(RECORDED, SIMULATED, capacity=4)
    overall = result["overall"]
    # waits: mean 15 vs (0+20+10+1000)/4 = 257.5; p95 by linear interpolation: 20 + 0.85*10, 20 + 0.85*980
    assert overall["recorded"]["mean_wait"] == 15 and overall["simulated"]["mean_wait"] == 257.5
    assert overall["recorded"]["p95_wait"] == pytest.approx(28.5)
    assert overall["simulated"]["p95_wait"] == pytest.approx(853.0)
    # ranks 1 2 3 4 vs 1 3 2 4: rho = 1 - 6*(1+1)/(4*15) = 0.8
    assert overall["wait_rank_correlation"] == pytest.approx(0.8)
    # work 400 core-seconds; spans 130 s (last end 30+100) and 1100 s
    assert overall["recorded"]["utilization"] == pytest.approx(400 / (4 * 130))
    assert overall["simulated"]["utilization"] == pytest.approx(400 / (4 * 1100))
    assert overall["mean_wait_ratio"] == pytest.approx(257.5 / 15)


def test_far_says_why_and_a_small_absolute_difference_is_not_far():
    result = fidelity(RECORDED, SIMULATED, capacity=4)
    # 242.5 s more wait is under 10 minutes: not a reason; the utilization gap (77% vs 9%) is
    assert result["far"] and result["overall"]["reasons"] == ["utilization 9% simulated vs 77% recorded"]
    assert result["warning"].startswith("The simulated baseline is far from what really happened")
    assert not fidelity(RECORDED, SIMULATED)["far"]     # without a capacity, no utilization to compare


def test_per_queue_uses_the_recorded_queues_job_for_job():
    per_queue = fidelity(RECORDED, SIMULATED, capacity=4)["per_queue"]
    assert set(per_queue) == {"a", "b"}
    assert (per_queue["a"]["recorded"]["mean_wait"], per_queue["a"]["simulated"]["mean_wait"]) == (5, 10)
    assert (per_queue["b"]["recorded"]["mean_wait"], per_queue["b"]["simulated"]["mean_wait"]) == (25, 505)
    # per-queue utilization shares the overall span, so the queues add up to the whole
    total = sum(q["recorded"]["utilization"] for q in per_queue.values())
    assert total == pytest.approx(400 / (4 * 130))


def test_jobs_are_matched_by_id_and_unmatched_ones_counted():
    simulated = SIMULATED.iloc[[3, 1, 0]]            # another order, job 3 missing
    result = fidelity(RECORDED, simulated)
    assert result["jobs"] == {"recorded": 4, "simulated": 3, "matched": 3}
    assert result["overall"]["simulated"]["mean_wait"] == pytest.approx((0 + 20 + 1000) / 3)


def test_identical_runs_are_close_with_perfect_correlation():
    result = fidelity(RECORDED, RECORDED, capacity=4)
    assert not result["far"] and result["warning"] is None
    assert result["overall"]["wait_rank_correlation"] == pytest.approx(1.0)
    assert result["overall"]["mean_wait_ratio"] == 1.0


def test_mean_wait_far_when_both_factor_and_minutes_exceeded():
    result = fidelity(schedule([0, 3600, 7200], ["q"] * 3), schedule([7200, 14400, 21600], ["q"] * 3))
    assert result["far"] and "mean wait 4.0 h simulated vs 1.0 h recorded" in result["overall"]["reasons"]


def test_spearman_undefined_cases():
    assert spearman([1, 2], [2, 1]) is None
    assert spearman([5, 5, 5], [1, 2, 3]) is None
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)


def test_cli_prints_the_same_figures_as_json(tmp_path, capsys):
    RECORDED.to_csv(tmp_path / "r.csv", index=False)
    SIMULATED.to_csv(tmp_path / "s.csv", index=False)
    assert main(["fidelity", str(tmp_path / "r.csv"), str(tmp_path / "s.csv"), "--capacity", "4"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(fidelity(RECORDED, SIMULATED, capacity=4)))


def test_cli_names_a_missing_column(tmp_path, capsys):
    RECORDED.drop(columns="wait").to_csv(tmp_path / "r.csv", index=False)
    SIMULATED.to_csv(tmp_path / "s.csv", index=False)
    assert main(["fidelity", str(tmp_path / "r.csv"), str(tmp_path / "s.csv")]) == 2
    assert "field wait" in capsys.readouterr().err


def test_a_recording_above_the_machine_is_said_to_be_impossible():
    # two 3-core jobs at once for 100 s on a 4-core machine: 2 of 6 cores over, a third of the work
    recorded = pd.DataFrame({"job_id": [1, 2], "submit": [0, 0], "start": [0, 0], "end": [100, 100],
                             "wait": [0, 0], "runtime": [100, 100], "procs": [3, 3]})
    figures = fidelity(recorded, recorded, capacity=4)
    assert figures["recording"] == {"peak_procs": 6, "capacity": 4, "over_capacity_share": pytest.approx(1 / 3),
                                    "fits": False}
    assert figures["warning"].startswith("The recording is not a schedule of this machine: it holds 6 processors "
                                         "at once on 4")
    assert fidelity(recorded, recorded, capacity=6)["recording"]["fits"]
    assert fidelity(recorded, recorded)["recording"]["over_capacity_share"] is None     # no machine: not judged
