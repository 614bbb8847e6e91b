"""The server's fair queue of runs (webapp.experiments.fairqueue): whose turn it is, the dispatcher that
fills free simulation slots by turn, and the place and start the page shows. In-process: messages are
caught where the dispatcher sends them (the real workers are in tests/webapp/test_fair_workers.py)."""

from __future__ import annotations

import random
from collections import deque
from datetime import timedelta
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.webapp.conftest import make_experiment
from webapp.experiments.fairqueue import Turns, estimates, ordinal
from webapp.experiments.models import Run
from webapp.experiments.tasks import dispatch, run_simulation


def turns(waiting: dict[str, list[str]], holding: dict[str, int], last: dict[str, float], per_user: int) -> Turns:
    t = Turns({u: deque(r) for u, r in waiting.items()}, per_user=per_user)
    t.holding.update(holding)
    t.last_served.update(last)
    return t


def test_turns_by_hand():
    """Fewest slots held first; among equals, served longest ago (never: first); none past the cap."""
    t = turns({"A": ["a1", "a2", "a3"], "B": ["b1"], "C": ["c1", "c2"]}, {"A": 1}, {"A": 10.0, "C": 5.0}, per_user=2)
    picks = [t.next_run(100.0 + i) for i in range(5)]
    # B and C hold none; B was never served -> b1; then C (0) -> c1; A (1, served at 10) before C (1, at 101)
    # -> a1; A now holds its 2: c2; then everyone waiting is at the cap.
    assert picks == [("b1", "B"), ("c1", "C"), ("a1", "A"), ("c2", "C"), None]
    t.release("A")
    assert t.next_run(200.0) == ("a2", "A")


def naive_order(waiting: dict[str, list[str]], per_user: int) -> list[str]:
    """Reference: with every slot released at once after each pick (unlimited slots, nobody holding),
    the dispatcher is plain round robin over users, each in their own order."""
    queues = {u: list(r) for u, r in waiting.items()}
    order, users = [], sorted(queues)
    while any(queues.values()):
        for u in users:
            if queues[u]:
                order.append(queues[u].pop(0))
    return order


@pytest.mark.parametrize("seed", range(20))
def test_with_each_run_ending_before_the_next_starts_the_turns_are_round_robin(seed):
    rng = random.Random(seed)
    waiting = {u: [f"{u}{i}" for i in range(rng.randint(0, 7))] for u in "abcd"}
    t = turns(waiting, {}, {}, per_user=1)
    order = []
    for clock in range(100):
        picked = t.next_run(float(clock))
        if picked is None:
            break
        order.append(picked[0])
        t.release(picked[1])
    assert order == naive_order(waiting, 1)


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]


# --------------------------------------------------------------------------- the dispatcher, on the database


@pytest.fixture
def sent(settings):
    """What the dispatcher sends to the simulation queue, in order; 2 slots, at most 1 per user."""
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER = 2, 1
    with mock.patch.object(run_simulation, "delay", autospec=True) as send:
        yield lambda: [c.args[0] for c in send.call_args_list]


def finish(run_id: int, seconds: float = 30.0) -> None:
    now = timezone.now()
    Run.objects.filter(pk=run_id).update(status="done", started_at=now - timedelta(seconds=seconds), finished_at=now)


def start(run_id: int, seconds_ago: float = 0.0, progress: float = 0.0) -> None:
    Run.objects.filter(pk=run_id).update(status="running", progress=progress,
                                         started_at=timezone.now() - timedelta(seconds=seconds_ago))


@pytest.mark.django_db(transaction=True)
def test_one_users_many_runs_never_block_another_users_one_run(alice, bob, demo_trace, sent):
    many = list(make_experiment(alice, demo_trace, ["fcfs"] * 6, run=False).runs.values_list("pk", flat=True))
    assert sent() == many[:1]  # alice may hold one of the two slots
    one = make_experiment(bob, demo_trace, ["easy"], run=False).runs.get().pk
    assert sent() == [many[0], one]  # bob's run takes the other at once
    assert dispatch() == 0  # both slots held
    finish(many[0])
    assert dispatch() == 1 and sent()[-1] == many[1]
    assert Run.objects.filter(dispatched_at__isnull=True, status="queued").count() == 4


@pytest.mark.django_db(transaction=True)
def test_users_take_turns_when_slots_free(alice, bob, demo_trace, sent, settings):
    settings.SCHEDLAB_SLOTS_PER_USER = 2  # now alice may hold both slots
    a = list(make_experiment(alice, demo_trace, ["fcfs"] * 4, run=False).runs.values_list("pk", flat=True))
    b = list(make_experiment(bob, demo_trace, ["fcfs"] * 3, run=False).runs.values_list("pk", flat=True))
    assert sent() == a[:2]  # bob came when both were held: he waits for a slot
    finish(a[0])
    dispatch()
    finish(a[1])
    dispatch()
    assert sent()[2:] == [b[0], a[2]]  # bob (holding none) first; then alice (1 each, alice served longer ago)
    finish(b[0])
    dispatch()
    assert sent()[4:] == [b[1]]  # bob holds none, alice one
    finish(a[2])
    dispatch()
    assert sent()[5:] == [a[3]]  # alice holds none now, bob one
    # a cancelled run that held a slot frees it: the next by turn takes it
    from webapp.experiments.services import cancel_run

    cancel_run(Run.objects.get(pk=b[1]))
    assert sent()[6:] == [b[2]]


