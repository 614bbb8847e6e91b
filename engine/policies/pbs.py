"""PBS / OpenPBS as its admin configured it, from ``qmgr -c 'print server'``, ``sched_config`` and the
``resource_group`` tree (issue 24 §2; the files read by engine.platform.pbsconf).

What the scheduler does here, per PBS Professional's Administrator's Guide:

* **Routing.** A job submitted to a route queue (or to no queue the server knows: the server's
  ``default_queue``) goes to the first of its ``route_destinations`` whose ``resources_min`` /
  ``resources_max`` (walltime, ncpus) admit it, following route queues on; one whose max_queued (or
  queued_jobs_threshold) limits refuse the job for now passes it to the next (job_route).
* **Admission** (engine.platform.pbsrules.refusal). A job is refused at submission, named in the
  run's rejected jobs with the server's message and the setting, when the server's ``acl_users``
  (``acl_user_enable``) does not let its user in and no ``managers`` / ``operators`` entry names
  him ("Unauthorized Request"), when its queue is disabled ("Queue is not enabled"), when it is
  submitted straight to a ``from_route_only`` queue ("Access to queue is denied"), when its queue's
  ``acl_users`` (``acl_user_enable``) or ``acl_groups`` (``acl_group_enable``) do not let the job's
  user or group in ("Unauthorized Request"; the group is the log's: PBS checks the user's group
  list on the server host), when its walltime or ncpus is outside its queue's ``resources_min`` /
  ``resources_max`` or the server's ``resources_max`` ("Job violates queue and/or server resource
  limits"), or when no destination of its route queue takes it ("Job rejected by all possible
  destinations"; a destination whose access lists refuse the job passes it to the next, as one
  whose bounds do).
* **Order.** ``by_queue`` (the default): queues by ``priority``, higher first; ``round_robin``:
  the queues take turns (the first job of each, then the second, ...). Within a queue, with
  ``fair_share``, the entity (``fairshare_entity``: euser, egroup, Account_Name or queue) whose path
  down the ``resource_group`` tree is least used for its shares goes first: at each level the
  siblings are compared by (usage / the siblings' usage) / (shares / the siblings' shares), top
  level first. Usage is processor-seconds (``fairshare_usage_res`` ncpus*walltime; cput is taken
  as the same for the jobs a log shows), charged while jobs run, multiplied by
  ``fairshare_decay_factor`` every ``fairshare_decay_time``. Entities the tree does not name share
  the ``unknown`` group's ``unknown_shares``; with no tree at all every entity has one share.
  Then ``job_sort_key`` (ncpus / walltime HIGH|LOW), then submission. Within a cycle a started job's
  request (``fairshare_usage_res`` ncpus*walltime, ncpus or walltime; a cput request is none) counts
  at once for its entity and the jobs not yet looked at are sorted again (OpenPBS's
  update_usage_on_run and re-sort).
* **Limits.** ``max_run`` and ``max_run_res.ncpus`` of each queue and of the server, by user,
  group, project (``[u:PBS_GENERIC=N]``, ``[u:alice=N]``, ``[g:...]``, ``[p:...]``) and overall
  (``[o:PBS_ALL=N]``, or the old plain number): a job that would exceed one waits, with PBS's
  comment (e.g. "User has reached queue workq running job limit"). ``max_queued`` of each queue and
  of the server (the same forms) counts the entity's jobs queued or running there,
  ``max_queued_res.ncpus`` their CPUs; ``queued_jobs_threshold`` and ``queued_jobs_threshold_res.ncpus``
  count only the jobs in the 'Q' state (a job leaves them when it starts). A job that would go over
  one is refused at submission, as qsub refuses it (OpenPBS's svr_chkque, in its order: the queue's
  and then the server's counts, then the queue's and the server's resources), with the server's
  message ("would exceed queue workq's per-user limit", "would exceed limit on resource ncpus in
  complex for jobs in 'Q' state"), and listed as rejected with that reason.
* **Reasons.** At each cycle every waiting job gets what holds it, in PBS's comments' words
  (engine.platform.pbsconf: the queue's or the server's max_run, too few CPUs, strict order behind a
  job that does not fit, a top job's reservation); the run's ``pbs_reason`` column and its summary's
  ``pbs_pending`` (jobs and hours per reason) and ``pbs_refused`` come from them.
* **Strict order and backfill.** ``strict_ordering`` false: every job that fits starts, in order.
  True: jobs start in order; the first ``backfill_depth`` (the server's, default 1) that do not fit
  get a reservation at the earliest time they fit, and later jobs start only if they delay none of
  them; ``backfill: false`` in sched_config or ``backfill_depth = 0``: the first job that does not
  fit stops the cycle. A cycle runs at every submission and job end and every
  ``scheduler_iteration`` seconds (the server's, default 600).
* **Starving jobs** (sched_config ``help_starving_jobs``, off when absent; ``max_starve``, 0 when
  absent; OpenPBS ships 24:00:00 and help_starving_jobs true, as OpenPBS 20 followed them: the
  support was removed in 2021, commit 530960706, and later releases ignore both lines). A job that
  has waited more than max_starve (since submission, or its eligible_time with the server's
  ``eligible_time_enable``: the time no user, group or project limit held it) is starving: starving
  jobs go before the others of their preemption class (express queues, priority >=
  ``preempt_queue_prio`` with ``preemptive_sched``, stay ahead), the longest starving first, then
  fair-share and the other keys (cmp_sort); with ``by_queue`` they go before every queue's jobs
  (next_job), except with fair_share and preemptive_sched, where each goes first in its own queue.
  A starving job that cannot run gets a reservation, as a top job under strict order does, while
  backfill_depth allows, with or without strict_ordering, so later jobs that would delay it wait;
  with backfilling off it stops the cycle ("Job would conflict with starving job").
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from engine.platform.pbsconf import (
    FOLLOWED_RESOURCE,
    QUEUE_LIMIT,
    RESOURCES,
    SERVER_LIMIT,
    STARVING,
    STRICT_ORDER,
    TOP_JOB,
    Limits,
    PbsQueue,
    PbsServer,
    express_priority,
    help_starving_jobs,
    max_starve,
    sched_true,
)
from engine.platform.pbsrules import (
    SCOPES,
    Counter,
    admission,
    applicable,
    counters,
    destinations,
    has_run_limits,
    never_runs,
    route,
    run_limit_hold,
)
from engine.policies.algorithm import Algorithm
from engine.policies.base import Param, PolicyError
from engine.policies.ordering import WaitingQueue
from engine.policies.reasons import ReasonTable, refused_counts
from engine.policies.registry import Component, Preset, register, register_algorithm, register_ordering
from engine.sim.profile import running_jobs_profile
from engine.sim.simulator import Simulation
from engine.workload.accounting import parse_duration

FROM_SITE = -1.0
#: a job a max_run limit holds even alone: PBS queues it and never runs it; a replay, which has to end,
#: lists it with the refused jobs under this
NEVER_RUNS = "Never runs (PBS keeps it queued)"
#: what may hold a waiting job, in PBS's words (the reasons' codes in the run's ReasonTable)
PBS_REASONS = (QUEUE_LIMIT, SERVER_LIMIT, RESOURCES, STRICT_ORDER, TOP_JOB, STARVING)
ENTITY_COLUMNS = {"euser": "user", "egroup": "group", "account_name": "account", "queue": "queue"}
SCOPE_NOUNS = {"u": "user", "g": "group", "p": "project"}
DAY = 86_400
#: a site's switch as a parameter: "site" = as its files say
SWITCH = ("site", "true", "false")
#: PBS's comments on a job held by a user's, group's or project's limit (OpenPBS update_accruetype: such
#: a job accrues ineligible time; a queue's or the server's overall limit leaves it eligible)
ENTITY_HELD = ("User ", "Group ", "Project ")


def switch(value: Any, site: bool) -> bool:
    """A SWITCH parameter's value: the site's, or the one given."""
    return site if str(value) == "site" else str(value) == "true"


def backfill_depth(server: PbsServer) -> int:
    """How many top jobs get a reservation: 0 when backfilling is off."""
    if not sched_true(server, "backfill", True):
        return 0
    return server.backfill_depth if server.backfill_depth is not None else 1


def scheduler_iteration(server: PbsServer) -> int:
    return server.scheduler_iteration if server.scheduler_iteration is not None else 600


class FairShareTree:
    """Shares and usage of the resource_group tree; the sort key of an entity (lower goes first).

    Entities the tree does not name hang from its ``unknown`` group (``unknown_shares``, default 0),
    one share each; with no tree every entity hangs from the root with one share."""

    def __init__(self, server: PbsServer, entities: set[str]) -> None:
        text = server.sched.get("unknown_shares", "0").strip()
        self.shares: dict[str, float] = {name: float(shares) for name, _, _, shares in server.groups}
        self.parent: dict[str, str] = {name: up for name, _, up, _ in server.groups}
        if server.groups and "unknown" not in self.parent:
            self.parent["unknown"] = "root"
            self.shares["unknown"] = float(text) if text.isdigit() else 0.0
        for entity in sorted(entities):
            if entity not in self.parent:
                self.parent[entity] = "unknown" if server.groups else "root"
                self.shares[entity] = 1.0
        self.children: dict[str, list[str]] = defaultdict(list)
        for child, up in self.parent.items():
            self.children[up].append(child)
        self.paths: dict[str, list[str]] = {}
        for entity in entities:
            path, node = [entity], entity
            while self.parent.get(node, "root") != "root":
                node = self.parent[node]
                path.insert(0, node)
            self.paths[entity] = path
        self.usage: dict[str, float] = defaultdict(float)      # by entity (leaves)
        self.share_sum = {up: sum(self.shares.get(child, 0.0) for child in kids) for up, kids in self.children.items()}

    def charge(self, entity: str, amount: float) -> None:
        self.usage[entity] += amount

    def decay(self, factor: float) -> None:
        for entity in self.usage:
            self.usage[entity] *= factor

    def keys(self, extra: dict[str, float] | None = None) -> dict[str, tuple[float, ...]]:
        """entity -> (ratio at the top level, ratio one level down, ...): usage fraction over share
        fraction among the siblings; no shares -> infinite (last), no usage at all -> 0. ``extra``:
        usage by entity on top of the charged one (the cycle's started jobs, see PbsCycle)."""
        used: dict[str, float] = defaultdict(float)
        for entity, path in self.paths.items():
            for node in path:
                used[node] += self.usage.get(entity, 0.0) + (extra or {}).get(entity, 0.0)
        usage_sum = {up: sum(used[child] for child in kids) for up, kids in self.children.items()}
        keys = {}
        for entity, path in self.paths.items():
            key = []
            for node in path:
                up = self.parent.get(node, "root")
                shares, usage = self.share_sum[up], usage_sum[up]
                share = self.shares.get(node, 0.0) / shares if shares > 0 else 0.0
                fraction = used[node] / usage if usage > 0 else 0.0
                key.append(math.inf if share == 0 else fraction / share)
            keys[entity] = tuple(key)
        return keys


class PbsOrder(WaitingQueue):
    """Waiting jobs in PBS's order (queues by priority or round robin, fair-share, job_sort_key,
    submission); jobs a max_run limit holds are left out of :meth:`jobs`."""

    def __init__(self, sim: Simulation, params: dict[str, Any]) -> None:
        super().__init__(sim, lambda j: (j,))
        server = sim.context.get("pbs_site")
        if not isinstance(server, PbsServer):
            raise PolicyError("the pbs policy needs the site's files: --pbs-server PRINT_SERVER.txt [--sched-config F]")
        self.server = server
        jobs, n = sim.workload.jobs, sim.n
        self.columns = {"user": _names(jobs, "user", sim.workload.metadata.get("user_names", {}), n),
                        "group": _names(jobs, "group", sim.workload.metadata.get("group_names", {}), n),
                        "account": _column(jobs, "account", n)}
        given = _column(jobs, "queue_name", n)
        users, groups = self.columns["user"], self.columns["group"]
        #: each job's walltime, CPUs, user and group, as the rules below take them
        asks = [(int(sim.estimate[j]), int(sim.size[j]), users[j], groups[j]) for j in range(n)]
        self.queue_of = [route(server, q, *asks[j]) for j, q in enumerate(given)]
        #: jobs submitted to a route queue with more than one destination for them: those destinations
        #: in order (a destination whose max_queued refuses the job for now passes it to the next one)
        self.routes = {j: ways for j, q in enumerate(given) if len(ways := destinations(server, q, *asks[j])) > 1}
        #: (the server's message, the setting, whether before the counts) for each job the server refuses
        #: at submission whatever the other jobs (the server's acl_users, its queue disabled, from_route_only
        #: or its access lists, its resources outside the queue's or server's bounds)
        self.refused_at_submission = {j: found for j, q in enumerate(given) if (found := admission(server, q, *asks[j]))[0]}
        self.columns["queue"] = self.queue_of
        entity = server.sched.get("fairshare_entity", "euser").strip().lower()
        self.entity = self.columns[ENTITY_COLUMNS.get(entity, "user")]
        self.fair_share = sched_true(server, "fair_share", False)
        #: the usage a started job adds at once within its cycle, by fairshare_usage_res evaluated on its
        #: request (OpenPBS update_usage_on_run): ncpus*walltime, ncpus or walltime; cput and others:
        #: nothing (a request names no cput); and that usage by entity in the cycle under way
        self.usage_on_run = _usage_on_run(server.sched.get("fairshare_usage_res", "cput"))
        self.cycle_usage: dict[str, float] = defaultdict(float)
        self.tree = FairShareTree(server, set(self.entity))
        self.decay_time = parse_duration(server.sched["fairshare_decay_time"]) if "fairshare_decay_time" in server.sched else DAY
        self.decay_factor = float(server.sched.get("fairshare_decay_factor", "0.5"))
        self.by_queue = sched_true(server, "by_queue", True)
        self.round_robin = sched_true(server, "round_robin", False)
        self.sort_keys = _sort_keys(server.sched.get("job_sort_key", ""))
        self.queue_priority = {name: q.priority for name, q in server.queues.items()}
        self.waiting: set[int] = set()
        self.charged: dict[int, int] = {}           # running job -> charged until
        self.running: list[int] = []               # started jobs still in the counters below
        #: running jobs and their CPUs per (queue, or None for the server; scope u/g/p/o; entity)
        self.used: defaultdict[Counter, tuple[int, int]] = defaultdict(lambda: (0, 0))
        self.limited = has_run_limits(server)
        self.origin = int(min(sim.submit)) if n else 0
        self.decayed = 0                             # decay periods applied
        #: (jobs, CPUs) per (only those in the 'Q' state?, queue or None for the server, scope, entity):
        #: queued or running (max_queued, max_queued_res), queued only (queued_jobs_threshold[_res])
        self.queued: defaultdict[tuple[bool, str | None, str, str], tuple[int, int]] = defaultdict(lambda: (0, 0))
        targets: list[PbsQueue | PbsServer] = [server, *server.queues.values()]
        self.queued_limited = any(limits.values for target in targets for limits, _, _ in enqueue_limits(target))
        if self.queued_limited:
            sim.finish_listeners.append(self._left)
        #: what holds each waiting job now (a PBS comment), since when, and the seconds per reason so far
        self.reasons = ReasonTable(n, PBS_REASONS, lambda: self.sim.now)
        # help_starving_jobs (OpenPBS 20's job_starving, cmp_starving_jobs, next_job; see starving())
        self.help_starving = switch(params.get("help_starving_jobs", "site"), help_starving_jobs(server))
        starve = float(params.get("max_starve", FROM_SITE))
        self.max_starve = int(starve) if starve >= 0 else max_starve(server)
        self.eligible_time = switch(params.get("eligible_time_enable", "site"), bool(server.eligible_time_enable))
        express = express_priority(server)
        #: the preemption class of each job's queue (lower first: the express queues by priority, then
        #: 0 the normal class) and whether the class is set at all (preemptive_sched)
        self.preempting = express is not None
        self.job_class = {name: -q.priority if express is not None and q.priority >= express else 0
                          for name, q in server.queues.items()}
        #: the ineligible seconds each job accrued so far and since when it is ineligible now
        #: (eligible_time_enable: held by a user's, group's or project's limit)
        self.ineligible: dict[int, int] = defaultdict(int)
        self.ineligible_since: dict[int, int] = {}
        #: the starving jobs of the last whole order and how long each had waited (:meth:`order`)
        self.starving_now: dict[int, int] = {}

    # ---------------------------------------------------------------- fair-share usage

    def accrue(self) -> None:
        """Charge running and ended jobs' processor-seconds up to now, decaying at each period."""
        now = self.sim.now
        periods = (now - self.origin) // self.decay_time if self.decay_time > 0 else 0
        while self.decayed < periods:                 # charge up to the period's end, then decay
            self.decayed += 1
            self._charge_until(self.origin + self.decayed * self.decay_time)
            self.tree.decay(self.decay_factor)
        self._charge_until(now)

    def _charge_until(self, t: int) -> None:
        sim = self.sim
        for job, since in list(self.charged.items()):
            end = sim.end_time[job]
            until = min(t, end) if end >= 0 else t
            if until > since:
                self.tree.charge(self.entity[job], sim.size[job] * (until - since))
                self.charged[job] = until
            if end >= 0 and until >= end:
                del self.charged[job]

    # ---------------------------------------------------------------- limits

    def held(self, job: int) -> str:
        """PBS's comment when a max_run limit holds ``job`` now, else ""."""
        return self.hold(job)[0]

    def hold(self, job: int) -> tuple[str, str]:
        """(PBS's comment, QUEUE_LIMIT or SERVER_LIMIT) when a max_run limit holds ``job`` now, else ("", "")
        (engine.platform.pbsrules: the rule the recorded run's estimate follows too)."""
        if not self.limited:
            return "", ""
        self._settle()
        return run_limit_hold(self.server, self.queue_of[job], self.columns, job, int(self.sim.size[job]), self.used)

    def _counted(self, job: int) -> list[Counter]:
        """The running-job counters ``job`` is in: per scope and entity, of its queue and of the server."""
        return counters(self.queue_of[job], self.columns, job)

    def _settle(self) -> None:
        """Take the jobs that have ended out of the running-job counters."""
        sim = self.sim
        if not any(sim.end_time[j] >= 0 for j in self.running):
            return
        still = []
        for j in self.running:
            if sim.end_time[j] >= 0:
                for key in self._counted(j):
                    jobs, cores = self.used[key]
                    self.used[key] = (jobs - 1, cores - sim.size[j])
            else:
                still.append(j)
        self.running = still

    def over_queued(self, job: int) -> tuple[str, str]:
        """(qsub's message, the limit as print server writes it) when ``job`` would take one of its
        queue's or the server's limits on queued jobs over (counting it), else ("", "")."""
        queue = self.server.queues.get(self.queue_of[job])
        size = int(self.sim.size[job])
        for resources in (False, True):            # svr_chkque: counts first, then resources
            for target in ((queue,) if queue else ()) + (self.server,):
                name = target.name if isinstance(target, PbsQueue) else None
                for limits, attribute, q_only in enqueue_limits(target):
                    if (attribute != "") != resources or not limits.values:
                        continue
                    for scope in ("o", "u", "g", "p"):      # check_entity_ct_limit_max's order
                        entity = "" if scope == "o" else self.columns[SCOPES[scope]][job]
                        found = applicable(limits, scope, entity)
                        if found is None:
                            continue
                        who, limit = found
                        jobs, cpus = self.queued[(q_only, name, scope, entity)]
                        if (cpus + size if resources else jobs + 1) <= limit:
                            continue
                        owner = f"queue {name}" if name else "server"
                        kind = ("queued_jobs_threshold" if q_only else "max_queued") + ("_res." + attribute if resources else "")
                        return (enqueue_message(scope, who, name, attribute, q_only),
                                f"{owner} {kind} = [{scope}:{who}={limit}]")
        return "", ""

    def routed_by_counts(self, job: int) -> tuple[str, str]:
        """:meth:`over_queued` in the job's queue; for a job of a route queue, the first of its
        destinations whose limits on queued jobs take it becomes its queue (job_route tries the next
        destination when one refuses for now, PBSE_ENTLIMCT). None takes it: the first one's refusal
        (PBS would keep the job in the route queue and try again; a replay refuses it)."""
        first = self.over_queued(job)
        if not first[0] or job not in self.routes:
            return first
        for queue in self.routes[job][1:]:
            self.queue_of[job] = queue
            if not self.over_queued(job)[0]:
                return "", ""
        self.queue_of[job] = self.routes[job][0]
        return first

    def _left(self, job: int) -> None:
        """A job ended: out of the counts of jobs queued or running."""
        self._count_queued(job, False, -1)

    def _count_queued(self, job: int, q_only: bool, sign: int) -> None:
        size = int(self.sim.size[job])
        for key in self._counted(job):
            jobs, cpus = self.queued[(q_only, *key)]
            self.queued[(q_only, *key)] = (jobs + sign, cpus + sign * size)

    # ---------------------------------------------------------------- the queue

    def add(self, job: int) -> None:
        """A submission: refused when the server's or its queue's access lists refuse it or its queue is
        disabled, when it would go over a max_queued limit, or when its resources are outside its queue's
        bounds (svr_chkque's order; qsub's message), else queued."""
        fixed = self.refused_at_submission.get(job, ("", "", False))
        counted = self.routed_by_counts(job) if self.queued_limited and not fixed[2] else ("", "")
        message, limit = counted if counted[0] else fixed[:2]
        if not message and self.limited:
            comment, limit = never_runs(self.server, self.queue_of[job], self.columns, job, int(self.sim.size[job]))
            message = f"{NEVER_RUNS}: {comment}" if comment else ""
        if message:
            self.sim.refuse(job, message, limit)
            return
        if self.queued_limited:
            self._count_queued(job, False, 1)
            self._count_queued(job, True, 1)
        super().add(job)
        self.waiting.add(job)

    def waiting_jobs(self) -> np.ndarray:
        """The waiting jobs, by number."""
        return np.array(sorted(self.waiting), dtype=np.int64)

    def remove(self, job: int) -> None:
        super().remove(job)
        self.waiting.discard(job)
        self.reasons.stop(job)

    def started(self, job: int) -> None:
        if self.queued_limited:         # no longer in the 'Q' state
            self._count_queued(job, True, -1)
        self.charged[job] = self.sim.now
        self.running.append(job)
        for key in self._counted(job):
            jobs, cores = self.used[key]
            self.used[key] = (jobs + 1, cores + self.sim.size[job])

    # ---------------------------------------------------------------- starving jobs

    def waited(self, job: int) -> int:
        """The seconds ``job`` has waited as starvation counts them: its eligible_time with
        eligible_time_enable (the time not held by a user's, group's or project's limit), else the
        time since it was queued (OpenPBS job_starving: etime, which is qtime for a job never held)."""
        now = self.sim.now
        wait = now - int(self.sim.submit[job])
        if self.eligible_time:
            since = self.ineligible_since.get(job)
            wait -= self.ineligible[job] + (now - since if since is not None else 0)
        return wait

    def eligible(self, job: int, comment: str) -> None:
        """Accrue ``job``'s eligible or ineligible time from now, after what holds it (OpenPBS
        update_accruetype: ineligible while a user's, group's or project's limit holds it)."""
        if not self.eligible_time:
            return
        now, since = self.sim.now, self.ineligible_since.get(job)
        if comment.startswith(ENTITY_HELD):
            if since is None:
                self.ineligible_since[job] = now
        elif since is not None:
            self.ineligible[job] += now - since
            del self.ineligible_since[job]

    def starving(self, jobs: Any) -> dict[int, int]:
        """The starving ones of ``jobs`` and how long each has waited (OpenPBS 20 job_starving: waited
        more than max_starve, strictly; none without help_starving_jobs)."""
        if not self.help_starving:
            return {}
        return {j: w for j in jobs if (w := self.waited(j)) > self.max_starve}

    def order(self, among: list[int] | None = None) -> list[int]:
        """Every waiting job (or those of ``among``) in PBS's order (held ones included).

        With help_starving_jobs, starving jobs first, the longest starving first (OpenPBS 20 cmp_sort:
        after the preemption class, before fair-share and job_sort_key; of equal waits, those keys
        decide); where (next_job): without by_queue or with round_robin, each sorted list
        (the complex's, or each queue's) puts its starving jobs first; with by_queue, next_job first
        takes the express class's and the starving jobs from the complex's list before going queue by
        queue: that list is sorted whole (starving jobs of every queue first, after the express
        queues' jobs) unless fair_share sorts it queue by queue; then its express and starving jobs are
        taken up to its first normal job when the scheduler preempts (each queue's starving jobs first
        in their queue), all of them, queue by queue, when it does not (no job has a preemption class,
        find_non_normal_job_ind reads the whole list)."""
        self.accrue()
        sim = self.sim
        fair = self.tree.keys(self.cycle_usage) if self.fair_share else {}
        none: tuple[float, ...] = ()
        jobs = self.waiting if among is None else among
        starving = self.starving(jobs)
        if among is None:
            self.starving_now = starving

        def within(j: int) -> tuple:
            extra = tuple(-v if high else v for column, high in self.sort_keys
                          for v in ((sim.size[j] if column == "ncpus" else sim.estimate[j]),))
            return (fair.get(self.entity[j], none), extra, sim.submit[j], j)

        def sort_key(j: int) -> tuple:                      # cmp_sort: class, starving, the rest
            if not starving:
                return within(j)
            klass = self.job_class.get(self.queue_of[j], 0)
            return (klass, -starving[j] if j in starving else 1, within(j))

        if not self.by_queue and not self.round_robin:
            return sorted(jobs, key=sort_key)
        first: list[int] = []
        if starving and self.by_queue and not self.round_robin and not (self.fair_share and self.preempting):
            # next_job's non-normal pass over the complex's list (find_non_normal_job_ind)
            if self.fair_share:     # the list is the queues' lists one after the other; all starving jobs
                first = [j for j in self._by_queue(starving, sort_key) if j in starving]
            else:                   # sorted whole: the express queues' jobs and the starving jobs, up to a normal one
                first = [j for j in sorted(jobs, key=sort_key)
                         if j in starving or self.job_class.get(self.queue_of[j], 0) < 0]
            taken = set(first)
            jobs = [j for j in jobs if j not in taken]
        lists = self._by_queue(jobs, sort_key, lists=True)
        if not self.round_robin:
            return first + [j for jobs in lists for j in jobs]
        return [jobs[i] for i in range(max(map(len, lists), default=0)) for jobs in lists if i < len(jobs)]

    def _by_queue(self, jobs: Any, key: Any, lists: bool = False) -> Any:
        """``jobs`` queue by queue (by priority, higher first), each queue's sorted by ``key``: one list,
        or (``lists``) a list per queue."""
        by_queue: dict[str, list[int]] = defaultdict(list)
        for j in jobs:
            by_queue[self.queue_of[j]].append(j)
        names = sorted(by_queue, key=lambda q: (-self.queue_priority.get(q, 0), q))
        found = [sorted(by_queue[q], key=key) for q in names]
        return found if lists else [j for jobs in found for j in jobs]

    def jobs(self) -> list[int]:
        order = self.order()
        return [j for j in order if not self.held(j)] if self.limited else order

    def __len__(self) -> int:
        return sum(1 for j in self.waiting if not self.held(j)) if self.limited else len(self.waiting)

    def head(self) -> int:
        return self.jobs()[0]

    def may_start(self, job: int) -> bool:
        return not self.limited or not self.held(job)


def enqueue_limits(target: PbsQueue | PbsServer) -> list[tuple[Limits, str, bool]]:
    """A queue's or the server's limits on the jobs it holds, each (limits, resource or "" for a count
    of jobs, whether only jobs in the 'Q' state count), the counts first (svr_chkque's order)."""
    return [(target.max_queued, "", False), (target.queued_jobs_threshold, "", True),
            (target.max_queued_res.get(FOLLOWED_RESOURCE, Limits()), FOLLOWED_RESOURCE, False),
            (target.queued_jobs_threshold_res.get(FOLLOWED_RESOURCE, Limits()), FOLLOWED_RESOURCE, True)]


def enqueue_message(scope: str, who: str, queue: str | None, resource: str, q_only: bool) -> str:
    """The server's message when a job would exceed a limit on queued jobs (OpenPBS pbs_messages.c,
    msg_et_*): of ``queue`` (None: the complex), a count of jobs ("") or a ``resource``'s sum, of
    jobs queued or running or (``q_only``) in the 'Q' state only."""
    where = f"queue {queue}" if queue else "complex"
    noun = SCOPE_NOUNS.get(scope, "")
    if resource:
        tail = " for jobs in 'Q' state" if q_only else ""
        if scope == "o":
            return f"would exceed limit on resource {resource} in {where}{tail}"
        if who == "PBS_GENERIC":
            return f"would exceed per-{noun} limit on resource {resource} in {where}{tail}"
        return f"would exceed {noun} {who}'s limit on resource {resource} in {where}{tail}"
    state = " in 'Q' state" if q_only else ""
    if scope == "o":
        return f"Maximum number of jobs{state} already in {where}"
    if who == "PBS_GENERIC":
        possessive = f"queue {queue}'s" if queue else "complex's"
        return f"would exceed {possessive} per-{noun} limit" + (" of jobs in 'Q' state" if q_only else "")
    return f"Maximum number of jobs{state} for {noun} {who} already in {where}"


def _column(jobs: Any, name: str, n: int) -> list[str]:
    return [str(v) for v in jobs[name].tolist()] if name in jobs else [""] * n


def _names(jobs: Any, name: str, names: dict[str, str], n: int) -> list[str]:
    return [names.get(v, v) for v in _column(jobs, name, n)]


def _usage_on_run(text: str) -> tuple[bool, bool]:
    """fairshare_usage_res -> (counts ncpus, counts walltime) of a job's request; (False, False): none."""
    words = set(text.replace(" ", "").strip('"').lower().split("*"))
    if not words <= {"ncpus", "walltime"}:
        return False, False
    return "ncpus" in words, "walltime" in words


def _sort_keys(text: str) -> list[tuple[str, bool]]:
    """job_sort_key lines ("ncpus HIGH; walltime LOW") -> [(resource, high first)] for ncpus and walltime."""
    keys = []
    for item in text.split(";"):
        words = item.replace('"', " ").split()
        if len(words) >= 2 and words[0].lower() in ("ncpus", "walltime"):
            keys.append((words[0].lower(), words[1].upper() == "HIGH"))
    return keys


class PbsCycle(Algorithm):
    """A PBS scheduling cycle at every submission and job end and every scheduler_iteration seconds:
    strict order with reservations for the top backfill_depth jobs, or every job that fits."""

    def __init__(self, sim: Simulation, queue: WaitingQueue, params: dict) -> None:
        super().__init__(sim, queue, params)
        if not isinstance(queue, PbsOrder):
            raise PolicyError("the pbs-cycle algorithm needs the pbs ordering (preset pbs)")
        server = queue.server
        cycle = float(params.get("cycle", FROM_SITE))
        self.cycle = int(cycle if cycle >= 0 else scheduler_iteration(server))
        depth = int(params.get("backfill_depth", FROM_SITE))
        self.depth = depth if depth >= 0 else backfill_depth(server)
        self.strict = sched_true(server, "strict_ordering", False)
        self.origin = int(min(sim.submit)) if sim.n else 0

    def schedule(self) -> None:
        """One cycle: the jobs in PBS's order, each started, or noted with what holds it."""
        sim, queue = self.sim, self.queue
        assert isinstance(queue, PbsOrder)
        if not queue.waiting:
            return
        queue.cycle_usage.clear()
        if self.cycle > 0 and sim.started > sim.finished:     # with nothing running a later cycle starts nothing
            sim.wake_at(sim.now - (sim.now - self.origin) % self.cycle + self.cycle)
        order = queue.order()
        # starving jobs (help_starving_jobs): decided at the cycle's start, as OpenPBS's query_jobs does
        starving = queue.starving_now
        now, size, estimate = sim.now, sim.size, sim.estimate
        # a calendar of top jobs: strict order's, or a starving job's (should_backfill_with_job)
        profile = running_jobs_profile(sim) if (self.strict or starving) and self.depth > 0 else None
        reserved = 0
        for at_job, job in enumerate(order):
            comment, held = queue.hold(job)
            queue.eligible(job, comment)
            if held:
                queue.reasons.note_name(job, held)
                continue
            if profile is None:
                if sim.fits(job):
                    self.start(job)
                    self._resort(order, at_job, job)
                    continue
                queue.reasons.note_name(job, RESOURCES)
                if self.strict:
                    return self._rest(order[at_job + 1:], STRICT_ORDER)
                if job in starving:     # no backfilling: a starving job that does not run stops the cycle
                    return self._rest(order[at_job + 1:], STARVING)
                continue
            if not sim.fits(job) and (reserved >= self.depth or not (self.strict or job in starving)):
                queue.reasons.note_name(job, RESOURCES)
                if not sim.free:
                    return self._rest(order[at_job + 1:], RESOURCES)
                continue          # no room now and no reservation to give it: nothing to work out
            duration = max(int(estimate[job]), 1)
            at = profile.earliest_start(now, duration, int(size[job]))
            if at is None:
                queue.reasons.note_name(job, RESOURCES)
                continue
            if at == now and sim.fits(job):
                self.start(job)
                profile.reserve(now, now + duration, int(size[job]))
                self._resort(order, at_job, job)
                continue
            queue.reasons.note_name(job, TOP_JOB if sim.fits(job) else RESOURCES)
            if reserved < self.depth and (self.strict or job in starving):
                profile.reserve(at, at + duration, int(size[job]))
                reserved += 1

    def _resort(self, order: list[int], at_job: int, job: int) -> None:
        """With fair-share, a started job's usage counts at once for the rest of its cycle and the jobs
        not yet looked at are sorted again (OpenPBS: update_usage_on_run, then next_job's re-sort,
        MAY_RESORT_JOBS), so one entity's jobs do not take every free CPU in turn."""
        queue = self.queue
        assert isinstance(queue, PbsOrder)
        ncpus, walltime = queue.usage_on_run
        if not queue.fair_share or not (ncpus or walltime):
            return
        sim = self.sim
        queue.cycle_usage[queue.entity[job]] += (sim.size[job] if ncpus else 1) * (sim.estimate[job] if walltime else 1)
        order[at_job + 1:] = queue.order(order[at_job + 1:])

    def _rest(self, jobs: list[int], reason: str) -> None:
        """The jobs a cycle did not reach: held by a limit, or by ``reason`` (what stopped the cycle)."""
        queue = self.queue
        assert isinstance(queue, PbsOrder)
        for job in jobs:
            comment, held = queue.hold(job)
            queue.eligible(job, comment)
            queue.reasons.note_name(job, held or reason)

    # ---------------------------------------------------------------- what the run shows

    def extra_columns(self) -> dict[str, Any]:
        """``pbs_reason``: what held each job longest, in PBS's words ("" if it never waited)."""
        queue = self.queue
        assert isinstance(queue, PbsOrder)
        return {"pbs_reason": queue.reasons.longest(queue.waiting_jobs())}

    def summary(self) -> dict[str, Any]:
        """``pbs_pending``: per reason, the jobs it held and for how many hours; ``pbs_refused``: jobs
        refused at submission (max_queued) per qsub message."""
        queue = self.queue
        assert isinstance(queue, PbsOrder)
        return {"pbs_pending": queue.reasons.pending(queue.waiting_jobs()), "pbs_refused": refused_counts(self.sim.refused)}


ORDER_PARAMS = (
    Param("help_starving_jobs", "choice", "site", "whether a job waiting longer than max_starve goes first and gets "
          "a reservation (site = sched_config's help_starving_jobs, off if unset)", choices=SWITCH,
          label="help starving jobs"),
    Param("max_starve", "float", FROM_SITE, "seconds a job waits before it is starving (-1 = sched_config's "
          "max_starve, 0 if unset)", minimum=FROM_SITE, label="max starve", unit="s"),
    Param("eligible_time_enable", "choice", "site", "whether the wait counted is the job's eligible_time (the time "
          "no user, group or project limit held it) rather than the time since submission (site = the server's "
          "eligible_time_enable, False if unset)", choices=SWITCH, label="eligible time"),
)

PARAMS = (
    Param("cycle", "float", FROM_SITE, "seconds between scheduling cycles besides those at submissions and ends "
          "(-1 = the server's scheduler_iteration, 600 if unset; 0 = none)", minimum=FROM_SITE,
          label="scheduler iteration", unit="s"),
    Param("backfill_depth", "float", FROM_SITE, "jobs that get a reservation under strict_ordering (-1 = the "
          "server's backfill_depth, 1 if unset; 0 = no backfilling)", minimum=FROM_SITE, label="backfill depth"),
)

register_ordering(Component("pbs", PbsOrder, ORDER_PARAMS, "PBS's job order from the site's print server and sched_config"))
register_algorithm(Component("pbs-cycle", PbsCycle, PARAMS,
                             "PBS's scheduling cycle: strict order with backfill_depth reservations, or first fit"))
register(Preset("pbs", "PBS as configured: queue priorities and route queues, max_run limits, fair-share from the "
                "resource_group tree, strict order with backfill_depth or first fit (needs --pbs-server).",
                "pbs", "pbs-cycle", family="fairshare"))
