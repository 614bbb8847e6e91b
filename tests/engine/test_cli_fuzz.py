"""The command line on bad input (issue 13 §2): every mutated file a reader rejects makes
``python -m engine`` exit with status 2 and exactly one line on stderr naming the file, never a
traceback; files the reader accepts give status 0 or the same one line. (The allocations reader
names a file by its base name, so the line is checked for the name.)"""

from __future__ import annotations

import contextlib
import gzip
import io
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main
from engine.api import WorkloadError, read_allocations, read_machines, read_queue_config, read_trace
from tests.engine import fuzz

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo.swf"
WAGAP_MACHINES = fuzz.METACENTRUM / "alea/wagap-2013.swf.machines"
#: Mutants per kind run through main(), of which at least REJECTED the reader refuses.
SAMPLE, REJECTED = 60, 30
FIRST = 50_000          # mutants beyond the reader tests' ranges


def trace_command(path: Path, tmp: Path) -> list[str]:
    return ["inspect", str(path)]


def machines_command(path: Path, tmp: Path) -> list[str]:
    return ["simulate", str(tmp / "wagap.swf"), "--machines", str(path), "--policy", "mrfs-easy",
            "--out", str(tmp / "s.csv")]


def queues_command(path: Path, tmp: Path) -> list[str]:
    return ["simulate", str(tmp / "wagap.swf"), "--machines", str(WAGAP_MACHINES), "--queues", str(path),
            "--policy", "mrfs-easy", "--out", str(tmp / "s.csv")]


def allocations_command(path: Path, tmp: Path) -> list[str]:
    return ["simulate", str(DEMO), "--allocations", str(path), "--policy", "sfs", "--out", str(tmp / "s.csv")]


KINDS = {   # kind -> (corpus, in-process reader, command line)
    "swf": (fuzz.swf_corpus, read_trace, trace_command),
    "metacentrum": (fuzz.metacentrum_corpus, read_trace, trace_command),
    "aleang": (fuzz.aleang_corpus, read_trace, trace_command),
    "pbs": (fuzz.pbs_corpus, read_trace, trace_command),
    "slurm": (fuzz.slurm_corpus, read_trace, trace_command),
    "machines": (fuzz.machines_corpus, read_machines, machines_command),
    "queues": (fuzz.queues_corpus, read_queue_config, queues_command),
    "allocations": (fuzz.allocations_corpus, read_allocations, allocations_command),
}


def run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return status, err.getvalue()


def rejected_by_reader(read, path: Path) -> bool:
    try:
        read(path)
    except WorkloadError:
        return True
    return False


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_is_status_2_and_one_line(kind, tmp_path):
    corpus, read, command = KINDS[kind]
    (tmp_path / "wagap.swf").write_bytes(fuzz.metacentrum_corpus()["wagap-2013.swf"])
    path = tmp_path / "input"
    failures, rejected, index = [], 0, FIRST
    while index < FIRST + SAMPLE or rejected < REJECTED:
        item = fuzz.mutant(corpus(), kind, index, gzip_too=command is trace_command)
        index += 1
        path.write_bytes(item.data)
        bad = rejected_by_reader(read, path)
        rejected += bad
        if index > FIRST + SAMPLE and not bad:
            continue                     # past the sample: only rejected inputs until REJECTED of them
        status, err = run(command(path, tmp_path))
        lines = err.splitlines()
        if status not in (0, 2) or (bad and status != 2) or (status == 2 and (
                len(lines) != 1 or not lines[0].startswith("error: ") or path.name not in lines[0])):
            failures.append(f"{item.name} [{item.what}]: status {status}, stderr {err[-300:]!r}")
    assert not failures, f"{len(failures)} inputs:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("name", ["cut.swf.gz", "big-nodespec.swf", "queues.yaml"])
