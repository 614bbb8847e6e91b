"""The availability profile against a brute-force model: a list of (start, end, n) reservations."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sim.profile import (
    Profile,
    _step_at,
    add,
    add_by_steps,
    move_earlier_headed,
    running_jobs_profile,
)
from engine.sim.simulator import Simulation
from tests.engine.conftest import make_workload

CAPACITY = 8


def free_at(reservations: list[tuple[int, int, int]], t: int) -> int:
    return CAPACITY - sum(n for start, end, n in reservations if start <= t < end)


def fits(reservations, t: int, duration: int, n: int) -> bool:
    """n free at t and at every reservation edge inside (t, t + duration)."""
    points = [t] + [edge for s, e, _ in reservations for edge in (s, e) if t < edge < t + duration]
    return all(free_at(reservations, p) >= n for p in points)


def brute_earliest(reservations, now: int, duration: int, n: int) -> int:
    """The earliest start is now or a reservation's end (where room appears)."""
    candidates = sorted({now} | {e for _, e, _ in reservations if e > now})
    return next(t for t in candidates if fits(reservations, t, duration, n))


def test_a_new_profile_is_all_free():
    profile = Profile(4, 10)
    assert profile.steps() == [(10, 4)]
    assert profile.earliest_start(10, 100, 4) == 10


def test_reserve_splits_and_release_merges():
    profile = Profile(4, 0)
    profile.reserve(10, 20, 3)
    assert profile.steps() == [(0, 4), (10, 1), (20, 4)]
    profile.reserve(20, 30, 3)
    assert profile.steps() == [(0, 4), (10, 1), (30, 4)]   # equal neighbours merged
    profile.release(10, 30, 3)
    assert profile.steps() == [(0, 4)]


def test_earliest_start_waits_for_a_long_enough_hole():
    profile = Profile(4, 0)
    profile.reserve(0, 10, 4)
    profile.reserve(15, 30, 2)
    profile.reserve(30, 40, 4)
    assert profile.earliest_start(0, 5, 3) == 10          # [10, 15) holds 4
    assert profile.earliest_start(0, 6, 3) == 40          # too long for the hole
    assert profile.earliest_start(0, 6, 2) == 10          # 2 fit across 15
    assert profile.earliest_start(0, 6, 3, before=40) is None


def test_own_reservation_counts_as_free():
    profile = Profile(4, 0)
    profile.reserve(0, 10, 2)
    profile.reserve(10, 20, 3)                            # the asker's own reservation
    assert profile.earliest_start(0, 10, 3) == 20
    assert profile.earliest_start(0, 10, 3, own=(10, 20, 3)) == 10
    assert profile.earliest_start(0, 10, 3, before=10, own=(10, 20, 3)) is None


def test_advance_forgets_the_past():
    profile = Profile(4, 0)
    profile.reserve(0, 10, 1)
    profile.reserve(5, 20, 1)
    profile.advance(7)
    assert profile.steps() == [(7, 2), (10, 3), (20, 4)]
    profile.advance(25)
    assert profile.steps() == [(25, 4)]
    assert profile.free_at(30) == 4


def test_the_arrays_grow_past_their_first_size():
    profile = Profile(1000, 0)
    for k in range(200):
        profile.reserve(10 * k, 10 * k + 5, 1 + k % 3)
    assert len(profile) == 400
    assert profile.free_at(10 * 150 + 1) == 1000 - (1 + 150 % 3)
    assert profile.earliest_start(0, 6, 1000) == 10 * 199 + 5   # the holes last 5 s


def test_never_fitting_requests_raise():
    profile = Profile(4, 0)
    try:
        profile.earliest_start(0, 1, 5)
    except RuntimeError as error:
        assert "5 processors never fit" in str(error)
    else:
        raise AssertionError("no error")


reservation = st.tuples(st.integers(0, 60), st.integers(1, 30), st.integers(1, 4))


