"""Priority formulas (engine.policies.formula): the grammar's whitelist and its messages, NaN and
infinities, and every literature preset held job by job to a naive sort written here (with the
naive simulator of tests/engine/reference.py), under none, easy and conservative."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.policies.base import PolicyError
from engine.policies.formula import LITERATURE, VARIABLES, order_of, parse
from engine.policies.registry import resolve
from engine.run import simulate
from engine.workload import load_workload
from engine.workload.model import Workload
from tests.engine import reference
from tests.engine.conftest import make_workload
from tests.shared_data import SHARED_DATA

SWF = SHARED_DATA / "swf"


def formula_policy(formula: str, first: str = "smallest", algorithm: str = "easy") -> dict:
    return {"ordering": "formula", "algorithm": algorithm, "params": {"formula": formula, "first": first}}


def error_of(formula: str) -> str:
    with pytest.raises(PolicyError) as caught:
        resolve(formula_policy(formula))
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- the grammar ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, column, words", [
    ("wiat / requested", 1, "unknown name 'wiat'"),
    ("procs * reqested", 9, "unknown name 'reqested'"),
    ("procs.real", 1, "attribute access"),
    ("wait.__class__", 1, "attribute access"),
    ("submit[0]", 1, "subscripts"),
    ("(lambda: 1)()", 1, "unknown function"),
    ("lambda x: x", 1, "lambda"),
    ("__import__('os')", 1, "unknown function '__import__'"),
    ("__builtins__", 1, "unknown name '__builtins__'"),
    ("open('f')", 1, "unknown function 'open'"),
    ("procs ^ 2", 7, "write powers as a ** b"),
    ("procs % 2", 7, "unsupported operator %"),
    ("procs // 2", 7, "unsupported operator //"),
    ("wait if procs else 1", 1, "if/else"),
    ("wait > 1", 1, "comparisons"),
    ("'text'", 1, "only numbers"),
    ("True * procs", 1, "only numbers"),
    ("log(procs, 2)", 1, "log() takes 1 argument, got 2"),
    ("min(procs)", 1, "min() takes 2 to 16 arguments, got 1"),
    ("sqrt(x=procs)", 1, "no keyword arguments"),
    ("procs *", 8, "ends too early"),
    ("  wait ** ", 10, "ends too early"),
    ("procs * * 2", 9, "syntax error"),
    ("log * 2", 1, "log is a function"),
])
def test_a_bad_formula_is_one_line_naming_the_column_and_the_fault(text, column, words):
    message = error_of(text)
    assert f"column {column}:" in message and words in message, message


def test_an_unknown_name_lists_the_known_ones():
    message = error_of("wiat")
    assert all(name in message for name in VARIABLES)


@pytest.mark.parametrize("text", ["", "   ", "1" * 501, "wait\n+ 1"])
def test_empty_long_and_multiline_formulas_are_refused(text):
    assert error_of(text).startswith("formula")


@pytest.mark.parametrize("text", ["(" * 240 + "procs" + ")" * 240, "-" * 490 + "procs", "log(" * 99 + "procs" + ")" * 99])
def test_deeply_nested_formulas_are_refused_or_run_never_crash(text):
    try:
        spec = resolve(formula_policy(text))
    except PolicyError as error:
        assert str(error).startswith("formula")
    else:
        simulate(make_workload([(0, 10, 10, 1), (0, 5, 5, 2)]), 4, spec)


def test_huge_powers_are_infinite_floats_not_huge_integers():
    """Python's ints would grow without bound (9 ** 9 ** 9 has 370 million digits): float64 is inf."""
    values = parse("9 ** 9 ** 9 * procs + 10 ** 400").evaluate(lambda name: np.array([1.0, 2.0]), 2)
    assert values.tolist() == [math.inf, math.inf]
    assert parse("1e999 - 1e999").evaluate(lambda name: 0.0, 3).tolist() != [0.0] * 3    # NaN, no error


def test_the_functions_and_operators_compute_what_they_say():
    columns = {"procs": np.array([1.0, 4.0, 16.0]), "requested": np.array([10.0, 100.0, 1000.0])}
    formula = parse("log2(procs) + log10(requested) + sqrt(procs) - abs(-procs) + floor(1.5) + ceil(1.5) "
                    "+ pow(procs, 2) / procs ** 2 + max(procs, 3, 2) * min(procs, 3) + exp(0) + log(exp(2)) + -+1")
    expected = [math.log2(p) + math.log10(r) + math.sqrt(p) - p + 1 + 2 + 1 + max(p, 3, 2) * min(p, 3) + 1 + 2 - 1
                for p, r in zip(columns["procs"], columns["requested"])]
    assert formula.evaluate(columns.__getitem__, 3) == pytest.approx(expected)
    assert parse("procs").names == {"procs"} and not parse("procs * requested").dynamic
    assert parse("wait / requested").dynamic and parse("usage").dynamic and parse("free + procs").dynamic


