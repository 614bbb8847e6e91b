"""Bounds on quick work (webapp.core.limits): a parse past its memory or time limit fails
with a message naming the limit; the worker process goes on with its memory bound restored."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection

from tests.synthetic import synthetic_swf
from tests.webapp.conftest import make_trace
from webapp.core.limits import mapped_bytes, memory_limit
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace

ROOT = Path(__file__).resolve().parents[3]


def test_an_allocation_past_the_bound_fails_and_the_bound_is_lifted_after():
    before = resource.getrlimit(resource.RLIMIT_AS)
    with memory_limit(64 * 2**20):
        assert resource.getrlimit(resource.RLIMIT_AS)[0] <= mapped_bytes() + 64 * 2**20
        small = np.ones(2**20)  # 8 MB fits
        with pytest.raises(MemoryError):
            np.ones(2**27)  # 1 GiB does not
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert np.ones(2**27).nbytes == 2**30 and small.sum() == 2**20  # lifted


def test_no_bound_when_the_limit_is_zero():
    before = resource.getrlimit(resource.RLIMIT_AS)
    with memory_limit(0):
        assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_the_tasks_time_limits_come_from_the_settings(settings):
    assert parse_trace.soft_time_limit == settings.SCHEDLAB_PARSE_TIME_LIMIT == 600
    assert parse_trace.time_limit == settings.SCHEDLAB_PARSE_TIME_LIMIT + 30


def parse_in_a_fresh_worker_process(trace_id: int, memory_bytes: int) -> None:
    """parse_trace in a new process on this test's database and media, as a worker's pool process
    runs it: in this long-lived test process, memory freed by earlier tests is mapped already and
    reused without asking for more, so the bound would not be reached the same way."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings", "MEDIA_ROOT": str(settings.MEDIA_ROOT),
           "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
           "SCHEDLAB_TASK_MEMORY_BYTES": str(memory_bytes)}
    code = f"import django; django.setup(); from webapp.traces.tasks import parse_trace; parse_trace({trace_id})"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.django_db(transaction=True)
def test_a_parse_past_its_memory_bound_is_invalid_with_the_limit_named(alice, tmp_path):
    big = synthetic_swf(tmp_path / "big.swf", jobs=200_000)  # ~14 MB of text, far more once parsed
    trace = make_trace(alice, big, name="big", parse=False)
    parse_in_a_fresh_worker_process(trace.pk, 8 * 2**20)
    trace.refresh_from_db()
    assert trace.status == "invalid"
    assert trace.error.startswith("memory limit: parsing needed more than 8.0\xa0MB (this server's limit)")
    Trace.objects.filter(pk=trace.pk).update(status="parsing", error="")
    parse_in_a_fresh_worker_process(trace.pk, 3 * 2**30)  # the default: the same file parses
    trace.refresh_from_db()
    assert trace.status == "ready" and trace.summary["jobs"] == 200_000


@pytest.mark.django_db
def test_a_parse_past_its_time_limit_is_invalid_with_the_limit_named(alice):
    with mock.patch.object(Trace, "read", side_effect=SoftTimeLimitExceeded()):
        trace = make_trace(alice)
    assert trace.status == "invalid"
    assert trace.error == ("time limit: parsing took longer than 600 s (this server's limit); "
                           "try a smaller file or window, or ask an admin")
