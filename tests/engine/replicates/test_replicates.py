"""Replicated comparisons: the plan's run specs, one run, the combined report and its verdicts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from engine.errors import WorkloadError
from engine.metrics.bootstrap import Bootstrap
from engine.metrics.counted import Counted, Trim
from engine.policies.base import PolicyError
from engine.replicates.local import ReplicateError, compare_here, run_plan
from engine.replicates.plan import parse_replicates, plan_replicates
from engine.replicates.report import combine_replicates, judge_claim, verdict_table
from engine.replicates import runs as runs_module
from engine.replicates.runs import replica_workload, run_replicate
from engine.run import simulate
from engine.workload.model import Workload
from tests.engine.workload.replica_traces import WEEK, user_trace


@pytest.fixture(scope="module")
def trace() -> Workload:
    return user_trace(3, jobs=1200, weeks=4, users=20, procs=32)


def test_replicate_sets_are_read_and_bad_ones_are_one_line_errors():
    sets = parse_replicates("weeks, shake:10,resample:5")
    assert [(s.kind, s.count, s.name) for s in sets] == [("weeks", None, "weeks"), ("shake", 10, "shake:10"),
                                                          ("resample", 5, "resample:5")]
    for bad in ("weekly", "shake", "shake:1", "windows:x", "weeks,weeks:3", ""):
        with pytest.raises(WorkloadError, match="--replicates"):
            parse_replicates(bad)


def test_the_plan_is_plain_data_with_one_run_per_policy_and_replicate(trace):
    plan = plan_replicates(trace, ["fcfs", "easy"], "weeks,shake:3")
    assert json.loads(json.dumps(plan)) == plan
    assert [s["replicates"] for s in plan["sets"]] == [4, 3]
    assert len(plan["runs"]) == (4 + 3) * 2
    assert len({run["id"] for run in plan["runs"]}) == len(plan["runs"])
    assert "MASCOTS 2007" in plan["sets"][1]["citation"]


def test_every_policy_gets_the_same_shaken_copies(trace):
    plan = plan_replicates(trace, ["fcfs", "easy", "conservative"], "shake:4", seed=12)
    by_copy: dict[int, list[dict]] = {}
    for run in plan["runs"]:
        by_copy.setdefault(run["replicate"], []).append(run)
    seeds = set()
    for runs in by_copy.values():
        assert len({json.dumps(run["replica"], sort_keys=True) for run in runs}) == 1
        first = replica_workload(trace, runs[0])
        for run in runs[1:]:
            runs_module._REPLICA.clear()               # built again, not the kept one
            again = replica_workload(trace, run)
            assert again is not first
            pd.testing.assert_frame_equal(again.jobs, first.jobs)
        seeds.add(runs[0]["replica"]["seed"])
    assert len(seeds) == 4                                        # the copies differ from each other
    # copy k does not depend on what else the plan holds
    alone = plan_replicates(trace, ["sjf", "fcfs"], "weeks,shake:2", seed=12)
    assert [r["replica"] for r in alone["runs"] if r["set"] == "shake:2"][0] == by_copy[0][0]["replica"]


def test_window_runs_hold_every_job_once(trace):
    plan = plan_replicates(trace, ["fcfs", "easy"], "windows:3")
    ids = [replica_workload(trace, run).jobs["job_id"].tolist() for run in plan["runs"] if run["policy"] == "fcfs"]
    assert sorted(sum(ids, [])) == sorted(trace.jobs["job_id"].tolist())


def test_one_run_is_the_policy_on_its_replica_with_the_counted_jobs_only(trace):
    counted = Counted(Trim(1, "days"))
    plan = plan_replicates(trace, ["fcfs", "easy"], "weeks", counted=counted, metrics=["mean_wait", "utilization"])
    run = plan["runs"][3]                                           # week 1, easy
    assert (run["replicate"], run["policy"]) == (1, "easy")
    outcome = run_replicate(trace, run)
    start, end = run["replica"]["start"], run["replica"]["end"]
    jobs = trace.jobs[(trace.jobs["submit"] >= start) & (trace.jobs["submit"] < end)].reset_index(drop=True)
    schedule = simulate(Workload(jobs, trace.metadata), 32, "easy").schedule
    counted_rows = schedule[schedule["submit"] >= schedule["submit"].min() + 86_400]
    assert outcome["jobs"] == len(jobs) and outcome["counted_jobs"] == len(counted_rows)
    assert outcome["metrics"]["mean_wait"] == pytest.approx((counted_rows["start"] - counted_rows["submit"]).mean())


def test_the_kept_replica_is_left_as_it_was_by_every_policy_run_on_it(trace):
    plan = plan_replicates(trace, ["fcfs", "easy", "conservative", "sjf", "sorted-easy"], "shake:2")
    replica = replica_workload(trace, plan["runs"][0])
    before = replica.jobs.copy()
    for run in plan["runs"][:5]:                      # the five policies on copy 0
        run_replicate(trace, run)
        assert replica_workload(trace, run) is replica
    pd.testing.assert_frame_equal(replica.jobs, before)


def planted(plan: dict, effect: dict[str, float], rng: np.random.Generator) -> list[dict]:
    """Made-up outcomes: each replicate has its own level; policy p's mean wait is level x (1 + effect[p])."""
    levels = {}
    outcomes = []
    for run in plan["runs"]:
        level = levels.setdefault((run["set"], run["replicate"]), rng.lognormal(8, 0.5))
        value = level * (1 + effect[run["policy"]]) * rng.normal(1, 0.02)
        outcomes.append({"id": run["id"], "set": run["set"], "replicate": run["replicate"], "policy": run["policy"],
                         "jobs": 10, "counted_jobs": 10, "metrics": {"mean_wait": value}, "wall_seconds": 0.0})
    return outcomes


