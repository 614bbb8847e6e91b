"""Sending Celery tasks only once the rows they read are committed."""

from __future__ import annotations

from typing import Any

from django.db import transaction


def enqueue(task: Any, *args: Any) -> None:
    """`task.delay(*args)` after the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: task.delay(*args))
