"""The same view, API and worker tests on PostgreSQL (the service on 127.0.0.1:5432).

Runs a key subset of this package in a subprocess with DATABASE_URL pointing at PostgreSQL. It
never skips: if PostgreSQL is not running, this test fails (`make test` starts it first).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATABASE_URL = os.environ.get("SCHEDLAB_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/schedlab_test")
SUBSET = [
    "tests/webapp/traces",
    "tests/webapp/experiments",
    "tests/webapp/api",
    "tests/webapp/test_worker_redis.py",
    "tests/webapp/test_permissions.py::test_another_users_private_object_is_not_found",
]


@pytest.mark.slow
def test_the_key_tests_pass_on_postgresql():
    env = {**os.environ, "DATABASE_URL": DATABASE_URL}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--create-db", "-x", *SUBSET],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )
    tail = "\n".join((result.stdout + result.stderr).splitlines()[-40:])
    assert result.returncode == 0, f"on {DATABASE_URL}:\n{tail}"
    assert "passed" in result.stdout and "skipped" not in result.stdout.splitlines()[-1], tail
