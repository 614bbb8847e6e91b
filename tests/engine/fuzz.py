"""Seeded mutation fuzzing of the input readers (issue 13 §2): the mutators and the one assertion.

A reader's fuzz test takes a few small real files (prefixes of the traces in shared/data, the
shipped configurations), derives numbered mutants from them and feeds each to the reader through a
file. Mutant ``i`` of a corpus is a pure function of (corpus label, ``i``): the same inputs on every
run, and a failure names the mutant and what was done to it, so it can be rebuilt with
:func:`mutant` and replayed alone.

The assertion (:func:`check_reader`): every call returns, or raises the project's
:class:`WorkloadError` whose message names the file (and the line and field when it has them),
on one line, within :data:`LIMIT_SECONDS`.
"""

from __future__ import annotations

import gc
import gzip
import os
import random
import re
import signal
import tempfile
import time
import traceback
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from engine.platform.machines import Machine, parse_machines, read_machines
from engine.platform.queues import CONFIG_DIR
from engine.errors import WorkloadError
from engine.workload.scenarios import sfs_scenario
from tests.shared_data import SHARED_DATA

METACENTRUM = SHARED_DATA / "metacentrum"
ACCOUNTING = Path(__file__).parents[1] / "data" / "accounting"

#: A reader call using more CPU time than this fails the test, naming the input. CPU time, not wall
#: time, so that a busy shared machine does not fail the test while a quadratic reader still does;
#: with the garbage collector off during the call (as timeit times), so that a full collection of the
#: test process's own heap, due at that call, is not charged to the reader (a stop's CI on a slower
#: host, 2026-11-27: one mutant in about 9,500 in each of four runs at 1.00-1.15 s, the rest far below);
#: a call over it is timed twice more and the least of the three is taken, as timeit does.
LIMIT_SECONDS = 1.0
#: A call still running after this is stopped (so a hang fails the test instead of blocking it).
HANG_SECONDS = 10.0
#: Inputs are written to memory when the machine has /dev/shm (rewriting a file on disk 10,000
#: times costs more than reading it).
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
#: Mutants per reader and entry point (see cases(): a quick part in every run, the rest slow).
TOTAL = 10_000

