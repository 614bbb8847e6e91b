"""The buddy rule of the Paragon paper §3.1 and real buddy fragmentation."""

from __future__ import annotations

import pytest

from engine.run import simulate
from engine.sim.allocation import BuddyAllocator, buddy_size, power_of_two_groups
from tests.engine.conftest import make_workload


def test_a_machine_of_100_is_split_into_64_32_and_4():
    assert power_of_two_groups(100) == [64, 32, 4]
    assert power_of_two_groups(128) == [128]


@pytest.mark.parametrize(("request_", "held"), [
    (1, 1), (2, 2), (3, 4), (5, 8), (33, 64), (64, 64),   # smallest power of two >= r
    (65, 100), (100, 100),                                 # above 2^m = 64: the whole machine
])
def test_buddy_sizes_on_100_processors(request_, held):
    assert buddy_size(request_, 100) == held


def test_a_job_of_32_fits_in_the_32_group_while_64_is_busy():
    buddy = BuddyAllocator(100)
    buddy.allocate(1, 64)
    assert buddy.fits(32) and buddy.fits(4) and not buddy.fits(64)
    buddy.allocate(2, 32)
    assert buddy.fits(4) and not buddy.fits(8)
    buddy.release(1, 64)
    assert buddy.fits(64) and not buddy.fits(100)


def test_whole_machine_needs_every_group_free():
    buddy = BuddyAllocator(100)
    buddy.allocate(1, 1)
    assert not buddy.fits(100)
    buddy.release(1, 1)
    assert buddy.fits(100)
    buddy.allocate(2, 100)
    assert buddy.free == 0 and not buddy.fits(1)


def test_freed_buddies_merge_back():
    buddy = BuddyAllocator(8)
    for job in range(8):
        buddy.allocate(job, 1)
    for job in range(8):
        buddy.release(job, 1)
    assert buddy.blocks[8] == [0]


# Machine of 4: four 1-processor jobs take processors 0..3; those on 1 and 3 end at 10. Two
# processors are then free but not an aligned pair, so J5 (2 procs) waits for 100 under buddy,
# while the count rule starts it at 10.
FRAGMENTED = [(0, 100, 100, 1), (0, 10, 10, 1), (0, 100, 100, 1), (0, 10, 10, 1), (5, 10, 10, 2)]


def test_buddy_fragmentation_delays_a_job_that_count_would_start():
    count = simulate(make_workload(FRAGMENTED), 4, "fcfs").schedule
    buddy = simulate(make_workload(FRAGMENTED), 4, "fcfs", allocation="buddy").schedule
    assert count.start.iloc[4] == 10
    assert buddy.start.iloc[4] == 100


def test_buddy_rounds_what_a_job_holds_not_what_it_asked():
    result = simulate(make_workload([(0, 10, 10, 3)]), 100, "fcfs", allocation="buddy").schedule
    assert result.procs.iloc[0] == 3 and result.alloc.iloc[0] == 4
