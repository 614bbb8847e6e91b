"""The pages the load benchmark hits (benchmarks/load.py: trace list, experiment page, comparison plot
JSON, the API) cost a fixed number of SQL queries, however many traces, runs and experiments there
are: each page is counted, more rows are added, and it is counted again. A query per row (an N+1)
fails the second count; the pinned number fails when a page gains a query it did not have."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.webapp.conftest import make_experiment, make_trace
from webapp.experiments.models import Experiment, Run
from webapp.traces.models import Machine

pytestmark = pytest.mark.django_db


def queries(client: Client, url: str, **headers: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, **headers)
    assert response.status_code == 200, (url, response.status_code)
    return len(captured)


def more_experiments(owner, trace, count: int) -> None:  # noqa: ANN001
    """Finished experiments without simulating: runs marked done with a summary (what pages read)."""
    for i in range(count):
        experiment = Experiment.objects.create(owner=owner, name=f"more {i}", trace=trace, procs=16, shared=True)
        for position, preset in enumerate(("fcfs", "easy", "sjf")):
            Run.objects.create(experiment=experiment, position=position, label=preset, policy={"preset": preset},
                               status=Run.Status.DONE, progress=1.0, finished_at=timezone.now(),
                               summary={"jobs": 10, "mean_wait": 1.0, "mean_bsld": 1.0, "utilization": 0.5})


def more_traces(owner, count: int) -> None:  # noqa: ANN001
    for i in range(count):
        make_trace(owner, name=f"more {i}", shared=True)
        Machine.objects.create(owner=owner, name=f"machine {i}", procs=64, shared=True)


@pytest.fixture
def token(alice, alice_client) -> str:
    response = alice_client.post("/api/auth/token/", json.dumps({"username": "alice", "password": "alice-password"}),
                                 content_type="application/json")
    return response.json()["token"]


@pytest.fixture
def experiment(alice, demo_trace) -> Experiment:
    return make_experiment(alice, demo_trace, ["fcfs", "easy"])


def the_same_with_more_rows(client: Client, url: str, grow, **headers: str) -> int:  # noqa: ANN001
    client.get(url, **headers)  # warm: the comparison plots are built (and cached) on the first request
    before = queries(client, url, **headers)
    grow()
    after = queries(client, url, **headers)
    assert after == before, f"{url}: {before} queries, {after} with more rows"
    return after


# The pinned numbers: a logged-in page reads its session and user (2), an API call its token with the
# owner joined (1), then what the page shows: the trace list its traces and machines; the experiment
# page the experiment, its runs and other experiments' runs to compare with; a plot the experiment
# and its runs (the plot itself comes from the cache, keyed by the runs' ids and finish times).

def test_the_trace_list(alice, bob, alice_client, demo_trace):
    assert the_same_with_more_rows(alice_client, "/traces/", lambda: more_traces(bob, 4)) == 4


def test_the_experiment_page(alice, bob, alice_client, experiment, demo_trace):
    assert the_same_with_more_rows(alice_client, experiment.get_absolute_url(),
                                   lambda: more_experiments(bob, demo_trace, 4)) == 5


def test_the_experiment_page_with_more_runs_of_its_own(alice, alice_client, experiment):
    def more_runs() -> None:
        for position in range(2, 8):
            Run.objects.create(experiment=experiment, position=position, label=f"r{position}", policy={"preset": "sjf"},
                               status=Run.Status.RUNNING, progress=0.5, started_at=timezone.now(),
                               heartbeat_at=timezone.now())

    assert the_same_with_more_rows(alice_client, experiment.get_absolute_url(), more_runs) == 5


def test_the_comparison_page(alice, bob, alice_client, experiment, demo_trace):
    url = f"/dashboards/experiments/{experiment.pk}/"
    assert the_same_with_more_rows(alice_client, url, lambda: more_experiments(bob, demo_trace, 3)) == 4


@pytest.mark.parametrize("plot", ["timelines", "cdf", "gantt"])
def test_a_comparison_plot(alice, bob, alice_client, experiment, demo_trace, plot):
    url = f"/dashboards/experiments/{experiment.pk}/plots/{plot}.json"
    assert the_same_with_more_rows(alice_client, url, lambda: more_experiments(bob, demo_trace, 3),
                                   HTTP_ACCEPT_ENCODING="gzip") == 4


def test_the_api_experiment(alice, bob, experiment, demo_trace, token):
    def more_runs() -> None:
        for position in range(2, 8):
            Run.objects.create(experiment=experiment, position=position, label=f"r{position}", policy={"preset": "sjf"},
                               status=Run.Status.DONE)

    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    assert the_same_with_more_rows(client, f"/api/experiments/{experiment.pk}/", more_runs) == 3


def test_the_api_experiment_with_runs_waiting_in_the_fair_queue(alice, bob, experiment, demo_trace, token):
    """Waiting runs add their place in the server's queue: five queries (the waiting runs, the slots
    held, when each user was last served, the running runs, recent run lengths), and four for the
    other work that takes its turns in the same queue (the site preview's calibrations, fairqueue.WORK:
    8 queries without it), however many wait."""
    def more_waiting(owner, count: int) -> None:  # noqa: ANN001
        other = Experiment.objects.create(owner=owner, name="waiting", trace=demo_trace, procs=16)
        for position in range(count):
            Run.objects.create(experiment=other, position=position, label=f"w{position}", policy={"preset": "sjf"})

    Run.objects.create(experiment=experiment, position=2, label="waits", policy={"preset": "sjf"})
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    assert the_same_with_more_rows(client, f"/api/experiments/{experiment.pk}/",
                                   lambda: (more_waiting(alice, 5), more_waiting(bob, 5))) == 12


def test_the_api_traces(alice, bob, demo_trace, token):
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    assert the_same_with_more_rows(client, "/api/traces/", lambda: more_traces(bob, 4)) == 2


def test_the_api_experiments(alice, bob, experiment, demo_trace, token):
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    assert the_same_with_more_rows(client, "/api/experiments/", lambda: more_experiments(alice, demo_trace, 3)) == 2


def test_the_experiment_progress_poll(alice, alice_client, experiment):
    """Every open experiment page asks this every 1.5 s; it also runs the lost-worker check."""
    def more_runs() -> None:
        for position in range(2, 8):
            Run.objects.create(experiment=experiment, position=position, label=f"r{position}", policy={"preset": "sjf"},
                               status=Run.Status.RUNNING, progress=0.5, started_at=timezone.now(),
                               heartbeat_at=timezone.now())

    url = f"/experiments/{experiment.pk}/progress/"
    assert the_same_with_more_rows(alice_client, url, more_runs) == 5  # + stale-heartbeat check, runs
