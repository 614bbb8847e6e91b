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


# ---------------------------------------------------------------- the backfill walk's look-ahead

RESOLUTION = 60


def random_pass(seed: int) -> dict:
    """A backfill pass's inputs: running jobs on a pool of ``capacity`` processors (their profile,
    some past their expected end), a queue in priority order (sizes and time limits from a few
    classes, so that some fit now and reservations often take from a later job's span; now and
    then one larger than the machine; some held by a limit; users for bf_max_job_user; two
    partitions on distinct nodes), the bound, the window and whole-node reservations or not."""
    rng = np.random.default_rng(seed)
    now = int(rng.choice([9_960, 10_000]))      # on the time grid (steps end where spans end) or off it
    capacity = int(rng.choice([16, 32, 64]))
    count = int(rng.integers(0, 30))
    sizes = rng.integers(1, 9, count)
    while sizes.sum() > capacity:
        sizes = sizes[:-1]
    ends = np.sort(now + rng.integers(-100, 20_000, len(sizes)))
    n = int(rng.integers(1, 60))
    size = rng.choice([1, 1, 2, 4, 8, 16, capacity // 2, capacity], n).astype(np.int64)
    size[rng.random(n) < 0.03] = capacity + 1       # now and then a job that never fits
    estimate = rng.choice([100, 600, 3600, 7200, 30_000, 86_400], n).astype(np.int64)
    estimate += rng.integers(0, 100, n) * (rng.random(n) < 0.3)
    held = rng.random(n) < 0.2
    order = rng.permutation(n).astype(np.int64)
    return {"capacity": capacity, "ends": ends.astype(np.int64), "sizes": sizes.astype(np.int64), "size": size,
            "estimate": estimate, "held": held, "order": order, "user": rng.integers(0, 4, n).astype(np.int64),
            "partition": rng.integers(0, 2, n).astype(np.int16), "bound": int(rng.choice([3, 10, 1000])),
            "max_job_user": int(rng.choice([0, 0, 2])), "horizon": int(rng.choice([-1, now + 7200, now + 50_000])),
            "per_node": int(rng.choice([1, 4])), "now": now}


def limits_of(p: dict) -> tuple:
    """The limits' arrays holding exactly the jobs of ``p["held"]`` (one check, always over its bound)."""
    n = len(p["size"])
    signature = p["held"].astype(np.int32)
    return (np.zeros((1, 5), dtype=np.int64), signature, np.array([0, 0, 1], dtype=np.int64),
            np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.ones(1, dtype=np.int64), np.ones((n, 5), dtype=np.int64))


def blocking() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Two partitions on distinct nodes: parts, union, atoms, has_nodes, blocked."""
    return (np.zeros(2, dtype=np.bool_), np.zeros(2, dtype=np.bool_), np.eye(2, dtype=np.bool_),
            np.ones(2, dtype=np.bool_), np.zeros(2, dtype=np.int64))


def reasons_of(n: int) -> tuple:
    return (np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int64), np.zeros((n, 8), dtype=np.int64),
            np.full(n, -1, dtype=np.int64), np.zeros(1, dtype=np.int64))


def start_profile(p: dict) -> Profile:
    now = p["now"]
    profile = Profile(p["capacity"], now)
    profile.make_room(len(p["ends"]) + 2 * len(p["size"]) + 8)
    profile.length = kernels.running_profile(p["ends"], p["sizes"], len(p["ends"]), now, RESOLUTION, p["capacity"],
                                             profile.times, profile.free)
    return profile


def span(estimate: int) -> int:
    """A job's time limit (at least a second): what it takes once started."""
    return max(estimate, 1)


def reservation(at: int, duration: int) -> tuple[int, int]:
    """A waiting job's reservation in the backfill table: from its start's bf_resolution floor to
    its end's, at least one slot long."""
    begin = at - at % RESOLUTION
    return begin, max((at + duration) - (at + duration) % RESOLUTION, begin + RESOLUTION)


def reference_pass(p: dict) -> tuple[list[int], tuple, np.ndarray, int | None]:
    """The backfill pass as written before the look-ahead, in plain Python: every job the walk tests
    is looked up on the profile (from the start) unless fewer processors are free now than the
    smallest job left asks for; one that fits now starts (on a pool it always fits) and takes its
    processors from now, the others wait and are reserved before the window, whole nodes. Returns
    the jobs started, the reasons' arrays, each partition's block and the job that never fits (or None)."""
    n, now = len(p["size"]), p["now"]
    profile = start_profile(p)
    reasons = reasons_of(n)
    parts, union, atoms, has_nodes, blocked = blocking()
    per_user = np.zeros(4, dtype=np.int64)
    started: list[int] = []
    tested = 0
    order = p["order"]
    for i, job in enumerate(order.tolist()):
        if p["held"][job]:
            kernels.set_reason(job, kernels.HOLD + 1, now, *reasons)
            continue
        if tested >= p["bound"]:
            break
        u = p["user"][job]
        if p["max_job_user"] and per_user[u] >= p["max_job_user"]:
            continue
        per_user[u] += 1
        tested += 1
        part = int(p["partition"][job])
        if profile.free[0] < min(p["size"][order[i:]].tolist()):
            kernels.set_reason(job, int(blocked[part]) or kernels.RESOURCES, now, *reasons)
            kernels.block(part, parts, union, atoms, has_nodes, blocked)
            continue
        duration, size = span(int(p["estimate"][job])), int(p["size"][job])
        try:
            at = profile.earliest_start(now, duration + 1, size)     # (+1 s: the will-run test's)
        except RuntimeError:
            return started, reasons, blocked, job
        if at == now:
            kernels.set_reason(job, -1, now, *reasons)
            profile.reserve(now, now + duration, size)
            started.append(job)
            continue
        kernels.set_reason(job, int(blocked[part]) or kernels.RESOURCES, now, *reasons)
        kernels.block(part, parts, union, atoms, has_nodes, blocked)
        if at is not None and (p["horizon"] < 0 or at < p["horizon"]):
            profile.reserve(*reservation(at, duration), int(kernels.reserved_size(size, p["per_node"], p["capacity"])))
    return started, reasons, blocked, None


def compiled_pass(p: dict, pool: bool) -> tuple[list[int], tuple, np.ndarray, int | None]:
    """The compiled walk driven as SlurmBackfill.backfill_pass drives it: on a pool (no profile until
    one is asked for; the jobs started before it reserved on it) or with the profile from the start."""
    n, now = len(p["size"]), p["now"]
    reasons = reasons_of(n)
    parts, union, atoms, has_nodes, blocked = blocking()
    per_user, ahead_user = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64)
    state = np.zeros(5, dtype=np.int64)
    profile = None if pool else start_profile(p)
    none = np.zeros(1, dtype=np.int64)
    least = np.zeros(len(p["ends"]) + 2 * n + 8, dtype=np.int64)
    pool_free = p["capacity"] - int(p["sizes"].sum())
    taken: list[tuple[int, int]] = []
    started: list[int] = []
    while True:
        if profile is not None:
            state[2] = profile.length
        status = kernels.backfill_walk(
            p["order"], state, p["bound"], p["max_job_user"], per_user, p["user"], p["size"], p["estimate"],
            RESOLUTION, pool_free, none if profile is None else profile.times,
            none if profile is None else profile.free, now, p["horizon"], p["per_node"], p["capacity"],
            p["partition"], parts, union, atoms, has_nodes, blocked, *limits_of(p), *reasons, ahead_user, least)
        if profile is not None:
            profile.length = int(state[2])
        if status == kernels.DONE:
            return started, reasons, blocked, None
        i = int(state[0])
        job = int(p["order"][i])
        if status == kernels.NEVER_FITS:
            return started, reasons, blocked, job
        if status == kernels.NEEDS_PROFILE:
            assert profile is None
            profile = start_profile(p)
            for d, size in taken:
                profile.reserve(now, now + d, size)
            state[3] = 1
            continue
        assert status == kernels.CANDIDATE
        state[0] = i + 1
        size, duration = int(p["size"][job]), span(int(p["estimate"][job]))
        assert size <= (pool_free if profile is None else profile.free[0])
        kernels.set_reason(job, -1, now, *reasons)
        pool_free -= size
        started.append(job)
        if profile is None:
            taken.append((duration, size))
        else:
            profile.reserve(now, now + duration, size)


@pytest.mark.parametrize("pool", [True, False])
@pytest.mark.parametrize("seed", range(150))
def test_the_walk_with_its_look_ahead_starts_and_holds_what_the_full_walk_does(seed, pool):
    p = random_pass(seed)
    expected = reference_pass(p)
    got = compiled_pass(p, pool)
    assert got[0] == expected[0]
    assert got[3] == expected[3]
    for mine, theirs in zip(got[1], expected[1]):
        assert mine.tolist() == theirs.tolist()
    assert got[2].tolist() == expected[2].tolist()


def test_the_random_passes_start_jobs_after_others_waited_and_hit_the_never_fitting_job():
    """The passes above reach the look-ahead's paths: starts after jobs that waited and were
    reserved (a witness that survived reservations), and jobs larger than the machine where the
    profile would have been asked for them."""
    late_starts = never = 0
    for seed in range(150):
        p = random_pass(seed)
        started, reasons, _, never_fits = reference_pass(p)
        waited = {j for j in range(len(p["size"])) if reasons[0][j] in (kernels.RESOURCES, kernels.PRIORITY)}
        position = {int(j): k for k, j in enumerate(p["order"].tolist())}
        late_starts += any(position[s] > min((position[w] for w in waited), default=len(position)) for s in started)
        never += never_fits is not None
    assert late_starts >= 20
    assert never >= 5


@pytest.mark.parametrize("seed", range(60))
def test_the_look_ahead_finds_the_first_job_the_walk_tests_that_fits_now(seed):
    p = random_pass(seed)
    profile, now = start_profile(p), p["now"]
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(0, 6))):       # some reservations after now
        at = now + int(rng.integers(1, 30)) * RESOLUTION
        profile.reserve(at, at + int(rng.integers(1, 200)) * RESOLUTION, int(rng.integers(1, 6)))
    least = np.zeros(profile.length, dtype=np.int64)
    kernels.prefix_least(profile.free, profile.length, least)
    assert least.tolist() == np.minimum.accumulate(profile.free[:profile.length]).tolist()
    per_user = np.zeros(4, dtype=np.int64)
    found, _, _ = kernels.next_fitting(p["order"], 0, -1, 0, p["bound"], p["max_job_user"], per_user, p["user"],
                                       p["size"], p["estimate"], int(profile.free[0]), profile.times,
                                       profile.length, least, now, *limits_of(p))
    expected, tested, users = -1, 0, np.zeros(4, dtype=np.int64)
    for i, job in enumerate(p["order"].tolist()):
        if p["held"][job]:
            continue
        if tested >= p["bound"]:
            break
        if p["max_job_user"] and users[p["user"][job]] >= p["max_job_user"]:
            continue
        users[p["user"][job]] += 1
        tested += 1
        if p["size"][job] <= p["capacity"] and profile.earliest_start(
                now, span(int(p["estimate"][job])) + 1, int(p["size"][job])) == now:
            expected = i
            break
    assert found == expected
