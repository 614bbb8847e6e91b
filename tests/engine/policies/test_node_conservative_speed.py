"""Node-level conservative backfilling's speed-ups (issue 14) keep every schedule, job by job.

The fast NodeConservative (profiles as rows of one ProfileSet advanced lazily, compiled searches
and compression passes, blocked jobs tried again only when something that could make room for them
ended) is compared with main's plain code kept in node_conservative_reference.py: on random
multi-cluster traces full of ties (with and without queue limits, availability windows, speed
scaling, a backfill bound), on wagap-2013 with the 2014 queues, and (slow) on synthetic NGI_CZ
traces against the schedule main's code wrote before the change.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.platform.machines import Cluster, Machine, read_machines
from engine.platform.queues import load_queue_config
from engine.policies.heterogeneous import NodeConservative
from engine.run import simulate
from engine.sim.nodes import NodeAllocator
from engine.sim.profile import FOREVER, Profile
from engine.sim.profileset import ProfileSet, duration_on, earliest_over
from engine.workload import load_workload
from engine.workload.window import select_days
from tests.engine.policies.node_conservative_reference import assert_same, both, reference_conservative
from tests.engine.sim.test_node_speedups import LIMITS, random_multi_cluster
from tests.shared_data import SHARED_DATA

META = SHARED_DATA / "metacentrum"
BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
EXACT = "mrfs-conservative"
BOUND_3 = {"preset": "mrfs-conservative", "params": {"backfill_bound": 3}}


def with_windows_and_speeds(machine: Machine) -> Machine:
    """The same clusters, the second one slower and available only from t=300 to t=5000."""
    a, b, c = machine.clusters
    return Machine((a, Cluster(b.name, b.nodes, b.cores, b.ram_kb, b.gpus, speed=0.5, available_from=300,
                               available_to=5000), Cluster(c.name, c.nodes, c.cores, c.ram_kb, c.gpus, speed=0.8)),
                   source="hand-made")


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("policy", [EXACT, BOUND_3])
@pytest.mark.parametrize("queues", [None, LIMITS])
def test_fast_node_conservative_gives_the_plain_schedule_on_random_clusters(seed, policy, queues):
    workload, machine = random_multi_cluster(seed)
    fast, plain = both(workload, policy, machine=machine, queues=queues)
    assert_same(fast, plain)
    if not isinstance(fast, str):
        assert (fast["start"] > fast["submit"]).sum() > 10       # the jobs did queue: reservations had work


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("speed_scaling", [False, True])
def test_fast_node_conservative_gives_the_plain_schedule_with_windows_and_speeds(seed, speed_scaling):
    workload, machine = random_multi_cluster(seed)
    fast, plain = both(workload, EXACT, machine=with_windows_and_speeds(machine), queues=LIMITS,
                       speed_scaling=speed_scaling)
    assert_same(fast, plain)


def test_the_kernels_duration_is_the_allocators_estimate():
    workload, machine = random_multi_cluster(1)
    sim_machine = with_windows_and_speeds(machine)
    allocator = NodeAllocator(sim_machine, workload, speed_scaling=True)
    allocator.base_estimate = workload.jobs["requested_time"].tolist()
    factors = np.array(allocator.factor)
    assert len(set(factors.tolist())) == 3
    for job in range(len(workload.jobs)):
        for c, factor in enumerate(factors):
            assert duration_on(allocator.base_estimate[job], factor) == allocator.estimate_on(job, c)


def test_a_blocked_job_is_tried_again_only_after_an_end_that_could_make_room(monkeypatch):
    workload, machine = random_multi_cluster(3)
    calls = {"fast": 0, "plain": 0}
    original = NodeAllocator.fits_on
    which = "fast"

    def counting(self, job, cluster):
        calls[which] += 1
        return original(self, job, cluster)

    monkeypatch.setattr(NodeAllocator, "fits_on", counting)
    fast = simulate(workload, None, EXACT, machine=machine, queues=LIMITS).schedule
    which = "plain"
    with reference_conservative():
        plain = simulate(workload, None, EXACT, machine=machine, queues=LIMITS).schedule
    pd.testing.assert_frame_equal(fast, plain)
    assert calls["plain"] - calls["fast"] > 200      # 939 tries against 608 when written


def test_a_compression_does_not_search_again_an_own_cluster_known_to_give_nothing(monkeypatch):
    workload, machine = random_multi_cluster(4)
    known: list[int] = []
    original = NodeConservative.compress

    def recording(self, freed):
        reserved = np.flatnonzero(self.res_cluster >= 0)
        version = self.profiles.version[self.res_cluster[reserved]]
        known.append(int((self.own_none[reserved] == version).sum()))     # searches the pass will skip
        original(self, freed)

    monkeypatch.setattr(NodeConservative, "compress", recording)
    fast = simulate(workload, None, EXACT, machine=machine).schedule
    monkeypatch.undo()
    with reference_conservative():
        plain = simulate(workload, None, EXACT, machine=machine).schedule
    pd.testing.assert_frame_equal(fast, plain)
    assert sum(known) > 20, sum(known)


def test_rows_advanced_lazily_answer_as_profiles_advanced_at_every_event():
    # random reservations and releases on three clusters at increasing times; only some rows are
    # touched at each time, while every Profile is advanced at every time (the plain code)
    rng = np.random.default_rng(7)
    capacities = [8, 16, 4]
    rows, plain = ProfileSet(capacities, 0, width=4), [Profile(c, 0) for c in capacities]
    held: list[tuple[int, int, int, int]] = []
    now = 0
    for _ in range(400):
        now += int(rng.choice([0, 0, 1, 5, 20]))
        for profile in plain:
            profile.advance(now)
        c = int(rng.integers(0, 3))
        if held and rng.random() < 0.4:
            cluster, start, end, n = held.pop(int(rng.integers(0, len(held))))
            rows.change(cluster, now, start, end, n)
            plain[cluster].release(start, end, n)
        else:
            start = now + int(rng.integers(0, 50))
            end = start + int(rng.integers(1, 60))
            n = int(rng.integers(1, capacities[c] + 1))
            rows.change(c, now, start, end, -n)
            plain[c].reserve(start, end, n)
            held.append((c, start, end, n))
        touched = int(rng.integers(0, 3))
        assert rows.steps(touched, now) == plain[touched].steps()
        duration, n = int(rng.integers(1, 40)), int(rng.integers(1, 5))
        clusters = np.array([2, 0, 1], dtype=np.int64)
        found = earliest_over(rows.times, rows.free, rows.length, now, clusters, n, 0, False,
                              np.zeros(3, np.int64), duration, np.ones(3), np.full(3, -FOREVER),
                              np.full(3, FOREVER), FOREVER, np.ones(3, bool), -1, 0, 0, 0, False)
        starts = [plain[c].earliest_start(now, duration, n) if n <= capacities[c] else None for c in clusters]
        best = min((s, i) for i, s in enumerate(starts) if s is not None)
        assert (int(found[0]), int(found[1])) == (int(clusters[best[1]]), best[0])
    assert rows.times.shape[1] > 4           # the rows grew


@pytest.fixture(scope="module")
def wagap():
    return (select_days(load_workload(META / "alea" / "wagap-2013.swf"), 0, 120),
            read_machines(META / "alea" / "wagap-2013.swf.machines"), load_queue_config("metacentrum-2014"))


@pytest.mark.slow
@pytest.mark.parametrize("policy", [EXACT, {"preset": "mrfs-conservative", "params": {"backfill_bound": 20}},
                                    "fairshare-conservative"])
def test_fast_node_conservative_gives_the_plain_schedule_on_wagap(wagap, policy):
    workload, machine, queues = wagap
    fast, plain = both(workload, policy, machine=machine, queues=queues)
    assert not isinstance(fast, str)
    assert_same(fast, plain)


def synthetic_schedule_hash(count: int, load: float, bound: int | None) -> str:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    # here: benchmarks/ is no package; its modules import each other by their plain names
    from metacentrum_speed import synthetic_jobs

    machine = read_machines(META / "aleang" / "NGI_CZ.swf.machines")
    workload = synthetic_jobs(count, machine, load=load)
    policy = {"preset": EXACT, "params": {"backfill_bound": bound}} if bound else EXACT
    schedule = simulate(workload, None, policy, machine=machine, queues=load_queue_config("metacentrum-2014")).schedule
    text = schedule[["job_id", "start", "cluster", "nodes"]].to_csv(index=False)
    return hashlib.sha256(text.encode()).hexdigest()


# written by NodeConservative once a pass is held at the earliest reservation (before that fix, by
# main's NodeConservative at ff8e11a before the speed-ups: 19d252aee29c7781)
MAIN_HASHES = {(20_000, 1.3, 100): "42d6ca40331b82ad"}


@pytest.mark.slow
@pytest.mark.parametrize("count, load, bound", list(MAIN_HASHES))
def test_fast_node_conservative_writes_mains_schedule_on_a_synthetic_grid_trace(count, load, bound):
    assert synthetic_schedule_hash(count, load, bound).startswith(MAIN_HASHES[count, load, bound])

