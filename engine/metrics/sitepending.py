"""What held each waiting job, in the words of the site's own scheduler (issue 24 §4).

Worked out from a schedule (recorded or simulated) and the site's files: between two events (a
submission, a start, an end) the state is fixed, and each waiting job is held by the first of
these that applies —

Slurm (the names squeue shows in its REASON column):

* ``PartitionTimeLimit``: the job's time limit is above its partition's MaxTime;
* ``QOSMaxWallDurationPerJobLimit``: above its QOS's MaxWall;
* ``QOSMaxJobsPerUserLimit``: its user already runs MaxJobsPU jobs of its QOS (these two only when
  AccountingStorageEnforce has limits, as in Slurm; a partition's QOS is not looked at here);
* ``Resources``: it is the first waiting job of its partition (by submission: the schedule knows
  no priorities) not held by a limit, and fewer CPUs are free than it asks for (Slurm shows
  ``Resources`` only for the job at the top of its partition);
* ``Priority``: any other (jobs before it in priority order, a backfill reservation, or the
  scheduler's next cycle).

PBS (the scheduler's job comments, engine.platform.pbsconf): ``Queue max_run limit reached`` or
``Server max_run limit reached`` (a ``max_run`` or ``max_run_res.ncpus`` of its queue or of the
server, per user, group, project or overall: the ``pbs`` policy's own rule, engine.platform.pbsrules,
each job in the execution queue its queue routes it to),
``Insufficient amount of resource: ncpus``, ``Waiting for its turn`` (room, and other jobs, strict
order or a top job's reservation came first: a schedule cannot tell which).

Each job's time is counted under one reason at a time; :func:`held_by_reason` sums jobs and hours
per reason. On the real Slurm's run of tests/data/slurm_replay, this estimate from the recorded
schedule is held against the reasons squeue showed every 20 s (tests/engine/platform/test_sitefiles.py).

A run of the ``slurm`` or ``pbs`` policy knows its jobs' reasons itself, recorded at each pass
(engine.policies.slurm, engine.policies.pbs: the run summary's ``slurm_pending`` / ``pbs_pending`` and
``slurm_refused`` / ``pbs_refused``); :func:`policy_pending` reads them, and this estimate is for the
run that does not: the recorded schedule.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd

from engine.platform.pbsconf import QUEUE_LIMIT, SERVER_LIMIT, PbsServer
from engine.platform.pbsconf import RESOURCES as PBS_RESOURCES
from engine.platform.pbsrules import Counter, counters, has_run_limits, route, run_limit_hold
from engine.platform.slurmconf import SlurmSite

PRIORITY, RESOURCES = "Priority", "Resources"
PARTITION_TIME, QOS_WALL, QOS_JOBS = "PartitionTimeLimit", "QOSMaxWallDurationPerJobLimit", "QOSMaxJobsPerUserLimit"
SLURM_REASONS = (PARTITION_TIME, QOS_WALL, QOS_JOBS, RESOURCES, PRIORITY)
PBS_TURN = "Waiting for its turn"
PBS_REASONS = (QUEUE_LIMIT, SERVER_LIMIT, PBS_RESOURCES, PBS_TURN)


def pending_reasons(schedule: pd.DataFrame, jobs: pd.DataFrame, site: SlurmSite | PbsServer, capacity: int,
                    user_names: dict[str, str] | None = None, group_names: dict[str, str] | None = None) -> pd.DataFrame:
    """Per job that waited (``job_id``): seconds held by each reason (one column per reason).

    ``schedule``: job_id, submit, start, end, procs; ``jobs``: the trace's jobs (job_id, user, and
    queue_name, qos, requested_time, and for PBS group and account, where the trace has them);
    ``user_names`` / ``group_names``: the workload's names of its user and group numbers."""
    names = user_names or {}
    info = jobs.set_index("job_id")
    frame = schedule[["job_id", "submit", "start", "end", "procs"]].copy()
    frame = frame[frame["start"] >= frame["submit"]].reset_index(drop=True)
    ids = frame["job_id"].to_numpy()

    def column(name: str, default: Any) -> list:
        if name not in info.columns:
            return [default] * len(ids)
        return info[name].reindex(ids).fillna(default).tolist()

    users = [names.get(str(u), str(u)) for u in column("user", "")]
    groups = [(group_names or {}).get(str(g), str(g)) for g in column("group", "")]
    entities = {"user": users, "group": groups, "account": [str(a) for a in column("account", "")]}
    queues = [str(q) for q in column("queue_name", "")]
    limits = [int(t) for t in column("requested_time", 0)]
    if isinstance(site, PbsServer):      # the execution queue each job ends in, as the pbs policy routes it
        queues = [route(site, q, t, int(n), u, g)
                  for q, t, n, u, g in zip(queues, limits, frame["procs"].to_numpy(), users, groups)]
    slurm = isinstance(site, SlurmSite)
    reasons = SLURM_REASONS if slurm else PBS_REASONS
    qos = [str(q) or "normal" for q in column("qos", "")]
    fixed = _fixed_reasons(site, queues, qos, limits) if isinstance(site, SlurmSite) else [""] * len(ids)
    group = qos if slurm else queues
    user_limit = _slurm_user_limits(site) if isinstance(site, SlurmSite) else {}
    server = site if isinstance(site, PbsServer) and has_run_limits(site) else None
    #: PBS: (jobs, CPUs) running per max_run counter (engine.platform.pbsrules)
    used: defaultdict[Counter, tuple[int, int]] = defaultdict(lambda: (0, 0))
    held = np.zeros((len(ids), len(reasons)), dtype=np.int64)
    submit, start, end = (frame[c].to_numpy(np.int64) for c in ("submit", "start", "end"))
    procs = frame["procs"].to_numpy(np.int64)
    times = np.unique(np.concatenate([submit, start, end]))
    by_submit, by_start, by_end = (np.argsort(a, kind="stable") for a in (submit, start, end))
    s_at = st_at = e_at = 0
    waiting: set[int] = set()
    running_users: defaultdict[tuple[str, str], int] = defaultdict(int)
    running: set[int] = set()
    busy = 0
    for k, t in enumerate(times[:-1]):
        while e_at < len(ids) and end[by_end[e_at]] <= t:
            j = by_end[e_at]
            e_at += 1
            if j in running:
                running.discard(j)
                busy -= procs[j]
                running_users[(users[j], group[j])] -= 1
                if server is not None:
                    _count(used, counters(queues[j], entities, j), -1, int(procs[j]))
        while st_at < len(ids) and start[by_start[st_at]] <= t:
            j = by_start[st_at]
            st_at += 1
            waiting.discard(j)
            if end[j] > t:
                running.add(j)
                busy += procs[j]
                running_users[(users[j], group[j])] += 1
                if server is not None:
                    _count(used, counters(queues[j], entities, j), 1, int(procs[j]))
        while s_at < len(ids) and submit[by_submit[s_at]] <= t:
            j = by_submit[s_at]
            s_at += 1
            if start[j] > t:
                waiting.add(j)
        span = times[k + 1] - t
        free = capacity - busy
        topped: set[str] = set()           # partitions whose top job is already counted under Resources
        for j in sorted(waiting, key=lambda j: (submit[j], j)) if slurm else waiting:
            if slurm:
                reason = fixed[j]
                if not reason:
                    limit = user_limit.get(group[j])
                    if limit is not None and running_users[(users[j], group[j])] >= limit:
                        reason = QOS_JOBS
                    elif procs[j] > free and queues[j] not in topped:
                        reason = RESOURCES
                        topped.add(queues[j])
                    else:
                        reason = PRIORITY
            else:
                limited = run_limit_hold(server, queues[j], entities, j, int(procs[j]), used)[1] \
                    if server is not None else ""
                reason = limited or (PBS_RESOURCES if procs[j] > free else PBS_TURN)
            held[j, reasons.index(reason)] += span
    result = pd.DataFrame(held, columns=list(reasons))
    result.insert(0, "job_id", ids)
    return result[(held.sum(axis=1) > 0)].reset_index(drop=True)