def test_the_report_finds_a_planted_difference_and_tells_no_difference_from_noise(trace):
    plan = plan_replicates(trace, ["fcfs", "easy", "sjf"], "weeks",
                           metrics=["mean_wait"])
    # weeks of this trace: 4; make a longer comparison by hand with 30 replicates of made-up values
    plan["sets"][0]["replicates"] = 30
    plan["runs"] = [{**run, "replicate": r, "id": f"weeks/{r}/{run['policy']}"}
                    for r in range(30) for run in plan["runs"][:3]]
    report = combine_replicates(plan, planted(plan, {"fcfs": 0.0, "easy": -0.2, "sjf": 0.0},
                                              np.random.default_rng(1)))
    pairs = {(p["a"], p["b"]): p for p in report["pairs"]}
    found = pairs["fcfs", "easy"]
    assert found["told_from_noise"] and found["direction"] == "lower" and found["better"] == "easy"
    assert found["relative_ci"][0] < -0.2 < found["relative_ci"][1]
    assert found["difference"] == pytest.approx(found["mean_b"] - found["mean_a"])
    low, high = sorted(-100 * np.array(found["relative_ci"]))
    assert found["verdict"] == (f"easy's mean wait is {-100 * found['relative']:.0f} % lower than fcfs's "
                                f"(95 % CI {low:.0f}-{high:.0f} % lower, 30 weekly windows)")
    same = pairs["fcfs", "sjf"]
    assert not same["told_from_noise"] and same["better"] is None
    assert same["verdict"].startswith("no difference we can tell from noise")
    assert same["ci"][0] < 0 < same["ci"][1]


def test_the_first_sets_verdicts_say_whether_shaking_agrees(trace):
    plan = plan_replicates(trace, ["fcfs", "easy"], "weeks,shake:20", metrics=["mean_wait"])
    plan["sets"][0]["replicates"] = 20
    plan["runs"] = [{**run, "replicate": r, "id": f"{run['set']}/{r}/{run['policy']}"}
                    for r in range(20) for run in plan["runs"] if run["replicate"] == 0]
    rng = np.random.default_rng(2)
    outcomes = planted(plan, {"fcfs": 0.0, "easy": -0.2}, rng)
    report = combine_replicates(plan, outcomes)
    assert report["pairs"][0]["verdict"].endswith("20 weekly windows; holds under shaking)")
    # shaking says the opposite
    for outcome in outcomes:
        if outcome["set"] == "shake:20" and outcome["policy"] == "easy":
            outcome["metrics"]["mean_wait"] *= 1.6
    reversed_ = combine_replicates(plan, outcomes)
    assert reversed_["pairs"][0]["agreement"] == ["reversed under shaking"]


def test_the_same_seed_gives_the_same_report_and_a_missing_run_no_report(trace):
    plan = plan_replicates(trace, ["fcfs", "easy"], "weeks", bootstrap=Bootstrap(seed=5))
    outcomes = run_plan(trace, plan)
    first, again = combine_replicates(plan, outcomes), combine_replicates(plan, list(reversed(outcomes)))
    assert first["pairs"] == again["pairs"]
    with pytest.raises(WorkloadError, match="1 of 8 runs have no result"):
        combine_replicates(plan, outcomes[1:])


