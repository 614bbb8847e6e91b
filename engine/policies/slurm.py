"""Slurm's multifactor priority, from a site's own files (issue 24 §2).

The formula of slurm.schedmd.com/priority_multifactor.html::

    priority = PriorityWeightAge       x age factor        (min(eligible time / PriorityMaxAge, 1))
             + PriorityWeightFairshare x fair-share factor (Fair Tree, or classic 2^(-U/S))
             + PriorityWeightJobSize   x job size factor   (mean of node and CPU fractions; 1 - them
                                                             with PriorityFavorSmall)
             + PriorityWeightPartition x partition factor  (PriorityJobFactor / the largest)
             + PriorityWeightQOS       x QOS factor        (QOS priority / the largest)

summed as floats and truncated to an integer, as slurmctld does. Waiting jobs are ordered by their
partition's PriorityTier first, then by priority, then by submission. Priorities are recalculated
every PriorityCalcPeriod (and a new job's once, at submission, with age 0), not at each event:
between two calculations the order only changes by arrivals.

Fair-share (slurm.schedmd.com/fair_tree.html): usage is CPU-seconds of running and finished jobs,
accrued and decayed as slurmctld's decay thread does (:meth:`SlurmPriorityQueue.accrue`), summed up the association tree
of ``sacctmgr show assoc`` (accounts without a parent hang from root). Fair Tree: every association
gets a Level Fairshare LF = S / U (its shares and usage over its siblings'); siblings are visited by
decreasing LF, depth first, and the n user associations get the ranks n, n-1, ... (ties share
one, as fair_tree.c breaks them: :func:`fair_tree_factors`); the factor is rank / n. Classic (PriorityFlags=NO_FAIR_TREE): 2^(-U/S) with U
the user's share of all usage and S the product of the normalised shares down its branch. A job
whose QOS has a UsageFactor adds its usage times it (0: none; priority_multifactor.c _apply_new_usage).

Limits (engine.policies.slurmlimits): partition, QOS and association limits refuse a job at
submission (one it could never satisfy, or MaxSubmitPU) or hold it with the reason Slurm shows
(QOSMaxJobsPerUserLimit, QOSGrpCpuLimit, AssocGrpCpuLimit, ...): a held job is neither started
nor backfilled, and reserves nothing, until the limit lets it go.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from collections.abc import Iterator
from typing import Any

import numpy as np

from engine.platform.slurmconf import (PRIORITY_TRES, SCHEDULER_DEFAULTS, Association, SlurmConf, SlurmSite,
                                      next_usage_reset)
from engine.policies.algorithm import Algorithm
from engine.policies.backfill import BACKFILL_BOUND, bounded
from engine.policies.base import Param, PolicyError
from engine.policies.ordering import WaitingQueue
from engine.policies.reasons import ReasonTable, refused_counts
from engine.policies.registry import Component, Preset, register, register_algorithm, register_ordering
from engine.policies import slurmkernels as kernels
from engine.policies.slurmkernels import HOLD, NONE, PRIORITY, RESOURCES
from engine.policies.slurmlimits import AFTER_SELECT, HOLD_CODES, SiteLimits, association_chain
from engine.sim.allocation import CountAllocator
from engine.sim.profile import Profile
from engine.sim.jit import bind_direct
from engine.sim.simulator import Simulation, SimulationError
from engine.sim.timelimit import TimeLimitCheck
from engine.workload.timebase import epoch_origin

#: the site's priority weights a policy parameter may override (``--set PriorityWeightFairshare=20000``)
WEIGHT_KEYS = {"PriorityWeightAge": "age", "PriorityWeightAssoc": "assoc", "PriorityWeightFairshare": "fairshare",
               "PriorityWeightJobSize": "jobsize", "PriorityWeightPartition": "partition", "PriorityWeightQOS": "qos"}
FROM_SITE = -1.0
#: up to this many jobs, priorities are computed job by job (SlurmPriorityQueue._few), more at once
FEW_JOBS = 8
#: no jobs (no arrivals): int64 and writable (an empty array), as the compiled merge's arguments are typed
NO_JOBS = np.zeros(0, dtype=np.int64)
PARAMS = tuple(Param(key, "float", FROM_SITE, f"{key} (-1 = the value in the site's slurm.conf)", minimum=FROM_SITE,
                     label=key) for key in WEIGHT_KEYS) + (
    Param("PriorityCalcPeriod", "float", FROM_SITE, "seconds between priority recalculations "
          "(-1 = the site's slurm.conf)", minimum=FROM_SITE, label="PriorityCalcPeriod", unit="s"),
    Param("priority_phase", "float", 0.0, "seconds after the first submission at which the priority "
          "recalculations' cycle falls (a recording's sprio shows it: python -m engine calibrate --sprio)",
          minimum=0.0, label="priority cycle phase", unit="s"),
)

HELD_QOS_USER = "QOSMaxJobsPerUserLimit"

#: squeue's text for a job whose partition's nodes a blocked job of a partition before it took in
#: this pass (slurmctld's schedule(): the nodes of a partition whose top job does not fit are
#: reserved for it; every later job of a partition within those nodes waits with this text)
RESERVED_FOR_HIGHER = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
#: the pending reasons by code (engine.policies.slurmkernels: NONE, PRIORITY, RESOURCES, RESERVED, then
#: the limits' in SiteLimits.held_code's order)
REASONS = ("None", "Priority", "Resources", RESERVED_FOR_HIGHER, *HOLD_CODES)


def age_factor(age: Any, max_age: float | None) -> Any:
    """min(max(age, 0) / PriorityMaxAge, 1) of one age (a number) or of an array of ages (an array:
    the same values elementwise); with no maximum age (0) the factor is 1 as soon as eligible."""
    if not max_age:
        return 1.0
    if isinstance(age, np.ndarray):
        return np.minimum(np.maximum(age, 0) / max_age, 1.0)
    return min(max(age, 0) / max_age, 1.0)


def job_size_factor(cpus: int, nodes: int, total_cpus: int, total_nodes: int, favor_small: bool,
                    relative_minutes: int | None = None) -> float:
    """Slurm 22.05's job size factor (priority_multifactor.c set_priority_factors): the mean of the
    node fraction and the CPU fraction of the cluster (favor small: of 1 - each). With
    PriorityFlags=SMALL_RELATIVE_TO_TIME (``relative_minutes``: the job's time limit in minutes): its
    CPUs (at least its nodes' share of the cluster's CPUs) per minute of its limit, as a fraction of
    the cluster's CPUs (favor small: 1 - that), within 0 and 1."""
    if relative_minutes is not None:
        factor = max(nodes * total_cpus / total_nodes, float(cpus)) / max(relative_minutes, 1) / total_cpus
        factor = 1.0 - factor if favor_small else factor
        return min(max(factor, 0.0), 1.0)
    if favor_small:
        return ((total_nodes - nodes) / total_nodes + (total_cpus - cpus) / total_cpus) / 2.0
    return (nodes / total_nodes + cpus / total_cpus) / 2.0


def no_normal(flags: list[str], kind: str) -> bool:
    """PriorityFlags NO_NORMAL_<kind> (or NO_NORMAL_ALL): the factor is the raw value, not normalised."""
    return "NO_NORMAL_ALL" in flags or f"NO_NORMAL_{kind}" in flags


def association_priorities(site: SlurmSite, accounts: list[str], users: list[str], partitions: list[str],
                           raw: bool) -> list[float]:
    """Each job's association factor (PriorityWeightAssoc): its association's Priority (the user's row
    under its account, in its partition if there is one, else the nearest account above that sets
    one) over the largest Priority of any association (assoc_mgr.c _set_assoc_norm_priority; raw:
    NO_NORMAL_ASSOC)."""
    rows = {(a.account, a.user, a.partition): a for a in site.associations}
    parent = {a.account: (a.parent or "root") for a in site.associations if not a.user}
    top = max((a.priority or 0 for a in site.associations), default=0)
    found: dict[tuple[str, str, str], float] = {}
    for key in zip(accounts, users, partitions):
        if key not in found:
            account, user, partition = key
            chain = [rows.get((a, u, partition)) or rows[(a, u, "")] for a, u in association_chain(rows, parent, *key)]
            value = next((row.priority for row in chain if row.priority is not None), 0)
            found[key] = float(value) if raw else (value / top if top else 0.0)
    return [found[key] for key in zip(accounts, users, partitions)]


def tres_factors(conf: SlurmConf, partitions: list[str], counts: dict[str, list[int]], raw: bool) -> list[float]:
    """Each job's TRES factor, weighted (PriorityWeightTRES): the sum over the TRES weighed, in
    slurmctld's order, of weight x the job's count over its partition's total (priority_multifactor.c
    _get_tres_factors: cpu, mem in MB, node, billing (the CPUs without TRESBillingWeights),
    gres/gpu; raw counts with NO_NORMAL_TRES)."""
    weights = [(tres, conf.tres_weights[tres]) for tres in PRIORITY_TRES if conf.tres_weights.get(tres)]
    if not weights:
        return [0.0] * len(partitions)
    sets = {host: nodes for nodes in conf.nodes for host in nodes.names}
    totals: dict[str, dict[str, int]] = {}
    for name, p in conf.partitions.items():
        members = [sets[h] for h in p.nodes if h in sets]
        cpus = sum(n.cpus for n in members)
        totals[name] = {"cpu": cpus, "mem": sum(n.real_memory_mb for n in members), "node": len(members),
                        "billing": cpus, "gres/gpu": sum(n.gres.get("gpu", 0) for n in members)}
    out = []
    for job, partition in enumerate(partitions):
        total = totals.get(partition, {})
        value = 0.0
        for tres, weight in weights:
            count = counts[tres][job]
            if raw:
                value += count * weight
            elif count and total.get(tres):
                value += count / total[tres] * weight
        out.append(value)
    return out


def weighted_sum(weights: dict[str, float], factors: dict[str, Any], start: Any = 0.0) -> Any:
    """The weighted sum of the factors (keys of WEIGHT_KEYS' values), added in the weights' order
    from ``start``: of one job's factors (floats, start 0.0) or of many jobs' (arrays, start their
    zeros), the same IEEE operations in the same order, so the same values either way. Not yet
    truncated: slurmctld truncates (:func:`multifactor`, or the caller's astype(int64))."""
    total = start
    for name, weight in weights.items():
        total = total + weight * factors.get(name, 0.0)
    return total


def multifactor(weights: dict[str, float], factors: dict[str, float]) -> int:
    """One job's priority: the weighted sum of its factors, truncated as slurmctld does."""
    return int(weighted_sum(weights, factors))


@dataclass
class Node:
    """An association: an account (user == "") or a user under an account."""

    account: str
    user: str
    shares: float
    children: list[Node]
    usage: float = 0.0


def association_tree(associations: list[Association]) -> Node:
    """The account tree from ``sacctmgr show assoc`` rows (accounts without a parent under root)."""
    root = Node("root", "", 1.0, [])
    accounts: dict[str, Node] = {"root": root}
    for a in associations:
        if not a.user and a.account != "root":
            accounts[a.account] = Node(a.account, "", float(max(a.shares, 0)), [])
    for a in associations:
        if not a.user and a.account != "root":
            parent = accounts.get(a.parent or "root", root)
            parent.children.append(accounts[a.account])
    for a in associations:
        if a.user and a.account in accounts:
            accounts[a.account].children.append(Node(a.account, a.user, float(max(a.shares, 0)), []))
    return root


def users_of(node: Node) -> list[Node]:
    if node.user:
        return [node]
    return [u for child in node.children for u in users_of(child)]


def summed_usage(node: Node) -> float:
    """Fills each account's usage with the sum of its children's (users carry their own)."""
    if node.user:
        return node.usage
    node.usage = sum(summed_usage(child) for child in node.children)
    return node.usage


def level_fairshare(node: Node, siblings: list[Node]) -> float:
    """LF = S / U among ``siblings`` (``node`` included); no usage at all -> infinitely deserving."""
    return _level(node, sum(s.shares for s in siblings), sum(s.usage for s in siblings))


def _level(node: Node, shares: float, usage: float) -> float:
    """:func:`level_fairshare` with its siblings' sums of shares and usage given."""
    s = node.shares / shares if shares > 0 else 0.0
    u = node.usage / usage if usage > 0 else 0.0
    if s == 0:          # no shares: the lowest LF, even without usage (fair_tree.c)
        return 0.0
    return math.inf if u == 0 else s / u


def levels(siblings: list[Node]) -> list[tuple[Node, float]]:
    """Each of ``siblings`` with its Level Fairshare among them (their sums taken once, not per sibling)."""
    shares, usage = sum(s.shares for s in siblings), sum(s.usage for s in siblings)
    return [(node, _level(node, shares, usage)) for node in siblings]


def same_level(a: float, b: float) -> bool:
    """Equal Level Fairshares, up to floating-point rounding (0.3/0.45 and 0.1/0.15 tie)."""
    return a == b or math.isclose(a, b, rel_tol=1e-12)


def fair_tree_factors(root: Node) -> dict[tuple[str, str], float]:
    """(account, user) -> Fair Tree's rank-based factor rank / number of user associations.

    As 22.05's fair_tree.c (_calc_tree_fs) does it: siblings are sorted by decreasing LF, users
    before accounts of the same LF; a user takes the next rank, or the previous one when its LF
    equals the previous sibling's (the rank after a tie is lowered by how many shared it); an
    account is descended into, and when its LF equals the previous sibling's its first child
    starts tied (takes the rank last given). fair_tree.html says tied accounts have their
    children merged and sorted together, but the code's merge (_count_tied_accounts) never
    merges (it stops at the first account it meets): tied accounts are visited one after
    another, in sacctmgr's order."""
    summed_usage(root)
    count = len(users_of(root))
    factors: dict[tuple[str, str], float] = {}
    rank = rnt = count

    def visit(children: list[tuple[Node, float]], account_tied: bool) -> None:
        nonlocal rank, rnt
        ranked = sorted(children, key=lambda pair: (-pair[1], not pair[0].user))
        previous: float | None = None
        for i, (node, level) in enumerate(ranked):
            tied = account_tied if i == 0 else (previous is not None and same_level(previous, level))
            if node.user:
                if not tied:
                    rank = rnt
                factors[(node.account, node.user)] = rank / count
                rnt -= 1
            else:
                visit(levels(node.children), tied)
            previous = level

    visit(levels(root.children), False)
    return factors


def classic_factors(root: Node) -> dict[tuple[str, str], float]:
    """(account, user) -> 2^(-U/S): U the user's share of all usage, S its normalised shares."""
    total = summed_usage(root)
    factors: dict[tuple[str, str], float] = {}

    def visit(node: Node, share: float) -> None:
        siblings = sum(c.shares for c in node.children)
        for child in node.children:
            s = share * (child.shares / siblings if siblings > 0 else 0.0)
            if child.user:
                u = child.usage / total if total > 0 else 0.0
                factors[(child.account, child.user)] = 2.0 ** (-u / s) if s > 0 else 0.0
            else:
                visit(child, s)

    visit(root, 1.0)
    return factors


def _pairs(jobs: np.ndarray, values: np.ndarray, chunk: int = 64) -> Iterator[tuple[int, int]]:
    """(job, value) of two parallel arrays as Python ints, a chunk at a time: a walk that usually
    stops within the first few does not convert the whole arrays."""
    for at in range(0, len(jobs), chunk):
        yield from zip(jobs[at:at + chunk].tolist(), values[at:at + chunk].tolist())


class SlurmPriorityQueue(WaitingQueue):
    """Waiting jobs by (PriorityTier, Slurm multifactor priority, submission); the site's limits
    refuse jobs at submission or hold them (engine.policies.slurmlimits); each waiting job has its
    pending reason as Slurm would show it, and the time it spent under each."""

    _keyed_merge: Any       # slurmkernels.keyed_merge and keyed_head, called directly (set in __init__ by bind_direct)
    _keyed_head: Any

    def __init__(self, sim: Simulation, params: dict[str, Any]) -> None:
        super().__init__(sim, lambda j: (j,))
        site = sim.context.get("slurm_site")
        if not isinstance(site, SlurmSite):
            raise PolicyError("the slurm policy needs the site's files: --slurm-conf slurm.conf [--qos F] [--assoc F]")
        conf = site.conf
        self.weights = {short: float(params.get(key, FROM_SITE)) for key, short in WEIGHT_KEYS.items()}
        for short in WEIGHT_KEYS.values():
            if self.weights[short] < 0:
                self.weights[short] = float(conf.weights.get(short, 0))
        period = float(params.get("PriorityCalcPeriod", FROM_SITE))
        self.period = period if period >= 0 else float(conf.calc_period)
        self.max_age = float(conf.max_age or 0)
        self.halflife = float(conf.decay_half_life or 0)
        self.fair_tree = conf.fair_tree
        jobs = sim.workload.jobs
        names = sim.workload.metadata.get("user_names", {})
        self.user = [names.get(str(u), str(u)) for u in np.asarray(sim.user).tolist()]
        self.account = _column(jobs, "account", sim.n)
        partitions = _column(jobs, "queue_name", sim.n)
        default = conf.default_partition()
        partitions = [p if p in conf.partitions else (default.name if default else p) for p in partitions]
        self.partition = partitions
        flags = conf.priority_flags
        top_factor = 1 if no_normal(flags, "PART") else \
            max((p.priority_job_factor for p in conf.partitions.values()), default=0) or 1
        self.tier = [conf.partitions[p].priority_tier if p in conf.partitions else 0 for p in partitions]
        self.partition_factor = [conf.partitions[p].priority_job_factor / top_factor if p in conf.partitions else 0.0
                                 for p in partitions]
        self.qos = [q or "normal" for q in _column(jobs, "qos", sim.n)]
        top_qos = 1 if no_normal(flags, "QOS") else max((q.priority for q in site.qos.values()), default=0) or 1
        self.qos_factor = [site.qos[q].priority / top_qos if q in site.qos else 0.0 for q in self.qos]
        nodes = np.asarray(jobs["nodes"], dtype=np.int64) if "nodes" in jobs else np.ones(sim.n, dtype=np.int64)
        nodes_list = [int(max(n, 1)) for n in nodes.tolist()]
        total_nodes = sum(len(n.names) for n in conf.nodes) or 1
        total_cpus = conf.total_cpus or int(sim.capacity)
        limit = jobs["requested_time"].astype("int64").tolist()
        relative = "SMALL_RELATIVE_TO_TIME" in flags
        self.size_factor = [job_size_factor(int(c), n, total_cpus, total_nodes, conf.favor_small,
                                            -(-t // 60) if relative else None)
                            for c, n, t in zip(np.asarray(sim.size).tolist(), nodes_list, limit)]
        mem_kb = np.asarray(jobs["mem"], dtype=np.int64) if "mem" in jobs else np.zeros(sim.n, dtype=np.int64)
        gpus = np.asarray(jobs["gpus"], dtype=np.int64) if "gpus" in jobs else np.zeros(sim.n, dtype=np.int64)
        cpus_list = [int(p) for p in np.asarray(sim.procs).tolist()]
        mem_mb = (-(-np.maximum(mem_kb, 0) * np.maximum(nodes, 1) // 1024)).tolist()     # KB/node -> MB
        gpu_list = (np.maximum(gpus, 0) * np.maximum(nodes, 1)).tolist()                 # per node -> per job
        self.limits = SiteLimits(site, partitions, self.qos, self.account, self.user, cpus_list, nodes_list, limit,
                                 mem_mb=mem_mb, gpus=gpu_list, clock=lambda: self.sim.now)
        self.assoc_factor = association_priorities(site, self.account, self.user, partitions, no_normal(flags, "ASSOC"))
        self.tres_factor = tres_factors(conf, partitions, {"cpu": cpus_list, "mem": mem_mb, "node": nodes_list,
                                                           "billing": cpus_list, "gres/gpu": gpu_list},
                                        no_normal(flags, "TRES"))
        sim.finish_listeners.append(self.limits.ended)
        self.tree = association_tree(site.associations)
        self.users = {(u.account, u.user): u for u in users_of(self.tree)}
        self.calculated: int | None = None
        # fair-share accrual in arrays (accrue): each user association's usage, in self.users' order
        self.usage = np.zeros(len(self.users))
        index = {key: i for i, key in enumerate(self.users)}
        self.user_index = np.array([index.get(key, -1) for key in zip(self.account, self.user)], dtype=np.int64)
        self.job_size = np.asarray(sim.size, dtype=np.int64)
        self.since = np.zeros(sim.n, dtype=np.int64)    # a started job: accounted until
        self.ended_at = np.full(sim.n, -1, dtype=np.int64)
        self.accruing = np.zeros(0, dtype=np.int64)     # started jobs still accruing, in start order
        self.new_started: list[int] = []                # started since the last accrual, in order
        sim.finish_listeners.append(self.ended)
        # the factors of every job that do not change, for priorities computed many at once (computed)
        self.submit = np.asarray(sim.submit, dtype=np.int64)
        self.static_factors = tuple(np.asarray(f, dtype=np.float64) for f in (
            self.size_factor, self.partition_factor, self.qos_factor, self.assoc_factor))
        #: the TRES factors, weighted already, added last (as slurmctld adds them): 1.0 x each job's
        self.tres = np.asarray(self.tres_factor, dtype=np.float64)
        if self.tres.any():
            self.weights["tres"] = 1.0
        pairs = {key: i for i, key in enumerate(dict.fromkeys(zip(self.account, self.user)))}
        self.pair_keys = list(pairs)
        self.pair_index = np.array([pairs[key] for key in zip(self.account, self.user)], dtype=np.int64)
        self.pair_fairshare = np.ones(len(pairs))
        self.tree_arrays = FlatTree(self.tree, self.users, self.pair_keys) if self.fair_tree else None
        self.factors_due = False        # usage accrued since the fair-share factors were last made
        self.calculations = 0
        self.origin = (int(min(sim.submit)) if sim.n else 0) + int(float(params.get("priority_phase", 0.0)))
        #: PriorityUsageResetPeriod: the Unix time of the trace's time 0 (None: the trace has no
        #: calendar, nothing is reset) and the simulated time of the next reset (from the first submit)
        self.epoch = epoch_origin(sim.workload.metadata, float(min(sim.submit)) if sim.n else None)
        self.reset_period = conf.usage_reset[0]
        self.reset_at = self._next_reset(int(min(sim.submit)) if sim.n else 0)
        # the waiting jobs: a flag per job, their count, and (possibly with jobs that left) by number
        self.member = np.zeros(sim.n, dtype=bool)
        self.waiting = 0
        self.arrived: list[int] = []        # queued since the last order was made
        self.order = np.zeros(0, dtype=np.int64)   # the last order made (jobs that left included)
        self.order_priority = np.zeros(0, dtype=np.int64)    # the priorities of its jobs
        self.ordered_after = -1             # the calculation that order was made after
        self.left = False                   # a job left the queue since the order was last filtered
        self.priced: dict[int, int] = {}    # new jobs' priorities at submission (_top_priority) ...
        self.priced_after = -1              # ... after this calculation
        self.queued = np.zeros(sim.n, dtype=bool)   # a job was ever queued
        #: the order's jobs' int64 keys (tier rank, highest priority first, job number) in a key space
        #: fixed for the run (priorities within [0, key_high]), or None when the order is not strictly
        #: increasing by them: then an arrival's merge goes the long way (_merged)
        self.key_high = int(sum(max(w, 0.0) for w in self.weights.values())) + 1
        tiers = sorted(set(self.tier), reverse=True)
        self.tier_rank = np.array([tiers.index(t) for t in self.tier] if len(tiers) < 64 else
                                  [{t: r for r, t in enumerate(tiers)}[t] for t in self.tier], dtype=np.int64)
        self.tiers = max(len(tiers), 1)
        self.order_keys: np.ndarray | None = np.zeros(0, dtype=np.int64) if self._key_space(self.key_high + 1) else None
        bind_direct(self, "_keyed_merge", kernels.keyed_merge)
        bind_direct(self, "_keyed_head", kernels.keyed_head)
        #: each job's partition (a number) and which partitions share nodes (_top_priority)
        numbers = {name: i for i, name in enumerate(dict.fromkeys(self.partition))}
        self.part_number = np.array([numbers[name] for name in self.partition], dtype=np.int64)
        held_nodes = [frozenset(conf.partitions[name].nodes) if name in conf.partitions else frozenset()
                      for name in numbers]
        count = len(held_nodes)
        self.part_overlap = np.array([[a == b or bool(held_nodes[a] & held_nodes[b]) for b in range(count)]
                                      for a in range(count)], dtype=np.bool_).reshape(count, count)
        #: pending reasons (codes of REASONS): each job's current one (-1: not waiting) and since when,
        #: the seconds each job waited under each, and the order in which jobs first had some
        self.reasons = ReasonTable(sim.n, REASONS, lambda: self.sim.now)

    # ---------------------------------------------------------------- priorities

    def computed(self, jobs: np.ndarray, at: np.ndarray | int | None) -> np.ndarray:
        """The priorities of ``jobs`` with their ages taken at ``at`` (a time per job, or one for
        all; None: age 0, as at submission), the fair-share factors as of the last calculation: :func:`multifactor`
        over arrays, truncated as int() does."""
        index = np.asarray(jobs, dtype=np.int64)
        if not len(index):
            return np.zeros(0, dtype=np.int64)
        age = (at - self.submit[index]) if at is not None else np.zeros(len(index), dtype=np.int64)
        size_f, partition_f, qos_f, assoc_f = (f[index] for f in self.static_factors)
        factors = {"age": age_factor(age, self.max_age), "fairshare": self.fairshare_factors()[self.pair_index[index]],
                   "jobsize": size_f, "partition": partition_f, "qos": qos_f, "assoc": assoc_f, "tres": self.tres[index]}
        return weighted_sum(self.weights, factors, np.zeros(len(index))).astype(np.int64)

    def priorities(self) -> dict[int, int]:
        """Each waiting job's priority now (as the last order has them; for tests and squeue-like views)."""
        order = self.ordered()
        return dict(zip(order.tolist(), self._priorities(order, self.sim.now).tolist()))

    def usages(self) -> dict[tuple[str, str], float]:
        """Each user association's usage as accrued by the last calculation, by (account, user)."""
        return dict(zip(self.users, self.usage.tolist()))

    def fairshare_factors(self) -> np.ndarray:
        """Each (account, user) pair's fair-share factor as of the last calculation, made when first
        asked after it (from the usage it accrued)."""
        if self.factors_due:
            self.factors_due = False
            flat = self.tree_arrays
            if flat is not None and flat.usable:
                self.pair_fairshare = flat.pair_factors(self.usage)
            else:
                root = self.tree
                for node, value in zip(self.users.values(), self.usage.tolist()):
                    node.usage = value
                factors = fair_tree_factors(root) if self.fair_tree else classic_factors(root)
                missing = 1.0 if not factors else 0.0
                self.pair_fairshare = np.array([factors.get(key, missing) for key in self.pair_keys])
        return self.pair_fairshare

    def recalculate_if_due(self) -> None:
        """Slurm's priority thread runs every PriorityCalcPeriod on its own timer (from the first
        submission here): the latest of its runs not after now is done if it was not yet, with
        usage and ages as of that run's time. The usage is accrued now; the factors and the
        priorities are made when a pass first asks for the order (the same values: they depend only
        on the usage and the time of this calculation)."""
        now, period = self.sim.now, max(int(self.period), 1)
        origin = self.origin
        at = now - (now - origin) % period
        if self.calculated is not None and at <= self.calculated:
            return
        if self.calculated is not None and (len(self.accruing) or self.new_started):
            # runs missed while nothing waited: the decay thread ran them all, and a running job's
            # usage is added (and decayed) per run, so they are caught up one by one
            step = self.calculated + period
            while step < at:
                self.accrue(step)
                self.calculated = step
                step += period
        self.accrue(at)
        self.factors_due = True
        self.calculated = at
        self.calculations += 1

    def accrue(self, now: int) -> None:
        """Usage as slurmctld's decay thread keeps it (priority_multifactor.c, 22.05): per second
        the decay factor is d = 1 - 0.693 / PriorityDecayHalfLife; at each calculation every
        association's usage is multiplied by d^Δ (Δ: seconds since the previous calculation), then
        each running job adds CPU-seconds x d^t for the t seconds it ran since then (Slurm's
        ``run_delta * pow(decay_factor, run_delta)``: a period's new usage is itself decayed). A
        job that ended since the previous calculation added its CPU-seconds x d^t at its end
        (t: from the previous calculation or its start to its end), which this calculation's
        decay then takes too. Without a half-life nothing decays. At a PriorityUsageResetPeriod
        reset (the first calculation at or past it) the usage is zeroed before the decay, with the
        usage of the jobs that ended since the previous one. In arrays: each job's
        CPU-seconds are added to its user's usage in the order the jobs started, as a loop over
        them would (np.add.at adds in index order: the same sums to the last bit)."""
        self.limits.run_time_until(now)     # the same thread takes the running jobs' time off GrpTRESRunMins
        reset = self.reset_at is not None and now >= self.reset_at       # (before the decay and the new usage)
        if reset:
            self.reset_at = self._next_reset(int(self.reset_at or 0))
        usage = self.usage
        factor = 1.0 - 0.693 / self.halflife if self.halflife > 0 else 1.0
        previous = self.calculated if self.calculated is not None else now - max(int(self.period), 1)
        jobs = np.concatenate((self.accruing, np.asarray(self.new_started, dtype=np.int64)))
        self.new_started = []
        if len(jobs):
            end = self.ended_at[jobs]
            ended = (end >= 0) & (end <= now)
            until = np.where(ended, end, now)
            since = self.since[jobs]
            users = self.user_index[jobs]
            seconds = (until - since).astype(np.float64)
            cpu_seconds = self.job_size[jobs] * seconds * factor ** seconds
            if self.limits.charge is not None:     # x the job QOS's UsageFactor (slurmlimits.usage_factors)
                cpu_seconds = cpu_seconds * self.limits.charge[jobs]
            done = (users >= 0) & (until > since) & ended        # added at their ends, decayed below
            np.add.at(usage, users[done], cpu_seconds[done])
            if reset:
                usage[:] = 0.0
            usage *= factor ** (now - previous)
            running = (users >= 0) & (until > since) & ~ended
            np.add.at(usage, users[running], cpu_seconds[running])
            self.since[jobs] = np.maximum(until, since)
            self.accruing = jobs[~ended]
            spent = (jobs, np.maximum(seconds, 0.0), ended)
        else:
            if reset:
                usage[:] = 0.0
            usage *= factor ** (now - previous)
            spent = (jobs, np.zeros(0), np.zeros(0, dtype=bool))
        if self.limits.usage and self.limits.accrue_usage(*spent, factor, now - previous, reset=reset):
            # GrpTRESMins / GrpWall hold jobs until the decay thread lowers the usage: its next run is a pass
            self.sim.wake_at(now + max(int(self.period), 1))

    def _next_reset(self, after: int) -> int | None:
        """The simulated time of the usage reset after simulated time ``after`` (a reset, or the start;
        slurm.conf's PriorityUsageResetPeriod, engine.platform.slurmconf.next_usage_reset), None if none."""
        if self.epoch is None:
            return None
        found = next_usage_reset(self.reset_period, self.epoch + after)
        return None if found is None else found - self.epoch

    def ended(self, job: int) -> None:
        """A job's end (a finish listener), for the accrual."""
        self.ended_at[job] = self.sim.now

    # ---------------------------------------------------------------- pending reasons

    def waiting_jobs(self) -> np.ndarray:
        """The waiting jobs, by number."""
        return np.flatnonzero(self.member)

    # ---------------------------------------------------------------- the queue

    def add(self, job: int) -> None:
        """A submission: refused if it can never run or the user is at a submit limit, else queued
        with the reason slurmctld gives it at submission (:meth:`_submission_reason`)."""
        refusal = self.limits.never(job) or self.limits.at_submit(job)
        if refusal is not None:
            self.sim.refuse(job, refusal.reason, refusal.limit)
            return
        self.limits.submitted(job)
        if self.queued[job]:        # queued again: the order may hold it twice, merged the long way
            self.order_keys = None
        self.queued[job] = True
        reason = self._submission_reason(job)
        self.member[job] = True
        self.waiting += 1
        self.arrived.append(job)
        self.reasons.queued(job, reason)

    def _submission_reason(self, job: int) -> int:
        """The pending reason slurmctld gives a batch job at its submission (job_mgr.c job_allocate,
        22.05.8; sbatch's jobs are not started there, only tested): a limit that
        acct_policy_job_runnable_pre_select names (select_nodes' test-only call; slurmlimits
        BEFORE_SELECT), else Priority when :meth:`_top_priority` finds a waiting job above it,
        else None until a pass looks at it, as squeue shows."""
        if self.limits.any_hold:
            code = self.limits.held_code(job)
            if code and not AFTER_SELECT[code]:
                return HOLD + code
        return NONE if self._top_priority(job) else PRIORITY

    def _top_priority(self, job: int) -> bool:
        """job_mgr.c _top_priority: whether no waiting job that a limit does not hold (its reason
        is not a limit's) is above ``job``, in a partition sharing nodes with its own: a higher
        PriorityTier, or the same and a higher priority (priorities as the last calculation made
        them, a new job's as at its submission). The order is sorted that way: it is walked from its
        head to the first job not above, then the jobs queued since are looked at."""
        self.recalculate_if_due()
        if self.ordered_after != self.calculations:
            self.ordered()          # (re-priced after a calculation, as the next pass would: the same order)
        mine = int(self._priorities(np.array([job], dtype=np.int64), self.sim.now)[0])
        if self.priced_after != self.calculations:
            self.priced, self.priced_after = {}, self.calculations
        self.priced[job] = mine
        rank, overlap = int(self.tier_rank[job]), self.part_overlap[self.part_number[job]]
        member, reason, tier_rank = self.member, self.reasons.reason, self.tier_rank

        def outranks(other: int, priority: int) -> bool:
            other_rank = int(tier_rank[other])
            return other_rank < rank or other_rank == rank and priority > mine

        def counts(other: int) -> bool:
            return bool(member[other]) and reason[other] <= HOLD and bool(overlap[self.part_number[other]])

        for other, priority in _pairs(self.order, self.order_priority):
            if not outranks(other, priority):
                break               # (nor does any job after it)
            if counts(other):
                return False
        if not self.arrived:
            return True
        arrived, priorities = self._arrivals()
        return not any(outranks(other, priority) and counts(other)
                       for other, priority in zip(arrived.tolist(), priorities.tolist()))

    def current_priorities(self, jobs: np.ndarray) -> np.ndarray:
        """The priorities ``jobs`` have now as slurmctld holds them: those of the last order, or their
        price at submission for the jobs queued since (0 for any other)."""
        known = dict(zip(self.order.tolist(), self.order_priority.tolist()))
        known.update(self.priced)
        return np.array([known.get(job, 0) for job in np.asarray(jobs).tolist()], dtype=np.int64)

    def remove(self, job: int) -> None:
        if not self.member[job]:
            raise SimulationError(f"{self.sim.job_name(job)} is not in the waiting queue")
        self.member[job] = False
        self.left = True
        self.waiting -= 1
        self.reasons.stop(job)

    def held(self, job: int) -> str:
        """Slurm's pending reason when a limit holds the job now, else ""."""
        return self.limits.held(job)

    def ordered(self) -> np.ndarray:
        """Every waiting job in Slurm's order (PriorityTier, priority, submission), held ones too.

        Priorities change only at a calculation: between two, the order is the last one without
        the jobs that left, with the new jobs merged in (priced as at their submission). After a
        calculation every priority is made again, and the last order re-sorted (mostly in order
        already: a stable sort's runs)."""
        self.recalculate_if_due()
        if self.left and self.arrived:      # (a job queued since may have started from a pass's head)
            self.arrived = [job for job in self.arrived if self.member[job]]
        order, priority, keys = self.order, self.order_priority, self.order_keys
        arrived = arrived_priority = NO_JOBS
        if self.ordered_after == self.calculations:
            arrived, arrived_priority = self._arrivals()
            if keys is not None and (self.left or len(arrived)):
                kept, *merged = self._keyed_merge(order, priority, keys, self.member, self.left, arrived,
                                                  arrived_priority, self.tier_rank, self.key_high, self.sim.n)
                if kept:
                    self.left, self.arrived = False, []
                    self.order, self.order_priority, self.order_keys = merged
                    return self.order
        if self.left:       # (else every job of the order still waits: the filter would keep them all)
            self.left = False
            kept = self.member[order]
            order, priority = order[kept], priority[kept]
            keys = keys[kept] if keys is not None else None
        if self.arrived and self.ordered_after == self.calculations:
            self.arrived = []
            merged = self._merged(order, priority, arrived, arrived_priority)
            if merged is None:
                order, priority = np.concatenate((order, arrived)), np.concatenate((priority, arrived_priority))
                sorting = self._sorting(order, priority)
                order, priority = order[sorting], priority[sorting]
            else:
                order, priority = merged
            keys = self._keyed(order, priority)
        elif self.arrived or self.ordered_after != self.calculations:
            if self.arrived:
                order = np.concatenate((order, np.asarray(self.arrived, dtype=np.int64)))
                self.arrived = []
            priority = self._priorities(order, self.sim.now)
            sorting = self._sorting(order, priority)
            order, priority = order[sorting], priority[sorting]
            self.ordered_after = self.calculations
            keys = self._keyed(order, priority)
        self.order, self.order_priority, self.order_keys = order, priority, keys
        return order

    def ordered_head(self, depth: int) -> np.ndarray:
        """The first ``depth`` jobs of :meth:`ordered`, as far as a main scheduler's pass of
        default_queue_depth jobs walks, made without remaking the whole order when no calculation
        came since it was made: the order's jobs still waiting and those queued since, merged only
        that far (slurmkernels.keyed_head; the whole order is made at the next :meth:`ordered`)."""
        self.recalculate_if_due()
        if self.ordered_after == self.calculations and self.order_keys is not None:
            arrived, arrived_priority = self._arrivals()
            kept, head = self._keyed_head(self.order, self.order_keys, self.member, arrived, arrived_priority,
                                          self.tier_rank, self.key_high, self.sim.n, depth)
            if kept:
                return head
        return self.ordered()[:depth]

    def _arrivals(self) -> tuple[np.ndarray, np.ndarray]:
        """The jobs queued since the last order (:attr:`arrived`) and their :meth:`_priorities` now,
        as the compiled merges take them (NO_JOBS for none): those :meth:`_top_priority` priced at
        their submission after the calculation that is still the last keep that price (the same
        value: a new job's price depends only on the calculation)."""
        if not self.arrived:
            return NO_JOBS, NO_JOBS
        arrived = np.asarray(self.arrived, dtype=np.int64)
        if self.priced_after == self.calculations:
            known = [self.priced.get(job) for job in self.arrived]
            if None not in known:
                return arrived, np.array(known, dtype=np.int64)
        return arrived, self._priorities(arrived, self.sim.now)

    def _key_space(self, span: int) -> bool:
        """Whether one int64 key (tier rank, priority within ``span`` values, job number) orders every job."""
        return self.tiers * span * self.sim.n < 2 ** 62

    def _keyed(self, order: np.ndarray, priority: np.ndarray) -> np.ndarray | None:
        """The int64 keys of ``order``'s jobs in the run's fixed key space (see ``order_keys``), or
        None if a priority is outside it, the keys would not fit, or the order is not strictly
        increasing by them (a lexsort's order whose ties the submission broke)."""
        high = self.key_high
        n = self.sim.n
        if not self._key_space(high + 1) or (len(priority) and (int(priority.min()) < 0 or int(priority.max()) > high)):
            return None
        keys = (self.tier_rank[order] * (high + 1) + (high - priority)) * n + order
        if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            return None
        return keys

    def _merged(self, order: np.ndarray, priority: np.ndarray, arrived: np.ndarray,
                arrived_priority: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The last order (``order``, sorted, with its jobs' ``priority``: unchanged since, as no
        calculation came between) with the ``arrived`` jobs merged in: what :meth:`_sorting` of
        them all gives when its one int64 key does (None otherwise: then they are sorted)."""
        both = np.concatenate((priority, arrived_priority))
        if not len(both):
            return order, priority
        low, high = int(both.min()), int(both.max())
        span, n = high - low + 1, self.sim.n
        if not self._key_space(span):
            return None
        keys = (self.tier_rank[order] * span + (high - priority)) * n + order
        if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):     # (sorted otherwise: the lexsort's ties)
            return None
        new_keys = (self.tier_rank[arrived] * span + (high - arrived_priority)) * n + arrived
        sorting = np.argsort(new_keys)
        at = np.searchsorted(keys, new_keys[sorting])
        return np.insert(order, at, arrived[sorting]), np.insert(priority, at, arrived_priority[sorting])

    def _priorities(self, jobs: np.ndarray, now: int) -> np.ndarray:
        """The priorities of waiting ``jobs``: those submitted by the last calculation as of it, the
        others as slurmctld prices a new job at submission (set_job_prio): the last calculation's
        fair-share and no age (sprio shows age 0 until the next calculation)."""
        at = self.calculated if self.calculated is not None else now
        if len(jobs) <= FEW_JOBS:
            return self._few(jobs, at)
        return self.computed(jobs, np.where(self.submit[jobs] > at, self.submit[jobs], at))

    def _few(self, jobs: np.ndarray, at: int) -> np.ndarray:
        """:meth:`computed`'s priorities of a few ``jobs`` (ages taken at ``at``, or at submission
        if later), job by job in Python floats: the same formula as the arrays' (:func:`age_factor`,
        :func:`multifactor`) over floats, so the same values, without numpy's costs per call (most
        passes merge one or two new jobs)."""
        fairshare = self.fairshare_factors()
        size_f, partition_f, qos_f, assoc_f = self.static_factors
        max_age, weights, tres = self.max_age, self.weights, self.tres
        out = []
        for job, submit, pair in zip(jobs.tolist(), self.submit[jobs].tolist(), self.pair_index[jobs].tolist()):
            factors = {"age": age_factor((submit if submit > at else at) - submit, max_age),
                       "fairshare": float(fairshare[pair]), "jobsize": float(size_f[job]),
                       "partition": float(partition_f[job]), "qos": float(qos_f[job]), "assoc": float(assoc_f[job]),
                       "tres": float(tres[job])}
            out.append(multifactor(weights, factors))
        return np.array(out, dtype=np.int64)

    def _sorting(self, jobs: np.ndarray, priority: np.ndarray) -> np.ndarray:
        """The permutation of ``jobs`` into (higher PriorityTier, higher priority, earlier job) order."""
        if not len(jobs):
            return np.zeros(0, dtype=np.int64)
        low, high = int(priority.min()), int(priority.max())
        span, n = high - low + 1, self.sim.n
        if self._key_space(span):   # one int64 key (unique: it ends in the job's number)
            return np.argsort((self.tier_rank[jobs] * span + (high - priority)) * n + jobs, kind="stable")
        return np.lexsort((jobs, self.submit[jobs], -priority, self.tier_rank[jobs]))

    def jobs(self) -> list[int]:
        return [j for j in self.ordered().tolist() if not self.held(j)]

    def __len__(self) -> int:
        """Waiting jobs a pass may start: those no limit holds."""
        return sum(1 for j in np.flatnonzero(self.member).tolist() if not self.held(j))

    def head(self) -> int:
        return self.jobs()[0]

    def may_start(self, job: int) -> bool:
        return not self.held(job)

    def started(self, job: int) -> None:
        self.since[job] = self.sim.now
        self.new_started.append(job)
        self.limits.started(job)


class FlatTree:
    """The association tree in arrays for the compiled Fair Tree (slurmkernels.fair_tree): node 0
    the root, the others in depth-first order; ``usable`` unless two user associations have the
    same (account, user) (then the Python rules decide which one's factor counts)."""

    def __init__(self, root: Node, users: dict[tuple[str, str], Node], pair_keys: list[tuple[str, str]]) -> None:
        nodes: list[Node] = []
        stack = [root]
        while stack:
            node = stack.pop()
            nodes.append(node)
            stack.extend(reversed(node.children))
        index = {id(node): i for i, node in enumerate(nodes)}
        self.usable = len(users) == sum(1 for node in nodes if node.user)
        self.is_user = np.array([bool(node.user) for node in nodes], dtype=np.bool_)
        self.shares = np.array([node.shares for node in nodes], dtype=np.float64)
        children: list[int] = []
        first = [0]
        for node in nodes:
            children.extend(index[id(c)] for c in node.children)
            first.append(len(children))
        self.first_child = np.array(first, dtype=np.int64)
        self.children = np.array(children, dtype=np.int64)
        self.postorder = np.arange(len(nodes) - 1, -1, -1, dtype=np.int64)
        slot = {id(node): i for i, node in enumerate(users.values())}
        self.user_slot = np.array([slot.get(id(node), -1) for node in nodes], dtype=np.int64)
        self.count = int(self.is_user.sum())
        self.pair_node = np.array([index[id(users[key])] if key in users else -1 for key in pair_keys], dtype=np.int64)
        self.missing = 1.0 if not self.count else 0.0
        self.factor = np.zeros(len(nodes))

    def pair_factors(self, usage: np.ndarray) -> np.ndarray:
        """Each pair's factor from the users' ``usage`` (pairs without a user association: 0, or
        1 when the tree has no users at all, as the Python rules give)."""
        if self.count:
            kernels.fair_tree(self.is_user, self.shares, self.first_child, self.children, self.postorder,
                              self.user_slot, usage, self.count, self.factor)
        found = self.pair_node >= 0
        return np.where(found, self.factor[np.where(found, self.pair_node, 0)], self.missing)


def _column(jobs: Any, name: str, n: int) -> list[str]:
    if name not in jobs:
        return [""] * n
    return [str(v) for v in jobs[name].tolist()]


def slurm_priority(sim: Simulation, params: dict) -> WaitingQueue:
    return SlurmPriorityQueue(sim, params)


register_ordering(Component("slurm", slurm_priority, PARAMS,
                            "Slurm's multifactor priority from the site's slurm.conf and sacctmgr dumps"))





class SlurmBackfill(Algorithm):
    """Slurm's two schedulers as slurm.conf's SchedulerParameters set them (slurm.conf(5),
    sched_config.html), on the site's ordering (the ``slurm`` ordering: tiers, priority, limits).

    * The main scheduler walks the jobs in priority order and starts each that fits now; when one
      does not fit (reason ``Resources``) its partition's nodes are reserved for it for the rest of
      the pass: later jobs of that partition wait (``Priority``); the first job of a partition whose
      nodes are all within reserved ones gets :data:`RESERVED_FOR_HIGHER` and its partition fails
      too. It runs over the whole queue every ``sched_interval`` seconds and, asked by a submission
      or a job's end, over the first ``default_queue_depth`` + 1 jobs (job_scheduler.c:
      ``job_depth++ > def_job_limit``) at the controller's background loop's next check (within a
      second: ``request_delay``) once ``batch_sched_delay`` seconds have passed since it last ran
      (controller.c); with ``main_at_events`` at every submission and end
      without that delay. ``sched_interval`` 0: no main scheduler (Slurm's -1).
    * The backfill scheduler runs as Slurm's backfill thread does (backfill.c backfill_agent):
      ``bf_interval`` seconds (``sched_cycle``) after its previous pass if a job was updated since
      (a pass that tested jobs did: so every bf_interval while jobs wait), else at the first
      submission, end or start after that (``backfill_agent`` off: every bf_interval from the first
      submission). It walks the first ``bf_max_job_test`` jobs in priority order (``backfill_bound``
      overrides), at most ``bf_max_job_user`` per user (0: any), skipping those a limit holds; each
      starts now if it fits now and ends before every earlier job's reservation begins (Slurm's
      table: an entry beginning at or before the job's end overlaps it), else is reserved at its
      earliest start if that is within ``bf_window`` minutes (later: no reservation, it does not
      hold back later jobs). The earliest start is the select plugin's will-run test's (the running
      jobs, those started in the pass included, freed in batches: :class:`WillRun`), or the end of
      an earlier reservation it would overlap. A reservation runs from the start rounded down to
      ``bf_resolution`` to start + limit rounded down (at least one bf_resolution) and takes whole
      nodes (``whole_node_reservations``): Slurm's backfill keeps the future as node bitmaps, so a
      later job may not run on a reserved job's nodes during its planned span even where processors
      would be left. Reservations are rebuilt at every pass (Slurm keeps none between passes).

    ``bf_continue`` changes nothing here: a pass takes no simulated time, so there are no lock
    yields after which it could go on or start over. Each parameter is the site's value unless
    given (-1 = the site's). ``sched_cycle`` 0 runs the backfill pass at every submission and end.
    """

    _main_walk: Any         # slurmkernels.main_walk and backfill_walk (set in __init__ by bind_direct)
    _backfill_walk: Any

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        site = sim.context.get("slurm_site")
        conf = site.conf.scheduler if isinstance(site, SlurmSite) else dict(SCHEDULER_DEFAULTS)

        def setting(name: str, key: str) -> int:
            value = float(params.get(name, FROM_SITE))
            return int(value) if value >= 0 else int(conf.get(key, SCHEDULER_DEFAULTS.get(key, 0)))

        self.cycle = setting("sched_cycle", "bf_interval")
        self.sched_interval = setting("sched_interval", "sched_interval")
        self.queue_depth = setting("default_queue_depth", "default_queue_depth")
        self.resolution = setting("bf_resolution", "bf_resolution")
        self.window = setting("bf_window", "bf_window") * 60
        self.max_job_user = setting("bf_max_job_user", "bf_max_job_user")
        self.max_job_part = setting("bf_max_job_part", "bf_max_job_part")
        self.max_job_user_part = setting("bf_max_job_user_part", "bf_max_job_user_part")
        self.max_job_start = setting("bf_max_job_start", "bf_max_job_start")
        self.sched_max_job_start = setting("sched_max_job_start", "sched_max_job_start")
        self.partition_depth = setting("partition_job_depth", "partition_job_depth")
        self.min_age_reserve = setting("bf_min_age_reserve", "bf_min_age_reserve")
        self.min_prio_reserve = setting("bf_min_prio_reserve", "bf_min_prio_reserve")
        #: the jobs a pass may not reserve for (TEST_NOW_ONLY), marked for the pass's order only
        self.no_reserve = np.zeros(sim.n, dtype=np.bool_)
        self.main_at_events = bool(params.get("main_at_events", False))
        #: the main scheduler at the controller's requests (controller.c _slurmctld_background,
        #: queue_job_scheduler): a submission or a job's end (its epilog-complete, agent.c) asks for
        #: it; the background loop runs it over default_queue_depth jobs once batch_sched_delay
        #: seconds have passed since it last ran it (its full pass every sched_interval included)
        self.batch_delay = setting("batch_sched_delay", "batch_sched_delay")
        #: a request is seen at the loop's next check: it sleeps ten times 100 ms between its checks
        #: of job_sched_cnt (controller.c _slurmctld_background), so 0-1 s after the submission or
        #: end (rec2's log: uniform over 0.05-1.0 s); in whole seconds the same second or the next
        #: about equally often. 0 (the default): the same second; 1: the next (it moved the
        #: 20-phase averages away from both recordings: benchmarks/slurm_fidelity_sweep.py)
        self.tick = int(float(params.get("request_delay", 0)))
        self.requested = False
        self.requested_at = 0
        self.origin = int(min(sim.submit)) if sim.n else 0
        self.last_sched = self.origin       # the background loop's last run (its timers start at the origin)
        #: jobs one pass tests: backfill_bound when set, else the site's bf_max_job_test
        bound = bounded(params)
        if bound is None and isinstance(site, SlurmSite):
            bound = int(site.conf.scheduler.get("bf_max_job_test", 500))
        self.bound: int = bound if bound is not None else 1 << 62
        self.job_size = np.asarray(sim.size, dtype=np.int64)
        #: a pool of processors counted: sim.free is what the availability profile has free now
        self.pool = type(sim.allocator) is CountAllocator
        partitions = site.conf.partitions if isinstance(site, SlurmSite) else {}
        self.part_nodes = {name: frozenset(p.nodes) for name, p in partitions.items()}
        self.event = False
        self.stale_main = self.stale_backfill = True
        self.agent = bool(params.get("backfill_agent", True))
        self.last_backfill: int | None = None     # (backfill.c's last_backfill_time)
        #: backfill.c _more_work(): a job updated since the last pass (that pass tested jobs: it set
        #: last_job_update in its own second; or a submission, end or start since)
        self.more_work = True
        self.had_waiting = False    # jobs waited since the last call (the queue changes only at calls)
        nodesets = site.conf.nodes if isinstance(site, SlurmSite) else []
        whole = bool(params.get("whole_node_reservations", True))
        #: CPUs per node of the site (the smallest node's, if they differ) when reservations take whole nodes
        self.cpus_per_node = min((n.cpus for n in nodesets), default=1) if whole else 1
        self.walk = Walk(sim, queue, self.part_nodes)
        self.caps, self.cap_keys, self.counts, self.ahead, self.held = self._pass_caps()
        # the passes' compiled walks, called directly (numba's dispatch types each of their some
        # thirty arguments at every call: about as long as a main pass's walk of a short queue)
        bind_direct(self, "_main_walk", kernels.main_walk)
        bind_direct(self, "_backfill_walk", kernels.backfill_walk)
        #: a backfill pass on its timer does not see the jobs that ended in its own second (see backfill_pass)
        self.ends_after_backfill = bool(params.get("ends_after_backfill", True)) and self.pool and self.cycle > 0
        self.ended_at = -1
        self.ended: list[int] = []
        self.running = Running(sim.n)
        self.profile = Profile(sim.capacity)
        self.least = np.zeros(0, dtype=np.int64)     # the backfill walk's scratch: the profile's prefix minima
        if isinstance(site, SlurmSite) and bool(params.get("time_limit_check", True)):
            sim.limit_check = time_limit_check(sim, site, getattr(queue, "partition", None),
                                               self.origin + int(float(params.get("limit_check_phase", 0.0))))

    def _pass_caps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """bf_max_job_user, bf_max_job_part and bf_max_job_user_part as the backfill walk counts them
        (kernels.over_caps): the caps set (> 0), each job's slot under each (its user's, its
        partition's, its user's in its partition: one array of counts for all), and the counts, the
        look-ahead's copy of them and the held jobs' (backfill.c _job_exceeds_max_bf_param)."""
        walk = self.walk
        user, part = walk.user, walk.partition.astype(np.int64)
        kinds = ((self.max_job_user, lambda: user), (self.max_job_part, lambda: part),
                 (self.max_job_user_part, lambda: np.unique(user * (int(part.max(initial=0)) + 1) + part,
                                                            return_inverse=True)[1].reshape(-1)))
        caps, columns, offset = [], [], 0
        for cap, slots in kinds:
            if cap > 0:
                column = np.asarray(slots(), dtype=np.int64)
                caps.append(cap)
                columns.append(column + offset)
                offset += int(column.max(initial=-1)) + 1
        keys = np.ascontiguousarray(np.stack(columns, axis=1)) if columns else np.zeros((len(user), 0), dtype=np.int64)
        counts = np.zeros(max(offset, 1), dtype=np.int64)
        return np.array(caps, dtype=np.int64), keys, counts, np.zeros_like(counts), np.zeros_like(counts)

    # ---------------------------------------------------------------- the loop's calls

    def on_submit(self, job: int) -> None:
        super().on_submit(job)
        self.event = True
        self.request()

    def on_finish(self, job: int) -> None:
        self.event = True
        self.request()
        self.running.remove(self.sim.expected_end(job), job)
        if self.ended_at != self.sim.now:
            self.ended_at, self.ended = self.sim.now, []
        self.ended.append(job)

    def request(self) -> None:
        """queue_job_scheduler() (controller.c): the first request since the main scheduler last ran dates it."""
        if not self.requested:
            self.requested, self.requested_at = True, self.sim.now

    def on_grid(self, cycle: int) -> bool:
        """Whether a pass of this cycle (every ``cycle`` seconds from the first submission) falls now."""
        return cycle <= 0 or (self.sim.now - self.origin) % cycle == 0

    def next_on_grid(self, cycle: int) -> int:
        now = self.sim.now
        return now - (now - self.origin) % cycle + cycle

    def schedule(self) -> None:
        """The passes due now. Slurm runs them on their timers whether or not anything happened;
        a pass with nothing changed since the last one (no submission, end, start or priority
        calculation) would start nothing, so it is skipped, and none is asked for while nothing runs
        and nothing changed (a job that can never start then ends the run as stuck)."""
        event, self.event = self.event, False
        queue, sim = self.queue, self.sim
        if event:
            self.stale_main = self.stale_backfill = True
        if self.agent:
            self.settle_backfill()
            self.more_work = self.more_work or event
        if not (queue.waiting if isinstance(queue, SlurmPriorityQueue) else len(queue)):
            self.requested = False      # (the background loop's run for it finds nothing to start)
            if self.agent and self.backfill_due():     # (a pass with no job to test: it updates none)
                self.last_backfill, self.more_work = sim.now, False
            self.had_waiting = False
            return
        calculations = queue.calculations if isinstance(queue, SlurmPriorityQueue) else 0
        if isinstance(queue, SlurmPriorityQueue):
            queue.recalculate_if_due()
            if queue.calculations != calculations:
                self.stale_main = self.stale_backfill = True
        started = sim.started
        if self.sched_interval > 0 and self.on_grid(self.sched_interval):
            self.requested, self.last_sched = False, sim.now     # (the full pass runs, whether stale or not)
            if self.stale_main:
                self.main_pass(None)
                self.stale_main = False
        elif self.requested and self.sched_interval > 0 and sim.now >= self.request_due():
            self.requested, self.last_sched = False, sim.now     # (the full pass runs, whether stale or not)
            self.main_pass(self.queue_depth + 1)
        elif event and self.main_at_events:
            self.main_pass(self.queue_depth + 1)
        if sim.started != started:
            self.stale_backfill = self.more_work = True
        if self.backfill_due():
            if self.stale_backfill:
                started = sim.started
                self.backfill_pass()
                # a pass that started jobs may have left others it did not test (bf_max_job_test,
                # bf_max_job_user): the next one is not skipped
                self.stale_backfill = sim.started != started
                self.stale_main = self.stale_main or self.stale_backfill
            # (a pass skipped as it could start nothing still ran in Slurm: it tested the jobs)
            self.last_backfill, self.more_work = sim.now, True
        self.had_waiting = bool(queue.waiting if isinstance(queue, SlurmPriorityQueue) else len(queue))
        if self.requested and self.sched_interval > 0:
            sim.wake_at(max(self.request_due(), sim.now + 1))
        if self.agent:
            if self.stale_backfill and self.more_work:
                sim.wake_at(max(self.last_backfill + self.cycle, sim.now + 1) if self.last_backfill is not None
                            else sim.now + 1)
            if self.sched_interval > 0 and (sim.running_ends or self.stale_main):
                sim.wake_at(self.next_on_grid(self.sched_interval))
        elif sim.running_ends or self.stale_main or self.stale_backfill:
            for cycle in (self.cycle, self.sched_interval):
                if cycle > 0:
                    sim.wake_at(self.next_on_grid(cycle))

    def request_due(self) -> int:
        """When the background loop runs the main scheduler a submission or end asked for: at its
        first tick after the request once batch_sched_delay has passed since it last ran it."""
        return max(self.requested_at + self.tick, self.last_ran() + self.batch_delay)

    def last_ran(self) -> int:
        """When the controller's background loop last ran the main scheduler: at a request, or its
        full pass every sched_interval, which it runs also while nothing waits (and this loop is
        not asked)."""
        now = self.sim.now
        return max(self.last_sched, now - (now - self.origin) % self.sched_interval)

    def backfill_due(self) -> bool:
        """With ``backfill_agent``, as Slurm's backfill thread does (backfill.c backfill_agent): it
        sleeps bf_interval after a pass, then runs if _more_work() (last_job_update >=
        last_backfill_time), else looks again every second. A pass that tests jobs updates them in
        its own second (_start_job; a planned start moved), so while jobs wait the passes come every
        bf_interval (767 of the 770 passes that tested jobs in tests/data/slurm_replay_debug's log);
        after one with no job to test, at the first submission, end or start. Its
        job_is_completing() test defers nothing unless CompleteWait is set (job_scheduler.c), which
        the replay does not model. Off: on the bf_interval grid from the first submission."""
        if not self.agent:
            return self.on_grid(self.cycle)
        return self.last_backfill is None or (self.more_work and self.sim.now >= self.last_backfill + self.cycle)

    def settle_backfill(self) -> None:
        """The backfill thread's passes since the last call, none of which could start a job
        (nothing changed; with a change the loop is woken for the pass): while each found more work
        (backfill_agent: it sleeps bf_interval, then runs if _more_work()), one every bf_interval;
        a pass more work since each tested the jobs waiting (the queue as the last call left it)."""
        last, cycle = self.last_backfill, self.cycle
        if last is None or cycle <= 0 or not self.more_work or last + cycle >= self.sim.now:
            return
        # the first pass; with jobs waiting, each found more work: the last one before now
        steps = (self.sim.now - 1 - last) // cycle if self.had_waiting else 1
        self.last_backfill, self.more_work = last + steps * cycle, self.had_waiting

    # ---------------------------------------------------------------- the passes

    def start(self, job: int) -> None:
        super().start(job)
        self.running.add(self.sim.start_time[job] + self.sim.estimate[job], job, self.sim.size[job])

    def _order(self, depth: int | None = None) -> np.ndarray:
        """The waiting jobs in the queue's order, all or the first ``depth``."""
        queue = self.queue
        if isinstance(queue, SlurmPriorityQueue):
            return queue.ordered() if depth is None else queue.ordered_head(depth)
        order = np.asarray(queue.jobs(), dtype=np.int64)
        return order if depth is None else order[:depth]

    def main_pass(self, depth: int | None) -> None:
        """Slurm's main scheduler: priority order, each job that fits starts; one that does not
        reserves its partition's nodes for the rest of the pass. The walk between two jobs that
        may start (those held by a limit or behind a blocked partition get their reasons) is
        compiled (slurmkernels.main_walk)."""
        sim, walk = self.sim, self.walk
        order = self._order(depth if not self.partition_depth else None)
        if self.partition_depth:
            order = self._within_partition_depth(order, depth)
        self._mark_no_reserve(order)
        stop = len(order)
        parts, union, blocked = walk.fresh()
        i = started = 0
        while True:
            i = self._main_walk(order, i, stop, sim.now, walk.partition, blocked, *walk.limits, *walk.reasons,
                                  AFTER_SELECT)
            if i >= stop:
                break
            job = int(order[i])
            if sim.fits(job):
                self.start(job)
                started += 1
                if self.sched_max_job_start and started >= self.sched_max_job_start:
                    break   # sched_max_job_start (job_scheduler.c 1527): the pass ends at that many starts
            else:
                walk.wait(job, RESOURCES, sim.now)
                if not self.no_reserve[job]:    # (else its partition does not fail: job_scheduler.c 1955-1973)
                    kernels.block(walk.partition[job], parts, union, walk.atoms, walk.has_nodes, blocked)
            i += 1
        self._unmark(order)

    def _mark_no_reserve(self, order: np.ndarray) -> None:
        """bf_min_prio_reserve and bf_min_age_reserve: the jobs of the pass's ``order`` whose priority is
        below the one or whose wait since submission is below the other only start if they fit now
        (backfill.c 2047-2054: TEST_NOW_ONLY, no reservation; job_scheduler.c 1955-1973: the main
        scheduler does not fail their partition)."""
        if not (self.min_age_reserve or self.min_prio_reserve) or not len(order):
            return
        marked = np.zeros(len(order), dtype=np.bool_)
        if self.min_age_reserve:
            marked |= self.sim.now - np.asarray(self.sim.submit, dtype=np.int64)[order] < self.min_age_reserve
        queue = self.queue
        if self.min_prio_reserve and isinstance(queue, SlurmPriorityQueue):
            marked |= queue.current_priorities(order) < self.min_prio_reserve
        self.no_reserve[order] = marked

    def _unmark(self, order: np.ndarray) -> None:
        if self.min_age_reserve or self.min_prio_reserve:
            self.no_reserve[order] = False

    def _within_partition_depth(self, order: np.ndarray, depth: int | None) -> np.ndarray:
        """partition_job_depth (job_scheduler.c _schedule, line 1549): a pass tests at most that many
        jobs of each partition, counted in the order's first test, before any other: the others are
        passed over (a reason None becomes Priority) and not counted towards default_queue_depth. The
        order kept, cut to ``depth`` (None: whole)."""
        tested: Counter[int] = Counter()
        over = np.zeros(len(order), dtype=np.bool_)
        for k, part in enumerate(self.walk.partition[order].tolist()):
            over[k] = tested[part] >= self.partition_depth     # (job_scheduler.c counts the ones passed over too)
            tested[part] += 1
        walk, now = self.walk, self.sim.now
        if walk.tracked:
            reason = walk.reasons[0]
            for job in order[over].tolist():
                if reason[job] == NONE:
                    walk.wait(job, PRIORITY, now)
        kept = order[~over]
        return kept if depth is None else kept[:depth]

    def backfill_pass(self) -> None:
        """A backfill pass (:meth:`backfill_walk`) on the state before this second's job ends.

        The replay's seconds are sacct's; within one, slurmctld's backfill pass comes before the
        job ends in 91 of the 108 seconds its debug log shares between the two (rec2): the backfill
        thread sleeps bf_interval after each pass (backfill.c backfill_agent), so passes keep their
        phase in the second (drifting a few ms a pass), while a job it started, running a whole
        number of seconds, ends some 50 ms later in its second (slurmd's launch and its completion
        message: job 150, sleep 5: started 14:55:12.667, ended 14:55:17.724), after the pass that
        many seconds on. So the jobs that ended this second stay running for the pass (with their
        expected ends, as the select plugin still has them), and the next pass, bf_interval later,
        sees them; the main scheduler's runs at their ends are not changed. With a pool of
        processors counted and passes on their timer (``ends_after_backfill``, on by default; not
        with ``sched_cycle`` 0, where a pass is made at each end)."""
        hidden = self.ended if self.ends_after_backfill and self.ended_at == self.sim.now else []
        if not hidden:
            self.backfill_walk()
            return
        sim, running = self.sim, self.running
        held = int(sum(int(sim.size[job]) for job in hidden))
        for job in hidden:
            running.add(sim.expected_end(job), job, sim.size[job])
        sim.allocator.free -= held
        try:
            self.backfill_walk()
        finally:
            sim.allocator.free += held
            for job in hidden:
                running.remove(sim.expected_end(job), job)
        self.event = True               # the next pass is not skipped as if nothing had changed
        sim.wake_at(sim.now + 1)

    def backfill_walk(self) -> None:
        """Slurm's backfill scheduler (see the class docstring), its walk compiled
        (slurmkernels.backfill_walk), the starts made here.

        A job starts only with its processors free now. On a pool of processors counted, sim.free
        is the profile's free now, and until the first job that does not start the profile never
        decreases (running jobs only end; the jobs started take [now, now + d)): a job that fits
        now fits for its whole time, and starts. The profile is built only then, and only if a
        later job could still fit now (see the walk: between two starts a pass only takes
        processors, so once no job left to test fits now none will start, and the reservations,
        which only serve to decide later starts and which Slurm forgets, are not made): from the
        running jobs, those it started included, as the select plugin's will-run test frees them
        (:class:`WillRun`); a job started once the profile exists moves the others' batched ends
        with it."""
        sim, walk = self.sim, self.walk
        now = sim.now
        resolution = max(self.resolution, 1)
        order = self._order()
        if not len(order):
            return
        parts, union, blocked = walk.fresh()
        if len(self.caps):
            self.counts[:] = 0
            self.held[:] = 0
        horizon = now + self.window if self.window > 0 else -1
        state = np.zeros(6, dtype=np.int64)
        profile: Profile | None = None
        running = WillRun(*self.running.snapshot(), now)
        if not self.pool:
            profile = self.running_profile(running, len(order))
        none = np.zeros(1, dtype=np.int64)
        started = 0
        self._mark_no_reserve(order)
        while True:
            if profile is not None:
                state[2] = profile.length
                profile.make_room(2 * (len(order) - int(state[0])) + 4)
                if len(self.least) < len(profile.times):
                    self.least = np.zeros(len(profile.times), dtype=np.int64)
            status = self._backfill_walk(
                order, state, self.bound, self.caps, self.counts, self.cap_keys, self.job_size, walk.estimate,
                resolution, sim.free, none if profile is None else profile.times,
                none if profile is None else profile.free, now, horizon, self.cpus_per_node, sim.capacity,
                walk.partition, parts, union, walk.atoms, walk.has_nodes, blocked, *walk.limits, *walk.reasons,
                self.ahead, self.least, AFTER_SELECT, self.held, self.no_reserve)
            if profile is not None:
                profile.length = int(state[2])
            if status == kernels.DONE:
                break
            i = int(state[0])
            job = int(order[i])
            size = int(self.job_size[job])
            duration = max(int(walk.estimate[job]), 1)
            if profile is None and status in (kernels.NEEDS_PROFILE, kernels.NEVER_FITS):
                profile = self.running_profile(running, len(order))
                if status == kernels.NEEDS_PROFILE:
                    state[3] = 1
                    continue
            if status == kernels.NEVER_FITS:
                assert profile is not None
                profile.earliest_start(now, duration, size)     # (raises: the job never fits)
            state[0] = i + 1
            if profile is None:
                self.start(job)
                running.add(now + duration, size)
            elif sim.fits(job):
                self.start(job)
                running.started(profile, now + duration, size)
            else:
                walk.wait(job, int(blocked[walk.partition[job]]) or RESOURCES, now)
                kernels.block(walk.partition[job], parts, union, walk.atoms, walk.has_nodes, blocked)
                at = int(state[4])
                if (horizon < 0 or at < horizon) and not self.no_reserve[job]:
                    begin = at - at % resolution
                    profile.reserve(begin, max((at + duration) - (at + duration) % resolution, begin + resolution),
                                    self.reserved_size(size))
                continue
            started += 1
            if self.max_job_start and started >= self.max_job_start:
                break       # bf_max_job_start (backfill.c 2799): the pass ends at that many starts
        self._unmark(order)

    def running_profile(self, running: WillRun, jobs: int) -> Profile:
        """The profile of the ``running`` jobs as the select plugin's will-run test frees them
        (:class:`WillRun`: exact seconds, not bf_resolution's: the backfill table rounds only the
        pending jobs' entries), with room for two steps per job of the pass (in the arrays of the
        pass before, grown when too small: a profile lives for one pass)."""
        ends, sizes = running.batched(), running.sizes
        profile = self.profile
        profile.length = 0
        profile.make_room(len(ends) + 2 * jobs + 4)
        profile.length = kernels.running_profile(ends, sizes, len(ends), self.sim.now, 1, self.sim.capacity,
                                                 profile.times, profile.free)
        return profile

    def reserved_size(self, cpus: int) -> int:
        """What a pending job's reservation takes: Slurm's backfill reserves whole nodes (its table
        of the future is node bitmaps), so ``cpus`` rounded up to whole nodes (with
        ``whole_node_reservations``; the processors alone without)."""
        return int(kernels.reserved_size(cpus, self.cpus_per_node, self.sim.capacity))

    # ---------------------------------------------------------------- what the run shows

    def extra_columns(self) -> dict[str, Any]:
        """``slurm_reason``: the pending reason that held each job longest ("" if it never waited;
        of equal ones, the first by name)."""
        queue = self.queue
        if not isinstance(queue, SlurmPriorityQueue):
            return {}
        return {"slurm_reason": queue.reasons.longest(queue.waiting_jobs())}

    def summary(self) -> dict[str, Any]:
        """``slurm_pending``: per pending reason as Slurm names it, the jobs it held and for how many
        hours (summed job after job, in the order they first waited); ``slurm_refused``: jobs
        refused at submission per reason."""
        queue = self.queue
        if not isinstance(queue, SlurmPriorityQueue):
            return {}
        return {"slurm_pending": queue.reasons.pending(queue.waiting_jobs()),
                "slurm_refused": refused_counts(self.sim.refused)}


def time_limit_check(sim: Simulation, site: SlurmSite, partitions: list[str] | None, origin: int) -> TimeLimitCheck:
    """slurmctld's time-limit check over the replay (engine.sim.timelimit): each job's limit is its
    requested time, its grace its partition's OverTimeLimit; a job the reader cut at its limit (a
    TIMEOUT job, overruns cut) is killed at the check; one read with its recorded runtime keeps it.
    (A limit the replayed site lowers below a job's is not a shorter run here: Slurm holds such a
    job for ever, PartitionTimeLimit / QOSMaxWallDurationPerJobLimit, and engine.policies.slurmlimits
    refuses it.)"""
    jobs = sim.workload.jobs
    cut = jobs["killed"].astype(bool).tolist() if "killed" in jobs else [False] * sim.n
    names = partitions if partitions is not None else _column(jobs, "queue_name", sim.n)
    grace = {name: site.conf.over_time(name) for name in set(names)}
    return TimeLimitCheck(jobs["requested_time"].astype("int64").tolist(), [grace[p] for p in names], cut, origin)


class WillRun:
    """The running jobs of a backfill pass (those it started included) as the select plugin's
    will-run test frees them (cons_common/job_test.c _will_run_test): their expected ends sorted,
    each freeing its processors at its batch's last end (slurmkernels.will_run_ends; a job past its
    expected end in a second)."""

    def __init__(self, ends: np.ndarray, sizes: np.ndarray, now: int) -> None:
        self.ends, self.sizes, self.now = ends, sizes, now

    def batched(self) -> np.ndarray:
        out = np.empty_like(self.ends)
        kernels.will_run_ends(self.ends, len(self.ends), out)
        return np.maximum(out, self.now + 1)

    def add(self, end: int, size: int) -> int:
        """A job started now, running until ``end``; its place in the sorted arrays."""
        at = int(np.searchsorted(self.ends, end, side="right"))
        self.ends, self.sizes = np.insert(self.ends, at, end), np.insert(self.sizes, at, size)
        return at

    def started(self, profile: Profile, end: int, size: int) -> None:
        """A job started now once ``profile`` (built from these jobs' batched ends) exists: it is
        taken from now to its batched end, and the other jobs' batches move with it."""
        before = self.batched()
        at = self.add(end, size)
        after = self.batched()
        others = np.delete(after, at)
        sizes = np.delete(self.sizes, at)
        for k in np.flatnonzero(others != before).tolist():
            old, new, cpus = int(before[k]), int(others[k]), int(sizes[k])
            if new > old:
                profile.reserve(old, new, cpus)
            else:
                profile.release(new, old, cpus)
        profile.reserve(self.now, int(after[at]), size)


class Running:
    """The running jobs as arrays sorted by (expected end, job), kept as jobs start and end (the
    backfill pass builds its profile from them without a Python loop over sim.running_ends)."""

    _insert: Any        # slurmkernels.insert_running and remove_running (set in __init__ by bind_direct)
    _remove: Any

    def __init__(self, n: int) -> None:
        self.ends = np.zeros(max(n, 1), dtype=np.int64)
        self.jobs = np.zeros(max(n, 1), dtype=np.int64)
        self.sizes = np.zeros(max(n, 1), dtype=np.int64)
        self.count = 0
        bind_direct(self, "_insert", kernels.insert_running)
        bind_direct(self, "_remove", kernels.remove_running)

    def add(self, end: int, job: int, size: int) -> None:
        self._insert(self.ends, self.jobs, self.sizes, self.count, end, job, size)
        self.count += 1

    def remove(self, end: int, job: int) -> None:
        self._remove(self.ends, self.jobs, self.sizes, self.count, end, job)
        self.count -= 1

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """(expected ends, processors) of the jobs running now, copied."""
        return self.ends[:self.count].copy(), self.sizes[:self.count].copy()


class Walk:
    """What the compiled walks of a pass read and write, per job: its partition (a number), its
    user (a number), its time limit, the limits' checks and counters (engine.policies.slurmlimits:
    none for a queue other than the ``slurm`` ordering), and its pending reason with the seconds
    under each (the ``slurm`` queue's arrays; for another queue, arrays of the walk's own, unread).
    Partitions' nodes as groups of nodes (the nodes in the same partitions), so that "all its
    nodes within the blocked partitions' nodes" is a check of a few flags."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, part_nodes: dict[str, frozenset[str]]) -> None:
        n = sim.n
        names = queue.partition if isinstance(queue, SlurmPriorityQueue) else [""] * n
        known = sorted(set(names) | set(part_nodes))
        number = {name: i for i, name in enumerate(known)}
        self.partition = np.array([number[name] for name in names], dtype=np.int16 if len(known) < 2 ** 15 else np.int64)
        groups: dict[tuple[bool, ...], int] = {}
        for node in sorted(set().union(*part_nodes.values())) if part_nodes else []:
            groups.setdefault(tuple(node in part_nodes.get(name, ()) for name in known), len(groups))
        self.atoms = np.zeros((len(known), max(len(groups), 1)), dtype=np.bool_)
        for member, a in groups.items():
            for p, inside in enumerate(member):
                self.atoms[p, a] = inside
        self.has_nodes = np.array([bool(part_nodes.get(name)) for name in known], dtype=np.bool_)
        users = np.unique(np.asarray(sim.user, dtype=np.int64), return_inverse=True)[1] if n else np.zeros(0)
        self.user = np.asarray(users, dtype=np.int64).reshape(-1)
        self.estimate = np.asarray(sim.estimate, dtype=np.int64)
        if isinstance(queue, SlurmPriorityQueue):
            limits = queue.limits
            self.limits = (limits.running, limits.signature, limits.check_first, limits.check_slot, limits.check_index,
                           limits.check_bound, limits.check_reason, limits.job_counts)
            self.reasons = queue.reasons.arrays()
        else:
            empty = np.zeros(0, dtype=np.int64)
            self.limits = (np.zeros((1, 5), dtype=np.int64), np.zeros(n, dtype=np.int32), np.zeros(2, dtype=np.int64),
                           empty, empty, empty, empty, np.ones((n, 5), dtype=np.int64))
            self.reasons = ReasonTable(n, ("",), lambda: sim.now).arrays()     # (unread)
        self.tracked = isinstance(queue, SlurmPriorityQueue)

    def fresh(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A pass's blocking state: blocked partitions, their nodes' groups, each partition's reason code."""
        parts = len(self.has_nodes)
        return (np.zeros(parts, dtype=np.bool_), np.zeros(self.atoms.shape[1], dtype=np.bool_),
                np.zeros(parts, dtype=np.int64))

    def wait(self, job: int, code: int, now: int) -> None:
        """The job waits from now with the reason ``code``."""
        if self.tracked:
            kernels.set_reason(job, code, now, *self.reasons)


def _site_param(name: str, label: str, text: str, unit: str = "") -> Param:
    return Param(name, "float", FROM_SITE, f"{text} (-1 = the site's slurm.conf)", minimum=FROM_SITE, label=label,
                 unit=unit)


SCHED_CYCLE = Param("sched_cycle", "float", FROM_SITE, "seconds between backfill passes (-1 = the site's "
                    "bf_interval; 0 = at every submission and end)", minimum=FROM_SITE, label="scheduling cycle",
                    unit="s")
MAIN_AT_EVENTS = Param("main_at_events", "bool", False, "also run Slurm's main scheduler (priority order, "
                       "stopping at the first job that does not fit) at every submission and end, over the "
                       "first default_queue_depth jobs", label="main scheduler at events")
WHOLE_NODES = Param("whole_node_reservations", "bool", True, "a pending job's backfill reservation takes whole "
                    "nodes, as Slurm's backfill table of node bitmaps does (off: only its processors)",
                    label="whole-node reservations")
ENDS_AFTER = Param("ends_after_backfill", "bool", True, "a backfill pass does not see the jobs that ended in "
                   "its own second (slurmctld's pass comes first: its log, 91 of 108 such seconds); the next "
                   "pass does (off: every pass sees them)", label="job ends after the backfill pass")
AGENT = Param("backfill_agent", "bool", True, "time backfill passes as Slurm's backfill thread does: "
              "bf_interval after the previous pass if a job was updated since (every bf_interval while jobs "
              "wait), else at the first change after (off: every bf_interval from the first submission)",
              label="backfill thread timing")
LIMIT_CHECK = Param("time_limit_check", "bool", True, "a job the recording ran past its time limit, read with "
                    "its overrun cut, is killed at slurmctld's next time-limit check (every 30 s) at or after "
                    "its limit + OverTimeLimit (off: it ends at its limit)", label="time-limit check")
LIMIT_PHASE = Param("limit_check_phase", "float", 0.0, "seconds after the first submission at which the 30-s "
                    "time-limit checks' grid falls", minimum=0.0, label="time-limit check phase", unit="s")
SLURM_PARAMS = (BACKFILL_BOUND, SCHED_CYCLE, MAIN_AT_EVENTS, WHOLE_NODES, AGENT, ENDS_AFTER, LIMIT_CHECK, LIMIT_PHASE,
                _site_param("sched_interval", "main scheduler interval", "seconds between main scheduler passes over the "
                            "whole queue (0 = no main scheduler at all, as Slurm's sched_interval=-1)", "s"),
                _site_param("default_queue_depth", "main scheduler depth at events", "jobs the main scheduler tests at a "
                            "submission or end", "jobs"),
                _site_param("batch_sched_delay", "main scheduler delay after submissions", "seconds at least between "
                            "two main scheduler passes asked for by submissions", "s"),
                Param("request_delay", "float", 0.0, "seconds from a submission or job end until the "
                      "controller's background loop (checking every second) runs the main scheduler it asks "
                      "for (0 = in the same second)", minimum=0.0, label="main scheduler request delay", unit="s"),
                _site_param("bf_resolution", "backfill resolution", "seconds of the backfill scheduler's time grid", "s"),
                _site_param("bf_window", "backfill window", "minutes ahead the backfill scheduler reserves", "min"),
                _site_param("bf_max_job_user", "backfill jobs per user", "jobs per user one backfill pass tests (0 = any)",
                            "jobs"),
                _site_param("bf_max_job_part", "backfill jobs per partition", "jobs per partition one backfill pass "
                            "tests (0 = any)", "jobs"),
                _site_param("bf_max_job_user_part", "backfill jobs per user and partition", "jobs per user in each "
                            "partition one backfill pass tests (0 = any)", "jobs"),
                _site_param("bf_max_job_start", "backfill starts per pass", "jobs one backfill pass starts at most "
                            "(0 = any)", "jobs"),
                _site_param("sched_max_job_start", "main scheduler starts per pass", "jobs one main scheduler pass "
                            "starts at most (0 = any)", "jobs"),
                _site_param("partition_job_depth", "main scheduler jobs per partition", "jobs of each partition one "
                            "main scheduler pass tests (0 = any)", "jobs"))
register_algorithm(Component("slurm-backfill", SlurmBackfill, SLURM_PARAMS,
                             "Slurm's main and backfill schedulers as SchedulerParameters set them"))
register(Preset("slurm", "Slurm as configured: multifactor priority (PriorityTier first, recalculated every "
                "PriorityCalcPeriod), partition/QOS/association limits with Slurm's pending reasons, the main "
                "and backfill schedulers with the site's SchedulerParameters (needs --slurm-conf).",
                "slurm", "slurm-backfill", family="fairshare"))