def _count(used: defaultdict[Counter, tuple[int, int]], keys: list[Counter], sign: int, size: int) -> None:
    for key in keys:
        jobs, cpus = used[key]
        used[key] = (jobs + sign, cpus + sign * size)


def held_by_reason(held: pd.DataFrame, schedule: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """Per reason: how many jobs it held at some time, and the hours it held them (job-hours) and
    their CPUs (CPU-hours, when ``schedule`` gives each job's procs)."""
    reasons = [c for c in held.columns if c != "job_id"]
    procs = None
    if schedule is not None:
        procs = schedule.set_index("job_id")["procs"].reindex(held["job_id"]).fillna(0).to_numpy()
    rows = []
    for reason in reasons:
        seconds = held[reason].to_numpy()
        rows.append({"reason": reason, "jobs": int((seconds > 0).sum()), "hours": float(seconds.sum()) / 3600,
                     "cpu_hours": float((seconds * procs).sum()) / 3600 if procs is not None else None})
    return rows


def _fixed_reasons(site: SlurmSite, partitions: list[str], qos: list[str], limits: list[int]) -> list[str]:
    """The reasons that hold a job its whole wait: its time limit above the partition's or QOS's."""
    default = site.conf.default_partition()
    result = []
    for partition, q, limit in zip(partitions, qos, limits):
        p = site.conf.partitions.get(partition) or default
        wall = site.qos[q].max_wall if q in site.qos and site.conf.enforce_limits else None
        result.append(PARTITION_TIME if p is not None and p.max_time is not None and limit > p.max_time else
                      QOS_WALL if wall is not None and limit > wall else "")
    return result


def _slurm_user_limits(site: SlurmSite) -> dict[str, int]:
    """Each QOS's MaxJobsPU, when AccountingStorageEnforce has limits (else Slurm checks none)."""
    return {name: q.max_jobs_per_user for name, q in site.qos.items()
            if q.max_jobs_per_user is not None and site.conf.enforce_limits}


REFUSED = "refused at submission"


def policy_pending(summary: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The rows of :func:`held_by_reason` from a run summary whose policy tracked its pending reasons
    (``slurm_pending`` or ``pbs_pending``: reason -> jobs, hours), then a row per reason jobs were
    refused at submission (``slurm_refused`` / ``pbs_refused``: reason -> jobs; no hours); None when
    the summary has none."""
    kind = next((k for k in ("slurm", "pbs") if summary.get(f"{k}_pending") is not None), None)
    if kind is None:
        return None
    rows = [{"reason": reason, "jobs": int(row["jobs"]), "hours": float(row["hours"]), "cpu_hours": None}
            for reason, row in summary[f"{kind}_pending"].items()]
    rows += [{"reason": f"{reason} ({REFUSED})", "jobs": int(count), "hours": None, "cpu_hours": None}
             for reason, count in (summary.get(f"{kind}_refused") or {}).items()]
    return rows
