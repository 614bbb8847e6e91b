"""The server's fair queue of runs: whose turn it is, and when a waiting run should start.

Runs wait in the database (status ``queued``, ``dispatched_at`` empty), not in the broker. Whenever a
simulation slot is free (webapp.core.workers.simulation_slots on the whole server), the dispatcher
(webapp.experiments.tasks.dispatch) hands the next run to the simulation queue, choosing by user:

1. the user holding the fewest slots now goes first (fair share of the slots at this moment);
2. between users holding as many, the one served longest ago (round robin: a user who has never
   been served, or not for a long time, goes before the one just served);
3. within a user, their experiments in the order they were created, each in its own order (a run
   re-queued after a lost worker keeps its place).

A user holds at most SCHEDLAB_SLOTS_PER_USER slots (default: all but one), so a newcomer's run starts
at once instead of after someone's long run. A study or sweep of 66 points is 66 runs of one user:
it takes its turns like 66 single runs, never all the slots ahead of everyone else.

Other apps' simulation work that is not a run (a site preview's calibration: some 80 replays) takes
its turn by the same rules: the app registers a :class:`Work` (:func:`register_work`), whose waiting
items join their owner's queue (keyed ``(kind, pk)``, runs by their pk) and whose items holding a
slot count as the owner's, so such work neither jumps the queue nor hides the slots it holds.

:class:`Turns` makes the choice; the dispatcher and the page's estimate (:func:`estimates`) both use it,
so the place shown is the place the dispatcher will give.
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Max, Q, QuerySet
from django.utils import timezone

from engine.api import time_left
from webapp.core.workers import simulation_slots, slots_per_user
from webapp.experiments.models import Run

DEFAULT_RUN_SECONDS = 60.0  # a run's expected length before the server has finished any
RECENT = 20  # finished runs a user's (or the server's) typical run length is taken from


#: what waits for a slot: a run (its pk) or another app's work (its kind and pk, see :class:`Work`)
Item = int | tuple[str, int]


@dataclass(frozen=True)
class Work:
    """Another app's simulation work that takes a slot like a run and waits for its owner's turn.

    ``waiting()``: the items waiting for a slot, as (pk, owner, place) where place orders them among
    the owner's runs, whose place is (experiment, position, pk); ``holding()``: those holding one, as
    dicts with the keys of holding_runs().values(...) below (status, progress, started_at,
    experiment__owner_id); ``dispatched()``: (owner, when) of those ever sent, for the round robin;
    ``claim(pk, now)``: mark it sent (inside the dispatcher's transaction), False when it no longer
    waits; ``send(pk)``: its message to the simulation queue (after the commit)."""

    kind: str
    waiting: Callable[[], Iterable[tuple[int, int, tuple]]]
    holding: Callable[[], Iterable[dict[str, Any]]]
    dispatched: Callable[[list[int]], Iterable[tuple[int, datetime]]]
    claim: Callable[[int, datetime], bool]
    send: Callable[[int], None]


WORK: dict[str, Work] = {}


def register_work(work: Work) -> None:
    """Let ``work`` take its turns in the fair queue (an app's ready())."""
    WORK[work.kind] = work


@dataclass
class Turns:
    """Who is waiting (each user's runs in order), how many slots each holds, and when each was last
    served; :meth:`next_run` takes the next run (or other work, an :data:`Item`) by turn."""

    waiting: dict[int, deque[Any]]
    holding: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    last_served: dict[int, float] = field(default_factory=dict)
    per_user: int = 1

    def next_run(self, served_at: float) -> tuple[int, int] | None:
        """(run, user) whose turn it is, marked as holding a slot from `served_at`; None when every
        waiting user already holds their most."""
        candidates = [user for user, runs in self.waiting.items() if runs and self.holding[user] < self.per_user]
        if not candidates:
            return None
        user = min(candidates, key=lambda u: (self.holding[u], self.last_served.get(u, -math.inf), u))
        run = self.waiting[user].popleft()
        self.holding[user] += 1
        self.last_served[user] = served_at
        return run, user

    def release(self, user: int) -> None:
        self.holding[user] -= 1


def waiting_runs() -> QuerySet[Run]:
    """Runs waiting for a slot, in each user's order."""
    return (Run.objects.filter(status=Run.Status.QUEUED, dispatched_at__isnull=True, cancel_requested=False)
            .order_by("experiment_id", "position", "pk"))


def holding_runs() -> QuerySet[Run]:
    """Runs holding a slot: running, or sent to the simulation queue and not started yet."""
    return Run.objects.filter(Q(status=Run.Status.RUNNING) |
                              Q(status=Run.Status.QUEUED, dispatched_at__isnull=False, cancel_requested=False))


HOLDING_FIELDS = ("status", "progress", "started_at", "experiment__owner_id")


def holding_items() -> list[dict[str, Any]]:
    """Everything holding a slot (runs and the registered work), as holding_runs().values(*HOLDING_FIELDS)."""
    return [*holding_runs().values(*HOLDING_FIELDS), *(row for work in WORK.values() for row in work.holding())]


def current_turns() -> tuple[Turns, int]:
    """The queue as the database holds it now (runs and the registered work), and how many slots are free."""
    places: dict[int, list[tuple[tuple, Item]]] = defaultdict(list)
    for pk, user, experiment, position in waiting_runs().values_list("pk", "experiment__owner_id", "experiment_id",
                                                                     "position"):
        places[user].append(((experiment, position, pk), pk))
    for work in WORK.values():
        for pk, user, place in work.waiting():
            places[user].append((place, (work.kind, pk)))
    waiting: dict[int, deque[Item]] = defaultdict(deque)
    for user, items in places.items():
        waiting[user] = deque(item for _, item in sorted(items, key=lambda entry: entry[0]))
    holding: dict[int, int] = defaultdict(int)
    for row in holding_items():
        holding[row["experiment__owner_id"]] += 1
    last = (Run.objects.filter(experiment__owner_id__in=list(waiting), dispatched_at__isnull=False)
            .values("experiment__owner_id").annotate(last=Max("dispatched_at")))
    last_served = {row["experiment__owner_id"]: row["last"].timestamp() for row in last}
    for work in WORK.values():
        for user, when in work.dispatched(list(waiting)):
            last_served[user] = max(last_served.get(user, -math.inf), when.timestamp())
    slots = simulation_slots()
    turns = Turns(waiting, holding, last_served, per_user=slots_per_user(slots))
    return turns, max(0, slots - sum(holding.values()))


def choose(turns: Turns, free: int, now: datetime) -> list[Item]:
    """The runs (and other work) to send now: up to `free`, by turn."""
    chosen = []
    for i in range(free):
        picked = turns.next_run(now.timestamp() + i * 1e-6)
        if picked is None:
            break
        chosen.append(picked[0])
    return chosen


# --------------------------------------------------------------------------- the page's estimate


@dataclass(frozen=True)
class Estimate:
    """A waiting run's place: `position` runs start before it (0: it is next), about `starts_in`
    seconds from now."""

    position: int
    starts_in: float


def estimates(wanted: Iterable[int]) -> dict[int, Estimate]:
    """Place and expected start of the waiting runs in `wanted`, by playing the dispatcher forward:
    each holding run ends after its time left (at its pace so far) and each waiting one lasts its
    owner's typical run; when a slot frees, the next run by turn takes it."""
    wanted = set(wanted)
    if not wanted:
        return {}
    turns, free = current_turns()
    now = timezone.now()
    typical = TypicalLength()
    ends: list[tuple[float, int]] = []  # (seconds from now, user) of every slot's current run
    for run in holding_items():
        user = run["experiment__owner_id"]
        heapq.heappush(ends, (remaining(run, now, typical.of(user)), user))
    found: dict[int, Estimate] = {}
    position, clock = 0, 0.0
    while len(found) < len(wanted):
        picked = turns.next_run(clock) if free > 0 else None
        if picked is None:
            if not ends:
                break
            clock, user = heapq.heappop(ends)
            turns.release(user)
            free += 1
            continue
        run, user = picked
        free -= 1
        if run in wanted:
            found[run] = Estimate(position, clock)
        position += 1
        heapq.heappush(ends, (clock + typical.of(user), user))
    return found


def remaining(run: dict, now: datetime, typical: float) -> float:
    """Seconds a holding run has left: at its pace so far when it has run long enough, else the
    rest of a typical run."""
    if run["status"] != Run.Status.RUNNING or run["started_at"] is None:
        return typical
    elapsed = (now - run["started_at"]).total_seconds()
    left = time_left(run["progress"], elapsed)
    return left if left is not None else max(typical - elapsed, 1.0)


class TypicalLength:
    """How long a user's runs take: the median of their last RECENT finished runs, else the
    server's, else DEFAULT_RUN_SECONDS. One query: the server's last finished runs."""

    def __init__(self, window: int = 50 * RECENT) -> None:
        done = (Run.objects.filter(status=Run.Status.DONE, started_at__isnull=False, finished_at__isnull=False)
                .order_by("-finished_at").values_list("experiment__owner_id", "started_at", "finished_at")[:window])
        self.spans: dict[int | None, list[float]] = defaultdict(list)
        for user, start, end in done:
            seconds = (end - start).total_seconds()
            if len(self.spans[user]) < RECENT:
                self.spans[user].append(seconds)
            if len(self.spans[None]) < RECENT:
                self.spans[None].append(seconds)

    def of(self, user: int | None) -> float:
        spans = self.spans.get(user) or self.spans.get(None)
        return statistics.median(spans) if spans else DEFAULT_RUN_SECONDS


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