HUGE = "9" * 400
#: Integers at and past the limits of C longs, int64 and Python's int-from-text conversion.
BIG = (
    HUGE, "-" + HUGE, "9" * 5000, "1" + "0" * 30, "2147483648", "4294967296", "4611686018427387904",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
    "99999999999999999999",
)
NUMBERS = BIG + (
    HUGE + ".5", "1e400", "-1e400", "1e308", "-1e308", "1e-400", "1e18", "1e19", "nan", "NaN", "-nan", "inf",
    "-inf", "Infinity", "0", "-0", "-1", "-2", "0.0", "0.5", "-0.5", "1.5", "2147483647", "-9223372036854775808",
    "1_000", "0x1F", "+7", "1e", ".", "-", "+", "", "١٢", "１２", "²", "½",
)
TEXTS = (
    "x", "é", "日本", "🙂", "\u202e", "\ufeff", "\x00", "\x7f", "\x0b", "\x0c", "\x1c", "\u00a0", "\u2028",
    "\u0085", "null", "true", "~", "[]", "{}", "[", "{", "}", "'", '"', "&a", "*a", "!!binary", "!!python/none",
    "%YAML 1.1", "#", ";", ",", ":", "=", "\t", "\r", "- ", "? ", "|", ">", "{1,2", "ppn=", "#excl", "+",
    "^", "cl_", "host=", "mem=", "user:", "group:", " " * 3000, "[" * 2000, "{a: " * 500,
)
_NUMBER_SPAN = re.compile(rb"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_TOKEN_SPAN = re.compile(rb"[^ \t\r\n,;:={}]+")
_FIELD_SPAN = re.compile(rb"[^ \t\r\n]+")


# --------------------------------------------------------------------------- corpora
# Small prefixes of the real files: a few hundred mutants a second, yet every line kind is there.


def trace_prefix(path: Path, *, jobs: int) -> bytes:
    """The header (``;`` lines) and the first ``jobs`` job lines of a (possibly gzip) trace."""
    with (gzip.open(path, "rb") if path.read_bytes()[:2] == b"\x1f\x8b" else open(path, "rb")) as stream:
        out: list[bytes] = []
        seen = 0
        for line in stream:
            out.append(line)
            seen += bool(line.strip()) and not line.lstrip().startswith(b";")
            if seen >= jobs:
                break
    return b"".join(out)


@cache
def swf_corpus() -> dict[str, bytes]:
    names = ("KTH-SP2-1996-2.1-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz",
             "lublin_256.swf.gz", "METACENTRUM-2009-2.swf.gz")
    return {name: trace_prefix(SHARED_DATA / "swf" / name, jobs=12) for name in names}


@cache
def metacentrum_corpus() -> dict[str, bytes]:
    return {"wagap-2013.swf": trace_prefix(METACENTRUM / "alea/wagap-2013.swf", jobs=10)}


@cache
def aleang_corpus() -> dict[str, bytes]:
    examples = METACENTRUM / "aleang/examples"
    return {name: trace_prefix(examples / name, jobs=12)
            for name in ("example1_load100_urgent10.swf", "example5_load85_urgent10_spacesharing.swf")}


@cache
def pbs_corpus() -> dict[str, bytes]:
    """The real OpenPBS log of fairshareSim (its first records) and the hand-made edge cases."""
    return {"OpenPBS.log": text_prefix(METACENTRUM / "fairsharesim/OpenPBS.log", lines=30),
            "pbs_edge_cases.log": (ACCOUNTING / "pbs_edge_cases.log").read_bytes()}


@cache
def slurm_corpus() -> dict[str, bytes]:
    """Real sacct dumps (three layouts) and the documented-format sample."""
    return {path.name: text_prefix(path, lines=25) for path in sorted(ACCOUNTING.glob("slurm_*.txt"))}


@cache
def machines_corpus() -> dict[str, bytes]:
    """The real Alea and AleaNG descriptions, and the same clusters written as our YAML and CSV."""
    files = ("alea/wagap-2013.swf.machines", "alea/hpc2n.swf.machines", "alea/FIT/jaros1.swf.machines",
             "other/tohoku_sx_ace_2019_sel.swf.machines", "aleang/NGI_CZ.swf.machines",
             "aleang/examples/example5_load85_urgent10_spacesharing.swf.machines")
    corpus = {Path(name).name: text_prefix(METACENTRUM / name, lines=8) for name in files}
    ngi = parse_machines(corpus["NGI_CZ.swf.machines"].decode(), source="NGI_CZ")
    wagap = read_machines(METACENTRUM / "alea/wagap-2013.swf.machines")
    corpus.update({"ngi.yaml": _machines_yaml(ngi), "wagap.yaml": _machines_yaml(wagap), "ngi.csv": _machines_csv(ngi)})
    return corpus


@cache
def queues_corpus() -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(CONFIG_DIR.glob("*.yaml"))}


@cache
def allocations_corpus() -> dict[str, bytes]:
    """The SFS paper's scenario file (shipped) and the README's example."""
    readme = ("allocation,members,award,period_days,target_factor,target\n"
              "alice,user:1;user:7,1000000,365,2,\nbob,group:3,200000,365,,\nchris,user:12,,,,750\n")
    return {"sfs-scenario.csv": sfs_scenario(0).allocations_text.encode(), "readme.csv": readme.encode()}


def text_prefix(path: Path, *, lines: int) -> bytes:
    return b"".join(path.read_bytes().splitlines(keepends=True)[:lines])


def _machines_yaml(machine: Machine) -> bytes:
    out = ["clusters:"]
    for index, c in enumerate(machine.clusters):
        out += [f"  - name: {c.name}", f"    nodes: {c.nodes}", f"    cores: {c.cores}",
                f"    ram: {c.ram_kb / 1024 ** 2:.1f} GiB", f"    gpus: {c.gpus}", f"    speed: {c.speed}",
                f"    properties: [{', '.join(c.properties)}]"]
        if index == 0:
            out += ["    available_from: 2013-01-05", "    available_to: 86400000"]
    return ("\n".join(out) + "\n").encode()


