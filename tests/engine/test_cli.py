"""The command line is a contract: its columns, summary keys, errors and exit codes."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from engine.cli import main

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo.swf"
CONTRACT_COLUMNS = ["job_id", "user", "submit", "start", "end", "procs", "requested_time", "runtime", "wait", "killed"]
SUMMARY_KEYS = {"jobs", "rejected", "mean_wait", "median_wait", "p95_wait", "max_wait", "mean_response", "mean_bsld",
                "max_bsld", "max_stretch", "weighted_turnaround", "mean_abs_skip", "max_skip", "utilization",
                "makespan", "jain_bsld", "wall_seconds"}


def test_simulate_writes_the_schedule_and_summary(tmp_path):
    out, summary = tmp_path / "s.csv", tmp_path / "s.json"
    assert main(["simulate", str(DEMO), "--policy", "easy", "--out", str(out), "--summary", str(summary)]) == 0
    schedule = pd.read_csv(out)
    assert list(schedule.columns[:10]) == CONTRACT_COLUMNS
    data = json.loads(summary.read_text())
    assert SUMMARY_KEYS <= set(data)
    assert data["jobs"] == len(schedule)
    assert data["policy"]["preset"] == "easy"


def test_set_overrides_a_parameter(tmp_path):
    summary = tmp_path / "s.json"
    main(["simulate", str(DEMO), "--policy", "sorted-masc", "--set", "masc=2", "--out", str(tmp_path / "s.csv"),
          "--summary", str(summary)])
    assert json.loads(summary.read_text())["policy"]["params"]["masc"] == 2


def test_days_keeps_only_jobs_submitted_in_the_window(tmp_path):
    out = tmp_path / "s.csv"
    main(["simulate", str(DEMO), "--policy", "fcfs", "--days", "0:0.05", "--out", str(out)])
    schedule = pd.read_csv(out)
    assert 0 < len(schedule) and (schedule.submit - schedule.submit.min() < 0.05 * 86400).all()


def test_same_seed_same_schedule(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (a, b):
        main(["simulate", str(DEMO), "--policy", "conservative", "--seed", "7", "--out", str(out)])
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize(("args", "message"), [
    (["--policy", "nope"], "unknown policy 'nope'"),
    (["--policy", "sorted", "--set", "masc=x"], "parameter masc"),
    (["--policy", "easy", "--set", "speed=3"], "unknown parameter 'speed'"),
    (["--policy", "{bad json"], "not valid JSON"),
    (["--policy", "easy", "--days", "5:1"], "TO must be after FROM"),
])
def test_bad_arguments_give_one_line_and_status_2(tmp_path, capsys, args, message):
    code = main(["simulate", str(DEMO), *args, "--out", str(tmp_path / "s.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_bad_trace_names_file_line_and_field(tmp_path, capsys):
    trace = tmp_path / "bad.swf"
    trace.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n2 5 0 abc 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    assert main(["simulate", str(trace), "--policy", "fcfs", "--out", str(tmp_path / "s.csv")]) == 2
    err = capsys.readouterr().err
    assert "bad.swf" in err and "line 3" in err and "run_time" in err


def test_a_file_that_is_not_gzip_is_reported(tmp_path, capsys):
    trace = tmp_path / "t.swf.gz"
    trace.write_bytes(gzip.compress(b"; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")[:20])
    assert main(["simulate", str(trace), "--policy", "fcfs", "--out", str(tmp_path / "s.csv")]) == 2
    assert "t.swf.gz" in capsys.readouterr().err


def test_policies_lists_every_preset_with_parameters(capsys):
    assert main(["policies", "--json"]) == 0
    entries = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert {"fcfs", "sjf", "sorted", "sorted-masc", "easy", "conservative", "firstfit", "sorted-easy"} <= set(entries)
    assert entries["sorted-masc"]["params"][0]["default"] == 10



def test_policies_says_each_presets_family_and_paper(capsys):
    from engine.api import PAPERS, POLICY_FAMILIES, list_policies

    assert main(["policies"]) == 0
    lines = capsys.readouterr().out.split("\n\n")[0].splitlines()    # the presets (then the formula section)
    origin = {line.split()[0]: lines[i + 1].strip() for i, line in enumerate(lines) if not line.startswith(" ")}
    assert origin["mrfs-easy"] == f"family: {POLICY_FAMILIES['fairshare']}; paper: {PAPERS['metacentrum'].citation}"
    assert origin["sorted-easy"].endswith(f"paper: {PAPERS['paragon'].citation}")
    assert origin["easy"].endswith("paper: none (textbook policy)")
    assert set(origin) == {entry["name"] for entry in list_policies()}


def test_policies_lists_the_formula_variables_with_units(capsys):
    from engine.api import formula_grammar

    assert main(["policies"]) == 0
    section = capsys.readouterr().out.split("\n\n")[1]
    assert '"ordering": "formula"' in section
    for variable in formula_grammar()["variables"]:
        assert any(line.split()[0] == variable["name"] and (f"[{variable['unit']}]" in line or not variable["unit"])
                   for line in section.splitlines() if line.strip())


def test_a_bad_formula_is_one_error_line(tmp_path, capsys):
    policy = '{"ordering": "formula", "algorithm": "easy", "params": {"formula": "requested * prcs"}}'
    assert main(["simulate", str(DEMO), "--policy", policy, "--out", str(tmp_path / "s.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: formula, column 13: unknown name 'prcs'") and err.count("\n") == 1


def test_a_formula_run_records_the_formula(tmp_path):
    summary = tmp_path / "s.json"
    policy = '{"ordering": "formula", "algorithm": "conservative", "params": {"formula": "wait", "first": "largest"}}'
    assert main(["simulate", str(DEMO), "--policy", policy, "--out", str(tmp_path / "s.csv"),
                 "--summary", str(summary)]) == 0
    data = json.loads(summary.read_text())
    assert data["policy"]["params"]["formula"] == "wait" and data["label"] == "wait (largest first), conservative"


def test_inspect_describes_a_trace(capsys):
    assert main(["inspect", str(DEMO), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["jobs"] > 0


def test_python_dash_m_engine_runs_as_a_program(tmp_path):
    done = subprocess.run([sys.executable, "-m", "engine", "simulate", str(DEMO), "--policy", "nope",
                           "--out", str(tmp_path / "s.csv")], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("error: ")


def test_allocations_reach_sfs_and_the_schedule_says_allocation_and_pass(tmp_path):
    from engine.workload.scenarios import sfs_scenario

    scenario = sfs_scenario(0)
    trace, allocations = tmp_path / "sfs.swf", tmp_path / "alloc.csv"
    trace.write_text(scenario.swf_text)
    allocations.write_text(scenario.allocations_text)
    out, summary = tmp_path / "s.csv", tmp_path / "s.json"
    assert main(["simulate", str(trace), "--allocations", str(allocations), "--policy", "sfs",
                 "--set", "reservation_depth=2", "--set", "weight_size=20", "--set", "weight_age=1",
                 "--out", str(out), "--summary", str(summary)]) == 0
    schedule = pd.read_csv(out)
    assert set(schedule.allocation) == {"alice", "bob", "chris"}
    assert set(schedule["pass"].astype(str)) <= {"1", "2", "backfill"} and (schedule["pass"].astype(str) == "1").any()
    data = json.loads(summary.read_text())
    assert data["unmapped_jobs"] == 0 and data["allocation_targets"]["bob"] == 400


def test_a_bad_allocations_file_is_one_line_naming_line_and_field(tmp_path, capsys):
    allocations = tmp_path / "alloc.csv"
    allocations.write_text("allocation,members,award,period_days,target_factor,target\nalice,usr:1,10,1,,\n")
    assert main(["simulate", str(DEMO), "--allocations", str(allocations), "--policy", "sfs",
                 "--out", str(tmp_path / "s.csv")]) == 2
    err = capsys.readouterr().err
    assert "alloc.csv, line 2: field members" in err and "\n" not in err.strip()
