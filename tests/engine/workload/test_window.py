"""A time window's cleaning report counts the rejections of the jobs submitted in it, not the whole trace's."""

from __future__ import annotations

from pathlib import Path

from engine.metrics.summary import summarize_result
from engine.run import Scenario, Transforms, run
from engine.workload.cache import load, save
from engine.workload.loading import load_workload
from engine.workload.model import CleaningReport
from engine.workload.transforms import REJECT_OVERSIZE, REJECT_RUNTIME
from engine.workload.window import select_days

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo.swf"


def test_each_window_counts_its_own_rejections():
    # demo.swf: job 9 (submit 2,400 s) has no runtime, job 30 (submit 18,000 s) asks for 32 of 16 processors
    whole = load_workload(DEMO)
    assert whole.report.rejected == {REJECT_RUNTIME: 1, REJECT_OVERSIZE: 1}
    assert select_days(whole, 0, 0.05).report.rejected == {REJECT_RUNTIME: 1}        # up to 4,320 s
    assert select_days(whole, 0.1, float("inf")).report.rejected == {REJECT_OVERSIZE: 1}   # from 8,640 s
    assert select_days(whole, 0.03, 0.05).report.rejected == {}                      # 2,592 to 4,320 s
    assert select_days(whole, 0, float("inf")).report.rejected == whole.report.rejected


def test_a_window_edge_counts_as_in_the_window_at_its_start_only():
    report = CleaningReport()
    report.reject("odd", 3, [10, 20, 30])
    assert report.within(10, 30).rejected == {"odd": 2}
    assert report.within(10, 30).rejected_submits == {"odd": [10, 20]}


def test_a_reason_without_submit_times_keeps_the_whole_count_and_says_so():
    report = CleaningReport()
    report.reject("deleted before it started", 4)          # an accounting reader that keeps no submit time
    report.reject("odd", 2, [5, 500])
    assert report.within(0, 100).rejected == {"deleted before it started (whole trace: submit times unknown)": 4,
                                              "odd": 1}


def test_the_parse_cache_keeps_the_submit_times(tmp_path):
    whole = load_workload(DEMO)
    save(whole, tmp_path / "demo.npz")
    again = load(tmp_path / "demo.npz")
    assert again.report == whole.report
    assert select_days(again, 0, 0.05).report.rejected == {REJECT_RUNTIME: 1}


def test_the_summary_of_a_windowed_run_names_the_windows_rejections():
    result = run(Scenario(trace=str(DEMO), policy="fcfs", transforms=Transforms(days=(0.1, float("inf")))))
    summary = summarize_result(result)
    assert summary["rejected"] == {REJECT_OVERSIZE: 1} and summary["rejected_total"] == 1
    assert summary["jobs"] == 10    # jobs 20-29 (submitted from 9,000 s)
