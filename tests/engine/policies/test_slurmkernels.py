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
from engine.policies.slurmlimits import AFTER_SELECT, HOLD_CODES
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
    no_reserve = rng.random(n) < (0.3 if seed % 3 == 0 else 0.0)     # under bf_min_prio/age_reserve
    return {"capacity": capacity, "ends": ends.astype(np.int64), "sizes": sizes.astype(np.int64), "size": size,
            "estimate": estimate, "held": held, "order": order, "no_reserve": no_reserve, "user": rng.integers(0, 4, n).astype(np.int64),
            "partition": rng.integers(0, 2, n).astype(np.int16), "bound": int(rng.choice([3, 10, 1000])),
            "max_job_user": int(rng.choice([0, 0, 2])), "max_job_part": int(rng.choice([0, 0, 0, 3])),
            "max_job_user_part": int(rng.choice([0, 0, 0, 1])),
            "horizon": int(rng.choice([-1, now + 7200, now + 50_000])),
            "per_node": int(rng.choice([1, 4])), "now": now}


def caps_of(p: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The caps set of bf_max_job_user, bf_max_job_part and bf_max_job_user_part, each job's slot under
    each (user 0-3, partition 4-5, user in partition 6-13) and the counts (as SlurmBackfill._pass_caps)."""
    user, part = p["user"], p["partition"].astype(np.int64)
    kinds = ((p["max_job_user"], user), (p.get("max_job_part", 0), 4 + part),
             (p.get("max_job_user_part", 0), 6 + 2 * user + part))
    caps = np.array([cap for cap, _ in kinds if cap > 0], dtype=np.int64)
    columns = [slots for cap, slots in kinds if cap > 0]
    keys = np.stack(columns, axis=1) if columns else np.zeros((len(user), 0), dtype=np.int64)
    return caps, np.ascontiguousarray(keys, dtype=np.int64), np.zeros(14, dtype=np.int64)


def over_a_cap(p: dict, job: int, counted: dict) -> bool:
    """The reference's per-pass caps: the job's user, partition and user in partition counted so far."""
    u, part = int(p["user"][job]), int(p["partition"][job])
    return any(cap and counted.get(key, 0) >= cap for cap, key in (
        (p["max_job_user"], ("user", u)), (p.get("max_job_part", 0), ("part", part)),
        (p.get("max_job_user_part", 0), ("user part", u, part))))


def count_a_job(p: dict, job: int, counted: dict) -> None:
    u, part = int(p["user"][job]), int(p["partition"][job])
    for key in (("user", u), ("part", part), ("user part", u, part)):
        counted[key] = counted.get(key, 0) + 1


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
    counted: dict = {}
    started: list[int] = []
    tested = 0
    order = p["order"]
    for i, job in enumerate(order.tolist()):
        if p["held"][job]:
            kernels.set_reason(job, kernels.HOLD + 1, now, *reasons)
            continue
        if tested >= p["bound"]:
            break
        if over_a_cap(p, job, counted):
            continue
        count_a_job(p, job, counted)
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
        if at is not None and (p["horizon"] < 0 or at < p["horizon"]) and not p["no_reserve"][job]:
            profile.reserve(*reservation(at, duration), int(kernels.reserved_size(size, p["per_node"], p["capacity"])))
    return started, reasons, blocked, None


def compiled_pass(p: dict, pool: bool) -> tuple[list[int], tuple, np.ndarray, int | None]:
    """The compiled walk driven as SlurmBackfill.backfill_pass drives it: on a pool (no profile until
    one is asked for; the jobs started before it reserved on it) or with the profile from the start."""
    n, now = len(p["size"]), p["now"]
    reasons = reasons_of(n)
    parts, union, atoms, has_nodes, blocked = blocking()
    caps, keys, counts = caps_of(p)
    state = np.zeros(6, dtype=np.int64)
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
            p["order"], state, p["bound"], caps, counts, keys, p["size"], p["estimate"],
            RESOLUTION, pool_free, none if profile is None else profile.times,
            none if profile is None else profile.free, now, p["horizon"], p["per_node"], p["capacity"],
            p["partition"], parts, union, atoms, has_nodes, blocked, *limits_of(p), *reasons, np.zeros_like(counts),
            least, AFTER_SELECT, np.zeros_like(counts), p.get("no_reserve", np.zeros(n, dtype=np.bool_)))
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


def test_the_random_passes_meet_the_partition_caps():
    """bf_max_job_part and bf_max_job_user_part change what the random passes above start or name."""
    changed = 0
    for seed in range(150):
        p = random_pass(seed)
        if not (p["max_job_part"] or p["max_job_user_part"]):
            continue
        uncapped = reference_pass({**p, "max_job_part": 0, "max_job_user_part": 0})
        capped = reference_pass(p)
        changed += capped[0] != uncapped[0] or capped[1][0].tolist() != uncapped[1][0].tolist()
    assert changed >= 10


def test_the_random_passes_meet_jobs_that_may_not_be_reserved():
    """bf_min_prio_reserve / bf_min_age_reserve (no_reserve) change what some random passes above start."""
    changed = 0
    for seed in range(150):
        p = random_pass(seed)
        half = np.random.default_rng(seed + 1000).random(len(p["size"])) < 0.5
        changed += reference_pass({**p, "no_reserve": half})[0] != reference_pass({**p, "no_reserve": half & False})[0]
    assert changed >= 10


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
    caps, keys, counts = caps_of(p)
    found, _, _ = kernels.next_fitting(p["order"], 0, -1, 0, p["bound"], caps, counts, keys,
                                       p["size"], p["estimate"], int(profile.free[0]), profile.times,
                                       profile.length, least, now, *limits_of(p))
    expected, tested, counted = -1, 0, {}
    for i, job in enumerate(p["order"].tolist()):
        if p["held"][job]:
            continue
        if tested >= p["bound"]:
            break
        if over_a_cap(p, job, counted):
            continue
        count_a_job(p, job, counted)
        tested += 1
        if p["size"][job] <= p["capacity"] and profile.earliest_start(
                now, span(int(p["estimate"][job])) + 1, int(p["size"][job])) == now:
            expected = i
            break
    assert found == expected


#: a limit acct_policy_job_runnable_pre_select names (MaxJobsPU) and one only post_select names (MaxTRESPU cpu)
BEFORE, AFTER = HOLD_CODES.index("QOSMaxJobsPerUserLimit") + 1, HOLD_CODES.index("QOSMaxCpuPerUserLimit") + 1


def holding(held: list[int]) -> tuple:
    """The limits' arrays of jobs each held by the limit of code ``held[job]`` (0: none), always."""
    codes = sorted({c for c in held if c})
    signature = np.array([codes.index(c) + 1 if c else 0 for c in held], dtype=np.int32)
    k = len(codes)
    return (np.zeros((1, 5), dtype=np.int64), signature, np.array([0, 0, *range(1, k + 1)], dtype=np.int64),
            np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64),
            np.array(codes, dtype=np.int64), np.ones((len(held), 5), dtype=np.int64))


