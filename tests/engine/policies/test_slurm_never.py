"""The limits a job can never satisfy (SiteLimits.never), found once per kind of job: the memo gives what
the checks give job by job, and the checks' skip (no QOS or association row sets a limit a job alone can
break) knows every limit they read."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.platform.slurmconf import Association, Qos, SlurmSite, parse_slurm_conf
from engine.policies.slurmlimits import ALONE_LIMITS, SiteLimits

CONF = ("NodeName=n[1-4] CPUs=8\nAccountingStorageEnforce=associations,limits,safe\n"
        "PartitionName=a Nodes=n[1-4] Default=YES MaxTime=01:00:00 MaxNodes=3\nPartitionName=b Nodes=n[1-2]\n")


def limits_of(qos: dict[str, Qos], assoc: list[Association], n: int, seed: int) -> SiteLimits:
    rng = np.random.default_rng(seed)
    users = [f"u{u}" for u in rng.integers(1, 4, n).tolist()]
    return SiteLimits(SlurmSite(parse_slurm_conf(CONF, "t.conf"), qos=qos, associations=assoc),
                      rng.choice(["a", "b"], n).tolist(), rng.choice(list(qos), n).tolist(),
                      ["x" if u != "u3" else "y" for u in users], users,
                      rng.choice([1, 2, 8, 16, 30], n).tolist(), rng.integers(1, 5, n).tolist(),
                      rng.choice([60, 600, 3600, 7200], n).tolist(),
                      mem_mb=rng.choice([0, 1000, 9000], n).tolist(), gpus=rng.integers(0, 3, n).tolist())


@pytest.mark.parametrize("seed", range(4))
def test_the_memo_gives_each_job_what_its_own_checks_give(seed):
    qos = {"normal": Qos("normal", max_wall=3000, max_tres_per_job={"cpu": 16}),
           "big": Qos("big", min_tres_per_job={"cpu": 2}, max_tres_mins_per_job={"cpu": 400}, grp_tres={"node": 3}),
           "free": Qos("free")}
    assoc = [Association("c", "x", shares=1, grp_tres_run_mins={"cpu": 900}), Association("c", "y", shares=1),
             Association("c", "x", "u1", max_tres_per_node={"gres/gpu": 1}), Association("c", "x", "u2"),
             Association("c", "y", "u3", max_wall=600)]
    n = 400
    limits = limits_of(qos, assoc, n, seed)
    fresh = limits_of(qos, assoc, n, seed)
    order = np.random.default_rng(seed).permutation(n).tolist()
    found = {job: limits.never(job) for job in order}
    assert [found[job] for job in range(n)] == [fresh._never_found(job) for job in range(n)]
    assert len({refusal.reason for refusal in found.values() if refusal}) >= 6    # (most kinds were met)


def test_the_skip_knows_every_limit_the_checks_read(monkeypatch):
    """Every limit set (so high that none refuses, so that every check runs, strict ones too): the fields
    of Qos and Association that _over_limits reads are ALONE_LIMITS' (a new check must be named there)."""
    big = 10 ** 9
    every = {f.name: ({"cpu": big, "mem": big, "node": big, "gres/gpu": big} if f.type.startswith("dict")
                      else big) for f in dataclasses.fields(Qos) if f.name not in ("name", "priority", "usage_factor",
                                                                                   "flags", "line", "unmodelled")}
    every["min_tres_per_job"] = {"cpu": 1}
    assoc_fields = {f.name for f in dataclasses.fields(Association)}
    qos = {"normal": Qos("normal", **every)}
    assoc = [Association("c", "x", shares=1, **{k: v for k, v in every.items() if k in assoc_fields}),
             Association("c", "y", shares=1), Association("c", "x", "u1"), Association("c", "x", "u2"),
             Association("c", "y", "u3")]
    limits = limits_of(qos, assoc, 20, 0)
    read: set[str] = set()
    for cls in (Qos, Association):
        def recording(self, name, _get=object.__getattribute__):
            read.add(name)
            return _get(self, name)
        monkeypatch.setattr(cls, "__getattribute__", recording)
    refusals = [limits._over_limits(job) for job in range(20)]
    monkeypatch.undo()
    assert refusals == [None] * 20
    limit_fields = {f.name for cls in (Qos, Association) for f in dataclasses.fields(cls)} - {
        "name", "cluster", "account", "user", "partition", "parent", "shares", "flags", "line", "unmodelled"}
    assert read & limit_fields <= set(ALONE_LIMITS)
    assert {"max_wall", "grp_tres", "max_tres_mins_per_job", "grp_tres_mins"} <= read      # (the recording works)


def test_a_site_without_such_limits_skips_the_checks_and_one_with_them_does_not():
    users = [Association("c", "x", shares=1), Association("c", "y", shares=1), Association("c", "x", "u1"),
             Association("c", "x", "u2"), Association("c", "y", "u3")]
    plain = limits_of({"normal": Qos("normal", max_jobs_per_user=2)}, users, 40, 1)
    assert not any(plain._alone_limited(job) for job in range(40))
    walled = limits_of({"normal": Qos("normal", max_wall=60)}, users, 40, 1)
    assert all(walled._alone_limited(job) for job in range(40))
    within_partition = [job for job in range(40) if walled.partition[job] == "b" or
                        walled.time_limit[job] <= 3600 and walled.nodes[job] <= 3]     # (a's MaxTime and MaxNodes)
    assert {walled.never(job).reason if walled.time_limit[job] > 60 else None for job in within_partition} == {
        "QOSMaxWallDurationPerJobLimit", None}
