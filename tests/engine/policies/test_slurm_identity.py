"""The ``slurm`` policy's schedules, pinned job by job (issue 24, Speed): the optimisations of
engine/policies/slurm.py (vectorised priorities and accrual, counts kept at job ends, the backfill
pass's early stop, the compiled walks and Fair Tree of engine/policies/slurmkernels.py, the order
re-sorted only after a calculation or arrivals) must not move a single start.

Pinned: the replay of the real Slurm trace (tests/data/slurm_replay) and generated workloads that
exercise every path (a queue hundreds deep on a small machine, Fair Tree and classic fair-share
over several accounts, two QOS with MaxJobsPU holds, two partition tiers, a backfill bound below
the queue's depth, the main scheduler at events). The start times were written by the
implementation before the optimisations (tests/data/slurm_pinned/starts.json).

A deliberate change of Slurm's rules (not of speed) changes these schedules: then re-pin, and say
so in the commit::

    .venv/bin/python tests/engine/policies/test_slurm_identity.py --pin
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[3]
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from engine.platform.slurmconf import SlurmSite, parse_slurm_conf, read_slurm_site  # noqa: E402
from engine.run import Scenario, run, simulate  # noqa: E402
from engine.workload.model import Workload  # noqa: E402

REPLAY = ROOT / "tests" / "data" / "slurm_replay"
PINNED = ROOT / "tests" / "data" / "slurm_pinned" / "starts.json"

CONF = """NodeName=n[1-8] CPUs=8
AccountingStorageEnforce=associations,limits,qos
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=500
PriorityWeightPartition=2000
PriorityWeightQOS=300
PriorityMaxAge=02:00:00
PriorityDecayHalfLife=01:00:00
PriorityCalcPeriod=2
SchedulerParameters=bf_interval=30,bf_max_job_test=40
PartitionName=short Nodes=ALL Default=YES MaxTime=01:00:00 PriorityJobFactor=3 PriorityTier=1
PartitionName=long Nodes=ALL MaxTime=08:00:00 PriorityJobFactor=1 PriorityTier=1
PartitionName=urgent Nodes=ALL MaxTime=00:30:00 PriorityJobFactor=1 PriorityTier=2
"""
QOS = """Name|Priority|MaxJobsPU
normal|10|6
bulk|0|2
"""
ASSOC = """Cluster|Account|User|Share|ParentName
c|physics||60|root
c|chemistry||30|root
c|bio||15|chemistry
c|teaching||10|root
""" + "".join(f"c|{account}|u{u}|{1 + u % 3}|\n"
              for u, account in enumerate(["physics"] * 5 + ["chemistry"] * 4 + ["bio"] * 3 + ["teaching"] * 3))


def generated_site(tmp: Path, extra: str = "") -> SlurmSite:
    (tmp / "slurm.conf").write_text(CONF + extra, encoding="utf-8")
    (tmp / "qos.txt").write_text(QOS, encoding="utf-8")
    (tmp / "assoc.txt").write_text(ASSOC, encoding="utf-8")
    return read_slurm_site(tmp / "slurm.conf", qos=tmp / "qos.txt", assoc=tmp / "assoc.txt")


def generated_workload(count: int, seed: int) -> Workload:
    """``count`` jobs offered at about 1.3 times the 64 CPUs: a queue that grows to hundreds."""
    rng = np.random.default_rng(seed)
    partition = rng.choice(["short", "long", "urgent"], size=count, p=[0.55, 0.4, 0.05])
    limit = np.where(partition == "long", rng.integers(2, 9, count) * 3600,
                     np.where(partition == "short", rng.integers(5, 61, count) * 60, 1800))
    runtime = np.maximum((limit * rng.uniform(0.05, 1.05, count)).astype(np.int64), 1)
    procs = rng.choice([1, 1, 2, 4, 8, 16, 32], size=count)
    gap = float((procs * np.minimum(runtime, limit)).mean()) / (1.3 * 64)
    submit = np.cumsum(rng.exponential(gap, count)).astype(np.int64)
    user = rng.integers(0, 15, count)
    accounts = ["physics"] * 5 + ["chemistry"] * 4 + ["bio"] * 3 + ["teaching"] * 3
    jobs = pd.DataFrame({
        "job_id": np.arange(1, count + 1), "submit": submit, "runtime": runtime, "requested_time": limit,
        "procs": procs, "user": user, "group": -1, "queue": -1, "partition": -1, "killed": False,
        "queue_name": partition, "account": [accounts[u] for u in user.tolist()],
        "qos": np.where(rng.random(count) < 0.25, "bulk", "normal"),
        "nodes": np.maximum(procs // 8, 1)})
    return Workload(jobs, {"procs": 64, "user_names": {str(u): f"u{u}" for u in range(15)}}, source=f"generated-{seed}")


CASES = {    # name: (seed, jobs, slurm.conf lines added, policy params)
    "fair-tree": (1, 3000, "", {}),
    "classic": (2, 3000, "PriorityFlags=NO_FAIR_TREE\n", {}),
    "main-at-events": (3, 2000, "", {"main_at_events": True}),
    "every-event": (4, 1500, "", {"sched_cycle": 0}),
}


def starts_of(tmp: Path) -> dict[str, list[int]]:
    starts: dict[str, list[int]] = {}
    replay = run(Scenario(trace=REPLAY / "sacct.txt", policy="slurm",
                          slurm_site=read_slurm_site(REPLAY / "slurm.conf", qos=REPLAY / "qos.txt",
                                                     assoc=REPLAY / "assoc.txt")))
    starts["replay"] = replay.schedule.sort_values("job_id")["start"].astype(int).tolist()
    for name, (seed, count, extra, params) in CASES.items():
        folder = tmp / name
        folder.mkdir(parents=True, exist_ok=True)
        result = simulate(generated_workload(count, seed), 64, {"preset": "slurm", "params": params},
                          context={"slurm_site": generated_site(folder, extra)})
        assert result.meta["summary"]["validation"]["ok"]
        starts[name] = result.schedule.sort_values("job_id")["start"].astype(int).tolist()
    return starts


def test_the_generated_workloads_keep_a_deep_queue():
    """The cases are worth pinning: the conf is read as meant and the queue grows deep."""
    conf = parse_slurm_conf(CONF, "t.conf")
    assert conf.scheduler["bf_max_job_test"] == 40 and conf.calc_period == 120
    jobs = generated_workload(3000, 1).jobs
    assert set(jobs["qos"]) == {"bulk", "normal"} and set(jobs["queue_name"]) == {"short", "long", "urgent"}


def test_every_schedule_is_the_pinned_one_job_by_job(tmp_path):
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    starts = starts_of(tmp_path)
    assert set(starts) == set(pinned)
    for name, expected in pinned.items():
        got = starts[name]
        assert len(got) == len(expected), name
        moved = [i for i, (a, b) in enumerate(zip(got, expected)) if a != b]
        assert not moved, f"{name}: {len(moved)} jobs start elsewhen, first job index {moved[0]}: " \
                          f"{got[moved[0]]} instead of {expected[moved[0]]}"
    waits = pinned["fair-tree"]
    assert max(waits) > 0                          # (the pinned runs are not empty)


if __name__ == "__main__" and sys.argv[1:] == ["--pin"]:
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        PINNED.parent.mkdir(parents=True, exist_ok=True)
        PINNED.write_text(json.dumps(starts_of(Path(scratch))) + "\n", encoding="utf-8")
    print(f"wrote {PINNED}")


def test_a_jobs_compiled_limit_checks_hold_as_the_rules_read():
    """SiteLimits.held (each job's checks made once) against held_by_rules (the limits read one
    after the other) for every job, as random jobs start and end under every kind of hold."""
    from engine.platform.slurmconf import Association, Qos
    from engine.policies.slurmlimits import SiteLimits

    conf = parse_slurm_conf("NodeName=n[1-4] CPUs=8\nAccountingStorageEnforce=limits\nPartitionName=a Nodes=ALL Default=YES QOS=part\n"
                            "PartitionName=b Nodes=ALL\n", "t.conf")
    qos = {"normal": Qos("normal", max_jobs_per_user=3, max_tres_per_user={"cpu": 12, "mem": 9000}),
           "bulk": Qos("bulk", grp_jobs=4, grp_tres={"cpu": 16, "node": 3}),
           "part": Qos("part", max_tres_per_user={"node": 2}, max_jobs_per_account=2)}
    assoc = [Association("c", "x", shares=1, grp_jobs=5, grp_tres={"cpu": 20}),
             Association("c", "y", parent="x", grp_tres={"node": 4, "gres/gpu": 3}),
             Association("c", "x", "u1", max_jobs=2), Association("c", "y", "u2"),
             Association("c", "y", "u3", max_jobs=3, grp_tres={"cpu": 9}), Association("c", "x", "u4", partition="b")]
    rng = np.random.default_rng(7)
    n = 300
    users = [f"u{u}" for u in rng.integers(1, 5, n).tolist()]
    accounts = ["x" if u in ("u1", "u4") else "y" for u in users]
    limits = SiteLimits(SlurmSite(conf, qos=qos, associations=assoc), rng.choice(["a", "b"], n).tolist(),
                        rng.choice(["normal", "bulk", "gone"], n).tolist(), accounts, users,
                        rng.integers(1, 9, n).tolist(), rng.integers(1, 3, n).tolist(), [60] * n,
                        mem_mb=rng.integers(0, 4000, n).tolist(), gpus=rng.integers(0, 3, n).tolist())
    reasons = _start_and_end_at_random(limits, rng, n, 400)
    assert len(reasons) >= 6          # (most kinds of hold were met)


def test_compiled_limit_checks_follow_the_hierarchy_as_the_rules_read():
    """The same with both kinds of QOS (partition QOS, job QOS, one with OverPartQOS) setting some of
    the same limits, and association limits the QOS shadow or leave; an association reason is met
    only for a limit no QOS of the job sets (resource_limits.html's hierarchy, acct_policy.c's pairs)."""
    from engine.platform.slurmconf import Association, Qos
    from engine.policies.slurmlimits import SiteLimits

    conf = parse_slurm_conf("NodeName=n[1-4] CPUs=8\nAccountingStorageEnforce=limits\n"
                            "PartitionName=a Nodes=ALL Default=YES QOS=part\nPartitionName=b Nodes=ALL\n", "t.conf")
    qos = {"normal": Qos("normal", max_jobs_per_user=1, grp_tres={"cpu": 7}),
           "over": Qos("over", max_jobs_per_user=3, grp_jobs=5, flags=["OverPartQOS"]),
           "part": Qos("part", max_jobs_per_user=2, grp_tres={"node": 4}, max_tres_per_user={"cpu": 10})}
    assoc = [Association("c", "x", shares=1, grp_jobs=3, grp_tres={"cpu": 12, "node": 3}, max_jobs=2),
             Association("c", "x", "u1"), Association("c", "x", "u2", max_jobs=4), Association("c", "x", "u3")]
    rng = np.random.default_rng(11)
    n = 240
    users = [f"u{u}" for u in rng.integers(1, 4, n).tolist()]
    limits = SiteLimits(SlurmSite(conf, qos=qos, associations=assoc), rng.choice(["a", "b"], n).tolist(),
                        rng.choice(["normal", "over", "none"], n).tolist(), ["x"] * n, users,
                        rng.integers(1, 7, n).tolist(), rng.integers(1, 3, n).tolist(), [60] * n)
    shadow = {"AssocMaxJobsLimit": ("max_jobs_per_user", "max_jobs_per_account"), "AssocGrpJobsLimit": ("grp_jobs",)}
    met: set[str] = set()

    def check(job: int) -> None:
        reason = limits.held_by_rules(job)
        met.add(reason)
        own = [q for q in (qos.get(limits.qos[job]), qos["part"] if limits.partition[job] == "a" else None) if q]
        for key in shadow.get(reason, ()):
            assert all(getattr(q, key) is None for q in own), (job, reason)
        if reason in ("AssocGrpCpuLimit", "AssocGrpNodeLimit"):
            assert all(reason[8:-5].lower() not in q.grp_tres for q in own), (job, reason)
        if reason == "QOSMaxJobsPerUserLimit":     # the first QOS's MaxJobsPU is the one in force
            first = own[0] if len(own) == 1 or limits.qos[job] == "over" else own[1]
            assert limits.qos_user_run[(first.name, limits.user[job])][0] >= first.max_jobs_per_user

    reasons = _start_and_end_at_random(limits, rng, n, 300, check=check)
    assert reasons >= {"", "QOSMaxJobsPerUserLimit", "AssocMaxJobsLimit", "AssocGrpJobsLimit", "QOSGrpCpuLimit",
                       "AssocGrpCpuLimit", "QOSGrpNodeLimit"}


def _start_and_end_at_random(limits, rng, n: int, rounds: int, clock: list[int] | None = None,
                             check: Callable[[int], None] | None = None) -> set[str]:
    """Jobs started (among those no rule holds) and ended at random, ``held`` checked against
    ``held_by_rules`` for every job at each step; with ``clock``, time passes at random, the decay
    thread takes the running jobs' time off (GrpTRESRunMins) and sets each usage at random, about
    its limit (GrpTRESMins, GrpWall). The reasons met."""
    running: list[int] = []
    reasons = set()
    for _ in range(rounds):
        for job in range(n):
            assert limits.held(job) == limits.held_by_rules(job), job
            reasons.add(limits.held(job))
            if check is not None:
                check(job)
        if clock is not None:
            clock[0] += int(rng.integers(0, 120))
            limits.run_time_until(clock[0] - int(rng.integers(0, 30)))
            for usage in limits.usage.values():
                usage.raw = float(rng.integers(0, 120 * usage.limit + 1))
            limits.usage_updated()
        if running and rng.random() < 0.45:
            limits.ended(running.pop(int(rng.integers(len(running)))))
        else:
            free = [j for j in range(n) if j not in running and not limits.held_by_rules(j)]
            if free:
                job = free[int(rng.integers(len(free)))]
                limits.submitted(job)
                limits.started(job)
                running.append(job)
    if clock is not None:
        for job in running:
            limits.ended(job)
        for usage in limits.usage.values():
            usage.raw = 0.0
        limits.usage_updated()
        if limits.charge is None:       # (with UsageFactors slurmctld's truncations leave some: below)
            assert not limits.running[:, 5:9].any()        # every job's time left went with it
    return reasons


def _timed_limits(enforce: str, qos: dict, assoc: list, seed: int, n: int, **tres: bool):  # noqa: ANN202
    """SiteLimits of n random jobs of users u1, u2 under account x on a 4 x 8-CPU site, with a clock;
    ``nodes``, ``mem``, ``gpus``: random counts of those too (else 1 node, none). (limits, rng, clock)"""
    from engine.policies.slurmlimits import SiteLimits

    conf = parse_slurm_conf(f"NodeName=n[1-4] CPUs=8\nAccountingStorageEnforce={enforce}\n"
                            "PartitionName=a Nodes=ALL Default=YES\n", "t.conf")
    rng = np.random.default_rng(seed)
    clock = [0]
    limits = SiteLimits(SlurmSite(conf, qos=qos, associations=assoc), ["a"] * n,
                        rng.choice(list(qos), n).tolist(), ["x"] * n, rng.choice(["u1", "u2"], n).tolist(),
                        rng.integers(1, 9, n).tolist(), rng.integers(1, 3, n).tolist() if tres.get("nodes") else [1] * n,
                        rng.choice([60, 300, 900, 1799], n).tolist(),
                        mem_mb=rng.choice([0, 1000, 4000], n).tolist() if tres.get("mem") else None,
                        gpus=rng.choice([0, 0, 1, 2], n).tolist() if tres.get("gpus") else None, clock=lambda: clock[0])
    return limits, rng, clock


def test_compiled_run_minutes_checks_hold_as_the_rules_read():
    """The same with GrpTRESRunMins (cpu) on a QOS and an account, and GrpTRESMins (cpu) on a user's
    association and the account, as time passes."""
    from engine.platform.slurmconf import Association, Qos

    qos = {"normal": Qos("normal", grp_tres_run_mins={"cpu": 300}), "bulk": Qos("bulk", grp_submit=50)}
    assoc = [Association("c", "x", shares=1, grp_tres_run_mins={"cpu": 200}, grp_tres_mins={"cpu": 110}),
             Association("c", "x", "u1", grp_tres_mins={"cpu": 40}), Association("c", "x", "u2")]
    limits, rng, clock = _timed_limits("limits", qos, assoc, 3, 200)
    reasons = _start_and_end_at_random(limits, rng, 200, 300, clock)
    assert reasons >= {"", "QOSGrpCPURunMinutesLimit", "AssocGrpCPURunMinutesLimit", "AssocGrpCPUMinutesLimit"}


@pytest.mark.parametrize("safe", [False, True])
def test_compiled_usage_and_run_minutes_checks_of_every_tres_hold_as_the_rules_read(safe):
    """The same with a QOS's GrpTRESMins (cpu, mem, gres/gpu) and GrpWall, an association's GrpWall
    and GrpTRESMins node, GrpTRESRunMins of mem, node and gres/gpu; jobs with and without memory and
    GPUs; with AccountingStorageEnforce safe (the usage plus the running jobs' minutes left plus the
    job's own) or without (the usage alone)."""
    from engine.platform.slurmconf import Association, Qos

    qos = {"normal": Qos("normal", grp_tres_mins={"cpu": 900, "mem": 90000, "gres/gpu": 300}, grp_wall=3000,
                         grp_tres_run_mins={"mem": 60000, "gres/gpu": 200}),
           "bulk": Qos("bulk", grp_tres_mins={"cpu": 600})}
    assoc = [Association("c", "x", shares=1, grp_tres_run_mins={"node": 100}, grp_wall=2400),
             Association("c", "x", "u1", grp_tres_mins={"node": 150}), Association("c", "x", "u2")]
    n = 160
    limits, rng, clock = _timed_limits("safe" if safe else "limits", qos, assoc, 5, n, nodes=True, mem=True, gpus=True)
    reasons = _start_and_end_at_random(limits, rng, n, 250, clock)
    assert reasons >= {"", "QOSGrpCPUMinutesLimit", "QOSGrpMemoryMinutes", "QOSGrpGRESMinutes", "QOSGrpWallLimit",
                       "AssocGrpWallLimit", "AssocGrpNodeMinutes", "AssocGrpNodeRunMinutes"}


@pytest.mark.parametrize("safe", [False, True])
def test_compiled_checks_with_usage_factors_hold_as_the_rules_read(safe):
    """The same with QOS UsageFactors: half (0.5: its jobs' GrpTRESRunMins seconds are halved) and
    free (0: its jobs are not held by GrpTRESMins or GrpTRESRunMins, and add no run seconds), with
    and without safe; once every job has ended, the run counters keep only what slurmctld's truncated
    halves leave in them (under a minute per job and TRES)."""
    from engine.platform.slurmconf import Association, Qos
    from engine.policies.slurmlimits import RUN_COLUMN

    qos = {"normal": Qos("normal", grp_tres_run_mins={"cpu": 300}), "half": Qos("half", usage_factor=0.5),
           "free": Qos("free", usage_factor=0.0)}
    assoc = [Association("c", "x", shares=1, grp_tres_run_mins={"cpu": 200}, grp_tres_mins={"cpu": 110}),
             Association("c", "x", "u1", grp_tres_mins={"cpu": 40}), Association("c", "x", "u2")]
    n = 200
    limits, rng, clock = _timed_limits("safe" if safe else "limits", qos, assoc, 7, n)
    reasons = _start_and_end_at_random(limits, rng, n, 300, clock)
    # (with safe the account's GrpTRESMins, checked first, counts the running jobs' minutes too)
    assert reasons >= {"", "QOSGrpCPURunMinutesLimit", "AssocGrpCPUMinutesLimit"} | (
        set() if safe else {"AssocGrpCPURunMinutesLimit"})
    free = [job for job in range(n) if limits.qos[job] == "free"]
    assert free and all(limits.uncharged(job) for job in free) and not limits.uncharged(0 if 0 not in free else 1)
    assert not limits.run_since       # (all ended)
    # what is left: under a second per tick and CPU of each half job (int() of its halves)
    left = int(limits.assoc_run[("x", "")][RUN_COLUMN["cpu"]])
    assert 0 < left < 8 * 30 * sum(1 for job in range(n) if limits.qos[job] == "half")
