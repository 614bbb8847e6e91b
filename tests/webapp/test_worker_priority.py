"""A worker's pool processes (the simulations) run at a lower CPU priority than the web server, so the
pages stay quick on a host that also simulates (benchmarks/load.py measures it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STARTED_POOL_PROCESS = """
import os, django
django.setup()
from celery.signals import worker_process_init
from webapp.celery import app
before = os.nice(0)
worker_process_init.send(sender=None)
print(before, os.nice(0))
"""


def niceness_added(env: dict[str, str]) -> tuple[int, int]:
    """(what the pool process added to its niceness, what it could add at most: niceness stops at 19)."""
    done = subprocess.run([sys.executable, "-c", STARTED_POOL_PROCESS], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings", **env}, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after = map(int, done.stdout.split())
    return after - before, 19 - before


def test_a_pool_process_lowers_its_priority_by_the_setting():
    for setting, expected in ((None, 10), ("3", 3), ("0", 0)):
        added, room = niceness_added({} if setting is None else {"SCHEDLAB_WORKER_NICE": setting})
        assert added == min(expected, room), (setting, added)
