"""The ``slurm`` policy's compiled kernels (engine.policies.slurmkernels) against the Python rules
they replace: Fair Tree on random association trees (ties, accounts without shares, users
without usage), the running jobs' profile against one built reservation by reservation, and the
sorted running-job arrays against a sorted list."""

from __future__ import annotations

import numpy as np
import pytest

from engine.platform.slurmconf import Association
from engine.policies import slurmkernels as kernels
from engine.policies.slurm import FlatTree, association_tree, fair_tree_factors, users_of
from engine.sim.profile import Profile


def random_tree(rng: np.random.Generator) -> tuple[list[Association], dict[str, float]]:
    """Accounts (some nested, some without shares) with users; usage drawn from a few values, so
    that Level Fairshares tie often, some users with none."""
    rows = [Association("c", f"a{a}", shares=int(rng.choice([0, 1, 2, 5, 5])),
                        parent=f"a{int(rng.integers(a))}" if a and rng.random() < 0.4 else "")
            for a in range(int(rng.integers(1, 7)))]
    usage: dict[str, float] = {}
    for u in range(int(rng.integers(1, 25))):
        account = f"a{int(rng.integers(len(rows)))}"
        rows.append(Association("c", account, f"u{u}", shares=int(rng.choice([0, 1, 1, 3]))))
        usage[f"u{u}"] = float(rng.choice([0.0, 10.0, 20.0, 30.0, 7.5]))
    return rows, usage


@pytest.mark.parametrize("seed", range(40))
def test_the_compiled_fair_tree_gives_the_rules_factors(seed):
    rows, usage = random_tree(np.random.default_rng(seed))
    root = association_tree(rows)
    users = {(u.account, u.user): u for u in users_of(root)}
    for (_, user), node in users.items():
        node.usage = usage[user]
    expected = fair_tree_factors(root)
    keys = list(users) + [("nobody", "x")]
    flat = FlatTree(root, users, keys)
    assert flat.usable
    got = flat.pair_factors(np.array([usage[user] for _, user in users], dtype=np.float64))
    assert got.tolist() == [expected[key] for key in users] + [0.0]


def test_a_tree_without_users_gives_every_pair_the_factor_one():
    root = association_tree([Association("c", "a", shares=1)])
    flat = FlatTree(root, {}, [("a", "u")])
    assert flat.pair_factors(np.zeros(0)).tolist() == [1.0]


@pytest.mark.parametrize("resolution", [1, 60])
def test_the_running_profile_is_the_running_jobs_reserved_from_now(resolution):
    rng = np.random.default_rng(resolution)
    now, capacity = 1000, 200
    ends = np.sort(rng.integers(now - 50, now + 5000, 40))         # some past their expected end
    sizes = rng.integers(1, 6, 40)
    times, free = np.zeros(100, dtype=np.int64), np.zeros(100, dtype=np.int64)
    length = kernels.running_profile(ends, sizes, len(ends), now, resolution, capacity, times, free)
    naive = Profile(capacity, now)
    for end, size in zip(ends.tolist(), sizes.tolist()):
        naive.reserve(now, max(-(-end // resolution) * resolution, now + 1), size)
    assert list(zip(times[:length].tolist(), free[:length].tolist())) == naive.steps()


def test_the_running_arrays_stay_sorted_by_end_then_job():
    rng = np.random.default_rng(3)
    ends, jobs, sizes = (np.zeros(300, dtype=np.int64) for _ in range(3))
    reference: list[tuple[int, int, int]] = []
    job = 0
    for _ in range(600):
        if reference and rng.random() < 0.4:
            end, gone, _ = reference.pop(int(rng.integers(len(reference))))
            kernels.remove_running(ends, jobs, sizes, len(reference) + 1, end, gone)
        else:
            entry = (int(rng.integers(0, 50)), job, int(rng.integers(1, 9)))
            kernels.insert_running(ends, jobs, sizes, len(reference), *entry)
            reference.append(entry)
            job += 1
        reference.sort()
        count = len(reference)
        assert list(zip(ends[:count].tolist(), jobs[:count].tolist(), sizes[:count].tolist())) == reference


def will_run_batches(ends: list[int]) -> list[int]:
    """cons_common/job_test.c _will_run_test's batches written out: the running jobs by end, the
    first batch up to the first end raised to the next multiple of 30, plus 30 s, each later window
    doubled (again while the next end lies beyond it); each end replaced by its batch's last."""
    out: list[int] = []
    barrier, window, k = ends[0] + (30 - ends[0] % 30), 30, 0
    while k < len(ends):
        batch = [ends[k]]
        k += 1
        while k < len(ends) and ends[k] <= barrier + window:
            batch.append(ends[k])
            k += 1
        out += [batch[-1]] * len(batch)
        window *= 2
        while k < len(ends) and ends[k] > barrier + window:
            window *= 2
    return out


@pytest.mark.parametrize("seed", range(20))
def test_the_compiled_will_run_batches_are_the_select_plugins(seed):
    rng = np.random.default_rng(seed)
    ends = np.sort(rng.integers(1000, 1000 + int(rng.choice([50, 400, 5000])), int(rng.integers(1, 40))))
    out = np.zeros(len(ends), dtype=np.int64)
    kernels.will_run_ends(ends, len(ends), out)
    assert out.tolist() == will_run_batches(ends.tolist())
    # e.g. ends 1005, 1020, 1061, 1090, 1200: barrier 1020; batches to 1050, 1080, 1140, 1260
    got = np.zeros(5, dtype=np.int64)
    kernels.will_run_ends(np.array([1005, 1020, 1061, 1090, 1200]), 5, got)
    assert got.tolist() == [1020, 1020, 1061, 1090, 1200]
