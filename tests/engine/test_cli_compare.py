"""`python -m engine compare`: the verdict table, report.json's contract and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main
from tests.engine.workload.replica_traces import user_trace
from tests.engine.workload.swf_lines import job_line, write_swf

ROOT = Path(__file__).resolve().parents[2]
PAIR_KEYS = {"a", "b", "metric", "difference", "ci", "replicates", "method", "verdict"}


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory) -> Path:
    """Three weeks of a synthetic trace with users, as SWF on 32 processors."""
    jobs = user_trace(7, jobs=900, weeks=3, users=15, procs=32).jobs
    lines = [job_line(int(j.job_id), int(j.submit), wait=-1, run=int(j.runtime), alloc=int(j.procs),
                      req_procs=int(j.procs), req_time=int(j.requested_time), user=int(j.user))
             for j in jobs.itertuples()]
    return write_swf(tmp_path_factory.mktemp("compare") / "three-weeks.swf", lines,
                     header="; Version: 2.2\n; MaxProcs: 32\n;\n")


def test_compare_prints_the_verdicts_and_writes_the_report(trace_file, tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["compare", str(trace_file), "--policies", "fcfs,easy,conservative", "--replicates", "weeks,shake:3",
                 "--warmup", "1d", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert len(report["pairs"]) == 2 * 3 * 5                 # sets x pairs x default metrics
    for pair in report["pairs"]:
        assert PAIR_KEYS <= set(pair)
        assert isinstance(pair["difference"], float) and isinstance(pair["replicates"], int)
        assert len(pair["ci"]) == 2 and all(isinstance(x, float) for x in pair["ci"])
        assert isinstance(pair["method"], str) and isinstance(pair["verdict"], str)
        assert {pair["a"], pair["b"]} <= {"fcfs", "easy", "conservative"} and pair["a"] != pair["b"]
        assert pair["difference"] == pytest.approx(pair["mean_b"] - pair["mean_a"])
        assert pair["ci"][0] <= pair["ci"][1]
        assert pair["verdict"] in printed
    first = report["pairs"][0]
    assert (first["a"], first["b"], first["metric"], first["set"], first["replicates"]) == ("fcfs", "easy",
                                                                                            "mean_wait", "weeks", 3)
    assert first["method"] == "paired percentile bootstrap, 2000 resamples, 95 % CI, seed 0"
    assert report["counted"]["warmup"] == [1.0, "days"]
    assert "except the first 1 day (warm-up)" in printed
    assert len(report["runs"]) == (3 + 3) * 3 and report["workers"] == 1


def test_the_same_seed_gives_the_same_report_with_one_worker_or_two(trace_file, tmp_path):
    reports = []
    for jobs in ("1", "2"):
        out = tmp_path / f"r{jobs}.json"
        assert main(["compare", str(trace_file), "--policies", "fcfs,easy", "--replicates", "resample:4",
                     "--load", "0.8", "--seed", "3", "--jobs", jobs, "--out", str(out), "--no-progress"]) == 0
        reports.append(json.loads(out.read_text()))
    assert reports[0]["pairs"] == reports[1]["pairs"]
    assert reports[0]["sets"][0]["citation"].startswith("user resampling: Zakay & Feitelson")


@pytest.mark.parametrize("flags, message", [
    (["--policies", "easy", "--replicates", "weeks"], "at least two policies"),
    (["--policies", "easy,nope", "--replicates", "weeks"], "nope"),
    (["--policies", "easy,fcfs", "--replicates", "monthly"], "--replicates"),
    (["--policies", "easy,fcfs", "--replicates", "weeks", "--warmup", "3"], "--warmup 3: say days or jobs"),
    (["--policies", "easy,fcfs", "--replicates", "weeks", "--load", "0"], "load factor"),
    (["--policies", "easy,fcfs", "--replicates", "weeks", "--metrics", "speed"], "--metrics"),
    (["--policies", "easy,fcfs", "--replicates", "weeks", "--resamples", "5"], "at least 100"),
    (["--policies", "easy,fcfs", "--replicates", "weeks", "--jobs", "0"], "--jobs"),
    (["--policies", "easy,fcfs", "--replicates", "shake:3", "--shake-runtime", "2"], "shaking"),
    (["--policies", "easy,fcfs", "--replicates", "weeks", "--flurry-share", "0"], "flurries"),
    (["--policies", "easy,fcfs", "--replicates", "weeks", "--ci-method", "t"], "--ci-method"),
])
def test_bad_input_is_one_error_line_and_exit_status_2(trace_file, flags, message, capsys):
    try:
        status = main(["compare", str(trace_file), *flags])
    except SystemExit as exit_:        # argparse's own errors (OneLineParser)
        status = exit_.code
    assert status == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines


def test_as_a_command_bad_input_is_one_line_on_stderr_without_a_traceback(trace_file):
    child = subprocess.run([sys.executable, "-m", "engine", "compare", str(trace_file), "--policies", "easy,fcfs",
                            "--replicates", "weeks", "--cooldown", "2x"], cwd=ROOT, capture_output=True, text=True)
    assert child.returncode == 2 and child.stdout == ""
    assert child.stderr == "error: --cooldown expects days or jobs, e.g. 2d or 500j; got '2x'\n"


def test_a_missing_trace_is_one_error_line(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "none.swf"), "--policies", "easy,fcfs", "--replicates", "weeks"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_the_command_lines_report_is_the_engine_apis_report(trace_file, tmp_path):
    # what scripts read from report.json is what the web's JSON API gets from engine.api
    from engine import api
    out = tmp_path / "r.json"
    assert main(["compare", str(trace_file), "--policies", "fcfs,sjf", "--replicates", "windows:6",
                 "--cooldown", "20j", "--out", str(out), "--no-progress"]) == 0
    written = json.loads(out.read_text())
    workload = api.read_trace(trace_file)
    report = api.compare_replicates(workload, ["fcfs", "sjf"], "windows:6",
                                    counted=api.Counted(cooldown=api.parse_trim("20j")))
    assert set(written) - set(report) == {"trace_file", "wall_seconds", "workers"}
    for key in ("pairs", "sets", "flurries", "counted", "bootstrap", "policies", "trace"):
        assert written[key] == json.loads(json.dumps(report[key])), key
