"""A state-dependent order sorted only as far as the pass walks (engine.policies.passorder.first_k,
engine.policies.ordering.ReorderedQueue with a key) held to the naive full sort: numpy's lexsort over
all waiting jobs at every pass (engine.policies.formula.order_of), job by job, on generated queues
with ties, NaN, infinities and signed zeros, and on whole runs (a real trace, node-level clusters,
the compiled walk asked for more of the order again and again)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.policies import ordering, registry
from engine.policies.formula import LITERATURE, FormulaKey, JobColumns, UserUsage, order_of, parse
from engine.policies.ordering import ReorderedQueue
from engine.policies.passorder import first_k
from engine.run import simulate
from engine.sim.simulator import Simulation
from engine.workload import load_workload
from engine.workload.model import Workload
from tests.engine.conftest import make_workload
from tests.shared_data import SHARED_DATA

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, 2.0, 2.0, -1.0, 1e308, -1e-308]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True)), max_size=60), st.randoms())
def test_the_first_k_are_the_naive_sort_s_first_k_for_every_k(values, random):
    jobs = np.array(random.sample(range(1000), len(values)), dtype=np.int64)
    keys = np.array(values, dtype=np.float64)
    naive = order_of(jobs, keys, largest=False).tolist()
    out = np.empty(len(values) + 1, dtype=np.int64)
    for k in range(len(values) + 2):
        m = first_k(keys, jobs, k, out)
        assert m == min(k, len(values)) and out[:m].tolist() == naive[:m], k


def test_nan_goes_last_and_ties_and_signed_zeros_by_job():
    keys = np.array([math.nan, 0.0, -math.inf, math.inf, -0.0, math.nan, 0.0])
    jobs = np.array([4, 9, 8, 1, 3, 0, 2])
    out = np.empty(7, dtype=np.int64)
    assert first_k(keys, jobs, 7, out) == 7
    assert out.tolist() == [8, 2, 3, 9, 1, 0, 4]


# -- the queue at each pass, against the naive sort of the waiting jobs --------------------------------

FORMULAS = [("(wait / requested) ** 3 * procs", "largest"),       # WFP3
            ("wait / (log2(procs) * requested)", "largest"),      # UNICEF: inf and NaN for 1-processor jobs
            ("0 * wait + floor(procs / 4)", "smallest"),          # ties everywhere: arrival decides
            ("log(wait - 30) * procs", "smallest"),               # NaN while wait < 30, -inf at 30
            ("-(wait * 0) + 1 / (wait - 60)", "largest")]         # +-inf at 60, signed zeros


def naive_order(sim: Simulation, text: str, first: str, params: dict | None = None):
    """The naive sort: the formula evaluated over the waiting jobs' columns gathered at each pass
    (nothing computed beforehand), then numpy's lexsort (formula.order_of)."""
    formula, columns = parse(text), JobColumns(sim)
    usage = UserUsage(sim, params or {}) if formula.names & {"usage", "fairshare"} else None
    submit = np.asarray(sim.submit, dtype=np.float64)

    def order(jobs: list[int]) -> list[int]:
        at = np.array(jobs, dtype=np.int64)

        def value_of(name: str):
            if name == "wait":
                return sim.now - submit[at]
            if name in ("now", "free"):
                return float(sim.now if name == "now" else sim.free)
            if name in ("usage", "fairshare"):
                assert usage is not None
                used = usage.usage()
                return (used if name == "usage" else usage.factor(used))[usage.code[at]]
            column = columns(name)
            return column[at] if isinstance(column, np.ndarray) else column
        return order_of(at, formula.evaluate(value_of, len(at)), first == "largest").tolist()
    return order


@pytest.mark.parametrize("text, first", FORMULAS)
@pytest.mark.parametrize("seed", range(4))
def test_every_pass_gives_the_naive_order(text, first, seed, monkeypatch):
    """Jobs come and go at random (swap-removed slots), time moves on; at each pass the head, the
    whole order, a walk that starts jobs as it goes, and the links the compiled walk reads (given a
    few at a time, then more) are the naive sort's."""
    monkeypatch.setattr(ordering, "FIRST_SORTED", 3)
    rng = np.random.default_rng(seed)
    n = 400
    rows = [(int(t), 60, int(rng.choice([1, 60, 60, 600])), int(rng.choice([1, 1, 2, 4, 8])))
            for t in np.sort(rng.choice(np.arange(0, 2000, 20), n))]
    sim = Simulation(make_workload(rows), 16)
    queue = ReorderedQueue(sim, key=FormulaKey(sim, parse(text), first == "largest", {}))
    links = queue.link()
    naive = naive_order(sim, text, first)
    waiting: set[int] = set()
    arrived = 0
    passes = 0
    for now in range(0, 2200, 10):
        sim.now = now
        while arrived < n and sim.submit[arrived] <= now:
            queue.add(arrived)
            waiting.add(arrived)
            arrived += 1
        for job in sorted(waiting):
            if rng.random() < 0.03:
                queue.remove(job)
                waiting.discard(job)
        if not waiting:
            continue
        passes += 1
        expected = naive(sorted(waiting))
        assert queue.head() == expected[0]
        queue.ready_links()
        seen = links.first[:links.size].tolist()
        while len(seen) < len(expected) and queue.extend_links():
            assert links.first[:len(seen)].tolist() == seen
            seen = links.first[:links.size].tolist()
        assert seen == expected
        assert queue.jobs() == expected
        walked = []
        for job in queue.iter_jobs():       # starting jobs as it walks: they leave the queue
            walked.append(job)
            if rng.random() < 0.1:
                queue.remove(job)
                waiting.discard(job)
        assert walked == expected
        if waiting:
            assert queue.head() == [j for j in expected if j in waiting][0]
            assert queue.jobs() == [j for j in expected if j in waiting]
    assert passes > 100


