"""Counters of authentication attempts (webapp.accounts.throttle), kept in the database.

The database, not Django's cache: the embedded default's cache would be per process (LocMem), so
each gunicorn worker would allow its own ten attempts; the database is the one store every web
process and host already shares, in `make run` (SQLite) as on a lab server (PostgreSQL).
"""

from __future__ import annotations

from django.db import models


class AttemptCounter(models.Model):
    """Attempts of one kind from one account or address, e.g. key "password:user:alice"."""

    key = models.CharField(max_length=300, unique=True)
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)
    blocked_until = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.count} since {self.window_start:%H:%M:%S}"
