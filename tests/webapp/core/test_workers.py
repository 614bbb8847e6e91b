"""Simulation slots without setting them by hand (SCHEDLAB_SIM_SLOTS=auto, compose's default): the
live simulation workers' processes, as each reports itself (webapp.core.workers). In-process; the
real workers reporting themselves are in tests/webapp/test_fair_workers.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from unittest import mock

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from tests.webapp.conftest import make_experiment
from webapp.core import workers
from webapp.core.models import SimulationWorker
from webapp.experiments.tasks import dispatch, run_simulation
from webapp.settings import envslots


@pytest.mark.parametrize(("value", "default", "expected"), [
    (None, "auto", None), ("auto", "4", None), ("AUTO", "4", None), ("3", "auto", 3), ("", "2", 2), (" 5 ", "2", 5),
])
def test_the_setting_is_a_number_or_auto(monkeypatch, value, default, expected):
    if value is None:
        monkeypatch.delenv("SCHEDLAB_SIM_SLOTS", raising=False)
    else:
        monkeypatch.setenv("SCHEDLAB_SIM_SLOTS", value)
    assert envslots("SCHEDLAB_SIM_SLOTS", default) == expected


@pytest.mark.parametrize("value", ["0", "-2", "two", "2.5"])
def test_a_bad_setting_is_refused_with_its_name(monkeypatch, value):
    monkeypatch.setenv("SCHEDLAB_SIM_SLOTS", value)
    with pytest.raises(ImproperlyConfigured, match=f"SCHEDLAB_SIM_SLOTS={value}, expected a positive integer or auto"):
        envslots("SCHEDLAB_SIM_SLOTS", "auto")


@pytest.mark.parametrize(("redis_url", "expected"), [("redis://redis:6379/0", "None"), ("", str(os.cpu_count() or 1))])
def test_compose_needs_no_slots_set_by_hand(redis_url, expected, tmp_path):
    """With REDIS_URL (compose: workers in containers of their own) and SCHEDLAB_SIM_SLOTS unset or
    empty (compose passes an unset variable so), the slots are auto; under `make run` (no Redis) one
    per core, the processes of the simulation worker it starts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDLAB_SIM_SLOTS")}
    env.update(REDIS_URL=redis_url, SCHEDLAB_SIM_SLOTS="", SCHEDLAB_SLOTS_PER_USER="", SCHEDLAB_DATA_DIR=str(tmp_path),
               DJANGO_SETTINGS_MODULE="webapp.settings")
    code = "from django.conf import settings; print(settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == [expected, "None"]


def reported(hostname: str, processes: int, seconds_ago: float) -> None:
    SimulationWorker.objects.create(hostname=hostname, processes=processes,
                                    seen_at=timezone.now() - timedelta(seconds=seconds_ago))


@pytest.mark.django_db
def test_auto_counts_the_fresh_reports_only(settings):
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER, settings.SCHEDLAB_RUN_STALE_SECONDS = None, None, 60
    assert workers.simulation_slots() == 0 and workers.slots_per_user() == 1  # no worker: no slot
    reported("simulation@a", 2, seconds_ago=5)
    reported("simulation@b", 3, seconds_ago=59)
    reported("simulation@gone", 4, seconds_ago=61)  # killed a minute ago: its slots no longer count
    reported("simulation@old-container", 2, seconds_ago=2 * 86400)
    assert workers.simulation_slots() == 5
    workers.report("simulation@a", 2)  # a report forgets the day-old ones, keeps the recently lost
    assert sorted(SimulationWorker.objects.values_list("hostname", flat=True)) == [
        "simulation@a", "simulation@b", "simulation@gone"]
    assert workers.slots_per_user() == 4  # all but one
    settings.SCHEDLAB_SLOTS_PER_USER = 2
    assert workers.slots_per_user() == 2
    settings.SCHEDLAB_SIM_SLOTS = 7  # a number set by the administrator wins
    assert workers.simulation_slots() == 7


def test_only_a_worker_consuming_the_simulation_queue_reports(settings):
    settings.SCHEDLAB_QUEUE_PREFIX = "p-"
    assert workers.consumes_simulations({"p-simulation": object(), "p-quick": object()})
    assert not workers.consumes_simulations({"p-quick": object()})
    assert not workers.consumes_simulations({"simulation": object()})  # another prefix's queue


def test_a_live_worker_reports_well_within_the_staleness_age(settings):
    for stale, every in ((60, 15.0), (600, 15.0), (8, 2.0), (1, 0.5)):
        settings.SCHEDLAB_RUN_STALE_SECONDS = stale
        assert workers.report_every() == every


@pytest.mark.django_db(transaction=True)
def test_the_reporter_reports_repeatedly_and_withdraws(settings):
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_RUN_STALE_SECONDS = None, 60
    reporter = workers.Reporter("simulation@here", 3, every=0.1)
    reporter.start()
    try:
        first = SimulationWorker.objects.get(hostname="simulation@here").seen_at  # reported before start returns
        deadline = time.monotonic() + 10
        while SimulationWorker.objects.get(hostname="simulation@here").seen_at == first:
            assert time.monotonic() < deadline, "no second report"
            time.sleep(0.05)
        assert workers.simulation_slots() == 3
    finally:
        reporter.stop()
    assert not SimulationWorker.objects.exists() and workers.simulation_slots() == 0
    assert not reporter.thread.is_alive()


@pytest.mark.django_db(transaction=True)
def test_the_dispatcher_fills_the_reported_slots(alice, bob, demo_trace, settings):
    """auto with no worker: every run waits in its turn; two workers of one process each report: two
    slots, one per user (all but one), so alice's first and bob's run are sent."""
    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER, settings.SCHEDLAB_RUN_STALE_SECONDS = None, None, 60
    with mock.patch.object(run_simulation, "delay", autospec=True) as send:
        a = list(make_experiment(alice, demo_trace, ["fcfs"] * 3, run=False).runs.values_list("pk", flat=True))
        b = make_experiment(bob, demo_trace, ["easy"], run=False).runs.get().pk
        assert send.call_count == 0
        reported("simulation@one", 1, seconds_ago=0)
        reported("simulation@two", 1, seconds_ago=0)
        assert dispatch() == 2
        assert [c.args[0] for c in send.call_args_list] == [a[0], b]
        assert dispatch() == 0
