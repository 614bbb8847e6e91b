"""A bad flag or flag value on the command line is one line naming the flag and exit status 2, as
every other bad input is; argparse's usage block is not printed (`--help` still prints it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo.swf"
SIMULATE = ["simulate", str(DEMO), "--policy", "easy", "--out", "/nonexistent/never-written.csv"]


def one_error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    captured = capsys.readouterr()
    assert stopped.value.code == 2 and captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


@pytest.mark.parametrize(("argv", "named"), [
    ([*SIMULATE, "--procs", "many"], "argument --procs: invalid int value: 'many'"),
    ([*SIMULATE, "--load", "fast"], "argument --load: invalid float value: 'fast'"),
    ([*SIMULATE, "--seed", "1.5"], "argument --seed: invalid int value: '1.5'"),
    ([*SIMULATE, "--allocation", "best"], "argument --allocation: invalid choice: 'best'"),
    ([*SIMULATE, "--overrun", "maybe"], "argument --overrun: invalid choice: 'maybe'"),
    ([*SIMULATE, "--memory-unit", "TB"], "argument --memory-unit: invalid choice: 'TB'"),
    ([*SIMULATE, "--deadlines"], "argument --deadlines: expected one argument"),
    ([*SIMULATE, "--bogus"], "unrecognized arguments: --bogus"),
    (["simulate", str(DEMO), "--out", "x.csv"], "the following arguments are required: --policy"),
    (["simulate"], "the following arguments are required: trace, --out"),
    (["inspect", str(DEMO), "--procs", "-"], "argument --procs: invalid int value: '-'"),
    (["fidelity", "a.csv"], "the following arguments are required: SIMULATED.csv"),
    (["simulat", str(DEMO)], "argument COMMAND: invalid choice: 'simulat'"),
    ([], "the following arguments are required: COMMAND"),
])
def test_a_bad_flag_is_one_line_naming_it_and_status_2(argv, named, capsys):
    assert named in one_error_line(argv, capsys)


def test_the_line_says_which_command_and_where_its_options_are_listed(capsys):
    line = one_error_line([*SIMULATE, "--procs", "many"], capsys)
    assert line.startswith("error: python -m engine simulate: ")
    assert line.endswith("(see python -m engine simulate --help)")


def test_a_huge_flag_value_still_gives_a_short_line_that_names_the_flag(capsys):
    line = one_error_line([*SIMULATE, "--procs", "9" * 5000], capsys)
    assert "argument --procs: invalid int value" in line and len(line) < 400


def test_help_still_prints_the_usage_and_succeeds(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["simulate", "--help"])
    assert stopped.value.code == 0 and capsys.readouterr().out.startswith("usage: python -m engine simulate")


def test_as_a_program_a_bad_flag_prints_one_line_and_exits_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "engine", "simulate", str(DEMO), "--policy", "easy",
                           "--out", str(tmp_path / "s.csv"), "--procs", "many"],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: python -m engine simulate: argument --procs: invalid int value: 'many' "
        "(see python -m engine simulate --help)"]