def test_the_main_walk_passes_over_a_failed_partition_before_looking_at_limits():
    """job_scheduler.c 22.05.8 _schedule(): _failed_partition (line 1623) comes before the limits
    (acct_policy_job_runnable_pre_select 1714, select_nodes' post_select: node_scheduler.c 2528);
    a job of a failed partition gets Priority if its reason was None or Resources, else keeps it
    (1625), a held limit's too. Partition 0 failed: job 0 (reason QOSMaxCpuPerUserLimit, its
    limit no longer holding) keeps it, job 1 (Resources, held by MaxJobsPU) gets Priority, job 2
    (None) Priority; in partition 1 job 3, held by MaxTRESPU, gets that reason and job 4 is the
    candidate."""
    held = [0, BEFORE, 0, AFTER, 0]
    reason, since, seconds, first, tally = reasons_of(5)
    reason[:] = [kernels.HOLD + AFTER, kernels.RESOURCES, kernels.NONE, kernels.PRIORITY, kernels.PRIORITY]
    blocked = np.array([kernels.PRIORITY, 0], dtype=np.int64)
    order = np.arange(5, dtype=np.int64)
    partition = np.array([0, 0, 0, 1, 1], dtype=np.int16)
    i = kernels.main_walk(order, 0, 5, 100, partition, blocked, *holding(held), reason, since, seconds, first, tally,
                          AFTER_SELECT)
    assert i == 4
    assert reason.tolist() == [kernels.HOLD + AFTER, kernels.PRIORITY, kernels.PRIORITY, kernels.HOLD + AFTER,
                               kernels.PRIORITY]