# -- NaN, infinities, ties ----------------------------------------------------------------------------

def test_nan_sorts_last_whichever_end_goes_first_and_ties_go_by_arrival():
    jobs = np.array([0, 1, 2, 3, 4, 5])
    values = np.array([math.nan, 2.0, -math.inf, math.inf, 2.0, math.nan])
    assert order_of(jobs, values, largest=False).tolist() == [2, 1, 4, 3, 0, 5]
    assert order_of(jobs, values, largest=True).tolist() == [3, 1, 4, 2, 0, 5]
    shuffled = np.array([5, 3, 0, 4, 1, 2])
    assert order_of(shuffled, values[shuffled], largest=True).tolist() == [3, 1, 4, 2, 0, 5]


def test_a_formula_that_is_nan_for_every_job_runs_as_fcfs():
    rows = [(0, 10, 10, 3), (1, 5, 5, 4), (2, 5, 5, 1), (3, 20, 20, 1)]
    for formula in ("log(-procs)", "wait * log(-1)", "0 / 0"):
        ours = simulate(make_workload(rows), 4, formula_policy(formula)).schedule.start.tolist()
        assert ours == simulate(make_workload(rows), 4, "easy").schedule.start.tolist()


# -- the spelling ------------------------------------------------------------------------------------

def test_the_spelling_resolves_and_the_label_is_the_formula_itself():
    spec = resolve(formula_policy("requested * procs"))
    assert spec.to_dict()["params"]["formula"] == "requested * procs"
    assert spec.label == "requested * procs (smallest first), easy"
    bounded = resolve({**formula_policy("wait", "largest"), "params": {"formula": "wait", "first": "largest",
                                                                         "backfill_bound": 50}})
    assert bounded.label == "wait (largest first), easy (backfill_bound=50)"
    assert resolve("wfp3-easy").label == "wfp3-easy"
    with pytest.raises(PolicyError, match="first: expected one of smallest, largest"):
        resolve({**formula_policy("wait"), "params": {"formula": "wait", "first": "biggest"}})


def test_a_variable_the_trace_lacks_is_a_clear_error():
    with pytest.raises(PolicyError, match="this trace has no mem column"):
        simulate(make_workload([(0, 10, 10, 1)]), 4, formula_policy("mem * procs"))


# -- presets against a naive sort ----------------------------------------------------------------------

def divide(a: float, b: float) -> float:
    """IEEE division (Python raises on 0)."""
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
    return a / b


def log10(x: float) -> float:
    return -math.inf if x == 0 else math.log10(x)


def log2(x: float) -> float:
    return -math.inf if x == 0 else math.log2(x)


#: the literature's formulas, written again by hand: f(job, now) -> value, and which end goes first
NAIVE = {
    "wfp3-easy": (lambda j, now: (divide(now - j.submit, max(j.requested, 1))) ** 3 * j.procs, "largest"),
    "unicef-easy": (lambda j, now: divide(now - j.submit, log2(j.procs) * max(j.requested, 1)), "largest"),
    "saf-easy": (lambda j, now: max(j.requested, 1) * j.procs, "smallest"),
    "laf-easy": (lambda j, now: max(j.requested, 1) * j.procs, "largest"),
    "ljf-easy": (lambda j, now: max(j.requested, 1), "largest"),
    "f1-easy": (lambda j, now: log10(max(j.requested, 1)) * j.procs + 870 * log10(j.submit), "smallest"),
    "f2-easy": (lambda j, now: math.sqrt(max(j.requested, 1)) * j.procs + 25600 * log10(j.submit), "smallest"),
    "f3-easy": (lambda j, now: max(j.requested, 1) * j.procs + 6860000 * log10(j.submit), "smallest"),
    "f4-easy": (lambda j, now: max(j.requested, 1) * math.sqrt(j.procs) + 530000 * log10(j.submit), "smallest"),
}


def naive_key(jobs: list[reference.Job], preset: str):   # noqa: ANN201
    value, first = NAIVE[preset]

    def key(j: int, now: int) -> tuple:
        v = value(jobs[j], now)
        if math.isnan(v):
            return (1, 0.0, j)
        return (0, -v if first == "largest" else v, j)
    return key