def test_a_real_process_says_one_line_and_exits_2(tmp_path, name):
    path = tmp_path / name
    trace = tmp_path / "wagap.swf"
    trace.write_bytes(fuzz.metacentrum_corpus()["wagap-2013.swf"])
    argv = ["inspect", str(path)]
    if name == "cut.swf.gz":                    # a truncated gzip (an EOFError before)
        packed = gzip.compress(fuzz.swf_corpus()["KTH-SP2-1996-2.1-cln.swf.gz"])
        path.write_bytes(packed[: len(packed) // 2])
    elif name == "big-nodespec.swf":            # a node count past int64 (an OverflowError before)
        path.write_text(trace.read_text().replace("1:ppn=12", "99999999999999999999:ppn=12"))
    else:                                       # a control character (a message of two lines before)
        path.write_text("queues:\n  - name: a\n    walltime: 2h\x1c\n")
        argv = ["simulate", str(trace), "--machines", str(WAGAP_MACHINES), "--queues", str(path),
                "--policy", "mrfs-easy", "--out", str(tmp_path / "s.csv")]
    done = subprocess.run([sys.executable, "-m", "engine", *argv], capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(f"error: {path}")
    assert "Traceback" not in done.stderr


#: Values no flag should turn into a traceback: huge, negative, non-finite, not numbers, lists.
NASTY_VALUES = ["0", "-1", "9223372036854775807", "9223372036854775808", str(2**40), "9" * 5000, "1e999",
                "-1e999", "nan", "inf", "", "[1]", "1.5", "٣", "0x10", " 7 ", "1_000"]


def _simulate(tmp: Path, *extra: str, policy: str = "easy") -> list[str]:
    return ["simulate", str(DEMO), "--policy", policy, "--out", str(tmp / "s.csv"), "--no-parse-cache", *extra]


def _one_error_line_or_success(argv: list[str]) -> str | None:
    """None when ``main(argv)`` exits 0, or 2 with exactly one ``error:`` line; else what went wrong."""
    try:
        status, err = run(argv)
    except SystemExit as exc:            # argparse's own exit (OneLineParser.error)
        status, err = exc.code, ""
        if status == 2:
            return None
    except Exception as exc:             # noqa: BLE001 - the point: nothing may escape
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    lines = err.splitlines()
    if status == 0 or (status == 2 and len(lines) == 1 and lines[0].startswith("error: ")):
        return None
    return f"status {status}, stderr {err[-300:]!r}"


@pytest.mark.parametrize("flag", ["--procs", "--seed", "--load", "--deadlines", "--days", "--set", "--policy"])
def test_every_nasty_flag_value_is_one_error_line(flag, tmp_path):
    failures = []
    for value in NASTY_VALUES + ["1:2:3", "5:1", "a:b"] * (flag == "--days"):
        if flag == "--set":
            argv = _simulate(tmp_path, "--set", f"masc={value}", policy="sorted-masc")
        elif flag == "--policy":
            argv = _simulate(tmp_path, policy=value)
        else:
            argv = _simulate(tmp_path, flag, value)
        problem = _one_error_line_or_success(argv)
        if problem:
            failures.append(f"{flag} {value[:30]!r}: {problem}")
    assert not failures, "\n".join(failures)


def test_argparse_errors_are_one_line_too(tmp_path, capsys):
    with pytest.raises(SystemExit) as caught:
        main(_simulate(tmp_path, "--procs", "9" * 5000))
    err = capsys.readouterr().err
    assert caught.value.code == 2 and len(err.splitlines()) == 1 and err.startswith("error: ")


def test_the_six_reported_inputs_are_one_error_line(tmp_path):
    """Each printed a traceback and exited 1 (issue 27)."""
    allocations = tmp_path / "allocations.csv"
    allocations.write_text("allocation,members,award,period_days,target_factor,target\n"
                           + "a" * 140_000 + ",user:1,100,30,1,0.5\n")
    cases = {
        "long CSV field": _simulate(tmp_path, "--allocations", str(allocations), policy="sfs"),
        "5,000-digit integer": _simulate(tmp_path, policy='{"preset": "sorted-masc", "params": {"masc": %s}}'
                                         % ("9" * 5000)),
        "masc=1e999 on a bounded int": _simulate(tmp_path, "--set", "reservation_depth=-1e999", policy="sfs"),
        "procs 2^63-1": _simulate(tmp_path, "--procs", str(2**63 - 1)),
        "procs 2^40": _simulate(tmp_path, "--procs", str(2**40)),
        "a list as ordering": _simulate(tmp_path, policy='{"ordering": [1, 2], "algorithm": "easy"}'),
        "100k-deep JSON": _simulate(tmp_path, policy="{" + '"a": {' * 100_000 + "}" * 100_001),
    }
    for name, argv in cases.items():
        status, err = run(argv)
        assert status == 2 and len(err.splitlines()) == 1 and err.startswith("error: "), (name, err[:300])
        assert "Traceback" not in err
    assert "allocations.csv, line 2" in run(cases["long CSV field"])[1]


#: presets whose run on the 28-job demo stays short whatever their parameters (plan's annealing is left out:
#: its moves and temperatures are meant to be expensive)
CHEAP_PRESETS = ("fcfs", "sorted-masc", "easy", "conservative", "sfs", "linear-age", "fairshare-fcfs", "firstfit")
JSON_NASTY = [None, True, [], {}, [1, 2], {"a": 1}, "", "x" * 300, -1, 0, 2**63, 10**30, 1.5, -1e308,
              float("inf"), float("-inf"), float("nan"), "inf", "1e999", "9" * 400]


def _mutated_specs(count: int, seed: int) -> list[str]:
    """Policy specs with one key or value replaced by something nasty: the spec's own keys (preset,
    ordering, algorithm, params), each preset's parameters, and unknown keys."""
    import json
    import random
    from engine.api import list_policies
    rng = random.Random(seed)
    entries = [e for e in list_policies() if e["name"] in CHEAP_PRESETS]
    specs = []
    for _ in range(count):
        entry = rng.choice(entries)
        spec: dict = {"preset": entry["name"], "params": {}}
        target = rng.random()
        nasty = rng.choice(JSON_NASTY)
        if target < 0.55 and entry["params"]:
            spec["params"][rng.choice(entry["params"])["name"]] = nasty
        elif target < 0.7:
            spec = {"ordering": nasty if rng.random() < 0.5 else "fcfs",
                    "algorithm": nasty if rng.random() < 0.5 else "easy"}
        elif target < 0.8:
            spec["params"] = nasty
        elif target < 0.9:
            spec[rng.choice(["preset", "seed", "extra"])] = nasty
        else:
            spec = nasty
        specs.append(json.dumps(spec, allow_nan=True))
    return specs


def test_a_fuzz_of_policy_json_is_one_error_line_each(tmp_path):
    failures = []
    for text in _mutated_specs(150, seed=27):
        problem = _one_error_line_or_success(_simulate(tmp_path, policy=text))
        if problem:
            failures.append(f"{text[:120]}: {problem}")
    assert not failures, f"{len(failures)} specs:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("command", ["inspect", "convert", "fidelity"])
def test_other_commands_nasty_sizes_are_one_error_line(command, tmp_path):
    schedule = tmp_path / "recorded.csv"
    assert run(_simulate(tmp_path, "--out", str(schedule), policy="fcfs"))[0] == 0
    failures = []
    for value in NASTY_VALUES:
        argv = {"inspect": ["inspect", str(DEMO), "--procs", value],
                "convert": ["convert", str(DEMO), "--out", str(tmp_path / "c.swf"), "--procs", value],
                "fidelity": ["fidelity", str(schedule), str(schedule), "--capacity", value]}[command]
        problem = _one_error_line_or_success(argv)
        if problem:
            failures.append(f"{command} {value[:30]!r}: {problem}")
    assert not failures, "\n".join(failures)
