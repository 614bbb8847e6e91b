"""A Slurm site's partition, QOS and association limits, with the pending reasons Slurm shows.

Three kinds of limit (slurm.conf(5), resource_limits.html, sacctmgr(1); the reason names are
slurmctld's ``job_reason`` strings as ``squeue -o %r`` prints them):

* limits a job can never satisfy: its time limit above its partition's MaxTime
  (``PartitionTimeLimit``), its nodes above MaxNodes (``PartitionNodeLimit``), its time above its
  QOS's or association's MaxWall (``QOSMaxWallDurationPerJobLimit``,
  ``AssocMaxWallDurationPerJobLimit``), its CPUs or nodes above a per-job MaxTRES
  (``QOSMaxCpuPerJobLimit``, ``QOSMaxNodePerJobLimit``), or above a per-user or group total it
  could never fit in (MaxTRESPU, GrpTRES). Slurm leaves such a job pending for ever with that
  reason (or, with EnforcePartLimits, refuses it at sbatch): here it is refused at submission, listed
  with the reason, since it never runs either way;
* limits checked at submission: MaxSubmitPU of the QOS (``QOSMaxSubmitJobPerUserLimit``) and
  MaxSubmit of the association (``AssocMaxSubmitJobLimit``): the user's pending and running jobs
  already at the limit, sbatch refuses the job;
* limits that hold a job while others run: QOS GrpJobs, MaxJobsPU, association GrpJobs and MaxJobs
  (jobs), then QOS GrpTRES, MaxTRESPU and association GrpTRES (cpu and node), in the order
  slurmctld's acct_policy checks them (before and after node selection). The first that holds
  names the reason.

A job's QOS limits are those of its own QOS and of its partition's QOS (``QOS=`` on the
PartitionName line). Association limits apply along its chain: the (account, user) row, then the
account's row and its parents' (GrpTRES/GrpJobs of an account count all the jobs below it).
Association rows for another partition are not used. Only cpu and node TRES are followed (mem,
gres are listed by ``engine site`` as read).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.platform.slurmconf import Association, Partition, Qos, SlurmSite, shown_time

#: the reasons of a job's refusal at submission (Slurm: pending for ever, or refused by sbatch)
NEVER_REASONS = ("PartitionTimeLimit", "PartitionNodeLimit", "QOSMaxWallDurationPerJobLimit",
                 "AssocMaxWallDurationPerJobLimit", "QOSMaxCpuPerJobLimit", "QOSMaxNodePerJobLimit",
                 "QOSMaxCpuPerUserLimit", "QOSMaxNodePerUserLimit", "QOSGrpCpuLimit", "QOSGrpNodeLimit",
                 "AssocGrpCpuLimit", "AssocGrpNodeLimit")
SUBMIT_REASONS = ("QOSMaxSubmitJobPerUserLimit", "AssocMaxSubmitJobLimit")
HOLD_REASONS = ("QOSGrpJobsLimit", "QOSMaxJobsPerUserLimit", "AssocGrpJobsLimit", "AssocMaxJobsLimit",
                "QOSGrpCpuLimit", "QOSGrpNodeLimit", "QOSMaxCpuPerUserLimit", "QOSMaxNodePerUserLimit",
                "AssocGrpCpuLimit", "AssocGrpNodeLimit")

#: what a hold check adds to its counter before comparing it with the bound: one job, the job's
#: cpus, the job's nodes (also the index of the counter's column for the TRES checks)
TERM_ONE, TERM_CPUS, TERM_NODES = 0, 1, 2


@dataclass(frozen=True)
class Refusal:
    """Why a job never runs: Slurm's reason and the limit as the site's files write it."""

    reason: str
    limit: str


def _tres(limits: dict[str, int], name: str) -> int | None:
    return limits.get(name)


class SiteLimits:
    """The limits of one run's jobs (per job: partition, QOS, account, user, CPUs, nodes, time limit),
    with the counts of running and submitted jobs they are checked against."""

    def __init__(self, site: SlurmSite, partition: list[str], qos: list[str], account: list[str], user: list[str],
                 cpus: list[int], nodes: list[int], time_limit: list[int]) -> None:
        self.partition, self.qos, self.account, self.user = partition, qos, account, user
        self.cpus, self.nodes, self.time_limit = cpus, nodes, time_limit
        self.partitions: dict[str, Partition] = site.conf.partitions
        self.qos_table: dict[str, Qos] = site.qos
        by_key: dict[tuple[str, str, str], Association] = {}
        for a in site.associations:
            by_key[(a.account, a.user, a.partition)] = a
        self.assoc = by_key
        self.parent = {a.account: (a.parent or "root") for a in site.associations if not a.user}
        self._chains: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
        self._qos_lists: dict[tuple[str, str], list[Qos]] = {}
        # submitted and not ended (pending + running)
        self.qos_user_submitted: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.assoc_submitted: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.any_hold = any(self._qos_holds(q) for q in site.qos.values()) or any(
            a.max_jobs is not None or a.grp_jobs is not None or a.grp_tres for a in site.associations)
        # The running counts, in arrays the compiled passes read (engine.policies.slurmkernels): a row
        # of (jobs, cpus, nodes) per counter (a QOS, a QOS's user, an association). Jobs of one
        # signature (partition, QOS, account, user) share their counters and their checks.
        self.cpus_array = np.asarray(cpus, dtype=np.int64)
        self.nodes_array = np.asarray(nodes, dtype=np.int64)
        self._slots: dict[tuple[str, ...], int] = {}
        keys: dict[tuple[str, str, str, str], int] = {}
        self.signature = np.array([keys.setdefault(key, len(keys)) for key in zip(partition, qos, account, user)],
                                  dtype=np.int64)
        first_job = np.unique(self.signature, return_index=True)[1].tolist() if len(self.signature) else []
        counters: list[list[int]] = []
        checks: list[list[tuple[int, int, int, int, int]]] = []
        for job in first_job:
            counters.append(self._counters(job))
            checks.append(self._signature_checks(job))
        self.running = np.zeros((max(len(self._slots), 1), 3), dtype=np.int64)
        self.count_first, count_rows = _csr(counters)
        self.count_slot = np.array(count_rows, dtype=np.int64)
        self.check_first, check_rows = _csr(checks)
        columns = list(zip(*check_rows)) if check_rows else [(), (), (), (), ()]
        self.check_slot, self.check_index, self.check_bound, self.check_kind, self.check_reason = (
            np.array(column, dtype=np.int64) for column in columns)
        self._count_kernel = None

    @staticmethod
    def _qos_holds(q: Qos) -> bool:
        return (q.max_jobs_per_user is not None or q.grp_jobs is not None or bool(q.grp_tres)
                or bool(q.max_tres_per_user))

    # ------------------------------------------------------------------ what applies to a job

    def qos_of(self, job: int) -> list[Qos]:
        """The partition's QOS first (Slurm's default order), then the job's own."""
        key = (self.partition[job], self.qos[job])
        found = self._qos_lists.get(key)
        if found is None:
            found = []
            partition = self.partitions.get(key[0])
            if partition is not None and partition.qos and partition.qos in self.qos_table:
                found.append(self.qos_table[partition.qos])
            own = self.qos_table.get(key[1])
            if own is not None and all(q.name != own.name for q in found):
                found.append(own)
            self._qos_lists[key] = found
        return found

    def chain(self, job: int) -> list[tuple[str, str]]:
        """The job's associations as (account, user) keys, the user's row first, then up to root;
        only those the dump has."""
        key = (self.account[job], self.user[job], self.partition[job])
        found = self._chains.get(key)
        if found is None:
            found = []
            account, user, _ = key
            if (account, user, key[2]) in self.assoc or (account, user, "") in self.assoc:
                found.append((account, user))
            seen = set()
            while account and account not in seen:
                seen.add(account)
                if (account, "", "") in self.assoc:
                    found.append((account, ""))
                if account == "root":
                    break
                account = self.parent.get(account, "root")
            self._chains[key] = found
        return found

    def _row(self, key: tuple[str, str], job: int) -> Association | None:
        account, user = key
        return self.assoc.get((account, user, self.partition[job])) or self.assoc.get((account, user, ""))

    # ------------------------------------------------------------------ the checks

    def never(self, job: int) -> Refusal | None:
        """The limit the job can never satisfy, or None."""
        partition = self.partitions.get(self.partition[job])
        limit, cpus, nodes = self.time_limit[job], self.cpus[job], self.nodes[job]
        if partition is not None:
            if partition.max_time is not None and limit > partition.max_time:
                return Refusal("PartitionTimeLimit", f"partition {partition.name} MaxTime {shown_time(partition.max_time)}")
            if partition.max_nodes is not None and nodes > partition.max_nodes:
                return Refusal("PartitionNodeLimit", f"partition {partition.name} MaxNodes {partition.max_nodes}")
        for q in self.qos_of(job):
            if q.max_wall is not None and limit > q.max_wall:
                return Refusal("QOSMaxWallDurationPerJobLimit", f"QOS {q.name} MaxWall {shown_time(q.max_wall)}")
        for key in self.chain(job):
            row = self._row(key, job)
            if row is not None and row.max_wall is not None and limit > row.max_wall:
                return Refusal("AssocMaxWallDurationPerJobLimit",
                               f"association {_who(key)} MaxWall {shown_time(row.max_wall)}")
        for q in self.qos_of(job):
            for tres, reason, count in (("cpu", "QOSMaxCpuPerJobLimit", cpus), ("node", "QOSMaxNodePerJobLimit", nodes)):
                bound = _tres(q.max_tres_per_job, tres)
                if bound is not None and count > bound:
                    return Refusal(reason, f"QOS {q.name} MaxTRES {tres}={bound}")
            for tres, reason, count in (("cpu", "QOSMaxCpuPerUserLimit", cpus), ("node", "QOSMaxNodePerUserLimit", nodes)):
                bound = _tres(q.max_tres_per_user, tres)
                if bound is not None and count > bound:
                    return Refusal(reason, f"QOS {q.name} MaxTRESPU {tres}={bound}")
            for tres, reason, count in (("cpu", "QOSGrpCpuLimit", cpus), ("node", "QOSGrpNodeLimit", nodes)):
                bound = _tres(q.grp_tres, tres)
                if bound is not None and count > bound:
                    return Refusal(reason, f"QOS {q.name} GrpTRES {tres}={bound}")
        for key in self.chain(job):
            row = self._row(key, job)
            if row is None:
                continue
            for tres, reason, count in (("cpu", "AssocGrpCpuLimit", cpus), ("node", "AssocGrpNodeLimit", nodes)):
                bound = _tres(row.grp_tres, tres)
                if bound is not None and count > bound:
                    return Refusal(reason, f"association {_who(key)} GrpTRES {tres}={bound}")
        return None

    def at_submit(self, job: int) -> Refusal | None:
        """MaxSubmitPU / MaxSubmit: the user's pending and running jobs already at the limit."""
        user = self.user[job]
        for q in self.qos_of(job):
            if q.max_submit_per_user is not None and self.qos_user_submitted[(q.name, user)] >= q.max_submit_per_user:
                return Refusal("QOSMaxSubmitJobPerUserLimit", f"QOS {q.name} MaxSubmitPU {q.max_submit_per_user}")
        for key in self.chain(job):
            row = self._row(key, job)
            if row is not None and row.max_submit is not None and key[1] and \
                    self.assoc_submitted[key] >= row.max_submit:
                return Refusal("AssocMaxSubmitJobLimit", f"association {_who(key)} MaxSubmit {row.max_submit}")
        return None

    def held(self, job: int) -> str:
        """The limit that holds the job now (Slurm's reason), else "": the first of its signature's
        checks (:meth:`_signature_checks`) whose counter is above its threshold."""
        code = self.held_code(job)
        return HOLD_REASONS[code - 1] if code else ""

    def held_code(self, job: int) -> int:
        """:meth:`held` as 1 + the index of the reason in HOLD_REASONS, 0 = not held (the compiled
        passes' form: engine.policies.slurmkernels.held_code)."""
        sig = int(self.signature[job])
        first, last = int(self.check_first[sig]), int(self.check_first[sig + 1])
        if first == last:
            return 0
        running = self.running
        terms = (1, int(self.cpus_array[job]), int(self.nodes_array[job]))
        for k in range(first, last):
            if running[self.check_slot[k], self.check_index[k]] > self.check_bound[k] - terms[self.check_kind[k]]:
                return int(self.check_reason[k])
        return 0

    def _slot(self, key: tuple[str, ...]) -> int:
        """The row of ``key``'s counter in :attr:`running` (rows are made while the signatures are)."""
        return self._slots.setdefault(key, len(self._slots))

    def counter(self, key: tuple[str, ...]) -> np.ndarray:
        """The running (jobs, cpus, nodes) of a counter: ("qos", name), ("qos_user", name, user) or
        ("assoc", account, user); zeros for one no job counts in."""
        slot = self._slots.get(key)
        return self.running[slot] if slot is not None else np.zeros(3, dtype=np.int64)

    def _counters(self, job: int) -> list[int]:
        """The counters a start or end of the job changes: its QOS's and its user's in the QOS, then its
        associations'."""
        user = self.user[job]
        slots: list[int] = []
        for q in self.qos_of(job):
            slots.append(self._slot(("qos", q.name)))
            slots.append(self._slot(("qos_user", q.name, user)))
        for key in self.chain(job):
            slots.append(self._slot(("assoc", *key)))
        return slots

    def _signature_checks(self, job: int) -> list[tuple[int, int, int, int, int]]:
        """The hold checks of the job's signature in :meth:`held_by_rules`' order, each (counter,
        index in it, bound, term, reason code): the job is held when ``counter[index] > bound -
        term`` with term 1 (TERM_ONE: a count at its limit, ``jobs >= bound``), the job's cpus
        (TERM_CPUS) or nodes (TERM_NODES) (a TRES: ``used + asked > bound``). The counters are the
        ones :meth:`_count` updates, so the checks stay valid as jobs start and end."""
        if not self.any_hold:
            return []
        user = self.user[job]
        qos = self.qos_of(job)
        chain = self.chain(job)
        checks: list[tuple[int, int, int, int, int]] = []

        def check(key: tuple[str, ...], index: int, bound: int, term: int, reason: str) -> None:
            checks.append((self._slot(key), index, bound, term, HOLD_REASONS.index(reason) + 1))

        for q in qos:
            if q.grp_jobs is not None:
                check(("qos", q.name), 0, q.grp_jobs, TERM_ONE, "QOSGrpJobsLimit")
            if q.max_jobs_per_user is not None:
                check(("qos_user", q.name, user), 0, q.max_jobs_per_user, TERM_ONE, "QOSMaxJobsPerUserLimit")
        for key in chain:
            row = self._row(key, job)
            if row is None:
                continue
            if row.grp_jobs is not None:
                check(("assoc", *key), 0, row.grp_jobs, TERM_ONE, "AssocGrpJobsLimit")
            if key[1] and row.max_jobs is not None:
                check(("assoc", *key), 0, row.max_jobs, TERM_ONE, "AssocMaxJobsLimit")
        for q in qos:
            for tres, reason, index in (("cpu", "QOSGrpCpuLimit", TERM_CPUS), ("node", "QOSGrpNodeLimit", TERM_NODES)):
                bound = _tres(q.grp_tres, tres)
                if bound is not None:
                    check(("qos", q.name), index, bound, index, reason)
            for tres, reason, index in (("cpu", "QOSMaxCpuPerUserLimit", TERM_CPUS),
                                        ("node", "QOSMaxNodePerUserLimit", TERM_NODES)):
                bound = _tres(q.max_tres_per_user, tres)
                if bound is not None:
                    check(("qos_user", q.name, user), index, bound, index, reason)
        for key in chain:
            row = self._row(key, job)
            if row is None:
                continue
            for tres, reason, index in (("cpu", "AssocGrpCpuLimit", TERM_CPUS), ("node", "AssocGrpNodeLimit", TERM_NODES)):
                bound = _tres(row.grp_tres, tres)
                if bound is not None:
                    check(("assoc", *key), index, bound, index, reason)
        return checks

    def held_by_rules(self, job: int) -> str:
        """:meth:`held` as the rules read, one limit after the other (the reference its checks
        are tested against)."""
        if not self.any_hold:
            return ""
        user, cpus, nodes = self.user[job], self.cpus[job], self.nodes[job]
        qos = self.qos_of(job)
        chain = self.chain(job)
        for q in qos:      # before node selection: job counts
            if q.grp_jobs is not None and self.counter(("qos", q.name))[0] >= q.grp_jobs:
                return "QOSGrpJobsLimit"
            if q.max_jobs_per_user is not None and self.counter(("qos_user", q.name, user))[0] >= q.max_jobs_per_user:
                return "QOSMaxJobsPerUserLimit"
        for key in chain:
            row = self._row(key, job)
            if row is None:
                continue
            if row.grp_jobs is not None and self.counter(("assoc", *key))[0] >= row.grp_jobs:
                return "AssocGrpJobsLimit"
            if key[1] and row.max_jobs is not None and self.counter(("assoc", *key))[0] >= row.max_jobs:
                return "AssocMaxJobsLimit"
        for q in qos:      # after node selection: TRES
            used = self.counter(("qos", q.name))
            for tres, reason, index, count in (("cpu", "QOSGrpCpuLimit", 1, cpus), ("node", "QOSGrpNodeLimit", 2, nodes)):
                bound = _tres(q.grp_tres, tres)
                if bound is not None and used[index] + count > bound:
                    return reason
            mine = self.counter(("qos_user", q.name, user))
            for tres, reason, index, count in (("cpu", "QOSMaxCpuPerUserLimit", 1, cpus),
                                               ("node", "QOSMaxNodePerUserLimit", 2, nodes)):
                bound = _tres(q.max_tres_per_user, tres)
                if bound is not None and mine[index] + count > bound:
                    return reason
        for key in chain:
            row = self._row(key, job)
            if row is None:
                continue
            used = self.counter(("assoc", *key))
            for tres, reason, index, count in (("cpu", "AssocGrpCpuLimit", 1, cpus), ("node", "AssocGrpNodeLimit", 2, nodes)):
                bound = _tres(row.grp_tres, tres)
                if bound is not None and used[index] + count > bound:
                    return reason
        return ""

    # ------------------------------------------------------------------ the counts

    def submitted(self, job: int) -> None:
        for q in self.qos_of(job):
            self.qos_user_submitted[(q.name, self.user[job])] += 1
        for key in self.chain(job):
            self.assoc_submitted[key] += 1

    def started(self, job: int) -> None:
        self._count(job, 1)

    def ended(self, job: int) -> None:
        self._count(job, -1)
        for q in self.qos_of(job):
            self.qos_user_submitted[(q.name, self.user[job])] -= 1
        for key in self.chain(job):
            self.assoc_submitted[key] -= 1

    def _count(self, job: int, sign: int) -> None:
        """Add (sign, sign x cpus, sign x nodes) to each of the job's counters."""
        if self._count_kernel is None:
            from engine.jit import bind_direct
            from engine.policies.slurmkernels import count
            bind_direct(self, "_count_kernel", count)
        self._count_kernel(self.running, self.count_first, self.count_slot, self.signature, self.cpus_array,  # type: ignore[misc]
                           self.nodes_array, job, sign)


def _csr(rows: list[list[Any]]) -> tuple[np.ndarray, list[Any]]:
    """Rows of items as (where each row begins, with the end as the last entry; the items in a row)."""
    first = np.zeros(len(rows) + 1, dtype=np.int64)
    items: list[Any] = []
    for i, row in enumerate(rows):
        items.extend(row)
        first[i + 1] = len(items)
    return first, items


def _who(key: tuple[str, str]) -> str:
    return f"{key[0]}/{key[1]}" if key[1] else key[0]


def describe(refusals: dict[int, Refusal]) -> dict[str, Any]:
    """Counts of refusals per reason (for a run's summary)."""
    counts: dict[str, int] = {}
    for refusal in refusals.values():
        counts[refusal.reason] = counts.get(refusal.reason, 0) + 1
    return dict(sorted(counts.items()))