def naive_firstfit(jobs: list[reference.Job], capacity: int, *, key: reference.Key) -> list[int]:
    """First fit, written here: every waiting job that fits starts, in the queue's order."""
    start: list[int | None] = [None] * len(jobs)

    def decide(now: int, waiting: list[int], running: list[int]) -> None:
        for j in list(waiting):
            if jobs[j].procs <= capacity - sum(jobs[r].procs for r in running):
                start[j] = now
                running.append(j)
                waiting.remove(j)

    reference._simulate(jobs, decide, start, key=key)
    return start  # type: ignore[return-value]


REFERENCES = {"none": reference.fcfs, "easy": reference.easy, "conservative": reference.conservative,
              "firstfit": naive_firstfit}


def jobs_of(workload: Workload) -> list[reference.Job]:
    jobs = workload.jobs
    return [reference.Job(int(s), int(r), int(q), int(p))
            for s, r, q, p in zip(jobs.submit, jobs.runtime, jobs.requested_time, jobs.procs)]


def assert_like_the_naive_sort(workload: Workload, capacity: int, preset: str, algorithm: str) -> list[int]:
    formula, first = LITERATURE[preset][:2]
    assert first == NAIVE[preset][1], "the preset's end differs from the naive one"
    ours = simulate(workload, capacity, formula_policy(formula, first, algorithm)).schedule.start.tolist()
    jobs = jobs_of(workload)
    expected = REFERENCES[algorithm](jobs, capacity, key=naive_key(jobs, preset))
    if ours != expected:
        first_diff = next(i for i, (a, b) in enumerate(zip(ours, expected)) if a != b)
        raise AssertionError(f"{preset} with {algorithm}: {sum(a != b for a, b in zip(ours, expected))} starts "
                             f"differ, first job {first_diff}: engine {ours[first_diff]}, naive {expected[first_diff]}")
    return ours


@st.composite
def small_traces(draw) -> tuple[list[tuple[int, int, int, int]], int]:
    """Few values each, so that jobs tie on submit, request, size and end; submit 0 gives log10 = -inf."""
    capacity = draw(st.integers(1, 8))
    rows = []
    for _ in range(draw(st.integers(1, 18))):
        requested = draw(st.sampled_from([1, 2, 5, 10, 30]))
        runtime = draw(st.one_of(st.just(requested), st.just(0), st.integers(0, requested)))
        rows.append((draw(st.sampled_from([0, 1, 3, 10, 40])), runtime, requested, draw(st.integers(1, capacity))))
    return rows, capacity


@settings(max_examples=60, deadline=None)
@given(small_traces(), st.sampled_from(sorted(NAIVE)), st.sampled_from(sorted(REFERENCES)))
def test_each_preset_schedules_small_tied_traces_as_the_naive_sort(trace, preset, algorithm):
    rows, capacity = trace
    assert_like_the_naive_sort(make_workload(rows), capacity, preset, algorithm)


def window(path: str, first: int, count: int) -> Workload:
    workload = load_workload(SWF / path)
    return Workload(workload.jobs.iloc[first:first + count].reset_index(drop=True), workload.metadata,
                    workload.report, workload.source)


@pytest.mark.parametrize("algorithm", ["none", "easy", "conservative"])
@pytest.mark.parametrize("preset", sorted(NAIVE))
def test_each_preset_schedules_a_window_of_a_real_trace_as_the_naive_sort(preset, algorithm):
    workload = window("KTH-SP2-1996-2.1-cln.swf.gz", 2000, 300)
    starts = assert_like_the_naive_sort(workload, int(workload.metadata["procs"]), preset, algorithm)
    waited = sum(s > t for s, t in zip(starts, workload.jobs.submit))
    assert waited > 60, "too few jobs wait: the order would prove little"


def test_the_order_matters_on_the_window():
    """The presets are not all FCFS in disguise: on the window they give different schedules."""
    workload = window("KTH-SP2-1996-2.1-cln.swf.gz", 2000, 300)
    schedules = {tuple(simulate(workload, 100, name).schedule.start) for name in ("easy", *LITERATURE)}
    assert len(schedules) >= 8


def test_the_same_inputs_give_the_same_schedule():
    workload = window("KTH-SP2-1996-2.1-cln.swf.gz", 0, 500)
    for name in ("wfp3-easy", "f1-easy"):
        runs = [simulate(workload, 100, name).schedule for _ in range(2)]
        assert runs[0].equals(runs[1])


