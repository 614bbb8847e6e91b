"""Node-level EASY's compiled pass (engine.policies.nodewalk) gives the Python pass's schedule, job by job.

The Python pass (``NodeEasy.compiled = False``: ``NodeEasy._schedule_python``) is the reference. Random
multi-cluster traces full of ties (equal submits, equal requests, many users of equal usage: tie runs
merged by job number), with and without queue limits, bound and speed scaling; the real wagap-2013 with
the 2014 queues; 20,000 synthetic national-grid jobs at load 1.3 (slow).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from engine.platform.machines import Machine, read_machines
from engine.platform.queues import load_queue_config
from engine.policies.heterogeneous import NodeEasy, NodeWalker
from engine.run import simulate
from engine.workload import load_workload
from engine.workload.model import Workload
from engine.workload.window import select_days
from tests.engine.sim.node_workloads import GB, machine, node_workload
from tests.engine.sim.test_node_speedups import LIMITS
from tests.shared_data import SHARED_DATA

META = SHARED_DATA / "metacentrum" / "alea"


@contextmanager
def python_pass() -> Iterator[None]:
    NodeEasy.compiled = False
    try:
        yield
    finally:
        NodeEasy.compiled = True


@contextmanager
def counting_walks() -> Iterator[list[int]]:
    """How many times the compiled walk ran (the comparison must not compare the reference with itself)."""
    calls = [0]
    original = NodeWalker.walk

    def walk(self: NodeWalker, free: int, now: int) -> int:
        calls[0] += 1
        return original(self, free, now)

    NodeWalker.walk = walk          # type: ignore[method-assign]
    try:
        yield calls
    finally:
        NodeWalker.walk = original  # type: ignore[method-assign]


def both(workload: Workload, policy, **options) -> tuple[pd.DataFrame, pd.DataFrame]:
    with counting_walks() as calls:
        compiled = simulate(workload, None, policy, **options).schedule
    assert calls[0] > 0
    with python_pass(), counting_walks() as calls:
        reference = simulate(workload, None, policy, **options).schedule
    assert calls[0] == 0
    return compiled, reference


def tie_heavy(seed: int, users: int = 12) -> tuple[Workload, Machine]:
    """150 jobs at a few distinct seconds from many users (whose usage ties until their first job ends)
    on four clusters of unlike nodes: 1-3 nodes (or 0: cores anywhere), 1-8 cores and 1-16 GiB per
    node, a few GPUs, a few exclusive, a few tied to a cluster; requested times 1-3x the runtime."""
    rng = np.random.default_rng(seed)
    rows = []
    for submit in np.sort(rng.choice(np.arange(0, 900, 60), 150)):
        runtime = int(rng.choice([30, 60, 60, 120, 300, 600]))
        rows.append({"submit": int(submit), "runtime": runtime, "requested": int(runtime * rng.choice([1, 1, 2, 3])),
                     "nodes": int(rng.choice([1, 1, 1, 2, 3])), "ppn": int(rng.choice([1, 2, 4, 4, 8])),
                     "mem": int(rng.choice([1, 2, 2, 4, 16])) * GB, "gpus": int(rng.random() < 0.1),
                     "exclusive": bool(rng.random() < 0.05), "user": int(rng.integers(0, users)),
                     "clusters": "b" if rng.random() < 0.1 else "",
                     "queue_name": "long" if runtime > 200 else "short"})
    machine_ = machine(("a", 4, 8, 16 * GB), ("b", 3, 4, 32 * GB, 1), ("c", 2, 16, 8 * GB), ("d", 6, 2, 4 * GB))
    return node_workload(rows), machine_


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("policy", ["mrfs-easy", "fairshare-easy", "pbs-easy",
                                    {"preset": "mrfs-easy", "params": {"backfill_bound": 3}}])
@pytest.mark.parametrize("queues", [None, LIMITS])
def test_the_compiled_pass_gives_the_python_schedule_on_tie_heavy_traces(seed, policy, queues):
    workload, machine_ = tie_heavy(seed)
    compiled, reference = both(workload, policy, machine=machine_, queues=queues)
    pd.testing.assert_frame_equal(compiled, reference)
    assert (reference["start"] > reference["submit"]).sum() > 30     # the queue was long: passes had work


def test_cores_anywhere_and_speed_scaling_keep_the_schedule():
    workload, machine_ = tie_heavy(3)
    plain = workload.jobs.drop(columns=["nodes", "ppn", "mem", "gpus", "exclusive"])   # procs cores anywhere
    anywhere = Workload(plain, workload.metadata, source="hand-made")
    fast = Machine(tuple(replace(c, speed=s) for c, s in zip(machine_.clusters, (1.0, 2.0, 1.5, 1.0))),
                   source="hand-made")
    for jobs, options in ((anywhere, {"machine": machine_}), (anywhere, {"machine": machine_, "queues": LIMITS}),
                          (workload, {"machine": fast, "speed_scaling": True}),
                          (workload, {"machine": fast, "speed_scaling": True, "queues": LIMITS})):
        compiled, reference = both(jobs, "mrfs-easy", **options)
        pd.testing.assert_frame_equal(compiled, reference)


def test_a_walk_whose_buffers_fill_hands_back_its_starts_and_goes_on(monkeypatch):
    """A machine with more cores than the walk's buffers hold (the cap keeps a machine file declaring
    absurd cores from asking for terabytes): the walk stops when they fill (FULL) and resumes."""
    workload, machine_ = tie_heavy(5)
    monkeypatch.setattr(NodeWalker, "room", 1)
    compiled, reference = both(workload, "mrfs-easy", machine=machine_, queues=LIMITS)
    pd.testing.assert_frame_equal(compiled, reference)


def test_availability_windows_take_the_python_pass():
    workload, _ = tie_heavy(0)
    windowed = machine(("a", 4, 8, 16 * GB), ("b", 3, 4, 32 * GB, 1, 300), ("c", 2, 16, 8 * GB),
                       ("d", 6, 2, 4 * GB))
    with counting_walks() as calls:
        simulate(workload, None, "mrfs-easy", machine=windowed)
    assert calls[0] == 0


@pytest.fixture(scope="module")
def wagap():
    return (load_workload(META / "wagap-2013.swf"), read_machines(META / "wagap-2013.swf.machines"),
            load_queue_config("metacentrum-2014"))


@pytest.mark.parametrize("policy", ["mrfs-easy", {"preset": "mrfs-easy", "params": {"backfill_bound": 5}}])
def test_the_compiled_pass_gives_the_python_schedule_on_wagap(wagap, policy):
    workload, machine_, queues = wagap
    compiled, reference = both(select_days(workload, 0, 150), policy, machine=machine_, queues=queues)
    pd.testing.assert_frame_equal(compiled, reference)


@pytest.mark.slow
def test_the_compiled_pass_gives_the_python_schedule_on_whole_wagap(wagap):
    workload, machine_, queues = wagap
    compiled, reference = both(workload, "mrfs-easy", machine=machine_, queues=queues)
    pd.testing.assert_frame_equal(compiled, reference)


@pytest.mark.slow
@pytest.mark.parametrize("bound", [None, 100])
def test_the_compiled_pass_gives_the_python_schedule_on_20000_grid_jobs(bound):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    from metacentrum_speed import synthetic_jobs   # the benchmark's generator (benchmarks/ is not a package)

    ngi = read_machines(META.parent / "aleang" / "NGI_CZ.swf.machines")
    workload = synthetic_jobs(20_000, ngi, load=1.3)
    policy = "mrfs-easy" if bound is None else {"preset": "mrfs-easy", "params": {"backfill_bound": bound}}
    compiled, reference = both(workload, policy, machine=ngi, queues=load_queue_config("metacentrum-2014"))
    pd.testing.assert_frame_equal(compiled, reference)


@pytest.mark.parametrize("seed", range(100, 116))
@pytest.mark.parametrize("queues", [None, LIMITS])
def test_exact_mode_scan_and_released_node_filter_keep_the_schedule(seed, queues):
    """Exact mode tests every waiting class at the start of a pass (nodewalk.scan) and, after releases,
    retries a class only on clusters where a released node now meets its request (released_may_fit):
    more seeds, fewer users (longer runs of equal usage), exclusive and cores-anywhere jobs among them."""
    workload, machine_ = tie_heavy(seed, users=4)
    jobs = workload.jobs.copy()
    rng = np.random.default_rng(seed)
    jobs["exclusive"] = rng.random(len(jobs)) < 0.15
    anywhere = rng.random(len(jobs)) < 0.15
    jobs.loc[anywhere, "nodes"] = 0
    jobs.loc[anywhere, "ppn"] = 0
    jobs.loc[anywhere, "mem"] = 0
    jobs.loc[anywhere, "gpus"] = 0
    jobs.loc[anywhere, "exclusive"] = False
    mixed = Workload(jobs, workload.metadata, source="hand-made")
    compiled, reference = both(mixed, "mrfs-easy", machine=machine_, queues=queues)
    pd.testing.assert_frame_equal(compiled, reference)
    assert (reference["start"] > reference["submit"]).sum() > 30


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("queues", [None, LIMITS])
def test_the_compiled_pass_tells_the_reservation_watch_what_the_python_pass_does(seed, queues):
    """The walk takes a still valid cached reservation itself (no round trip to Python): the run's
    summary, with the reservation watch's checks and counts, is the Python pass's."""
    workload, machine_ = tie_heavy(seed)
    compiled = simulate(workload, None, "mrfs-easy", machine=machine_, queues=queues)
    with python_pass():
        reference = simulate(workload, None, "mrfs-easy", machine=machine_, queues=queues)
    assert _without_timings(compiled.meta) == _without_timings(reference.meta)


def assert_mirror_matches_allocator(allocator) -> None:
    """The mirror that allocate and release keep (engine.sim.nodekernels.mirror_start/mirror_end) holds
    what one built afresh from the allocator's Python state holds."""
    from engine.sim.nodes import NodeMirror

    kept, fresh = allocator.mirror, NodeMirror(allocator)
    for name in ("f_cores", "f_mem", "f_gpus", "cluster_free", "run_count", "queue_room", "pair_jobs",
                 "pair_cores", "stamp"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(fresh, name), err_msg=name)
    for c, count in enumerate(fresh.run_count.tolist()):
        np.testing.assert_array_equal(kept.run_keys[c, :count], fresh.run_keys[c, :count])
    for job, (_, nodes, cores, mem, gpus, held) in allocator.taken.items():
        first, k = int(kept.job_first[job]), int(kept.job_k[job])
        assert tuple(kept.store_pick[first:first + k].tolist()) == nodes
        assert tuple(kept.store_take[first:first + k].tolist()) == cores
        assert (kept.job_mem[job], kept.job_gpus[job], kept.job_held[job]) == (mem, gpus, held)
    released = len(allocator.release_log)
    assert kept.log[:released, 0].tolist() == allocator.release_log


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("queues", [None, LIMITS])
def test_the_mirror_follows_every_start_and_end(seed, queues, monkeypatch):
    workload, machine_ = tie_heavy(seed)
    checked = [0]
    original = NodeEasy._schedule_compiled

    def checking(self: NodeEasy, walker: NodeWalker) -> None:
        assert_mirror_matches_allocator(walker.allocator)
        checked[0] += 1
        original(self, walker)
        assert_mirror_matches_allocator(walker.allocator)

    monkeypatch.setattr(NodeEasy, "_schedule_compiled", checking)
    simulate(workload, None, "mrfs-easy", machine=machine_, queues=queues)
    assert checked[0] > 50