@pytest.mark.django_db(transaction=True)
def test_a_rerun_and_a_lost_run_wait_for_their_owners_turn(alice, bob, demo_trace, sent):
    from webapp.experiments.services import rerun
    from webapp.experiments.tasks import reconcile

    a = list(make_experiment(alice, demo_trace, ["fcfs"] * 2, run=False).runs.values_list("pk", flat=True))
    b = make_experiment(bob, demo_trace, ["fcfs"], run=False).runs.get().pk
    assert sent() == [a[0], b]
    old = timezone.now() - timedelta(minutes=10)
    Run.objects.filter(pk=a[0]).update(status="running", attempts=1, started_at=old, heartbeat_at=old)
    assert reconcile()["requeued"] == 1  # its worker is gone: back in alice's turn, and its slot is free
    assert sent()[2:] == [a[0]]  # it keeps its place, ahead of a[1]
    finish(b)
    assert rerun(Run.objects.get(pk=b))
    assert sent()[3:] == [b]  # bob holds none: his re-run takes the free slot
    assert Run.objects.get(pk=a[1]).dispatched_at is None


# --------------------------------------------------------------------------- place and expected start


@pytest.mark.django_db(transaction=True)
def test_place_and_start_by_hand(alice, bob, demo_trace, sent, settings, alice_client):
    """One slot. alice's first run is half done after 10 s (10 s left); her next two and bob's one
    wait. No run has finished, so each lasts the default 60 s. Bob was never served: he goes first."""
    settings.SCHEDLAB_SIM_SLOTS = 1
    experiment = make_experiment(alice, demo_trace, ["fcfs"] * 3, run=False)
    a = list(experiment.runs.values_list("pk", flat=True))
    b = make_experiment(bob, demo_trace, ["easy"], run=False).runs.get().pk
    assert sent() == [a[0]]
    start(a[0], seconds_ago=10, progress=0.5)
    found = estimates([a[1], a[2], b])
    assert {pk: e.position for pk, e in found.items()} == {b: 0, a[1]: 1, a[2]: 2}
    assert [round(found[pk].starts_in) for pk in (b, a[1], a[2])] == [10, 70, 130]

    # the page and the API show it
    payload = alice_client.get(reverse("experiments:progress", args=[experiment.pk])).json()
    rows = {r["id"]: r for r in payload["runs"]}
    assert (rows[a[1]]["queue_position"], rows[a[1]]["starts_in_seconds"]) == (2, 70)
    assert rows[a[2]]["time_left"] == "3rd in the queue, starts in about 2 min 10 s"
    assert rows[a[0]]["queue_position"] is None and rows[a[0]]["time_left"] == "about 10 s left"
    page = alice_client.get(reverse("experiments:detail", args=[experiment.pk])).content.decode()
    assert "2nd in the queue, starts in about 1 min 10 s" in page


@pytest.mark.django_db(transaction=True)
def test_a_users_own_recent_runs_set_the_expected_length(alice, bob, demo_trace, sent, settings):
    """bob's runs took 20 s and 40 s (median 30), alice's 200 s: the expected start of alice's waiting
    run counts bob's queued one ahead of it at 30 s, not at alice's 200 s or the default 60 s."""
    settings.SCHEDLAB_SIM_SLOTS = 1
    old_b = list(make_experiment(bob, demo_trace, ["fcfs"] * 2, run=False).runs.values_list("pk", flat=True))
    old_a = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get().pk
    for pk, seconds in ((old_b[0], 20), (old_b[1], 40), (old_a, 200)):
        finish(pk, seconds)
    first = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get().pk
    start(first, seconds_ago=0)  # just started: no pace yet, so a typical alice run (200 s)
    b = make_experiment(bob, demo_trace, ["fcfs"], run=False).runs.get().pk
    a = make_experiment(alice, demo_trace, ["fcfs"], run=False).runs.get().pk
    found = estimates([a, b])
    assert (found[b].position, found[a].position) == (0, 1)
    assert round(found[b].starts_in) == 200 and round(found[a].starts_in) == 230


@pytest.mark.django_db(transaction=True)
def test_a_studys_page_shows_where_its_next_point_waits(alice, bob, demo_trace, sent, settings, alice_client):
    """One slot, held by bob's run (not started: a typical 60 s). alice's study waits; she was never
    served, so her first point is next, in about 60 s; the rest follow it."""
    from webapp.studies.services import create_study, progress

    settings.SCHEDLAB_SIM_SLOTS = 1
    holding = make_experiment(bob, demo_trace, ["fcfs"], run=False).runs.get().pk
    study = create_study(alice, name="s", trace=demo_trace, policies=[{"preset": "fcfs"}], grid={"load": [1, 2, 3]})
    assert sent() == [holding]
    assert progress(study)["queue"] == "next point: next in the queue, starts in about 1 min 00 s"
    page = alice_client.get(reverse("studies:detail", args=[study.pk])).content.decode()
    assert "next point: next in the queue, starts in about 1 min 00 s" in page
    for run in study.experiment.runs.all():
        finish(run.pk)
    assert progress(study)["queue"] == ""