@settings(max_examples=200, deadline=None)
@given(st.lists(reservation, max_size=12), st.integers(0, 60), st.integers(0, 70),
       st.integers(1, 40), st.integers(1, CAPACITY), st.data())
def test_matches_the_brute_force_model(raw, release_count, now, duration, n, data):
    """Random reservations (only where they fit), some released, then time advanced."""
    profile = Profile(CAPACITY, 0)
    reservations: list[tuple[int, int, int]] = []
    for start, length, size in raw:
        if all(free_at(reservations, t) >= size for t in range(start, start + length)):
            profile.reserve(start, start + length, size)
            reservations.append((start, start + length, size))
    for start, end, size in reservations[:release_count % (len(reservations) + 1)]:
        profile.release(start, end, size)
        reservations.remove((start, end, size))
    profile.advance(now)
    steps = profile.steps()
    assert steps[0][0] == now
    assert all(a[1] != b[1] for a, b in zip(steps, steps[1:])), "equal neighbours not merged"
    for t in range(now, 100):
        assert profile.free_at(t) == free_at(reservations, t)
    assert profile.earliest_start(now, duration, n) == brute_earliest(reservations, now, duration, n)
    if reservations:
        # where could a reserved job move? release it and ask again, or ask with own=
        start, end, size = data.draw(st.sampled_from(reservations))
        if start >= now:
            others = [r for r in reservations if r != (start, end, size)]
            expected = brute_earliest(others, now, end - start, size)
            got = profile.earliest_start(now, end - start, size, before=start, own=(start, end, size))
            assert got == (expected if expected < start else None)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 50), st.integers(1, 8)), min_size=1, max_size=8), st.integers(0, 20))
def test_the_running_profile_is_what_reserving_each_running_job_gives(running, now):
    """(expected end, size) of running jobs; ends at or before now are overrunning: they count until now + 1."""
    capacity = sum(n for _, n in running)
    sim = Simulation(make_workload([(0, 1, 1, 1)]), capacity)
    sim.now = now
    sim.running_ends = sorted((end, job) for job, (end, _) in enumerate(running))
    sim.size = [n for _, n in running]
    expected = Profile(capacity, now)
    for end, n in running:
        expected.reserve(now, max(end, now + 1), n)
    assert running_jobs_profile(sim).steps() == expected.steps()


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 4)), min_size=1, max_size=14), st.integers(-3, 60),
       st.integers(-3, 60), st.integers(-3, 3), st.integers(0, 5))
def test_add_shifting_once_leaves_the_steps_add_by_steps_leaves(widths_and_free, start, end, delta, first):
    """add (the later steps shifted once) against the two splits and two merges it replaces, on
    any steps (also equal neighbours, which a profile never keeps, and delta 0)."""
    times = np.cumsum([first] + [w for w, _ in widths_and_free]).astype(np.int64)[:-1]
    free = np.array([f for _, f in widths_and_free], dtype=np.int64)
    room = len(times) + 4
    expected_t, expected_f = np.zeros(room, np.int64), np.zeros(room, np.int64)
    got_t, got_f = np.zeros(room, np.int64), np.zeros(room, np.int64)
    for t, f in ((expected_t, expected_f), (got_t, got_f)):
        t[:len(times)], f[:len(times)] = times, free
    expected = add_by_steps(expected_t, expected_f, len(times), start, end, delta)
    got = add(got_t, got_f, len(times), start, end, delta)
    assert got == expected
    assert got_t[:got].tolist() == expected_t[:expected].tolist()
    assert got_f[:got].tolist() == expected_f[:expected].tolist()