def test_an_empty_keyed_queue_has_no_head():
    sim = Simulation(make_workload([(0, 10, 10, 1)]), 4)
    queue = ReorderedQueue(sim, key=FormulaKey(sim, parse("wait"), True, {}))
    with pytest.raises(IndexError):
        queue.head()
    assert queue.jobs() == [] and list(queue.iter_jobs()) == []


# -- whole runs ------------------------------------------------------------------------------------------

def naive_formula(monkeypatch) -> None:
    """The formula ordering's dynamic queue replaced by the naive sort (a queue that orders all its jobs,
    by a Python order, at every pass)."""
    component = registry.ORDERINGS["formula"]

    def factory(sim: Simulation, params: dict):
        text, first = params.get("formula", "submit"), params.get("first", "smallest")
        if not parse(text).dynamic:
            return component.factory(sim, params)
        return ReorderedQueue(sim, naive_order(sim, text, first, params))
    monkeypatch.setitem(registry.ORDERINGS, "formula", replace(component, factory=factory))


def counted_extensions(monkeypatch) -> list[int]:
    calls = [0]
    extend = ReorderedQueue.extend_links

    def counting(self: ReorderedQueue) -> bool:
        calls[0] += 1
        return extend(self)
    monkeypatch.setattr(ReorderedQueue, "extend_links", counting)
    return calls


def wagap(count: int, squeeze: int) -> tuple[Workload, object]:
    """The first ``count`` jobs of wagap-2013 on its clusters, arriving ``squeeze`` times as fast."""
    from engine.platform.machines import read_machines

    alea = SHARED_DATA / "metacentrum" / "alea"
    workload = load_workload(alea / "wagap-2013.swf")
    jobs = workload.jobs.iloc[:count].reset_index(drop=True)
    jobs["submit"] = jobs.submit.iloc[0] + (jobs.submit - jobs.submit.iloc[0]) // squeeze
    return Workload(jobs, workload.metadata, workload.report, workload.source), read_machines(alea / "wagap-2013.swf.machines")


@pytest.mark.parametrize("bound", [None, 3, 40])
def test_the_compiled_node_walk_over_a_short_sorted_prefix_gives_the_naive_schedule(bound, monkeypatch):
    """A real trace (the first 3,000 jobs of wagap-2013 on its clusters, arriving 30 times as fast), WFP3, UNICEF and a usage
    formula with node-level EASY: the queue sorts its first 2 jobs and more each time the compiled walk
    runs past them; the schedule is, job by job, the one of the naive full sort at every pass."""
    workload, machine = wagap(3000, 30)
    policies = []
    for text, first in (("(wait / requested) ** 3 * procs", "largest"), ("wait / (log2(procs) * requested)", "largest"),
                        ("usage / (wait + 1)", "smallest")):
        policy = {"ordering": "formula", "algorithm": "easy", "params": {"formula": text, "first": first}}
        if bound:
            policy["params"]["backfill_bound"] = bound
        policies.append(policy)
    with monkeypatch.context() as patch:
        patch.setattr(ordering, "FIRST_SORTED", 2)
        calls = counted_extensions(patch)
        fast = [simulate(workload, None, policy, machine=machine).schedule for policy in policies]
        assert calls[0] > 100, "the walk seldom asked for more: the test would prove little"
    with monkeypatch.context() as patch:
        naive_formula(patch)
        slow = [simulate(workload, None, policy, machine=machine).schedule for policy in policies]
    for a, b in zip(fast, slow):
        pd.testing.assert_frame_equal(a, b)
        assert (a.start > a.submit).sum() > 300, "too few jobs wait"


@pytest.mark.parametrize("preset", ["wfp3-easy", "unicef-easy"])
def test_a_real_trace_gives_the_naive_schedule_under_every_algorithm(preset, monkeypatch):
    """KTH-SP2's first 2,500 jobs on its 100 processors, pool-level: none, firstfit, EASY (bounded and
    not) and conservative give the naive full sort's schedule job by job, the sort starting short."""
    workload = load_workload(SHARED_DATA / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz")
    workload = Workload(workload.jobs.iloc[:2500].reset_index(drop=True), workload.metadata, workload.report,
                        workload.source)
    text, first, _, _ = LITERATURE[preset]
    params = {"formula": text, "first": first}
    policies = [{"ordering": "formula", "algorithm": algorithm, "params": params}
                for algorithm in ("none", "firstfit", "easy", "conservative")]
    policies.append({**policies[2], "params": {**params, "backfill_bound": 4}})
    with monkeypatch.context() as patch:
        patch.setattr(ordering, "FIRST_SORTED", 2)
        fast = [simulate(workload, 100, policy).schedule for policy in policies]
    with monkeypatch.context() as patch:
        naive_formula(patch)
        slow = [simulate(workload, 100, policy).schedule for policy in policies]
    for a, b in zip(fast, slow):
        pd.testing.assert_frame_equal(a, b)
    assert (fast[2].start > fast[2].submit).sum() > 300
