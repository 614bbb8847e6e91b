"""Helpers for the web app's tests: logged-in clients, ready traces and finished runs, all real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.test import Client

from webapp.experiments.models import Experiment, Run
from webapp.experiments.services import create_experiment
from webapp.experiments.tasks import run_simulation
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace
from tests.shared_data import SHARED_DATA
from tests.synthetic import synthetic_swf  # noqa: F401 - also imported from here by other tests

DATA = Path(__file__).resolve().parents[1] / "data"
DEMO_SWF = DATA / "demo.swf"
SHARED_SWF = SHARED_DATA / "swf"


@pytest.fixture(autouse=True)
def _media(media_root):
    return media_root


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def login(user) -> Client:  # noqa: ANN001
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_client(alice) -> Client:
    return login(alice)


@pytest.fixture
def bob_client(bob) -> Client:
    return login(bob)


@pytest.fixture
def staff_client(staff) -> Client:
    return login(staff)


def make_trace(owner, source: Path = DEMO_SWF, *, name: str = "demo", shared: bool = False, parse: bool = True,
               format: str = "swf") -> Trace:  # noqa: ANN001
    """A trace stored the way an upload stores it (by content hash), parsed by the real task; ``format``
    as the upload's check detects it ("pbs" for an accounting log)."""
    from webapp.traces.uploads import hash_and_measure

    sha, compressed = hash_and_measure(source, source.name)
    relative = f"traces/{sha}.swf" + (".gz" if compressed else "")
    from django.conf import settings

    target = Path(settings.MEDIA_ROOT) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    trace = Trace.objects.create(owner=owner, name=name, shared=shared, sha256=sha, file=relative,
                                 original_name=source.name, size_bytes=target.stat().st_size, format=format)
    if parse:
        parse_trace(trace.pk)
        trace.refresh_from_db()
    return trace


def make_experiment(owner, trace: Trace, policies=("fcfs", "easy"), *, run: bool = True, shared: bool = False, **kwargs) -> Experiment:  # noqa: ANN001
    """An experiment with one run per policy; with run=True each run is simulated right here."""
    experiment = create_experiment(owner, name=kwargs.pop("name", "demo experiment"), trace=trace,
                                   procs=kwargs.pop("procs", None), machine=None,
                                   policies=[{"preset": p} if isinstance(p, str) else p for p in policies],
                                   shared=shared, **kwargs)
    if run:
        for pk in experiment.runs.values_list("pk", flat=True):
            run_simulation(pk)
    return experiment


@pytest.fixture
def demo_trace(alice) -> Trace:
    return make_trace(alice)


@pytest.fixture
def done_experiment(alice, demo_trace) -> Experiment:
    return make_experiment(alice, demo_trace)


@pytest.fixture
def done_run(done_experiment) -> Run:
    return done_experiment.runs.first()


@pytest.fixture
def big_trace(alice, tmp_path) -> Trace:
    return make_trace(alice, synthetic_swf(tmp_path / "synthetic.swf"), name="synthetic")


#: a small machine of one cluster (20 nodes of 80 cores) and a one-queue configuration, for previews
ONE_CLUSTER = "0\tzewura\t20\t80\t1\t529426432\n"
ONE_QUEUE = "queues:\n  - {name: q, walltime: 1d}\n"


def make_preview(owner, trace: Trace, *, machine: str = ONE_CLUSTER, current: str = ONE_QUEUE,  # noqa: ANN001
                 proposed: str = ONE_QUEUE, policy: str = "mrfs-easy", run: bool = False, **setup):  # noqa: ANN201
    """A preview made as the new-preview page makes it (webapp.preview.services.create_preview); with
    run=True each of its runs is simulated right here by the real task."""
    from webapp.preview.services import Setup, Texts, create_preview

    preview = create_preview(owner, name=setup.pop("name", "p"), trace=trace, shared=setup.pop("shared", False),
                             texts=Texts(("m", machine), ("a", current), ("b", proposed)), setup=Setup(policy, **setup))
    if run:
        compute(preview)
    return preview


def compute(preview) -> None:  # noqa: ANN001
    """What the workers do with a preview's queued runs."""
    for pk in preview.experiment.runs.filter(status="queued").values_list("pk", flat=True):
        run_simulation(pk)