def profile_with_a_reservation(widths_and_free: list[tuple[int, int]], first: int, n: int, duration: int, start: int,
                               earlier: int) -> tuple[np.ndarray, np.ndarray, int, int, int, int]:
    """A profile of steps (width, free) from ``first`` (equal neighbours merged, room for 12 more)
    holding a job's reservation of ``n`` from ``start`` (at least its second second) for
    ``duration``, and an earlier start ``new`` for it: (times, free, length, start, new, room)."""
    times = np.cumsum([first] + [w for w, _ in widths_and_free]).astype(np.int64)[:-1]
    free = np.array([f for _, f in widths_and_free], dtype=np.int64)
    merged = np.concatenate(([True], free[1:] != free[:-1]))
    times, free = times[merged], free[merged]
    start = max(start, int(times[0]) + 1)
    new = int(times[0]) + earlier % (start - int(times[0]))
    room = len(times) + 12
    expected_t, expected_f = np.zeros(room, np.int64), np.zeros(room, np.int64)
    expected_t[:len(times)], expected_f[:len(times)] = times, free
    length = add(expected_t, expected_f, len(times), start, start + duration, -n)     # the own reservation
    return expected_t, expected_f, length, start, new, room


@settings(max_examples=800, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=30), st.integers(0, 5),
       st.integers(1, 4), st.integers(1, 80), st.integers(1, 200), st.integers(0, 200))
def test_moving_a_reservation_earlier_leaves_the_steps_two_adds_leave(widths_and_free, first, n, duration, start,
                                                                      earlier):
    """move_earlier_headed from index 0 (one pass, the later steps shifted once) against the two adds of a move: -n on
    the new window's part before the old start, +n on the old window's part after the new end; on
    merged steps holding the job's own reservation, moved to any earlier time from the first step on."""
    expected_t, expected_f, length, start, new, room = profile_with_a_reservation(widths_and_free, first, n, duration,
                                                                                start, earlier)
    got_t, got_f = expected_t.copy(), expected_f.copy()
    expected = add(expected_t, expected_f, length, new, min(new + duration, start), -n)
    expected = add(expected_t, expected_f, expected, max(new + duration, start), start + duration, n)
    scratch_t, scratch_f = np.zeros(room, np.int64), np.zeros(room, np.int64)
    _, got = move_earlier_headed(got_t, got_f, 0, length, _step_at(got_t, length, new), new, start, duration, n,
                                 scratch_t, scratch_f, False)
    assert got == expected
    assert got_t[:got].tolist() == expected_t[:expected].tolist()
    assert got_f[:got].tolist() == expected_f[:expected].tolist()


@settings(max_examples=800, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=30), st.integers(0, 5),
       st.integers(1, 4), st.integers(1, 80), st.integers(1, 200), st.integers(0, 200), st.integers(0, 6),
       st.booleans())
def test_moving_a_reservation_earlier_from_a_head_leaves_the_steps_it_leaves_from_index_0(
        widths_and_free, first, n, duration, start, earlier, head, front):
    """move_earlier_headed on the profile from ``head`` on (the steps before or after the move
    shifted, whichever fewer) against the same move on the profile at index 0, no front shifts; nothing outside
    the profile's new place is written but the steps' old place."""
    expected_t, expected_f, length, start, new, room = profile_with_a_reservation(widths_and_free, first, n, duration,
                                                                                start, earlier)
    got_t, got_f = np.full(head + room, -7, np.int64), np.full(head + room, -7, np.int64)
    got_t[head:head + length], got_f[head:head + length] = expected_t[:length], expected_f[:length]
    scratch_t, scratch_f = np.zeros(room, np.int64), np.zeros(room, np.int64)
    at = _step_at(expected_t, length, new)
    _, expected = move_earlier_headed(expected_t, expected_f, 0, length, at, new, start, duration, n, scratch_t,
                                      scratch_f, False)
    got_head, got = move_earlier_headed(got_t, got_f, head, length, at, new, start, duration, n, scratch_t,
                                        scratch_f, front)
    assert got == expected
    assert 0 <= got_head and (front or got_head == head)
    assert got_t[got_head:got_head + got].tolist() == expected_t[:expected].tolist()
    assert got_f[got_head:got_head + got].tolist() == expected_f[:expected].tolist()
