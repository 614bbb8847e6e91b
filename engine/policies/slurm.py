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
every PriorityCalcPeriod (and a new job's once, at submission), not at each event: between two
calculations the order only changes by arrivals.

Fair-share (slurm.schedmd.com/fair_tree.html): usage is CPU-seconds of running and finished jobs,
accrued at each calculation and decayed with PriorityDecayHalfLife, summed up the association tree
of ``sacctmgr show assoc`` (accounts without a parent hang from root). Fair Tree: every association
gets a Level Fairshare LF = S / U (its shares and usage over its siblings'); siblings are visited by
decreasing LF, depth first, and the n user associations get the ranks n, n-1, ... (ties among
siblings share one); the factor is rank / n. Classic (PriorityFlags=NO_FAIR_TREE): 2^(-U/S) with U
the user's share of all usage and S the product of the normalised shares down its branch.

QOS MaxJobsPU: a user's jobs beyond the limit on running jobs of a QOS are held (Slurm's pending
reason QOSMaxJobsPerUserLimit): they are neither the head nor backfilled until one of them ends.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.platform.slurmconf import Association, SlurmSite
from engine.policies.algorithm import Algorithm
from engine.policies.backfill import BACKFILL_BOUND, bounded
from engine.policies.base import Param, PolicyError
from engine.policies.ordering import WaitingQueue
from engine.policies.registry import Component, Preset, register, register_algorithm, register_ordering
from engine.sim.allocation import CountAllocator
from engine.sim.profile import running_jobs_profile
from engine.sim.simulator import Simulation

#: the site's priority weights a policy parameter may override (``--set PriorityWeightFairshare=20000``)
WEIGHT_KEYS = {"PriorityWeightAge": "age", "PriorityWeightFairshare": "fairshare", "PriorityWeightJobSize": "jobsize",
               "PriorityWeightPartition": "partition", "PriorityWeightQOS": "qos"}
FROM_SITE = -1.0
PARAMS = tuple(Param(key, "float", FROM_SITE, f"{key} (-1 = the value in the site's slurm.conf)", minimum=FROM_SITE,
                     label=key) for key in WEIGHT_KEYS) + (
    Param("PriorityCalcPeriod", "float", FROM_SITE, "seconds between priority recalculations "
          "(-1 = the site's slurm.conf)", minimum=FROM_SITE, label="PriorityCalcPeriod", unit="s"),
)

HELD_QOS_USER = "QOSMaxJobsPerUserLimit"


def age_factor(age: float, max_age: float | None) -> float:
    """min(age / PriorityMaxAge, 1); with no maximum age (0) the factor is 1 as soon as eligible."""
    if not max_age:
        return 1.0
    return min(max(age, 0.0) / max_age, 1.0)


def job_size_factor(cpus: int, nodes: int, total_cpus: int, total_nodes: int, favor_small: bool) -> float:
    """Slurm 22.05's job size factor: the mean of the node fraction and the CPU fraction of the
    cluster (favor small: of 1 - each)."""
    if favor_small:
        return ((total_nodes - nodes) / total_nodes + (total_cpus - cpus) / total_cpus) / 2.0
    return (nodes / total_nodes + cpus / total_cpus) / 2.0


def multifactor(weights: dict[str, float], factors: dict[str, float]) -> int:
    """The weighted sum of the factors (keys of WEIGHT_KEYS' values), truncated as slurmctld does."""
    return int(sum(weights[name] * factors.get(name, 0.0) for name in weights))


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
    return math.inf if u == 0 else s / u


def levels(siblings: list[Node]) -> list[tuple[Node, float]]:
    """Each of ``siblings`` with its Level Fairshare among them (their sums taken once)."""
    shares, usage = sum(s.shares for s in siblings), sum(s.usage for s in siblings)
    return [(node, _level(node, shares, usage)) for node in siblings]


def same_level(a: float, b: float) -> bool:
    """Equal Level Fairshares, up to floating-point rounding (0.3/0.45 and 0.1/0.15 tie)."""
    return a == b or math.isclose(a, b, rel_tol=1e-12)


def fair_tree_factors(root: Node) -> dict[tuple[str, str], float]:
    """(account, user) -> Fair Tree's rank-based factor rank / number of user associations.

    Siblings are visited by decreasing LF; users of equal LF share a rank (the next distinct one
    is lowered by how many shared it), and accounts of equal LF have their children merged and
    sorted together, as fair_tree.html says."""
    summed_usage(root)
    count = len(users_of(root))
    factors: dict[tuple[str, str], float] = {}
    next_rank = count

    def visit(children: list[tuple[Node, float]]) -> None:
        nonlocal next_rank
        ranked = sorted(children, key=lambda pair: -pair[1])
        i = 0
        while i < len(ranked):
            j = i
            while j < len(ranked) and same_level(ranked[j][1], ranked[i][1]):
                j += 1
            group = [node for node, _ in ranked[i:j]]
            users = [node for node in group if node.user]
            for user in users:
                factors[(user.account, user.user)] = next_rank / count
            next_rank -= len(users)
            accounts = [node for node in group if not node.user]
            if accounts:
                visit([pair for account in accounts for pair in levels(account.children)])
            i = j

    visit(levels(root.children))
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


class SlurmPriorityQueue(WaitingQueue):
    """Waiting jobs by (PriorityTier, Slurm multifactor priority, submission); QOS MaxJobsPU held."""

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
        top_factor = max((p.priority_job_factor for p in conf.partitions.values()), default=0) or 1
        self.tier = [conf.partitions[p].priority_tier if p in conf.partitions else 0 for p in partitions]
        self.partition_factor = [conf.partitions[p].priority_job_factor / top_factor if p in conf.partitions else 0.0
                                 for p in partitions]
        self.qos = [q or "normal" for q in _column(jobs, "qos", sim.n)]
        top_qos = max((q.priority for q in site.qos.values()), default=0) or 1
        self.qos_factor = [site.qos[q].priority / top_qos if q in site.qos else 0.0 for q in self.qos]
        self.qos_limit = {name: q.max_jobs_per_user for name, q in site.qos.items() if q.max_jobs_per_user is not None}
        nodes = np.asarray(jobs["nodes"], dtype=np.int64) if "nodes" in jobs else np.ones(sim.n, dtype=np.int64)
        total_nodes = sum(len(n.names) for n in conf.nodes) or 1
        total_cpus = conf.total_cpus or int(sim.capacity)
        self.size_factor = [job_size_factor(int(c), int(max(n, 1)), total_cpus, total_nodes, conf.favor_small)
                            for c, n in zip(np.asarray(sim.size).tolist(), nodes.tolist())]
        self.tree = association_tree(site.associations)
        self.users = {(u.account, u.user): u for u in users_of(self.tree)}
        self.fairshare: dict[tuple[str, str], float] = {}
        self.priorities: dict[int, int] = {}
        self.running: defaultdict[tuple[str, str], int] = defaultdict(int)   # (user, QOS) -> running jobs
        self.calculated: int | None = None
        self.waiting: set[int] = set()
        # fair-share accrual in arrays (accrue): each user association's usage, in self.users' order
        self.usage = np.zeros(len(self.users))
        index = {key: i for i, key in enumerate(self.users)}
        self.user_index = np.array([index.get(key, -1) for key in zip(self.account, self.user)], dtype=np.int64)
        self.job_size = np.asarray(sim.size, dtype=np.int64)
        self.since = np.zeros(sim.n, dtype=np.int64)    # a started job: accounted until
        self.ended_at = np.full(sim.n, -1, dtype=np.int64)
        self.counting = np.zeros(sim.n, dtype=bool)     # started by this policy, not ended yet
        self.accruing = np.zeros(0, dtype=np.int64)     # started jobs still accruing, in start order
        self.new_started: list[int] = []                # started since the last accrual, in order
        sim.finish_listeners.append(self.ended)

    # ---------------------------------------------------------------- priorities

    def priority(self, job: int) -> int:
        """The job's priority as of the last calculation (computed at submission for a new one)."""
        value = self.priorities.get(job)
        if value is None:
            value = self.priorities[job] = self.compute(job)
        return value

    def compute(self, job: int) -> int:
        w, sim = self.weights, self.sim
        age = age_factor(sim.now - sim.submit[job], self.max_age)
        fairshare = self.fairshare.get((self.account[job], self.user[job]), 1.0 if not self.fairshare else 0.0)
        return multifactor(w, {"age": age, "fairshare": fairshare, "jobsize": self.size_factor[job],
                               "partition": self.partition_factor[job], "qos": self.qos_factor[job]})

    def recalculate_if_due(self) -> None:
        now = self.sim.now
        if self.calculated is not None and now < self.calculated + max(self.period, 1):
            return
        self.accrue(now)
        root = self.tree
        self.fairshare = fair_tree_factors(root) if self.fair_tree else classic_factors(root)
        self.calculated = now
        self.priorities = {job: self.compute(job) for job in self.waiting}

    def accrue(self, now: int) -> None:
        """Decay every association's usage to now and add the CPU-seconds jobs used since: each
        job's CPU-seconds added to its user's usage in the order the jobs started (np.add.at adds
        in index order: the sums of a loop over the jobs, to the last bit)."""
        usage = self.usage
        if self.calculated is not None and self.halflife > 0:
            usage *= 0.5 ** ((now - self.calculated) / self.halflife)
        jobs = np.concatenate((self.accruing, np.asarray(self.new_started, dtype=np.int64)))
        self.new_started = []
        if len(jobs):
            ended_at = self.ended_at[jobs]
            ended = ended_at >= 0
            until = np.where(ended, ended_at, now)
            since = self.since[jobs]
            users = self.user_index[jobs]
            take = (users >= 0) & (until > since)
            np.add.at(usage, users[take], (self.job_size[jobs[take]] * (until[take] - since[take])).astype(np.float64))
            self.since[jobs] = until
            self.accruing = jobs[~ended]
        for node, value in zip(self.users.values(), usage.tolist()):
            node.usage = value

    # ---------------------------------------------------------------- the queue

    def add(self, job: int) -> None:
        super().add(job)
        self.waiting.add(job)

    def remove(self, job: int) -> None:
        super().remove(job)
        self.waiting.discard(job)
        self.priorities.pop(job, None)

    def held(self, job: int) -> str:
        """Slurm's pending reason when a limit holds the job now, else ""."""
        limit = self.qos_limit.get(self.qos[job])
        if limit is not None and self.running[(self.user[job], self.qos[job])] >= limit:
            return HELD_QOS_USER
        return ""

    def running_count(self, user: str, qos: str) -> int:
        return self.running[(user, qos)]

    def ended(self, job: int) -> None:
        """A job's end (a finish listener: before the policy hears of it): its running count and accrual."""
        if self.counting[job]:
            self.counting[job] = False
            self.running[(self.user[job], self.qos[job])] -= 1
            self.ended_at[job] = self.sim.now

    def jobs(self) -> list[int]:
        self.recalculate_if_due()
        priority, tier = self.priority, self.tier
        order = sorted(self.waiting, key=lambda j: (-tier[j], -priority(j), self.sim.submit[j], j))
        return [j for j in order if not self.held(j)]

    def __len__(self) -> int:
        """Waiting jobs a pass may start: those no limit holds."""
        if not self.qos_limit:
            return len(self.waiting)
        return sum(1 for j in self.waiting if not self.held(j))

    def __bool__(self) -> bool:
        """Whether a pass may start a waiting job (one no limit holds)."""
        if not self.qos_limit:
            return bool(self.waiting)
        return any(not self.held(j) for j in self.waiting)

    def head(self) -> int:
        return self.jobs()[0]

    def may_start(self, job: int) -> bool:
        return not self.held(job)

    def started(self, job: int) -> None:
        self.since[job] = self.sim.now
        self.counting[job] = True
        self.new_started.append(job)
        self.running[(self.user[job], self.qos[job])] += 1


def _column(jobs: Any, name: str, n: int) -> list[str]:
    if name not in jobs:
        return [""] * n
    return [str(v) for v in jobs[name].tolist()]


def slurm_priority(sim: Simulation, params: dict) -> WaitingQueue:
    return SlurmPriorityQueue(sim, params)


register_ordering(Component("slurm", slurm_priority, PARAMS,
                            "Slurm's multifactor priority from the site's slurm.conf and sacctmgr dumps"))



class SlurmBackfill(Algorithm):
    """Slurm's backfill pass, run every ``sched_cycle`` seconds (the site's bf_interval) from the
    first submission: from the running jobs' expected ends, the waiting jobs are walked in priority
    order (the first ``backfill_bound`` of them; inf = the site's bf_max_job_test); each starts now if it fits now
    for its whole time limit, else gets a reservation at the earliest time it fits, which later
    jobs must not delay. Reservations are rebuilt at every pass (Slurm keeps none between passes),
    so the pass is conservative backfilling from scratch each cycle. ``sched_cycle`` 0 runs the
    pass at every submission and end."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        cycle = float(params.get("sched_cycle", FROM_SITE))
        site = sim.context.get("slurm_site")
        if cycle < 0:
            cycle = float(site.conf.scheduler.get("bf_interval", 30)) if isinstance(site, SlurmSite) else 0.0
        self.cycle = int(cycle)
        self.origin = int(min(sim.submit)) if sim.n else 0
        #: jobs one pass tests: backfill_bound when set, else the site's bf_max_job_test
        self.bound = bounded(params)
        self.job_size = np.asarray(sim.size, dtype=np.int64)
        self.pool = type(sim.allocator) is CountAllocator
        if self.bound is None and isinstance(site, SlurmSite):
            self.bound = int(site.conf.scheduler.get("bf_max_job_test", 500))

    def schedule(self) -> None:
        sim, queue = self.sim, self.queue
        if self.cycle > 0:
            offset = (sim.now - self.origin) % self.cycle
            if offset:
                sim.wake_at(sim.now - offset + self.cycle)
                if self.params.get("main_at_events", False):
                    self.main_pass()
                return
        if not queue:
            return
        now, size, estimate = sim.now, sim.size, sim.estimate
        candidates = queue.jobs()[:self.bound]
        if not candidates:
            return
        # A job starts only with its processors free now, and a pass only takes processors: once
        # fewer are free now than the smallest job left asks for, no later job starts (the rest of
        # the pass only made reservations, which Slurm forgets).
        smallest = np.minimum.accumulate(self.job_size[candidates][::-1])[::-1].tolist()
        # On a pool of processors counted, sim.free is the profile's free now, and until the first
        # reservation in the future the profile never decreases (running jobs only end): a job that
        # fits now fits for its whole time limit, and starts. The profile is built (from the running
        # jobs, those started by this pass too: the reservations it would have made) only then.
        profile = None if self.pool else running_jobs_profile(sim)
        for i, job in enumerate(candidates):
            if (sim.free if profile is None else profile.free[0]) < smallest[i]:
                break
            if not queue.may_start(job):
                continue
            if profile is None:
                if size[job] <= sim.free:
                    self.start(job)
                    continue
                profile = running_jobs_profile(sim)
            duration = max(int(estimate[job]), 1)
            at = profile.earliest_start(now, duration, int(size[job]))
            if at is None:
                continue
            if at == now and sim.fits(job):
                self.start(job)
            profile.reserve(at, at + duration, int(size[job]))


    def main_pass(self) -> None:
        """Slurm's main scheduler at a submission or an end: jobs in priority order while each fits."""
        sim, queue = self.sim, self.queue
        while queue:
            head = queue.head()
            if not sim.fits(head):
                return
            self.start(head)


SCHED_CYCLE = Param("sched_cycle", "float", FROM_SITE, "seconds between scheduling passes (-1 = the site's "
                    "bf_interval; 0 = at every submission and end)", minimum=FROM_SITE, label="scheduling cycle",
                    unit="s")
MAIN_AT_EVENTS = Param("main_at_events", "bool", False, "also run Slurm's main scheduler (priority order, "
                       "stopping at the first job that does not fit) at every submission and end",
                       label="main scheduler at events")
register_algorithm(Component("slurm-backfill", SlurmBackfill, (BACKFILL_BOUND, SCHED_CYCLE, MAIN_AT_EVENTS),
                             "EASY backfilling at Slurm's backfill cycles (bf_interval)"))
register(Preset("slurm", "Slurm as configured: multifactor priority (PriorityTier first, recalculated every "
                "PriorityCalcPeriod), QOS MaxJobsPU holds, EASY-like backfill (needs --slurm-conf).",
                "slurm", "slurm-backfill", family="fairshare"))
