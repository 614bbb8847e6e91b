"""A Slurm site's partition, QOS and association limits, with the pending reasons Slurm shows.

Three kinds of limit (slurm.conf(5), resource_limits.html, sacctmgr(1); the reason names are
slurmctld's ``job_reason`` strings as ``squeue -o %r`` prints them):

* a partition's State (slurm.conf(5)): DOWN queues jobs and starts none (``PartitionDown``; here
  refused at submission, as below, since the job never runs); DRAIN and INACTIVE refuse new jobs
  (sbatch's "Required partition not available (inactive or drain)");
* with AccountingStorageEnforce's ``associations`` (implied by limits and safe), a job whose user has no
  association row under its account is refused by sbatch ("Invalid account or account/partition
  combination specified"; a job naming no account: the user's default, any of its rows);
* a partition's limits and access lists (job_mgr.c _part_access_check): its nodes below MinNodes or
  above MaxNodes (``PartitionNodeLimit``), its time limit above MaxTime (``PartitionTimeLimit``), its
  account not in AllowAccounts or in DenyAccounts (AccountNotAllowed, which squeue shows as its
  description: "Job's account not permitted to use this partition (lab allows physics not
  chemistry)"), its QOS not in AllowQOS or in DenyQOS (QOSNotAllowed: "Job's QOS not permitted to use
  this partition (...)"): with EnforcePartLimits (ANY, ALL) sbatch refuses the job ("Node count
  specification invalid", "Requested time limit is invalid (missing or exceeds some limit)", "Invalid
  account or account/partition combination specified", "Invalid qos specification"); without, it
  pends for ever with the reason squeue shows;
* limits a job can never satisfy: its time above its
  QOS's or association's MaxWall (``QOSMaxWallDurationPerJobLimit``,
  ``AssocMaxWallDurationPerJobLimit``), its CPUs or nodes above a per-job MaxTRES
  (``QOSMaxCpuPerJobLimit``, ``QOSMaxNodePerJobLimit``), its TRES per node above a MaxTRESPerNode
  (``QOSMaxCpuPerNode``, ``AssocMaxMemPerNode``, ...), below the QOS's MinTRES
  (``QOSMinCpuNotSatisfied``, ``QOSMinMemory``, ...), or above a per-user, per-account or group
  total it could never fit in (MaxTRESPU, MaxTRESPA, GrpTRES). Slurm leaves such a job pending for ever with that
  reason (or, with EnforcePartLimits, refuses it at sbatch): here it is refused at submission, listed
  with the reason, since it never runs either way. When one of its QOS has the DenyOnLimit flag,
  sbatch refuses a job over a QOS or association limit (acct_policy_validate's strict checking): it
  is listed with sbatch's "Job violates accounting/QOS policy ..." and the reason; a time limit
  above GrpWall or TRES-minutes above GrpTRESMins are then refused too, as with safe below;
* limits checked at submission: GrpSubmit, MaxSubmitPA and MaxSubmitPU of the QOS
  (``QOSGrpSubmitJobsLimit``, ``MaxSubmitJobsPerAccount``, ``QOSMaxSubmitJobPerUserLimit``),
  GrpSubmit and MaxSubmit of the association (``AssocGrpSubmitJobsLimit``,
  ``AssocMaxSubmitJobLimit``): the QOS's, account's or user's pending and running jobs already at
  the limit, sbatch refuses the job;
* TRES-minutes (a job's are its TRES x its time limit in whole minutes): MaxTRESMins of the QOS
  or association above them (cpu, mem, node, gres/gpu) never lets the job run
  (``QOSMaxCpuMinutesPerJobLimit``, ``AssocMaxCpuMinutesPerJobLimit``, ``QOSMaxMemoryMinutesPerJob``,
  ...: refused, as above); GrpTRESRunMins holds it while the running jobs' TRES-minutes left plus
  its own exceed it (``QOSGrpCPURunMinutesLimit``, ``AssocGrpMemRunMinutes``, ...; slurmctld's
  grp_used_tres_run_secs: a job's whole TRES x time limit at its start, counted down by the decay
  thread every PriorityCalcPeriod, the rest removed at its end); GrpTRESMins and GrpWall of a QOS or
  association hold its jobs while its decayed usage of the TRES (usage_tres_raw), or its jobs'
  decayed wall-clock time (grp_used_wall), in whole minutes reach the limit (``QOSGrpCPUMinutesLimit``,
  ``AssocGrpNodeMinutes``, ``QOSGrpWallLimit``, ...; kept as the decay thread keeps them: a job's
  usage counts in its QOS, its partition's QOS and its association and those above); a TRES the job
  does not ask never holds it. A job's usage and its GrpTRESRunMins seconds count times its QOS's
  UsageFactor (its own TRES x time limit checked does not: that is UsageFactorSafe's, not followed);
  for a job of a QOS with UsageFactor 0 the usage and the running jobs' minutes read 0
  (:meth:`SiteLimits.uncharged`).
  With AccountingStorageEnforce's ``safe``, a job starts only if the usage
  plus the running jobs' minutes left plus its own TRES x time limit stay within GrpTRESMins (and
  the wall-clock usage plus its time limit within GrpWall); one above them alone is refused;
* limits that hold a job while others run: QOS GrpJobs, MaxJobsPA (``MaxJobsPerAccount``, as 22.05
  names it: the running jobs of the job's account in that QOS), MaxJobsPU, association GrpJobs and
  MaxJobs (jobs), then QOS GrpTRES, MaxTRESPA (``MaxCpuPerAccount``, ...: the running jobs of the
  job's account in the QOS), MaxTRESPU and association GrpTRES, in the order slurmctld's
  acct_policy checks them (before and after node selection), each where the hierarchy below puts
  it. The first that holds names the reason.

The hierarchy (resource_limits.html, slurmctld 22.05.8's acct_policy.c): a job's QOS are its
partition's (``QOS=`` on the PartitionName line) then its own, or its own first when it has the
OverPartQOS flag; a limit the first sets (a TRES of a list: TRES by TRES) is not checked on the second
(:func:`imposed`). Association limits apply along its chain: its own (account, user) row, then the
account's row and its parents' (GrpTRES/GrpJobs of an account count all the jobs below it); an
association limit a QOS of the job sets the same way is not checked (:data:`ASSOC_SHADOWED_BY`), and
the per-job and per-user ones are the own row's, filled in from its parents (:data:`ASSOC_OWN`,
:func:`applied`). Partition MaxTime/MaxNodes hold whatever the QOS say, unless the job's QOS has
PartitionTimeLimit/PartitionMaxNodes. Without AccountingStorageEnforce's ``limits`` no association
or QOS limit is checked. Association rows for another partition are not used. The TRES followed are cpu, mem (the job's
memory on all its nodes, as sacct's ReqTRES counts it, consumable or not), node and gres/gpu (its
GPUs on all its nodes); others in a limit (billing, typed gres, licenses) are listed by
``engine site`` as not modelled. An association's MaxTRES (per job) applies from its row and its
accounts' rows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any
from collections.abc import Callable

import numpy as np

from engine.platform.slurmconf import Association, Partition, Qos, SlurmSite, has_flag, shown_time
from engine.policies import slurmkernels as kernels
from engine.sim.jit import bind_direct

#: the reasons of a job's refusal at submission (Slurm: pending for ever, or refused by sbatch)
#: sbatch's refusal of a job for a DRAIN or INACTIVE partition (ESLURM_PARTITION_NOT_AVAIL)
PARTITION_NOT_AVAILABLE = "Required partition not available (inactive or drain)"
#: sbatch's refusal of a job whose user has no association with its account (ESLURM_INVALID_ACCOUNT)
INVALID_ACCOUNT = "Invalid account or account/partition combination specified"
#: sbatch's refusals of a job over a partition's limits or outside its access lists, with EnforcePartLimits
#: (ESLURM_INVALID_NODE_COUNT, ESLURM_INVALID_TIME_LIMIT, ESLURM_INVALID_QOS; the account: INVALID_ACCOUNT)
INVALID_NODE_COUNT = "Node count specification invalid"
INVALID_TIME_LIMIT = "Requested time limit is invalid (missing or exceeds some limit)"
INVALID_QOS = "Invalid qos specification"
#: sbatch's refusal of a job over a QOS or association limit when one of its QOS has the DenyOnLimit flag
#: (ESLURM_ACCOUNTING_POLICY; sbatch prints the pending reason slurmctld names before it)
ACCOUNTING_POLICY = "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
NEVER_REASONS = ("PartitionDown", PARTITION_NOT_AVAILABLE, INVALID_ACCOUNT, INVALID_NODE_COUNT, INVALID_TIME_LIMIT,
                 INVALID_QOS, "PartitionTimeLimit", "PartitionNodeLimit", "Job's account not permitted to use this "
                 "partition (...)", "Job's QOS not permitted to use this partition (...)",
                 "QOSMaxWallDurationPerJobLimit",
                 "AssocMaxWallDurationPerJobLimit", "QOSMaxCpuPerJobLimit", "QOSMaxNodePerJobLimit",
                 "QOSMaxCpuPerUserLimit", "QOSMaxNodePerUserLimit", "QOSGrpCpuLimit", "QOSGrpNodeLimit",
                 "AssocGrpCpuLimit", "AssocGrpNodeLimit")
SUBMIT_REASONS = ("QOSGrpSubmitJobsLimit", "MaxSubmitJobsPerAccount", "QOSMaxSubmitJobPerUserLimit",
                  "AssocGrpSubmitJobsLimit", "AssocMaxSubmitJobLimit")
HOLD_REASONS = ("QOSGrpJobsLimit", "MaxJobsPerAccount", "QOSMaxJobsPerUserLimit", "AssocGrpJobsLimit", "AssocMaxJobsLimit",
                "QOSGrpCpuLimit", "QOSGrpNodeLimit", "QOSMaxCpuPerUserLimit", "QOSMaxNodePerUserLimit",
                "AssocGrpCpuLimit", "AssocGrpNodeLimit")


@dataclass
class Usage:
    """A decayed usage a GrpTRESMins (of one TRES) or GrpWall limit is checked against: slurmctld's
    usage_tres_raw (TRES-seconds) or grp_used_wall (seconds of its jobs) of a QOS or association,
    decayed by the decay thread as the fair-share's usage is (:meth:`SiteLimits.accrue_usage`)."""

    kind: str                   # "qos_usage" or "assoc_usage" (MINS_REASONS)
    who: tuple[str, ...]        # (QOS name,) or (account, user)
    tres: str                   # a TRES of TRES_COUNTED, or "wall"
    limit: int                  # minutes
    members: np.ndarray         # per job: whether its usage counts in it
    raw: float = 0.0            # decayed seconds (of the TRES x its count; wall: of the jobs)
    minutes: int = 0            # whole minutes, as of the last update

    def title(self) -> str:
        return f"{'QOS' if self.kind == 'qos_usage' else 'association'} {_who(self.who)} " + (
            f"GrpWall {self.limit} min" if self.tres == "wall" else f"GrpTRESMins {self.tres}={self.limit}")


