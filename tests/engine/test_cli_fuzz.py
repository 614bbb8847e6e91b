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