def test_two_workers_give_the_same_outcomes_as_one(trace):
    plan = plan_replicates(trace, ["fcfs", "easy", "conservative"], "weeks,shake:2")
    one, two = run_plan(trace, plan, workers=1), run_plan(trace, plan, workers=2)
    timings = ("wall_seconds", "cpu_seconds")
    strip = [{k: v for k, v in o.items() if k not in timings} for o in one]
    assert strip == [{k: v for k, v in o.items() if k not in timings} for o in two]


def test_a_failing_run_fails_the_set_with_one_line_naming_it(trace):
    plan = plan_replicates(trace, ["fcfs", "easy"], "weeks")
    plan["runs"][2]["replica"] = {"kind": "mystery"}       # the run cannot be built
    for workers in (1, 2):
        with pytest.raises(ReplicateError, match=r"^run weeks/1/fcfs failed: unknown replica kind 'mystery'$"):
            run_plan(trace, plan, workers=workers)
    plan["runs"][2] = {**plan["runs"][3], "id": plan["runs"][2]["id"], "spec": {"preset": "nonsense"}}
    with pytest.raises(PolicyError, match=r"^run weeks/1/fcfs: "):
        run_plan(trace, plan)


def test_an_empty_week_gives_no_values_and_is_left_out_of_its_pairs(trace):
    jobs = trace.jobs
    first = int(jobs["submit"].min())
    gap = jobs[(jobs["submit"] < first + WEEK) | (jobs["submit"] >= first + 2 * WEEK)].reset_index(drop=True)
    report = compare_here(Workload(gap, trace.metadata), ["fcfs", "easy"], "weeks", metrics=["mean_wait"])
    assert report["sets"][0]["replicates"] == 4
    assert report["runs"][2]["jobs"] == 0 and report["runs"][2]["metrics"] == {"mean_wait": None}
    assert report["pairs"][0]["replicates"] == 3 and report["pairs"][0]["left_out"] == 1


def with_flurry(trace: Workload) -> Workload:
    """``trace`` plus 150 jobs of user 77, one every 10 s from day 2: a flurry (11 % of 1,350 jobs)."""
    jobs = trace.jobs
    burst = jobs.iloc[:150].copy()
    burst["submit"] = int(jobs["submit"].min()) + 2 * 86_400 + 10 * np.arange(150)
    burst["user"], burst["job_id"] = 77, 50_000 + np.arange(150)
    return Workload(pd.concat([jobs, burst]).sort_values("submit", kind="stable").reset_index(drop=True),
                    trace.metadata)


def test_flurries_are_listed_and_removed_on_request(trace):
    with_burst = with_flurry(trace)
    kept = plan_replicates(with_burst, ["fcfs", "easy"], "weeks")
    removed = plan_replicates(with_burst, ["fcfs", "easy"], "weeks", without_flurries=True)
    assert [f["user"] for f in kept["flurries"]["found"]] == [77] == [f["user"] for f in removed["flurries"]["found"]]
    assert kept["trace"]["jobs"] == len(with_burst) and removed["trace"]["jobs"] == len(with_burst) - 150
    assert removed["flurries"]["jobs_removed"] == 150
    week0 = replica_workload(with_burst, removed["runs"][0])
    assert 77 not in set(week0.jobs["user"])


def test_bad_comparisons_are_refused_before_any_run(trace):
    with pytest.raises(PolicyError, match="at least two"):
        plan_replicates(trace, ["easy"], "weeks")
    with pytest.raises(PolicyError):
        plan_replicates(trace, ["easy", "no-such-policy"], "weeks")
    with pytest.raises(WorkloadError, match="--metrics"):
        plan_replicates(trace, ["easy", "fcfs"], "weeks", metrics=["speed"])
    with pytest.raises(PolicyError, match="once"):
        plan_replicates(trace, ["easy", "easy"], "weeks")
    with pytest.raises(PolicyError, match="1 names for 2 policies"):
        plan_replicates(trace, ["easy", "fcfs"], "weeks", names=["mine"])
    with pytest.raises(WorkloadError, match="tolerance"):
        plan_replicates(trace, ["easy", "fcfs"], "resample:3", tolerance=-0.1)


def test_policies_are_named_as_given_or_by_their_label(trace):
    plan = plan_replicates(trace, ["easy", '{"preset": "fcfs"}'], "windows:2")
    assert [p["name"] for p in plan["policies"]] == ["easy", plan["policies"][1]["label"]]
    named = plan_replicates(trace, ["easy", "easy"], "windows:2", names=["easy-a", "easy-b"])
    assert [run["id"] for run in named["runs"][:2]] == ["windows:2/0/easy-a", "windows:2/0/easy-b"]