@dataclass(frozen=True)
class Refusal:
    """Why a job never runs: Slurm's reason and the limit as the site's files write it."""

    reason: str
    limit: str


def _tres(limits: dict[str, int], name: str) -> int | None:
    return limits.get(name)


#: the QOS and association limits a job alone can break, whatever runs (SiteLimits._over_limits reads
#: these and no others; tests/engine/policies/test_slurm_never.py checks it)
ALONE_LIMITS = ("max_wall", "max_tres_mins_per_job", "grp_tres_run_mins", "grp_tres_mins", "grp_wall",
                "max_tres_per_job", "max_tres_per_node", "min_tres_per_job", "max_tres_per_account",
                "max_tres_per_user", "grp_tres")
#: the TRES the limits follow, in slurmctld's TRES order (cpu, mem, node, then gres), each with its
#: place in the running counters ([jobs, cpu, node, mem MB, GPUs]) and the reason Slurm 22.05 shows
#: when a limit of each kind holds (``qos_grp``: QOS GrpTRES, ``qos_user``: MaxTRESPU, ``qos_job``:
#: MaxTRES, ``assoc_grp``: association GrpTRES, ``assoc_job``: association MaxTRES)
TRES_COUNTED = (("cpu", 1), ("mem", 3), ("node", 2), ("gres/gpu", 4))
#: a counted TRES's column in a job's counts
TRES_COLUMN = dict(TRES_COUNTED)
#: the running counters' columns of the running jobs' TRES-seconds left of their time limits (each
#: job's counts: its TRES x its time limit in whole minutes x 60), GrpTRESRunMins' (slurmctld's
#: grp_used_tres_run_secs), by TRES; cpu's always, the others' only where a limit needs them
RUN_COLUMN = {"cpu": 5, "mem": 6, "node": 7, "gres/gpu": 8}
#: the column of a job's time limit in seconds (whole minutes x 60): the safe GrpWall check's
LIMIT_SECONDS = 9
COUNTERS = 6            # the counters' columns without the wide ones (jobs, 4 TRES, cpu's run seconds)
WIDE_COUNTERS = 10      # with every TRES's run seconds and the time limit
#: a usage flag's value (held while set): above any count a job could add
FLAG = 1 << 50
#: the reasons of the group TRES-minutes limits by TRES (Slurm 22.05's job_reason strings):
#: ``qos_run``, ``assoc_run``: GrpTRESRunMins (the running jobs' TRES x time left, plus the job's
#: TRES x time limit); ``qos_usage``, ``assoc_usage``: GrpTRESMins (the decayed usage) and, as
#: ``wall``, GrpWall (the decayed wall-clock time of the jobs)
MINS_REASONS = {
    "qos_run": {"cpu": "QOSGrpCPURunMinutesLimit", "mem": "QOSGrpMemoryRunMinutes", "node": "QOSGrpNodeRunMinutes",
                "gres/gpu": "QOSGrpGRESRunMinutes"},
    "assoc_run": {"cpu": "AssocGrpCPURunMinutesLimit", "mem": "AssocGrpMemRunMinutes",
                  "node": "AssocGrpNodeRunMinutes", "gres/gpu": "AssocGrpGRESRunMinutes"},
    "qos_usage": {"cpu": "QOSGrpCPUMinutesLimit", "mem": "QOSGrpMemoryMinutes", "node": "QOSGrpNodeMinutes",
                  "gres/gpu": "QOSGrpGRESMinutes", "wall": "QOSGrpWallLimit"},
    "assoc_usage": {"cpu": "AssocGrpCPUMinutesLimit", "mem": "AssocGrpMemMinutes", "node": "AssocGrpNodeMinutes",
                    "gres/gpu": "AssocGrpGRESMinutes", "wall": "AssocGrpWallLimit"},
}
#: MaxTRESMins (per job: each TRES x time limit in minutes): the reasons by TRES (QOS, association)
JOB_MINS_REASONS = {
    "qos_job": {"cpu": "QOSMaxCpuMinutesPerJobLimit", "mem": "QOSMaxMemoryMinutesPerJob",
                "node": "QOSMaxNodeMinutesPerJob", "gres/gpu": "QOSMaxGRESMinutesPerJob"},
    "assoc_job": {"cpu": "AssocMaxCpuMinutesPerJobLimit", "mem": "AssocMaxMemMinutesPerJob",
                  "node": "AssocMaxNodeMinutesPerJob", "gres/gpu": "AssocMaxGRESMinutesPerJob"},
}
TRES_REASONS: dict[str, dict[str, str]] = {
    "qos_grp": {"cpu": "QOSGrpCpuLimit", "mem": "QOSGrpMemLimit", "node": "QOSGrpNodeLimit", "gres/gpu": "QOSGrpGRES"},
    "qos_user": {"cpu": "QOSMaxCpuPerUserLimit", "mem": "QOSMaxMemoryPerUser", "node": "QOSMaxNodePerUserLimit",
                 "gres/gpu": "QOSMaxGRESPerUser"},
    "qos_job": {"cpu": "QOSMaxCpuPerJobLimit", "mem": "QOSMaxMemoryPerJob", "node": "QOSMaxNodePerJobLimit",
                "gres/gpu": "QOSMaxGRESPerJob"},
    "assoc_grp": {"cpu": "AssocGrpCpuLimit", "mem": "AssocGrpMemLimit", "node": "AssocGrpNodeLimit",
                  "gres/gpu": "AssocGrpGRES"},
    "assoc_job": {"cpu": "AssocMaxCpuPerJobLimit", "mem": "AssocMaxMemPerJob", "node": "AssocMaxNodePerJobLimit",
                  "gres/gpu": "AssocMaxGRESPerJob"},
    # MaxTRESPA: the running jobs of the job's account in the QOS (held)
    "qos_account": {"cpu": "MaxCpuPerAccount", "mem": "MaxMemoryPerAccount", "node": "MaxNodePerAccount",
                    "gres/gpu": "MaxGRESPerAccount"},
    # MaxTRESPerNode (the job's TRES / its nodes) and MinTRES: per job (refused); no node per node
    "qos_node": {"cpu": "QOSMaxCpuPerNode", "mem": "QOSMaxMemoryPerNode", "gres/gpu": "QOSMaxGRESPerNode"},
    "qos_min": {"cpu": "QOSMinCpuNotSatisfied", "mem": "QOSMinMemory", "node": "QOSMinNode", "gres/gpu": "QOSMinGRES"},
    "assoc_node": {"cpu": "AssocMaxCpuPerNode", "mem": "AssocMaxMemPerNode", "gres/gpu": "AssocMaxGRESPerNode"},
}


