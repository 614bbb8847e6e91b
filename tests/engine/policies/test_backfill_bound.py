"""The backfill bound (``backfill_bound``, like Slurm's bf_max_job_test) and the passes that walk
the waiting queue without copying it.

Off by default, the bound must change nothing: the passes are compared, schedule for schedule,
with the straightforward ones they replaced (kept here: they walk a snapshot copy of the queue at
every event) on real traces. On, it must bind (fewer jobs backfilled) and be recorded in the run.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest

from engine.platform.machines import read_machines
from engine.platform.queues import load_queue_config
from engine.policies.backfill import Easy
from engine.policies.heterogeneous import NodeEasy, NodeInOrder
from engine.policies.ordering import WaitingQueue
from engine.policies.registry import resolve
from engine.run import simulate
from engine.workload import load_workload
from engine.workload.window import select_days
from tests.engine.conftest import make_workload
from tests.engine.policies.node_conservative_reference import reference_conservative
from tests.shared_data import SHARED_DATA

META = SHARED_DATA / "metacentrum" / "alea"
SWF = SHARED_DATA / "swf"


# -- the straightforward passes (snapshot of the whole queue at every event) ---------------------

def snapshot_easy(self: Easy) -> None:
    sim, queue = self.sim, self.queue
    while len(queue):
        head = queue.head()
        if not sim.fits(head):
            break
        self.start(head)
    else:
        return
    if sim.free == 0:
        return
    shadow, extra = self.shadow(head)
    now, size, estimate = sim.now, sim.size, sim.estimate
    for job in queue.jobs()[1:]:
        free = sim.free
        if free == 0:
            return
        need = size[job]
        if need > free or not queue.may_start(job):
            continue
        if now + estimate[job] <= shadow:
            if sim.fits(job):
                self.start(job)
        elif need <= extra and sim.fits(job):
            self.start(job)
            extra -= need


def snapshot_node_in_order(self: NodeInOrder) -> None:
    sim, allocator = self.sim, self.sim.allocator
    for job in self.queue.jobs():
        if not allocator.limits_allow(job):
            continue
        if not self.queue.may_start(job) or not sim.fits(job):
            return
        self.start(job)


def snapshot_node_easy(self: NodeEasy) -> None:
    sim, queue, allocator = self.sim, self.queue, self.sim.allocator
    size = sim.size
    skipping = type(queue).may_start is not WaitingQueue.may_start
    reservation = None
    for job in queue.jobs():
        free = allocator.free
        if free == 0:
            return
        if reservation is not None and size[job] > free or skipping and not queue.may_start(job):
            continue
        if allocator.queue_of is not None and not allocator.limits_allow(job):
            continue
        if reservation is None:
            if sim.fits(job):
                self.start(job)
            else:
                reservation = allocator.head_reservation(job)
        elif allocator.backfill_fits(job, reservation):
            self.start(job)


@contextmanager
def snapshots():
    saved = Easy.schedule, NodeInOrder.schedule, NodeEasy.schedule
    Easy.schedule, NodeInOrder.schedule = snapshot_easy, snapshot_node_in_order
    NodeEasy.schedule = snapshot_node_easy
    try:
        with reference_conservative():      # node-level conservative: main's plain code (its own snapshot test)
            yield
    finally:
        Easy.schedule, NodeInOrder.schedule, NodeEasy.schedule = saved


def same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b)


@pytest.fixture(scope="module")
def wagap():
    return (load_workload(META / "wagap-2013.swf"), read_machines(META / "wagap-2013.swf.machines"),
            load_queue_config("metacentrum-2014"))


# -- bound off: the same schedules as the snapshot passes ----------------------------------------

@pytest.mark.parametrize("policy", ["mrfs-fcfs", "mrfs-easy", "fairshare-easy", "mrfs-conservative"])
def test_walking_the_queue_in_place_gives_the_snapshot_schedules_on_wagap(wagap, policy):
    workload, machine, queues = wagap
    workload = select_days(workload, 0, 120)
    fast = simulate(workload, None, policy, machine=machine, queues=queues).schedule
    with snapshots():
        plain = simulate(workload, None, policy, machine=machine, queues=queues).schedule
    same(fast, plain)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("ordering", ["fcfs", "sjf", "largest"])
def test_the_fit_index_starts_the_same_jobs_as_the_walk_on_random_queues(seed, ordering):
    # long queues full of ties: 300 jobs submitted in 0..2000 s on 16 processors, sizes 1-16,
    # requests from exact to 4x the runtime, many equal requests
    rng = np.random.default_rng(seed)
    runtime = rng.integers(1, 400, 300)
    rows = [(int(s), int(r), int(r * f), int(p)) for s, r, f, p in
            zip(np.sort(rng.integers(0, 2000, 300)), runtime, rng.choice([1, 1, 2, 4], 300), rng.integers(1, 17, 300))]
    policy = {"ordering": ordering, "algorithm": "easy"}
    fast = simulate(make_workload(rows), 16, policy).schedule
    with snapshots():
        plain = simulate(make_workload(rows), 16, policy).schedule
    same(fast, plain)


@pytest.mark.parametrize("trace, days", [("KTH-SP2-1996-2.1-cln.swf.gz", (0, 150)),
                                         ("SDSC-SP2-1998-4.2-cln.swf.gz", (200, 300))])
@pytest.mark.parametrize("policy", ["easy", "sorted-easy", {"ordering": "sjf", "algorithm": "easy"},
                                    {"ordering": "largest", "algorithm": "easy",
                                                             "params": {"masc": 3}}])
def test_homogeneous_easy_walking_in_place_gives_the_snapshot_schedule(trace, days, policy):
    workload = select_days(load_workload(SWF / trace), *days)
    procs = int(workload.metadata["procs"])
    fast = simulate(workload, procs, policy).schedule
    with snapshots():
        plain = simulate(workload, procs, policy).schedule
    same(fast, plain)


def test_a_bound_larger_than_the_queue_changes_nothing(wagap):
    workload, machine, queues = wagap
    workload = select_days(workload, 0, 60)
    exact = simulate(workload, None, "mrfs-easy", machine=machine, queues=queues).schedule
    huge = simulate(workload, None, {"preset": "mrfs-easy", "params": {"backfill_bound": len(workload.jobs)}},
                    machine=machine, queues=queues).schedule
    same(exact, huge)


# -- bound on --------------------------------------------------------------------------------------

def test_the_bound_is_off_by_default_and_offered_on_every_easy_and_conservative_preset():
    for preset in ("easy", "conservative", "mrfs-easy", "mrfs-conservative", "sorted-easy"):
        assert resolve(preset).params["backfill_bound"] == float("inf")
    assert "backfill_bound" not in resolve("fcfs").params


def test_a_bound_of_one_changes_the_schedule_and_is_recorded_in_the_run(wagap):
    workload, machine, queues = wagap
    workload = select_days(workload, 0, 120)
    exact = simulate(workload, None, "mrfs-easy", machine=machine, queues=queues)
    one = simulate(workload, None, {"preset": "mrfs-easy", "params": {"backfill_bound": 1}},
                   machine=machine, queues=queues)
    assert one.meta["policy"]["params"]["backfill_bound"] == 1
    assert "backfill_bound=1" in one.meta["label"]
    assert exact.meta["policy"]["params"]["backfill_bound"] == "inf"
    assert (one.schedule["start"] != exact.schedule["start"]).sum() > 100


def test_homogeneous_easy_with_a_bound_of_one_tests_only_the_job_behind_the_head():
    # 4 processors: job 0 (2 procs, 10 s) runs; head job 1 (4 procs, 10 s) waits: shadow 10, no
    # extra processors. Jobs 2 and 3 (1 proc, 5 s) both fit before the shadow time at t=1. With
    # bound 1 only job 2 is tested then; when it ends (t=6) job 3 would end after the shadow, so it
    # waits for the head to finish (t=20).
    rows = [(0, 10, 10, 2), (0, 10, 10, 4), (1, 5, 5, 1), (1, 5, 5, 1)]
    exact = simulate(make_workload(rows), 4, "easy").schedule["start"].tolist()
    bound = simulate(make_workload(rows), 4, {"preset": "easy", "params": {"backfill_bound": 1}})
    assert exact == [0, 10, 1, 1]
    assert bound.schedule["start"].tolist() == [0, 10, 1, 20]