def test_static_formulas_keep_the_indexed_queue_and_dynamic_ones_are_evaluated_per_pass():
    from engine.policies.formula import FormulaKey
    from engine.policies.ordering import ReorderedQueue, WaitingQueue
    from engine.policies.registry import build_scheduler
    from engine.sim.simulator import Simulation

    sim = Simulation(make_workload([(0, 10, 10, 1), (1, 10, 10, 2)]), 4)
    static = build_scheduler(resolve("saf-easy"), sim).queue
    assert type(static) is WaitingQueue and static.rank.tolist() == [0, 1]
    assert build_scheduler(resolve("saf-easy"), sim).compiled_algorithm() is not None
    dynamic = build_scheduler(resolve("wfp3-easy"), Simulation(make_workload([(0, 10, 10, 1)]), 4)).queue
    assert type(dynamic) is ReorderedQueue and isinstance(dynamic.pass_key, FormulaKey)


def test_usage_and_fairshare_follow_the_users_finished_work():
    """Two users; user 1's first job (4 processors x 10 s) ends at 10. At 10 both users have a job
    waiting (submitted at 5, 2 processors each): by fair-share factor, user 2 (no usage) goes first;
    by usage, smallest first, the same; by usage largest first, user 1."""
    rows = [(0, 10, 10, 4), (5, 10, 10, 4), (5, 10, 10, 4)]
    users = [1, 1, 2]
    run = lambda formula, first: simulate(make_workload(rows, users=users), 4,  # noqa: E731
                                          formula_policy(formula, first, "none")).schedule.start.tolist()
    assert run("fairshare", "largest") == [0, 20, 10]
    assert run("usage", "smallest") == [0, 20, 10]
    assert run("usage", "largest") == [0, 10, 20]
    assert run("-usage * 0 + submit", "smallest") == [0, 10, 20]    # FCFS: the tie goes by arrival


def test_free_and_capacity_are_the_machine_s():
    """Machine of 4: J1 (3 procs) runs 0-10; at 1 J2 (1 proc, 100 s) and J3 (1 proc, 5 s) arrive; with
    first=largest on procs * free / capacity (equal for both) they go by arrival: J2 starts at 1."""
    rows = [(0, 10, 10, 3), (1, 100, 100, 1), (1, 5, 5, 1)]
    starts = simulate(make_workload(rows), 4, formula_policy("procs * free / capacity", "largest")).schedule
    assert starts.start.tolist() == [0, 1, 10]


def test_node_level_runs_take_a_formula_under_each_algorithm():
    from engine.platform.machines import read_machines

    alea = SHARED_DATA / "metacentrum" / "alea"
    machine = read_machines(alea / "wagap-2013.swf.machines")
    workload = load_workload(alea / "wagap-2013.swf")
    workload = Workload(workload.jobs.iloc[:600].reset_index(drop=True), workload.metadata, workload.report,
                        workload.source)
    for algorithm in ("none", "easy", "conservative"):
        for formula, first in (("(wait / requested) ** 3 * procs", "largest"), ("requested * procs", "smallest"),
                               ("mem * nodes / usage", "largest")):
            result = simulate(workload, None, formula_policy(formula, first, algorithm), machine=machine)
            assert (result.schedule.start >= result.schedule.submit).all()
            assert result.meta["summary"]["validation"]["ok"], (algorithm, formula)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("bound", [None, 5])
def test_the_compiled_node_level_easy_pass_walks_a_formula_as_the_python_pass(seed, bound):
    """NodeEasy walks a dynamic formula's order compiled (engine.policies.nodewalk; a static formula's
    queue is a plain ranked queue, walked in Python as sjf's); the Python pass is the
    reference: the same schedule, job by job, exact and with a backfill bound, with and without
    queue limits, on test_node_walk's tie-heavy clusters (``both`` checks which pass ran)."""
    import pandas as pd

    from tests.engine.policies.test_node_walk import LIMITS, both, tie_heavy

    workload, machine = tie_heavy(seed)
    for formula, first in (("(wait / requested) ** 3 * procs", "largest"), ("usage - wait", "smallest"),
                           ("fairshare * wait + free / procs", "largest")):
        policy = formula_policy(formula, first)
        if bound:
            policy["params"]["backfill_bound"] = bound
        compiled, reference = both(workload, policy, machine=machine, queues=LIMITS if seed % 2 else None)
        pd.testing.assert_frame_equal(compiled, reference)
        assert (compiled.start > compiled.submit).sum() > 20, "too few jobs wait"