#: every reason a hold check gives, by its code - 1 (SiteLimits.held_code)
HOLD_CODES = tuple(dict.fromkeys(HOLD_REASONS + tuple(reason for kind in ("qos_grp", "qos_account", "qos_user", "assoc_grp")
                                                      for reason in TRES_REASONS[kind].values())
                                 + tuple(reason for kind in MINS_REASONS.values() for reason in kind.values())))


#: the hold reasons acct_policy_job_runnable_pre_select names (acct_policy.c 22.05.8: _qos_job_runnable_pre_select
#: and the association loop after it: job counts and GrpWall); every other one is named by
#: acct_policy_job_runnable_post_select, which select_nodes (node_scheduler.c 2528) and the backfill
#: scheduler (backfill.c 2950) call only for a job they test against the nodes
BEFORE_SELECT = ("QOSGrpJobsLimit", "MaxJobsPerAccount", "QOSMaxJobsPerUserLimit", "AssocGrpJobsLimit",
                 "AssocMaxJobsLimit", "QOSGrpWallLimit", "AssocGrpWallLimit")
#: per hold code (SiteLimits.held_code; 0: none), whether post_select names it (the compiled walks' ``after_select``)
AFTER_SELECT = np.array([False] + [reason not in BEFORE_SELECT for reason in HOLD_CODES], dtype=np.bool_)


#: a QOS's limits of one value and its TRES lists: where a job has two QOS (its partition's and its
#: own), each limit (each TRES of a list) is the first one's where it sets it, else the second's
#: (acct_policy checks the second QOS's limit only where the first left it INFINITE)
QOS_SCALARS = ("grp_jobs", "grp_submit", "grp_wall", "max_jobs_per_account", "max_jobs_per_user",
               "max_submit_per_account", "max_submit_per_user", "max_wall")
QOS_TRES = ("grp_tres", "grp_tres_mins", "grp_tres_run_mins", "max_tres_mins_per_job", "max_tres_per_job",
            "max_tres_per_user", "max_tres_per_account", "max_tres_per_node", "min_tres_per_job")
#: an association's limits each QOS limit shadows (acct_policy.c 22.05: the association's is checked
#: only where no QOS of the job sets the QOS's; a TRES list TRES by TRES): association limit -> the
#: QOS limits that override it
ASSOC_SHADOWED_BY = {"grp_jobs": ("grp_jobs",), "grp_submit": ("grp_submit",), "grp_wall": ("grp_wall",),
                     "max_jobs": ("max_jobs_per_account", "max_jobs_per_user"),
                     "max_submit": ("max_submit_per_account", "max_submit_per_user"), "max_wall": ("max_wall",),
                     "grp_tres": ("grp_tres",), "grp_tres_mins": ("grp_tres_mins",),
                     "grp_tres_run_mins": ("grp_tres_run_mins",), "max_tres_per_job": ("max_tres_per_job",),
                     "max_tres_mins_per_job": ("max_tres_mins_per_job",), "max_tres_per_node": ("max_tres_per_node",)}
#: an association's per-job and per-user limits: slurmctld checks them on the job's own association
#: only, whose values the database fills in from its parents where it sets none ("pre-propagated":
#: sacctmgr shows them so unless WOPLimits; TRES lists merged TRES by TRES); the Grp* limits apply
#: at every level
ASSOC_OWN = ("max_jobs", "max_submit", "max_wall", "max_tres_per_job", "max_tres_mins_per_job", "max_tres_per_node")


def imposed(ordered: list[Qos]) -> list[Qos]:
    """The QOS in slurmctld's order, each as the limits it imposes: a limit (a TRES of a list) an
    earlier one sets is left out of the later ones."""
    found: list[Qos] = []
    scalars: set[str] = set()
    tres: dict[str, set[str]] = {key: set() for key in QOS_TRES}
    for q in ordered:
        changes: dict[str, Any] = {}
        for key in QOS_SCALARS:
            if getattr(q, key) is not None:
                if key in scalars:
                    changes[key] = None
                scalars.add(key)
        for key in QOS_TRES:
            limits: dict[str, int] = getattr(q, key)
            kept = {name: bound for name, bound in limits.items() if name not in tres[key]}
            if len(kept) != len(limits):
                changes[key] = kept
            tres[key].update(limits)
        found.append(replace(q, **changes) if changes else q)
    return found


def applied(rows: list[Association], qos: list[Qos]) -> list[Association]:
    """A job's association rows (its own first, then its accounts' up to root) as the limits
    slurmctld checks on each: the own row with its per-job limits filled in from its parents, the
    parents without them, every row without the limits a QOS of the job sets (:data:`ASSOC_SHADOWED_BY`)."""
    found = []
    for level, row in enumerate(rows):
        changes: dict[str, Any] = {}
        for key in ASSOC_OWN:
            value = getattr(row, key)
            if level:
                changes[key] = {} if isinstance(value, dict) else None
            elif isinstance(value, dict):
                merged = dict(value)
                for parent in rows[1:]:
                    for name, bound in getattr(parent, key).items():
                        merged.setdefault(name, bound)
                changes[key] = merged
            elif value is None:
                changes[key] = next((getattr(p, key) for p in rows[1:] if getattr(p, key) is not None), None)
        for key, by in ASSOC_SHADOWED_BY.items():
            value = changes.get(key, getattr(row, key))
            if isinstance(value, dict):
                value = {name: bound for name, bound in value.items()
                         if not any(name in getattr(q, limit) for q in qos for limit in by)}
            elif any(getattr(q, limit) is not None for q in qos for limit in by):
                value = None
            changes[key] = value
        found.append(replace(row, **changes))
    return found