def test_the_main_walk_names_reserved_nodes_before_a_limit_post_select_names():
    """job_scheduler.c 1728-1745: a partition whose nodes higher-tier blocked partitions took gives
    its first job WAIT_RESOURCES "Nodes required for job are DOWN, DRAINED or reserved ..." and
    fails it, before select_nodes (where post_select names MaxTRESPU); pre_select runs there
    (1714) only for a job whose reason is a limit's. Partition 1 is RESERVED: job 0, held by
    MaxTRESPU, gets RESERVED and the partition fails (job 1 then Priority); in partition 2,
    also RESERVED, job 2 (reason QOSMaxJobsPerUserLimit, still held by it) keeps it, job 3 (Priority,
    held by MaxJobsPU) gets RESERVED."""
    held = [AFTER, 0, BEFORE, BEFORE]
    reason, since, seconds, first, tally = reasons_of(4)
    reason[:] = [kernels.PRIORITY, kernels.NONE, kernels.HOLD + BEFORE, kernels.PRIORITY]
    blocked = np.array([kernels.PRIORITY, kernels.RESERVED, kernels.RESERVED], dtype=np.int64)
    partition = np.array([1, 1, 2, 2], dtype=np.int16)
    i = kernels.main_walk(np.arange(4, dtype=np.int64), 0, 4, 100, partition, blocked, *holding(held), reason, since,
                          seconds, first, tally, AFTER_SELECT)
    assert i == 4
    assert reason.tolist() == [kernels.RESERVED, kernels.PRIORITY, kernels.HOLD + BEFORE, kernels.RESERVED]
    assert blocked.tolist() == [kernels.PRIORITY] * 3


def test_the_backfill_walk_names_a_post_select_limit_only_for_the_jobs_slurm_tests():
    """backfill.c 22.05.8 _attempt_backfill: pre_select (line 2034) clears a limit's reason of every
    job the pass reaches and names MaxJobsPU; MaxTRESPU is named by post_select (2950) once the job
    is tested, which counts it for bf_max_job_user (_job_exceeds_max_bf_param, 2158) and
    bf_max_job_test. bf_max_job_user 1, bound 4, no processor free. User 0: job 0 (MaxTRESPU) is
    tested: its reason; job 1 (MaxTRESPU, reason QOSMaxCpuPerUserLimit) is past its user's one:
    None; job 2 (MaxTRESPU, Priority) too: keeps Priority; job 3 (no limit) the replay's walk tests
    (it counts no held job: its starts are unchanged): Resources, its partition blocked; job 4 (no
    limit, reason QOSMaxCpuPerUserLimit) is skipped for bf_max_job_user: None; job 5 (MaxJobsPU)
    gets it. Job 6 (user 1) is tested: Priority (behind job 3); job 7 (user 2, MaxTRESPU) is
    Slurm's fourth tested job: its reason; job 8 (user 3, MaxTRESPU, Priority) comes after Slurm's
    bound: kept."""
    held = [AFTER, AFTER, AFTER, 0, 0, BEFORE, 0, AFTER, AFTER]
    n = len(held)
    reason, since, seconds, first, tally = reasons_of(n)
    limit = kernels.HOLD + AFTER
    reason[:] = [kernels.NONE, limit, kernels.PRIORITY, kernels.NONE, limit, kernels.NONE, kernels.NONE,
                 kernels.NONE, kernels.PRIORITY]
    user = np.array([0, 0, 0, 0, 0, 0, 1, 2, 3], dtype=np.int64)
    parts, union, atoms, has_nodes, blocked = blocking()
    state = np.zeros(6, dtype=np.int64)
    state[2] = 1
    times, free = np.zeros(2 * n + 2, dtype=np.int64), np.zeros(2 * n + 2, dtype=np.int64)
    times[0] = 100
    status = kernels.backfill_walk(
        np.arange(n, dtype=np.int64), state, 4, np.array([1]), np.zeros(4, dtype=np.int64), user.reshape(-1, 1).copy(),
        np.full(n, 2, dtype=np.int64),
        np.full(n, 60, dtype=np.int64), 10, 0, times, free, 100, -1, 1, 8, np.zeros(n, dtype=np.int16), parts, union,
        atoms, has_nodes, blocked, *holding(held), reason, since, seconds, first, tally, np.zeros(4, dtype=np.int64),
        np.zeros(2 * n + 2, dtype=np.int64), AFTER_SELECT, np.zeros(4, dtype=np.int64), np.zeros(n, dtype=np.bool_))
    assert status == kernels.DONE
    assert reason.tolist() == [limit, kernels.NONE, kernels.PRIORITY, kernels.RESOURCES, kernels.NONE,
                               kernels.HOLD + BEFORE, kernels.PRIORITY, limit, kernels.PRIORITY]
    assert state[5] == 2