def test_the_verdict_table_states_what_was_replicated_counted_and_how(trace):
    report = compare_here(trace, ["fcfs", "easy"], "weeks", counted=Counted(Trim(100, "jobs")))
    text = verdict_table(report)
    assert "weeks = 4 weekly windows" in text
    assert "counted: every job of each run except the first 100 jobs (warm-up)" in text
    assert "paired percentile bootstrap, 2000 resamples, 95 % CI, seed 0" in text
    assert "flurries: none found" in text
    assert sum(line.startswith("weeks ") for line in text.splitlines()) == len(report["pairs"])


def test_a_papers_claim_is_judged_against_the_replicates(trace):
    plan = plan_replicates(trace, ["fcfs", "easy", "sjf"], "weeks", metrics=["mean_wait"])
    plan["sets"][0]["replicates"] = 30
    plan["runs"] = [{**run, "replicate": r, "id": f"weeks/{r}/{run['policy']}"}
                    for r in range(30) for run in plan["runs"][:3]]
    report = combine_replicates(plan, planted(plan, {"fcfs": 0.0, "easy": -0.2, "sjf": 0.0},
                                              np.random.default_rng(1)))
    assert judge_claim(report, "fcfs", "easy", "mean_wait", "lower")["status"] == "agrees"
    assert judge_claim(report, "easy", "fcfs", "mean_wait", "higher")["status"] == "agrees"     # either order
    assert judge_claim(report, "fcfs", "easy", "mean_wait", "higher")["status"] == "contradicts"
    assert judge_claim(report, "fcfs", "sjf", "mean_wait", "lower")["status"] == "cannot tell"
    assert judge_claim(report, "fcfs", "sjf", "mean_wait", "same")["status"] == "agrees"
    judged = judge_claim(report, "fcfs", "easy", "mean_wait", "lower")
    assert judged["sentence"].startswith("Claim: easy's mean wait is lower than fcfs's. Our replicates agree: easy's")
    with pytest.raises(WorkloadError, match="compares no"):
        judge_claim(report, "fcfs", "conservative", "mean_wait", "lower")


def test_few_replicates_give_no_verdict_or_a_cautious_one(trace):
    plan = plan_replicates(trace, ["fcfs", "easy"], "weeks", metrics=["mean_wait"])
    for count, expected in ((4, "too few replicates to tell (4 weekly windows; at least 5 needed)"),
                            (12, "12 weekly windows, few: the interval runs narrow)")):
        plan["sets"][0]["replicates"] = count
        plan["runs"] = [{**run, "replicate": r, "id": f"weeks/{r}/{run['policy']}"}
                        for r in range(count) for run in plan["runs"][:2]]
        pair = combine_replicates(plan, planted(plan, {"fcfs": 0.0, "easy": -0.5}, np.random.default_rng(4)))["pairs"][0]
        assert pair["verdict"].endswith(expected)
        assert pair["told_from_noise"] == (count >= 5)


def test_the_verdict_table_lists_the_flurries_found_and_whether_they_were_removed(trace):
    with_burst = with_flurry(trace)
    kept = verdict_table(compare_here(with_burst, ["fcfs", "easy"], "windows:2", metrics=["mean_wait"]))
    assert "flurries: 1 found, 11.1 % of the jobs, kept (--without-flurries removes them)" in kept
    removed = verdict_table(compare_here(with_burst, ["fcfs", "easy"], "windows:2", metrics=["mean_wait"],
                                         without_flurries=True))
    assert "flurries: 1 found, 11.1 % of the jobs, removed (150 jobs)" in removed


@pytest.mark.parametrize("load", [0.5, 2.0])
def test_windows_of_a_load_scaled_trace_hold_every_job_of_the_days_window_once(trace, load):
    plan = plan_replicates(trace, ["fcfs", "easy"], "weeks", load=load, days=(3, 20))
    first = int(trace.jobs["submit"].min())
    inside = trace.jobs[(trace.jobs["submit"] >= first + 3 * 86_400) & (trace.jobs["submit"] < first + 20 * 86_400)]
    replicas = [replica_workload(trace, run) for run in plan["runs"] if run["policy"] == "fcfs"]
    assert len(replicas) == {0.5: 5, 2.0: 2}[load]     # 17 days of submits last 34 days (5 weeks) or 8.5 (2)
    ids = sorted(sum((r.jobs["job_id"].tolist() for r in replicas), []))
    assert ids == sorted(inside["job_id"].tolist())
    submits = pd.concat([r.jobs["submit"] for r in replicas])
    assert submits.max() - submits.min() <= 17 * 86_400 / load + 1
