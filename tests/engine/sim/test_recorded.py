"""The recorded run: the schedule as it happened, through the same path as any policy."""

from __future__ import annotations

import numpy as np
import pytest

from engine.metrics.summary import summarize_result
from engine.policies.registry import catalog
from engine.run import simulate
from engine.sim import SimulationError
from engine.workload import load_workload
from engine.workload.recorded import REJECT_NO_START
from tests.engine.workload.swf_lines import job_line, write_swf
from tests.shared_data import SHARED_DATA

PBS_EASY = SHARED_DATA / "metacentrum" / "aleang" / "NGI_CZ_journal_PBSeasy.swf"
WAGAP = SHARED_DATA / "metacentrum" / "alea"


def test_recorded_is_a_preset_like_any_policy():
    assert "recorded" in [entry["name"] for entry in catalog()]


def test_recorded_run_reproduces_the_swf_wait_field_job_by_job():
    workload = load_workload(PBS_EASY, procs=4)
    result = simulate(workload, 4, "recorded")
    schedule = result.schedule
    assert (schedule["wait"].to_numpy() == workload.jobs["wait_trace"].to_numpy()).all()
    assert (schedule["end"] - schedule["start"] == workload.jobs["runtime"]).all()
    summary = summarize_result(result)
    assert summary["mean_wait"] == pytest.approx(workload.jobs["wait_trace"].mean())
    assert summary["policy"]["preset"] == "recorded"


def test_jobs_without_a_recorded_start_are_left_out_and_counted(tmp_path):
    lines = [job_line(1, 0, wait=5), job_line(2, 10, wait=-1), job_line(3, 20, wait=0)]
    workload = load_workload(write_swf(tmp_path / "t.swf", lines))
    result = simulate(workload, 64, "recorded")
    assert result.schedule["job_id"].tolist() == [1, 3]
    assert result.schedule["start"].tolist() == [5, 20]
    assert result.meta["rejected"] == {REJECT_NO_START: 1}


def test_start_order_follows_the_recorded_starts(tmp_path):
    lines = [job_line(1, 0, wait=50), job_line(2, 10, wait=0), job_line(3, 20, wait=20)]
    result = simulate(load_workload(write_swf(tmp_path / "t.swf", lines)), 64, "recorded")
    assert result.schedule["start_order"].tolist() == [2, 0, 1]


def test_a_trace_without_any_recorded_start_says_so(tmp_path):
    workload = load_workload(write_swf(tmp_path / "t.swf", [job_line(1, wait=-1)]))
    with pytest.raises(SimulationError, match="records no start times"):
        simulate(workload, 64, "recorded")


def test_recorded_run_with_a_machine_description_names_the_trace_queues():
    from engine.platform.machines import read_machines

    workload = load_workload(WAGAP / "wagap-2013.swf")
    machine = read_machines(WAGAP / "wagap-2013.swf.machines")
    result = simulate(workload, None, "recorded", machine=machine)
    schedule = result.schedule
    assert result.capacity == machine.cores
    assert set(schedule["queue"]) >= {"q_1d", "q_2h", "q_1w"}
    # the trace's own figure (the issue: 14.2 h on average)
    assert schedule["wait"].mean() / 3600 == pytest.approx(14.2, abs=0.05)
    assert np.array_equal(schedule["wait"].to_numpy(), workload.jobs["wait_trace"].to_numpy())