def _machines_csv(machine: Machine) -> bytes:
    out = ["name,nodes,cores,ram,gpus,speed,properties,available_from,available_to"]
    for index, c in enumerate(machine.clusters):
        window = "2013-01-05T00:00:00,31536000" if index == 0 else ","
        out.append(f"{c.name},{c.nodes},{c.cores},{c.ram_kb} KB,{c.gpus},{c.speed},{';'.join(c.properties)},{window}")
    return ("\n".join(out) + "\n").encode()


# --------------------------------------------------------------------------- mutators


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def _encode(text: str) -> bytes:
    return text.encode("utf-8")


def flip_bit(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    if not data:
        return b"\xff", "flip (empty)"
    at = rng.randrange(len(data))
    return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:], f"flip bit @{at}"


def set_byte(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    at = rng.randrange(len(data) + 1)
    value = rng.randrange(256)
    return data[:at] + bytes([value]) + data[at + 1:], f"byte {value:#04x} @{at}"


def insert_text(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    at = rng.randrange(len(data) + 1)
    text = rng.choice(TEXTS + NUMBERS)
    return data[:at] + _encode(text) + data[at:], f"insert {text[:12]!r} @{at}"


def truncate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    at = rng.randrange(len(data) + 1)
    return data[:at], f"truncate @{at}"


def duplicate_line(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = _lines(data)
    at = rng.randrange(len(lines))
    times = rng.choice((1, 1, 2, 50))
    line = lines[at] if lines[at].endswith(b"\n") else lines[at] + b"\n"
    return b"".join(lines[:at] + [line] * times + lines[at:]), f"duplicate line {at + 1} x{times}"


def delete_line(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = _lines(data)
    at = rng.randrange(len(lines))
    return b"".join(lines[:at] + lines[at + 1:]), f"delete line {at + 1}"


def swap_lines(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = _lines(data)
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return b"".join(lines), f"swap lines {a + 1},{b + 1}"


def _replace_span(rng: random.Random, data: bytes, pattern: re.Pattern[bytes], values: tuple[str, ...],
                  what: str) -> tuple[bytes, str]:
    lines = _lines(data)
    at = rng.randrange(len(lines))
    spans = list(pattern.finditer(lines[at]))
    if not spans:
        return insert_text(rng, data)
    span = rng.choice(spans)
    value = rng.choice(values)
    lines[at] = lines[at][:span.start()] + _encode(value) + lines[at][span.end():]
    return b"".join(lines), f"{what} {span.group()[:12]!r} -> {value[:12]!r} on line {at + 1}"


def replace_number(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A number anywhere (a field, a nodespec count, a header value, a YAML or CSV value). The
    field is drawn first, then a number in it, so a field of many numbers (a host list) does not
    crowd out the one-number fields."""
    lines = _lines(data)
    at = rng.randrange(len(lines))
    fields = [m for m in _FIELD_SPAN.finditer(lines[at]) if _NUMBER_SPAN.search(m.group())]
    if not fields:
        return insert_text(rng, data)
    chosen = rng.choice(fields)
    span = rng.choice(list(_NUMBER_SPAN.finditer(lines[at], chosen.start(), chosen.end())))
    value = rng.choice(BIG if rng.random() < 0.5 else NUMBERS)
    lines[at] = lines[at][:span.start()] + _encode(value) + lines[at][span.end():]
    return b"".join(lines), f"number {span.group()[:12]!r} -> {value[:12]!r} on line {at + 1}"


def replace_token(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return _replace_span(rng, data, _TOKEN_SPAN, NUMBERS + TEXTS, "token")


def empty_field(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return _replace_span(rng, data, _TOKEN_SPAN, ("",), "empty")


def extra_field(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = _lines(data)
    at = rng.randrange(len(lines))
    spans = list(_TOKEN_SPAN.finditer(lines[at]))
    if not spans:
        return duplicate_line(rng, data)
    span = rng.choice(spans)
    sep = rng.choice((b" ", b"\t", b",", b":"))
    lines[at] = lines[at][:span.end()] + sep + span.group() + lines[at][span.end():]
    return b"".join(lines), f"extra field after {span.group()[:12]!r} on line {at + 1}"


def line_endings(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    choice = rng.randrange(5)
    if choice == 0:
        return data.replace(b"\n", b"\r\n"), "CRLF"
    if choice == 1:
        return data.replace(b"\n", b"\r"), "CR only"
    if choice == 2:
        return data.rstrip(b"\n"), "no final newline"
    if choice == 3:
        return b"\xef\xbb\xbf" + data, "BOM"
    return data.replace(b" ", b"\t") if rng.random() < 0.5 else data.replace(b"\t", b"  "), "tabs/spaces"


def blank(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return rng.choice(((b"", "empty file"), (b"\n\n", "blank lines only"), (b";\n", "comment only"),
                       (b"\x00" * 64, "NULs"), (data[:1], "one byte")))


TEXT_MUTATORS: tuple[Callable[[random.Random, bytes], tuple[bytes, str]], ...] = (
    flip_bit, set_byte, insert_text, truncate, duplicate_line, delete_line, swap_lines,
    replace_number, replace_number, replace_number, replace_token, replace_token, empty_field, extra_field,
    line_endings,
)


def gzip_damage(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """The text compressed, then maybe truncated, corrupted, doubled or followed by junk."""
    packed = gzip.compress(data, mtime=0)
    choice = rng.randrange(7)
    if choice == 0:
        at = rng.randrange(len(packed))
        return packed[:at], f"gzip truncated @{at}/{len(packed)}"
    if choice == 1:
        at = rng.randrange(len(packed))
        return packed[:at] + bytes([packed[at] ^ (1 << rng.randrange(8))]) + packed[at + 1:], f"gzip flip @{at}"
    if choice == 2:
        return packed + packed, "gzip two members"
    if choice == 3:
        return packed + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))), "gzip + junk"
    if choice == 4:
        return packed[:-8] + b"\0" * 8, "gzip bad CRC/size"
    if choice == 5:
        raw = zlib.compress(data)
        return raw, "zlib, not gzip"
    return packed, "gzip"


# --------------------------------------------------------------------------- mutants


@dataclass(frozen=True)
class Mutant:
    name: str            # "label#index"
    what: str            # the mutations applied, in order
    data: bytes


def mutant(corpus: dict[str, bytes], label: str, index: int, *, gzip_too: bool = False) -> Mutant:
    """Mutant ``index`` of ``corpus``: a seed file with one to three mutations (and, when
    ``gzip_too``, compressed or with a damaged gzip stream about a third of the time)."""
    rng = random.Random(f"{label}#{index}")
    seed_name = rng.choice(sorted(corpus))
    data = corpus[seed_name]
    steps = [seed_name]
    if rng.random() < 0.02:
        data, what = blank(rng, data)
        steps.append(what)
    else:
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            data, what = rng.choice(TEXT_MUTATORS)(rng, data)
            steps.append(what)
    if gzip_too and rng.random() < 0.3:
        data, what = gzip_damage(rng, data)
        steps.append(what)
    return Mutant(f"{label}#{index}", "; ".join(steps), data)


def cases(fast: dict[str, int], total: int = TOTAL) -> list:
    """``(kind, indices)`` parameters for a reader's fuzz test: per kind, mutants ``0..fast`` in
    every run and the rest up to ``total`` under the slow mark (the fast set stays within a minute
    of CPU all told)."""
    params = []
    for kind, quick in fast.items():
        params.append(pytest.param(kind, range(quick), id=f"{kind}-0-{quick}"))
        if quick < total:
            params.append(pytest.param(kind, range(quick, total), id=f"{kind}-{quick}-{total}", marks=pytest.mark.slow))
    return params


def mutants(corpus: dict[str, bytes], label: str, indices: range, *, gzip_too: bool = False) -> Iterator[Mutant]:
    for index in indices:
        yield mutant(corpus, label, index, gzip_too=gzip_too)


# --------------------------------------------------------------------------- the assertion


class _Hang(Exception):
    pass


@contextmanager
def _hang_alarm() -> Iterator[None]:
    """While inside, SIGALRM raises _Hang; each call arms it with signal.setitimer."""
    def interrupt(signum, frame):
        raise _Hang(f"still running after {HANG_SECONDS:.0f} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def problem_with(error: WorkloadError, path: Path) -> str | None:
    """What is wrong with a reader's error message, or None: it must name the file, say the line
    and field it has, and be one line."""
    text = str(error)
    if not error.file or path.name not in error.file or error.file not in text:
        return f"does not name the file: {text!r}"
    if error.line is not None and f"line {error.line}" not in text:
        return f"does not say its line: {text!r}"
    if error.field is not None and f"field {error.field}" not in text:
        return f"does not say its field: {text!r}"
    if "\n" in text or "\r" in text:
        return f"is not one line: {text!r}"
    return None


@dataclass
class Outcome:
    accepted: int = 0
    rejected: int = 0
    with_line: int = 0
    with_field: int = 0
    slowest: float = 0.0
    failures: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.accepted + self.rejected


def check_reader(read: Callable[[Path], object], inputs: Iterator[Mutant], *, suffix: str = "",
                 limit: float = LIMIT_SECONDS) -> Outcome:
    """Feed every input to ``read`` through a file and fail, naming the inputs, if any call raised
    anything but a well-named WorkloadError or took more than ``limit`` seconds of CPU."""
    outcome = Outcome()
    with tempfile.TemporaryDirectory(prefix="fuzz-", dir=SCRATCH) as directory, _hang_alarm():
        path = Path(directory) / f"input{suffix}"
        for item in inputs:
            path.write_bytes(item.data)
            _check_one(read, item, path, limit, outcome)
    assert not outcome.failures, (f"{len(outcome.failures)} of {outcome.total} inputs failed:\n"
                                  + "\n".join(outcome.failures[:25]))
    return outcome


def _check_one(read: Callable[[Path], object], item: Mutant, path: Path, limit: float, outcome: Outcome) -> None:
    failures = len(outcome.failures)
    clock: list[float] = []
    try:
        with _cpu_timed(clock):
            read(path)
        outcome.accepted += 1
    except WorkloadError as error:
        outcome.rejected += 1
        outcome.with_line += error.line is not None
        outcome.with_field += error.field is not None
        problem = problem_with(error, path)
        if problem:
            outcome.failures.append(f"{item.name} [{item.what}]: the error {problem}")
    except Exception as error:  # noqa: BLE001 - anything else is the bug being hunted
        where = traceback.extract_tb(error.__traceback__)[-1]
        outcome.failures.append(f"{item.name} [{item.what}]: {type(error).__name__}: {str(error)[:200]} "
                                f"(at {Path(where.filename).name}:{where.lineno})")
    if clock[0] > limit and len(outcome.failures) == failures:     # the least of three timings, as timeit
        for _ in range(2):
            try:
                with _cpu_timed(clock):
                    read(path)
            except Exception:  # noqa: BLE001, S110 - its outcome was taken at the first call
                pass
    elapsed = min(clock)
    outcome.slowest = max(outcome.slowest, elapsed)
    if elapsed > limit:
        outcome.failures.append(f"{item.name} [{item.what}]: took {elapsed:.2f} s of CPU (limit {limit} s)")


@contextmanager
def _cpu_timed(clock: list[float]) -> Iterator[None]:
    """Appends the block's CPU seconds to ``clock``, run with the collector off (as timeit times) and
    the hang alarm armed."""
    collecting = gc.isenabled()
    gc.disable()
    began = time.process_time()
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        clock.append(time.process_time() - began)
        if collecting:
            gc.enable()


def raise_first(problems: list[WorkloadError]) -> None:
    """For checkers that return problems instead of raising (the upload checks): raise the first
    problem whose message is badly named, else the first one, so check_reader judges them."""
    for problem in problems:
        if not isinstance(problem, WorkloadError):
            raise TypeError(f"a problem that is not a WorkloadError: {problem!r}")
    if problems:
        path = Path(problems[0].file or "")
        raise next((p for p in problems if problem_with(p, path)), problems[0])