class SiteLimits:
    """The limits of one run's jobs (per job: partition, QOS, account, user, CPUs, nodes, time limit),
    with the counts of running and submitted jobs they are checked against."""

    _count_kernel: Any     # slurmkernels.count and held_code (set in __init__ by bind_direct)
    _held_kernel: Any

    def __init__(self, site: SlurmSite, partition: list[str], qos: list[str], account: list[str], user: list[str],
                 cpus: list[int], nodes: list[int], time_limit: list[int], *, mem_mb: list[int] | None = None,
                 gpus: list[int] | None = None, clock: Callable[[], int] = lambda: 0) -> None:
        self.partition, self.qos, self.account, self.user = partition, qos, account, user
        self.clock = clock      # the simulated time now (a job's start, for GrpTRESRunMins)
        self.cpus, self.nodes, self.time_limit = cpus, nodes, time_limit
        #: each job's memory (MB, all its nodes) and GPUs (all its nodes), as its TRES counts
        self.mem_mb = mem_mb if mem_mb is not None else [0] * len(cpus)
        self.gpus = gpus if gpus is not None else [0] * len(cpus)
        self.partitions: dict[str, Partition] = site.conf.partitions
        self.qos_table: dict[str, Qos] = site.qos
        by_key: dict[tuple[str, str, str], Association] = {}
        for a in site.associations:
            by_key[(a.account, a.user, a.partition)] = a
        self.assoc = by_key
        self.parent = {a.account: (a.parent or "root") for a in site.associations if not a.user}
        self._chains: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
        self._qos_lists: dict[tuple[str, str], list[Qos]] = {}
        self._rows: dict[tuple[str, str, str, str], list[tuple[tuple[str, str], Association]]] = {}
        self._never: dict[tuple[Any, ...], Refusal | None] = {}     # never(), by what decides it
        self._alone: dict[tuple[str, str, str, str], bool] = {}     # _alone_limited(), by the rows' key
        #: AccountingStorageEnforce has limits: without, slurmctld checks no association or QOS limit
        self.enforce = site.conf.enforce_limits
        #: EnforcePartLimits set: sbatch refuses a job over its partition's limits or access lists
        self.enforce_part_limits = site.conf.enforce_part_limits != "NO"
        #: AccountingStorageEnforce has associations and the dump has rows: a job whose user has no
        #: row under its account (any of the user's rows where the job names no account) is refused
        self.check_assoc = "associations" in site.conf.enforce and bool(site.associations)
        self.user_accounts: defaultdict[str, set[str]] = defaultdict(set)
        for a in site.associations:
            if a.user:
                self.user_accounts[a.user].add(a.account)
        # submitted and not ended (pending + running)
        self.qos_submitted: defaultdict[str, int] = defaultdict(int)
        self.qos_user_submitted: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.qos_account_submitted: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.assoc_submitted: defaultdict[tuple[str, str], int] = defaultdict(int)
        #: AccountingStorageEnforce has safe: a job starts only if it can run to its time limit within
        #: GrpTRESMins and GrpWall (acct_policy.c's safe_limits)
        self.safe = self.enforce and "safe" in site.conf.enforce
        #: the decayed usages GrpTRESMins and GrpWall limits are checked against (:class:`Usage`)
        self.usage = self._usages(site) if self.enforce else {}
        #: each job's QOS UsageFactor where one is not 1 (None: all are), the share of its usage charged
        self.charge = usage_factors(site.qos, qos)
        #: the QOS with the DenyOnLimit flag (:meth:`deny_on_limit`, asked at every submission)
        self.denying = frozenset(name for name, q in site.qos.items() if has_flag(q, "DenyOnLimit"))
        limited: list[Any] = [*site.qos.values(), *site.associations]
        run_mins = any(tres in RUN_COLUMN for item in limited for tres in item.grp_tres_run_mins)
        self.any_hold = self.enforce and (any(self._qos_holds(q) for q in site.qos.values()) or any(
            a.max_jobs is not None or a.grp_jobs is not None or a.grp_tres for a in site.associations)
            or run_mins or bool(self.usage))
        #: GrpTRESRunMins set somewhere (or safe usage limits, which count the running jobs' time
        #: left too): the running jobs' time left is followed (:meth:`run_time_until`)
        self.run_minutes = self.enforce and (run_mins or self.safe and any(u.tres != "wall" for u in self.usage.values()))
        self.run_since: dict[int, int] = {}        # running job -> its start (with run_minutes)
        self.run_taken = np.zeros(len(cpus), dtype=np.int64)   # seconds of its time taken off its run counters so far
        # The running counts (jobs, CPUs, nodes, memory MB, GPUs, CPU-seconds left; with a limit on
        # another TRES's run minutes or a usage limit, each TRES's seconds left and the time limit too),
        # in arrays the compiled passes read (engine.policies.slurmkernels): a row of :attr:`running`
        # per counter, ("qos", name), ("qos_user", name, user), ("qos_account", name, account) or
        # ("assoc", account, user). Jobs of one signature (partition, QOS, account, user; with safe
        # usage limits, whether it asks memory and GPUs) share their counters and their checks.
        n = len(cpus)
        wide = self.enforce and (bool(self.usage) or any(tres in RUN_COLUMN and tres != "cpu" for item in limited
                                                         for tres in item.grp_tres_run_mins))
        self.run_columns = [(RUN_COLUMN[tres], index) for tres, index in TRES_COUNTED if wide or tres == "cpu"]
        self.job_counts = np.ones((n, WIDE_COUNTERS if wide else COUNTERS), dtype=np.int64)      # counts(job)
        for column, values in ((1, cpus), (2, nodes), (3, self.mem_mb), (4, self.gpus)):
            self.job_counts[:, column] = np.asarray(values, dtype=np.int64).reshape(-1)[:n] if n else 0
        limit_minutes = -(-np.asarray(time_limit, dtype=np.int64).reshape(-1)[:n] // 60)      # minutes(), per job
        for column, index in self.run_columns:
            self.job_counts[:, column] = self.job_counts[:, index] * limit_minutes * 60
        if wide:
            self.job_counts[:, LIMIT_SECONDS] = limit_minutes * 60
        self._slots: dict[tuple[str, ...], int] = {}
        keys: dict[tuple[Any, ...], int] = {}
        asks = ((self.job_counts[:, 3] > 0).tolist(), (self.job_counts[:, 4] > 0).tolist()) if self.safe and self.usage \
            else ([True] * n, [True] * n)
        self.signature = np.array([keys.setdefault(key, len(keys)) for key in zip(partition, qos, account, user, *asks)],
                                  dtype=np.int32)      # (small per-job arrays: a pass reads them in random order)
        first_job = np.unique(self.signature, return_index=True)[1].tolist() if n else []
        counters = [self._counters(job) for job in first_job]
        checks = [[(self._slot(key), index, bound, code) for key, index, bound, code in self._key_checks(job)]
                  for job in first_job]
        self.running = np.zeros((max(len(self._slots), 1), self.job_counts.shape[1]), dtype=np.int64)
        self.count_first, count_rows = _csr(counters)
        self.count_slot = np.array(count_rows, dtype=np.int64)
        self.check_first, check_rows = _csr(checks)
        columns = list(zip(*check_rows)) if check_rows else [(), (), (), ()]
        self.check_slot, self.check_index, self.check_bound, self.check_reason = (
            np.array(column, dtype=np.int64) for column in columns)
        self.qos_run = Counters(self, "qos")
        self.qos_user_run = Counters(self, "qos_user")
        self.qos_account_run = Counters(self, "qos_account")
        self.assoc_run = Counters(self, "assoc")
        # the compiled kernels, called directly (compiled or loaded at the first call)
        bind_direct(self, "_count_kernel", kernels.count)
        bind_direct(self, "_held_kernel", kernels.held_code)

    @staticmethod
    def _qos_holds(q: Qos) -> bool:
        return (q.max_jobs_per_user is not None or q.grp_jobs is not None or bool(q.grp_tres)
                or bool(q.max_tres_per_user) or q.max_jobs_per_account is not None or bool(q.max_tres_per_account))

    def _usages(self, site: SlurmSite) -> dict[tuple[str, ...], Usage]:
        """A :class:`Usage` per GrpTRESMins TRES (of TRES_COUNTED) and GrpWall of each QOS and
        association, keyed as its row of :attr:`running` (("usage", kind, who..., TRES)), with the jobs
        whose usage counts in it: a QOS's, its jobs' and its partitions' jobs' (slurmctld 22.05 adds a
        job's usage to its QOS and to its partition's QOS); an association's, the jobs of it and of the
        associations below it."""
        found: dict[tuple[str, ...], Usage] = {}
        n = len(self.cpus)
        own = np.array(self.qos, dtype=object)
        part = np.array([p.qos if (p := self.partitions.get(name)) is not None else "" for name in self.partition],
                        dtype=object)
        chains: list[list[tuple[str, str]]] | None = None
        items: list[tuple[str, tuple[str, ...], Any]] = [("qos_usage", (q.name,), q) for q in site.qos.values()]
        items += [("assoc_usage", (a.account, a.user), a) for a in site.associations]
        for kind, who, item in items:
            limits = {tres: bound for tres, bound in item.grp_tres_mins.items() if tres in RUN_COLUMN}
            if item.grp_wall is not None:
                limits["wall"] = item.grp_wall // 60        # (read in seconds; Slurm's are minutes)
            if not limits:
                continue
            if kind == "qos_usage":
                members = (own == who[0]) | (part == who[0]) if n else np.zeros(0, dtype=bool)
            else:
                if chains is None:
                    chains = [self.chain(job) for job in range(n)]
                members = np.array([who in chain for chain in chains], dtype=bool)
            for tres, bound in limits.items():
                found[("usage", kind, *who, tres)] = Usage(kind, who, tres, int(bound), members)
        return found

    def counts(self, job: int) -> tuple[int, int, int, int, int]:
        """The job's place in the running counters: (1 job, its CPUs, nodes, memory MB, GPUs)."""
        return 1, self.cpus[job], self.nodes[job], self.mem_mb[job], self.gpus[job]

    # ------------------------------------------------------------------ what applies to a job

    def qos_of(self, job: int) -> list[Qos]:
        """The job's QOS in the order slurmctld checks them (acct_policy_set_qos_order): its
        partition's QOS first, then its own, or its own first when that has the OverPartQOS flag;
        one QOS given twice counts once. Each as the limits it imposes (:func:`imposed`: a limit the
        first sets is the first's alone). None when AccountingStorageEnforce has no limits."""
        key = (self.partition[job], self.qos[job])
        found = self._qos_lists.get(key)
        if found is None:
            found = []
            if self.enforce:
                partition = self.partitions.get(key[0])
                part = self.qos_table.get(partition.qos) if partition is not None and partition.qos else None
                own = self.qos_table.get(key[1])
                order = (own, part) if own is not None and has_flag(own, "OverPartQOS") else (part, own)
                ordered: list[Qos] = []
                for q in order:
                    if q is not None and all(q.name != other.name for other in ordered):
                        ordered.append(q)
                found = imposed(ordered)
            self._qos_lists[key] = found
        return found

    def rows(self, job: int) -> list[tuple[tuple[str, str], Association]]:
        """The job's association rows as (account, user) and the limits slurmctld checks on each
        (:func:`applied`): its own row (the user's; the account's where the dump has none), then its
        accounts' up to root. None when AccountingStorageEnforce has no limits."""
        key = (self.account[job], self.user[job], self.partition[job], self.qos[job])
        found = self._rows.get(key)
        if found is None:
            found = []
            if self.enforce:
                pairs = [(k, row) for k in self.chain(job) if (row := self._row(k, job)) is not None]
                found = list(zip([k for k, _ in pairs], applied([row for _, row in pairs], self.qos_of(job))))
            self._rows[key] = found
        return found

    def chain(self, job: int) -> list[tuple[str, str]]:
        """The job's associations as (account, user) keys, the user's row first, then up to root;
        only those the dump has (:func:`association_chain`)."""
        key = (self.account[job], self.user[job], self.partition[job])
        found = self._chains.get(key)
        if found is None:
            found = self._chains[key] = association_chain(self.assoc, self.parent, *key)
        return found

    def _row(self, key: tuple[str, str], job: int) -> Association | None:
        account, user = key
        return self.assoc.get((account, user, self.partition[job])) or self.assoc.get((account, user, ""))

    # ------------------------------------------------------------------ the checks

    def never(self, job: int) -> Refusal | None:
        """The limit the job can never satisfy, or None: the same for every job of one partition, QOS,
        account, user, size and time limit (the site's files alone decide it), so found once for
        each (a month's 500,000 jobs have a few thousand)."""
        key = (self.partition[job], self.qos[job], self.account[job], self.user[job], self.time_limit[job],
               self.cpus[job], self.nodes[job], self.mem_mb[job], self.gpus[job])
        try:
            return self._never[key]
        except KeyError:
            found = self._never[key] = self._never_found(job)
            return found

    def _never_found(self, job: int) -> Refusal | None:
        if self.check_assoc and not self.has_association(job):
            return Refusal(INVALID_ACCOUNT, f"no association of user {self.user[job]} "
                           + (f"with account {self.account[job]}" if self.account[job] else "in the association dump"))
        partition = self.partitions.get(self.partition[job])
        if partition is not None:
            if partition.state in ("DRAIN", "INACTIVE"):
                return Refusal(PARTITION_NOT_AVAILABLE, f"partition {partition.name} State={partition.state}")
            refusal = self._partition_refusal(job, partition)
            if refusal is not None:
                return refusal
            if partition.state == "DOWN":
                return Refusal("PartitionDown", f"partition {partition.name} State=DOWN")
        refusal = self._over_limits(job)
        if refusal is not None and self.deny_on_limit(job):
            return Refusal(ACCOUNTING_POLICY, f"{refusal.reason}: {refusal.limit}")
        return refusal

    def _partition_refusal(self, job: int, partition: Partition) -> Refusal | None:
        """The partition's node and time limits, then its access lists, in job_mgr.c
        _part_access_check's order (MinNodes, MaxNodes, MaxTime; with EnforcePartLimits, AllowAccounts /
        DenyAccounts then AllowQOS / DenyQOS). With EnforcePartLimits sbatch refuses the job with its
        error; without, the job pends for ever: job_limits_check names PartitionNodeLimit or
        PartitionTimeLimit, and select_nodes QOSNotAllowed then AccountNotAllowed
        (partition_mgr.c part_policy_valid_qos / _acct). The job's own QOS's PartitionMinNodes,
        PartitionMaxNodes and PartitionTimeLimit flags let it past those limits."""
        own = self.qos_table.get(self.qos[job])
        enforced = self.enforce_part_limits
        limit, nodes, name = self.time_limit[job], self.nodes[job], partition.name

        def flagged(flag: str) -> bool:
            return own is not None and has_flag(own, flag)

        if nodes < partition.min_nodes and not flagged("PartitionMinNodes"):
            return Refusal(INVALID_NODE_COUNT if enforced else "PartitionNodeLimit",
                           f"partition {name} MinNodes {partition.min_nodes}")
        if partition.max_nodes is not None and nodes > partition.max_nodes and not flagged("PartitionMaxNodes"):
            return Refusal(INVALID_NODE_COUNT if enforced else "PartitionNodeLimit",
                           f"partition {name} MaxNodes {partition.max_nodes}")
        if partition.max_time is not None and limit > partition.max_time and not flagged("PartitionTimeLimit"):
            return Refusal(INVALID_TIME_LIMIT if enforced else "PartitionTimeLimit",
                           f"partition {name} MaxTime {shown_time(partition.max_time)}")
        account = self._access_refusal(self.account[job], partition.allow_accounts, partition.deny_accounts,
                                       name, "Accounts", "account", INVALID_ACCOUNT)
        qos = self._access_refusal(self.qos[job], partition.allow_qos, partition.deny_qos, name, "QOS", "QOS",
                                   INVALID_QOS)
        if enforced:
            return account or qos
        return qos or account

    def _access_refusal(self, value: str, allow: list[str], deny: list[str], partition: str, key: str, noun: str,
                        refused: str) -> Refusal | None:
        """The job's account or QOS against the partition's Allow list, else (only without one, as
        part_policy_valid_acct / _qos read them) its Deny list. With EnforcePartLimits, sbatch's error;
        without, the job pends for ever with the reason squeue shows: its state_desc, as
        part_policy_valid_acct / _qos write it ("Job's account not permitted to use this partition (lab
        allows physics not chemistry)"; checked on a real Slurm: tests/data/slurm_partition_access)."""
        if allow != ["ALL"]:
            if value and value in allow:
                return None
            lists = f"{','.join(allow)}"
            shown = (f"Job's {noun} not permitted to use this partition ({partition} allows {lists} not {value})" if value
                     else f"Job's {noun} not known, so it can't use this partition ({partition} allows {lists})")
            setting = f"Allow{key} {lists}"
        elif value and value in deny:
            lists = f"{','.join(deny)}"
            shown = f"Job's {noun} not permitted to use this partition ({partition} denies {lists} including {value})"
            setting = f"Deny{key} {lists}"
        else:
            return None
        return Refusal(refused if self.enforce_part_limits else shown, f"partition {partition} {setting}")

    def deny_on_limit(self, job: int) -> bool:
        """Whether one of the job's QOS has the DenyOnLimit flag: acct_policy_validate then checks
        its QOS and association limits strictly (strict_checking), and a job over one is refused
        by sbatch (:data:`ACCOUNTING_POLICY`) rather than left pending for ever."""
        return bool(self.denying) and any(q.name in self.denying for q in self.qos_of(job))

    def _over_limits(self, job: int) -> Refusal | None:
        """The QOS or association limit the job alone breaks, or None (:meth:`never`)."""
        if not self._alone_limited(job):
            return None
        limit = self.time_limit[job]
        for q in self.qos_of(job):
            if q.max_wall is not None and limit > q.max_wall:
                return Refusal("QOSMaxWallDurationPerJobLimit", f"QOS {q.name} MaxWall {shown_time(q.max_wall)}")
        for key, row in self.rows(job):
            if row.max_wall is not None and limit > row.max_wall:
                return Refusal("AssocMaxWallDurationPerJobLimit",
                               f"association {_who(key)} MaxWall {shown_time(row.max_wall)}")
        counts, time_minutes = self.counts(job), minutes(limit)
        strict = self.safe or self.deny_on_limit(job)
        for q in self.qos_of(job):
            refusal = self._alone_over(counts, time_minutes, strict, q, "qos", f"QOS {q.name}", (
                ("qos_job", "MaxTRES", q.max_tres_per_job), ("qos_node", "MaxTRESPerNode", q.max_tres_per_node),
                ("qos_min", "MinTRES", q.min_tres_per_job), ("qos_account", "MaxTRESPA", q.max_tres_per_account),
                ("qos_user", "MaxTRESPU", q.max_tres_per_user), ("qos_grp", "GrpTRES", q.grp_tres)))
            if refusal is not None:
                return refusal
        for key, row in self.rows(job):
            refusal = self._alone_over(counts, time_minutes, strict, row, "assoc", f"association {_who(key)}", (
                ("assoc_job", "MaxTRES", row.max_tres_per_job), ("assoc_node", "MaxTRESPerNode", row.max_tres_per_node),
                ("assoc_grp", "GrpTRES", row.grp_tres)))
            if refusal is not None:
                return refusal
        return None

    def _alone_limited(self, job: int) -> bool:
        """Whether one of the job's QOS or association rows sets a limit :meth:`_over_limits` reads
        (:data:`ALONE_LIMITS`): most sites set none, and their jobs then skip its loops."""
        key = (self.partition[job], self.qos[job], self.account[job], self.user[job])
        found = self._alone.get(key)
        if found is None:
            items: list[Any] = [*self.qos_of(job), *(row for _, row in self.rows(job))]
            found = self._alone[key] = any(getattr(item, name, None) not in (None, {}) for item in items
                                           for name in ALONE_LIMITS)
        return found

    def has_association(self, job: int) -> bool:
        """Whether the job's user has an association row with its account (for its partition or
        for all), or any row where the job names no account (Slurm takes the user's default)."""
        user, account, partition = self.user[job], self.account[job], self.partition[job]
        if not account:
            return bool(self.user_accounts.get(user))
        return (account, user, partition) in self.assoc or (account, user, "") in self.assoc

    def _alone_over(self, counts: tuple[int, ...], time_minutes: int, strict: bool, item: Qos | Association,
                    kind: str, who: str,
                    lists: tuple[tuple[str, str, dict[str, int]], ...]) -> Refusal | None:
        """The first limit of one QOS or association row the job alone breaks: MaxTRESMins, the group
        TRES-minutes (:meth:`_over_group_minutes`), then each TRES list of ``lists`` (kind, title,
        limits: :func:`_over_tres`)."""
        refusal = self._over_minutes(counts, time_minutes, item.max_tres_mins_per_job, f"{kind}_job", who) or \
            self._over_group_minutes(counts, time_minutes, strict, item.grp_tres_run_mins, item.grp_tres_mins, item.grp_wall,
                                     kind, who)
        for tres_kind, title, limits in lists:
            refusal = refusal or _over_tres(counts, limits, tres_kind, f"{who} {title}")
        return refusal

    def _over_group_minutes(self, counts: tuple[int, ...], time_minutes: int, strict: bool, run_limits: dict[str, int],
                            usage_limits: dict[str, int], wall: int | None, kind: str, who: str) -> Refusal | None:
        """A group limit the job's own TRES x time limit (minutes) exceed: GrpTRESRunMins; ``strict``
        also GrpWall (its time limit) and GrpTRESMins: with safe it would wait for ever (acct_policy's
        TRES_USAGE_REQ_EXCEEDS_LIMIT), with DenyOnLimit acct_policy_validate refuses it whatever the
        usage (_qos_policy_validate's strict checking, _validate_tres_time_limits)."""
        if strict and wall is not None and time_minutes > wall // 60:
            return Refusal(MINS_REASONS[f"{kind}_usage"]["wall"], f"{who} GrpWall {shown_time(wall)}")
        for tres, index in TRES_COUNTED:
            bound = usage_limits.get(tres)
            if strict and bound is not None and counts[index] * time_minutes > bound:
                return Refusal(MINS_REASONS[f"{kind}_usage"][tres], f"{who} GrpTRESMins {tres}={bound}")
        for tres, index in TRES_COUNTED:
            bound = run_limits.get(tres)
            if bound is not None and counts[index] * time_minutes > bound:
                return Refusal(MINS_REASONS[f"{kind}_run"][tres], f"{who} GrpTRESRunMins {tres}={bound}")
        return None

    @staticmethod
    def _over_minutes(counts: tuple[int, ...], time_minutes: int, limits: dict[str, int], kind: str,
                      who: str) -> Refusal | None:
        """A MaxTRESMins the job's TRES x its time limit (whole minutes) exceed, in TRES order."""
        for tres, index in TRES_COUNTED:
            bound = limits.get(tres)
            if bound is not None and counts[index] * time_minutes > bound:
                return Refusal(JOB_MINS_REASONS[kind][tres], f"{who} MaxTRESMins {tres}={bound}")
        return None

    def at_submit(self, job: int) -> Refusal | None:
        """GrpSubmit / MaxSubmitPA / MaxSubmitPU of each QOS, then GrpSubmit / MaxSubmit of each
        association up the chain: the group's, account's or user's pending and running jobs already
        at the limit, in the order acct_policy_validate checks them (each where the hierarchy first sets it:
        :meth:`qos_of`, :meth:`rows`)."""
        user, account = self.user[job], self.account[job]
        for q in self.qos_of(job):
            if q.grp_submit is not None and self.qos_submitted[q.name] >= q.grp_submit:
                return Refusal("QOSGrpSubmitJobsLimit", f"QOS {q.name} GrpSubmit {q.grp_submit}")
            if q.max_submit_per_account is not None and \
                    self.qos_account_submitted[(q.name, account)] >= q.max_submit_per_account:
                return Refusal("MaxSubmitJobsPerAccount", f"QOS {q.name} MaxSubmitPA {q.max_submit_per_account}")
            if q.max_submit_per_user is not None and self.qos_user_submitted[(q.name, user)] >= q.max_submit_per_user:
                return Refusal("QOSMaxSubmitJobPerUserLimit", f"QOS {q.name} MaxSubmitPU {q.max_submit_per_user}")
        for key, row in self.rows(job):
            if row.grp_submit is not None and \
                    self.assoc_submitted[key] >= row.grp_submit:
                return Refusal("AssocGrpSubmitJobsLimit", f"association {_who(key)} GrpSubmit {row.grp_submit}")
            if row.max_submit is not None and \
                    self.assoc_submitted[key] >= row.max_submit:
                return Refusal("AssocMaxSubmitJobLimit", f"association {_who(key)} MaxSubmit {row.max_submit}")
        return None

    def held(self, job: int) -> str:
        """The limit that holds the job now (Slurm's reason), else "": the first of its signature's
        checks (:meth:`_key_checks`) whose counter is above its threshold."""
        code = self.held_code(job)
        return HOLD_CODES[code - 1] if code else ""

    def held_code(self, job: int) -> int:
        """:meth:`held` as 1 + the index of the reason in HOLD_CODES, 0 = not held (the compiled
        passes' own check, engine.policies.slurmkernels.held_code, called directly)."""
        return int(self._held_kernel(job, self.running, self.signature, self.check_first, self.check_slot,
                                     self.check_index, self.check_bound, self.check_reason, self.job_counts))

    def _slot(self, key: tuple[str, ...]) -> int:
        """The row of ``key``'s counter in :attr:`running` (rows are made with the signatures)."""
        return self._slots.setdefault(key, len(self._slots))

    def _counters(self, job: int) -> list[int]:
        """The counters a start or end of the job changes, in their order."""
        user, account = self.user[job], self.account[job]
        slots: list[int] = []
        for q in self.qos_of(job):
            slots.append(self._slot(("qos", q.name)))
            slots.append(self._slot(("qos_user", q.name, user)))
            slots.append(self._slot(("qos_account", q.name, account)))
            slots += [self._slot(("safe", *key[1:])) for key in self._usage_keys("qos_usage", (q.name,)) if self.safe]
        for key in self.chain(job):
            slots.append(self._slot(("assoc", *key)))
            slots += [self._slot(("safe", *k[1:])) for k in self._usage_keys("assoc_usage", key) if self.safe]
        return slots

    def _usage_keys(self, kind: str, who: tuple[str, ...]) -> list[tuple[str, ...]]:
        """The keys of the TRES usages (not the wall's) of a QOS or association (safe rows count its
        jobs' run seconds: the check's R)."""
        return [key for key, usage in self.usage.items() if usage.kind == kind and usage.who == who
                and usage.tres != "wall"]

    def _usage_check(self, job: int, kind: str, who: tuple[str, ...], limits: dict[str, int],
                     wall: int | None) -> list[tuple[tuple[str, ...], int, int, int]]:
        """The GrpTRESMins checks (TRES by TRES) or, with ``wall`` alone, the GrpWall check of a QOS or
        association on the job: without safe, its usage flag (:data:`FLAG`, set while the whole
        minutes reach the limit; a TRES the job does not ask never holds it); with safe, the usage
        plus the running jobs' minutes left plus the job's own above the limit (TRES: in the safe
        row, R + 60 U > 60 L + 59 - the job's TRES-seconds; wall: 60 W > 60 G - its time limit)."""
        checks: list[tuple[tuple[str, ...], int, int, int]] = []
        items = [("wall", wall)] if wall is not None else [(tres, limits.get(tres)) for tres, _ in TRES_COUNTED]
        for tres, given in items:       # (set where the hierarchy has this row impose it; its minutes: the usage's)
            key = ("usage", kind, *who, tres)
            if given is None or key not in self.usage:
                continue
            bound = self.usage[key].limit
            if tres != "wall" and bound > 0 and self.uncharged(job):
                continue
            code = _hold(MINS_REASONS[kind][tres])
            if tres == "wall":
                checks.append((key, LIMIT_SECONDS, 60 * bound, code) if self.safe else (key, 0, FLAG, code))
            elif not self.safe:
                checks.append((key, TRES_COLUMN[tres], FLAG, code))
            elif self.job_counts[job, TRES_COLUMN[tres]] > 0:       # Slurm skips a TRES the job does not ask
                checks.append((("safe", *key[1:]), RUN_COLUMN[tres], run_bound(bound), code))
        return checks

    def _key_checks(self, job: int) -> list[tuple[tuple[str, ...], int, int, int]]:
        """The job's hold checks (the same for its signature) in :meth:`held_by_rules`' order, each (running counter, index in
        it, threshold, reason): the job is held when ``counter[index] > threshold`` (a count at its
        limit: ``jobs >= bound``; a TRES: ``used + asked > bound``). The counters are the ones
        :meth:`_count` updates, so the checks stay valid as jobs start and end."""
        user = self.user[job]
        qos = self.qos_of(job)
        checks: list[tuple[tuple[str, ...], int, int, int]] = []
        for q in qos:
            if q.grp_jobs is not None:
                checks.append((("qos", q.name), 0, q.grp_jobs, _hold("QOSGrpJobsLimit")))
            checks += self._usage_check(job, "qos_usage", (q.name,), {}, q.grp_wall)
            if q.max_jobs_per_account is not None:
                checks.append((("qos_account", q.name, self.account[job]), 0, q.max_jobs_per_account,
                               _hold("MaxJobsPerAccount")))
            if q.max_jobs_per_user is not None:
                checks.append((("qos_user", q.name, user), 0, q.max_jobs_per_user, _hold("QOSMaxJobsPerUserLimit")))
        for key, row in self.rows(job):
            if row.grp_jobs is not None:
                checks.append((("assoc", *key), 0, row.grp_jobs, _hold("AssocGrpJobsLimit")))
            checks += self._usage_check(job, "assoc_usage", key, {}, row.grp_wall)
            if row.max_jobs is not None:
                checks.append((("assoc", *key), 0, row.max_jobs, _hold("AssocMaxJobsLimit")))
        for q in qos:
            checks += self._usage_check(job, "qos_usage", (q.name,), q.grp_tres_mins, None)
            for tres, index in TRES_COUNTED:
                bound = _tres(q.grp_tres, tres)
                if bound is not None:
                    checks.append((("qos", q.name), index, bound, _hold(TRES_REASONS["qos_grp"][tres])))
            checks += self._run_checks(job, ("qos", q.name), q.grp_tres_run_mins, "qos_run")
            for kind, who, limits in (("qos_account", ("qos_account", q.name, self.account[job]), q.max_tres_per_account),
                                      ("qos_user", ("qos_user", q.name, user), q.max_tres_per_user)):
                for tres, index in TRES_COUNTED:
                    bound = _tres(limits, tres)
                    if bound is not None:
                        checks.append((who, index, bound, _hold(TRES_REASONS[kind][tres])))
        for key, row in self.rows(job):
            checks += self._usage_check(job, "assoc_usage", key, row.grp_tres_mins, None)   # before GrpTRES
            for tres, index in TRES_COUNTED:
                bound = _tres(row.grp_tres, tres)
                if bound is not None:
                    checks.append((("assoc", *key), index, bound, _hold(TRES_REASONS["assoc_grp"][tres])))
            checks += self._run_checks(job, ("assoc", *key), row.grp_tres_run_mins, "assoc_run")
        return checks

    def uncharged(self, job: int) -> bool:
        """Whether the job's QOS has UsageFactor 0: slurmctld then reads the usage and the running
        jobs' minutes of every GrpTRESMins and GrpTRESRunMins as 0 for it (acct_policy.c 22.05.8,
        _qos_job_runnable_post_select and acct_policy_job_runnable_post_select: "Clear usage if
        factor is 0 so that jobs can run"), so only a limit of 0 or its own minutes above a limit
        (refused: :meth:`never`) would hold it; its GrpWall still does."""
        return self.charge is not None and self.charge[job] == 0.0

    def _run_checks(self, job: int, counter: tuple[str, ...], limits: dict[str, int],
                    kind: str) -> list[tuple[tuple[str, ...], int, int, int]]:
        """GrpTRESRunMins TRES by TRES on ``counter``'s run seconds (:func:`run_bound`); none for a
        job of a QOS with UsageFactor 0 (:meth:`uncharged`)."""
        if self.uncharged(job):
            return []
        return [(counter, RUN_COLUMN[tres], run_bound(limits[tres]), _hold(MINS_REASONS[kind][tres]))
                for tres, _ in TRES_COUNTED if tres in limits]

    def held_by_rules(self, job: int) -> str:
        """:meth:`held` as the rules read, one limit after the other (the reference its checks
        are tested against)."""
        if not self.any_hold:
            return ""
        user = self.user[job]
        qos = self.qos_of(job)
        for q in qos:      # before node selection: job counts
            if q.grp_jobs is not None and self.qos_run[q.name][0] >= q.grp_jobs:
                return "QOSGrpJobsLimit"
            if self._over_usage(job, "qos_usage", (q.name,), "wall", q.grp_wall):
                return MINS_REASONS["qos_usage"]["wall"]
            if q.max_jobs_per_account is not None and \
                    self.qos_account_run[(q.name, self.account[job])][0] >= q.max_jobs_per_account:
                return "MaxJobsPerAccount"
            if q.max_jobs_per_user is not None and self.qos_user_run[(q.name, user)][0] >= q.max_jobs_per_user:
                return "QOSMaxJobsPerUserLimit"
        for key, row in self.rows(job):
            if row.grp_jobs is not None and self.assoc_run[key][0] >= row.grp_jobs:
                return "AssocGrpJobsLimit"
            if self._over_usage(job, "assoc_usage", key, "wall", row.grp_wall):
                return MINS_REASONS["assoc_usage"]["wall"]
            if row.max_jobs is not None and self.assoc_run[key][0] >= row.max_jobs:
                return "AssocMaxJobsLimit"
        counts = self.counts(job)
        for q in qos:      # after node selection: TRES
            used = self.qos_run[q.name]
            for tres, _ in TRES_COUNTED:
                if self._over_usage(job, "qos_usage", (q.name,), tres, q.grp_tres_mins.get(tres)):
                    return MINS_REASONS["qos_usage"][tres]
            for tres, index in TRES_COUNTED:
                bound = _tres(q.grp_tres, tres)
                if bound is not None and used[index] + counts[index] > bound:
                    return TRES_REASONS["qos_grp"][tres]
            reason = self._over_run(job, used, q.grp_tres_run_mins, "qos_run")
            if reason:
                return reason
            for kind, mine, limits in (("qos_account", self.qos_account_run[(q.name, self.account[job])],
                                        q.max_tres_per_account),
                                       ("qos_user", self.qos_user_run[(q.name, user)], q.max_tres_per_user)):
                for tres, index in TRES_COUNTED:
                    bound = _tres(limits, tres)
                    if bound is not None and mine[index] + counts[index] > bound:
                        return TRES_REASONS[kind][tres]
        for key, row in self.rows(job):
            for tres, _ in TRES_COUNTED:
                if self._over_usage(job, "assoc_usage", key, tres, row.grp_tres_mins.get(tres)):
                    return MINS_REASONS["assoc_usage"][tres]
            used = self.assoc_run[key]
            for tres, index in TRES_COUNTED:
                bound = _tres(row.grp_tres, tres)
                if bound is not None and used[index] + counts[index] > bound:
                    return TRES_REASONS["assoc_grp"][tres]
            reason = self._over_run(job, used, row.grp_tres_run_mins, "assoc_run")
            if reason:
                return reason
        return ""

    def _over_run(self, job: int, used: np.ndarray, limits: dict[str, int], kind: str) -> str:
        """GrpTRESRunMins as Slurm reads it: the running jobs' whole minutes left of a TRES plus the
        job's TRES x its time limit (minutes) above the limit; the reason, else ""."""
        if self.uncharged(job):
            return ""
        counts = self.counts(job)
        for tres, index in TRES_COUNTED:
            bound = limits.get(tres)
            if bound is not None and int(used[RUN_COLUMN[tres]]) // 60 + counts[index] * minutes(self.time_limit[job]) > bound:
                return MINS_REASONS[kind][tres]
        return ""

    def _over_usage(self, job: int, kind: str, who: tuple[str, ...], tres: str, bound: int | None) -> bool:
        """GrpTRESMins (a TRES) or GrpWall (``wall``) as acct_policy reads it: the job asks the TRES
        and the usage's whole minutes reach the limit; with safe, they plus the running jobs' whole
        minutes left (TRES: ``grp_used_tres_run_secs``) plus the job's own (its TRES, or 1, x its
        time limit in minutes) exceed it."""
        usage = self.usage.get(("usage", kind, *who, tres))
        if bound is None or usage is None:
            return False
        bound = usage.limit         # (minutes; a GrpWall is read in seconds)
        time_minutes = minutes(self.time_limit[job])
        if tres == "wall":
            return usage.minutes + time_minutes > bound if self.safe else usage.minutes >= bound
        asked = self.counts(job)[TRES_COLUMN[tres]]
        if not asked or bound > 0 and self.uncharged(job):
            return False
        if not self.safe:
            return usage.minutes >= bound
        run = (self.qos_run[who[0]] if kind == "qos_usage" else self.assoc_run[who])[RUN_COLUMN[tres]]
        return usage.minutes + int(run) // 60 + asked * time_minutes > bound

    # ------------------------------------------------------------------ the counts

    def submitted(self, job: int) -> None:
        for q in self.qos_of(job):
            self.qos_submitted[q.name] += 1
            self.qos_user_submitted[(q.name, self.user[job])] += 1
            self.qos_account_submitted[(q.name, self.account[job])] += 1
        for key in self.chain(job):
            self.assoc_submitted[key] += 1

    def started(self, job: int) -> None:
        self._count(job, 1)
        if self.run_minutes:
            self.run_since[job] = self.clock()
            full = minutes(self.time_limit[job]) * 60
            if self._charged(job, full) != full:     # its run seconds: its time limit x UsageFactor
                self._add_run_seconds(job, self._charged(job, full) - full)

    def ended(self, job: int) -> None:
        self._count(job, -1)
        if self.run_minutes and self.run_since.pop(job, None) is not None:
            # its counts left with it in full; what slurmctld leaves counted comes back: what the
            # decay ticks took off them, or with a UsageFactor its full time less the rest charged
            # (_apply_new_usage at its end takes (limit's end - last tick) x UsageFactor, truncated)
            full, taken = minutes(self.time_limit[job]) * 60, int(self.run_taken[job])
            back = full - self._charged(job, full - taken)
            if back:
                self._add_run_seconds(job, back)
            self.run_taken[job] = 0
        for q in self.qos_of(job):
            self.qos_submitted[q.name] -= 1
            self.qos_user_submitted[(q.name, self.user[job])] -= 1
            self.qos_account_submitted[(q.name, self.account[job])] -= 1
        for key in self.chain(job):
            self.assoc_submitted[key] -= 1

    def run_time_until(self, tick: int) -> None:
        """slurmctld's decay thread at ``tick`` (every PriorityCalcPeriod): each running job's
        TRES-seconds of its time limit used by then (up to its limit's end; times its QOS's
        UsageFactor: :meth:`_charged`) come off its run counters (grp_used_tres_run_secs;
        GrpTRESRunMins reads them in whole minutes)."""
        if not self.run_since:
            return
        for job, start in self.run_since.items():
            used = max(0, min(tick, start + minutes(self.time_limit[job]) * 60) - start)
            delta = used - int(self.run_taken[job])
            if delta > 0:
                self._add_run_seconds(job, -self._charged(job, delta))
                self.run_taken[job] = used

    def _charged(self, job: int, seconds: int) -> int:
        """Seconds of the job's time as slurmctld counts them in grp_used_tres_run_secs: times its
        QOS's UsageFactor, truncated (acct_policy.c _adjust_limit_usage at its start,
        priority_multifactor.c _apply_new_usage's tres_time_delta at each tick and at its end)."""
        if self.charge is None or self.charge[job] == 1.0:
            return seconds
        return int(seconds * float(self.charge[job]))

    def accrue_usage(self, jobs: np.ndarray, seconds: np.ndarray, ended: np.ndarray, factor: float,
                     elapsed: int, *, reset: bool = False) -> bool:
        """The decay thread's new usage, as the fair-share's (engine.policies.slurm accrue): each
        listed job ran ``seconds`` since it was last accounted, adding seconds x factor^seconds (x
        its count of the TRES; wall: x 1) to each usage it counts in; those that ended add theirs
        before the usage decays by factor^elapsed (or, at a PriorityUsageResetPeriod's reset, is
        zeroed), the running ones after. Then :meth:`usage_updated`."""
        decayed = seconds * factor ** seconds
        if self.charge is not None:       # grp_used_wall and usage_tres_raw take the job QOS's UsageFactor
            decayed = decayed * self.charge[jobs]
        for usage in self.usage.values():
            member = usage.members[jobs] & (seconds > 0)
            weighted = decayed if usage.tres == "wall" else decayed * self.job_counts[jobs, TRES_COLUMN[usage.tres]]
            usage.raw = 0.0 if reset else (usage.raw + float(weighted[member & ended].sum())) * factor ** elapsed
            usage.raw += float(weighted[member & ~ended].sum())
        return self.usage_updated()

    def usage_updated(self) -> bool:
        """Each usage's whole minutes into the counters its checks read (:meth:`_usage_check`):
        without safe its flag, set while they reach the limit (acct_policy: ``usage_mins >= limit``);
        with safe 60 x them, added to the safe row's run seconds (TRES) or as the wall's count.
        Whether a job may be held by one (a pass is then due at the next update)."""
        held = False
        for key, usage in self.usage.items():
            now = int(usage.raw / 60.0)
            before, usage.minutes = usage.minutes, now
            held = held or (now > 0 if self.safe else now >= usage.limit)
            slot = self._slots.get(("safe", *key[1:]) if self.safe and usage.tres != "wall" else key)
            if slot is None:
                continue
            if usage.tres == "wall":
                if self.safe:
                    self.running[slot, LIMIT_SECONDS] = 60 * now
                else:
                    self.running[slot, 0] = FLAG if now >= usage.limit else 0
            elif self.safe:
                self.running[slot, RUN_COLUMN[usage.tres]] += 60 * (now - before)
            else:
                self.running[slot, TRES_COLUMN[usage.tres]] = FLAG if now >= usage.limit else 0
        return held

    def _add_run_seconds(self, job: int, amount: int) -> None:
        """``amount`` seconds of the job's time x each of its TRES counts into its run counters."""
        sig = self.signature[job]
        for k in range(int(self.count_first[sig]), int(self.count_first[sig + 1])):
            for column, index in self.run_columns:
                self.running[self.count_slot[k], column] += amount * int(self.job_counts[job, index])

    def _count(self, job: int, sign: int) -> None:
        """Add sign x the job's counts to each of its counters (slurmkernels.count)."""
        self._count_kernel(self.running, self.count_first, self.count_slot, self.signature, self.job_counts, job, sign)


def association_chain(assoc: dict[tuple[str, str, str], Association], parent: dict[str, str], account: str, user: str,
                      partition: str) -> list[tuple[str, str]]:
    """A job's associations as (account, user) keys, those ``assoc`` (by (account, user, partition))
    has: the user's row (in the partition, else any), then its account's and the accounts above it
    (``parent``; "root" where none is named) up to root."""
    found = []
    if (account, user, partition) in assoc or (account, user, "") in assoc:
        found.append((account, user))
    seen = set()
    while account and account not in seen:
        seen.add(account)
        if (account, "", "") in assoc:
            found.append((account, ""))
        if account == "root":
            break
        account = parent.get(account, "root")
    return found


def usage_factors(table: dict[str, Qos], qos: list[str]) -> np.ndarray | None:
    """Each job's share of its usage charged: its own QOS's UsageFactor (priority_multifactor.c
    _apply_new_usage, 22.05: a running job's usage, decayed or not, is multiplied by its QOS's
    usage_factor where that is >= 0 before it is added to its QOS, its partition's QOS and its
    associations up to root: the fair-share's usage_raw, usage_tres_raw and grp_used_wall alike).
    None when every job's is 1 (the usage is then added as it is)."""
    charge = np.array([q.usage_factor if (q := table.get(name)) is not None and q.usage_factor >= 0 else 1.0
                       for name in qos], dtype=np.float64)
    return None if bool(np.all(charge == 1.0)) else charge


def minutes(seconds: int) -> int:
    """A time limit in Slurm's whole minutes (a limit of seconds rounded up)."""
    return -(-int(seconds) // 60)


def run_bound(limit_minutes: int) -> int:
    """The threshold of a GrpTRESRunMins check on CPU-seconds: Slurm holds a job when the running
    jobs' whole minutes left plus its own exceed the limit, floor(R / 60) + m > L, that is
    R > 60 L + 59 - 60 m (the check's form: counter > bound - the job's count)."""
    return 60 * int(limit_minutes) + 59


class Counters:
    """One kind of the running counters by key (``limits.qos_run[name]``: its row of
    SiteLimits.running, or zeros for a key no job counts in)."""

    def __init__(self, limits: SiteLimits, kind: str) -> None:
        self.limits, self.kind = limits, kind

    def __getitem__(self, key: str | tuple[str, ...]) -> np.ndarray:
        slot = self.limits._slots.get((self.kind, *((key,) if isinstance(key, str) else key)))
        running = self.limits.running
        return running[slot] if slot is not None else np.zeros(running.shape[1], dtype=np.int64)


def _over_tres(counts: tuple[int, ...], limits: dict[str, int], kind: str, who: str) -> Refusal | None:
    """The first TRES (in slurmctld's order) of a per-job limit the job alone breaks: above a maximum,
    above a per-node maximum with its TRES spread over its nodes (``qos_node``, ``assoc_node``: Slurm's
    integer division), below a MinTRES (``qos_min``)."""
    for tres, index in TRES_COUNTED:
        bound = limits.get(tres)
        reason = TRES_REASONS[kind].get(tres)
        if bound is None or reason is None:
            continue
        asked = counts[index] // max(counts[2], 1) if kind.endswith("_node") else counts[index]
        if (asked < bound) if kind == "qos_min" else (asked > bound):
            return Refusal(reason, f"{who} {tres}={bound}")
    return None


def _hold(reason: str) -> int:
    """A hold reason's code: 1 + its index in HOLD_CODES."""
    return HOLD_CODES.index(reason) + 1


def _csr(rows: list[list[Any]]) -> tuple[np.ndarray, list[Any]]:
    """Rows of items as (where each row begins, with the end last; the items one after the other)."""
    first = np.zeros(len(rows) + 1, dtype=np.int64)
    items: list[Any] = []
    for i, row in enumerate(rows):
        items.extend(row)
        first[i + 1] = len(items)
    return first, items


def _who(key: tuple[str, ...]) -> str:
    return f"{key[0]}/{key[1]}" if len(key) > 1 and key[1] else key[0]


def describe(refusals: dict[int, Refusal]) -> dict[str, Any]:
    """Counts of refusals per reason (for a run's summary)."""
    counts: dict[str, int] = {}
    for refusal in refusals.values():
        counts[refusal.reason] = counts.get(refusal.reason, 0) + 1
    return dict(sorted(counts.items()))
