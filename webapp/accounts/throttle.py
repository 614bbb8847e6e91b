"""Throttling of password attempts and token requests, per account and per address.

Each (kind, account) and (kind, address) pair has a counter in the database
(:class:`~webapp.accounts.models.AttemptCounter`). SCHEDLAB_AUTH_ATTEMPTS attempts within a minute
block that account or address for SCHEDLAB_AUTH_LOCKOUT_SECONDS; the refusal says how long to wait.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.utils import timezone

from webapp.accounts.models import AttemptCounter

WINDOW = timedelta(seconds=60)
FORGET_AFTER = timedelta(hours=1)

PASSWORD = "password"  # a wrong password, on the login page or POST /api/auth/token/
TOKEN = "token"  # every POST /api/auth/token/ (each issues a token)


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind SCHEDLAB_PROXIES trusted proxies the entry of
    X-Forwarded-For they appended (never one the client could have written itself)."""
    proxies = settings.SCHEDLAB_PROXIES
    if proxies:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def keys(kind: str, request: HttpRequest, username: str) -> list[str]:
    found = [f"{kind}:addr:{client_address(request)}"]
    if username.strip():
        found.append(f"{kind}:user:{username.strip().lower()[:150]}")
    return found


def wait_seconds(keys: list[str]) -> int:
    """Seconds until every one of `keys` may try again (0: now)."""
    now = timezone.now()
    until = AttemptCounter.objects.filter(key__in=keys, blocked_until__gt=now).values_list("blocked_until", flat=True)
    return max((math.ceil((u - now).total_seconds()) for u in until), default=0)


def record(keys: list[str]) -> None:
    """Count one attempt against each key; the one that reaches the limit blocks its key."""
    now = timezone.now()
    for key in keys:
        _record(key, now)
    AttemptCounter.objects.filter(updated__lt=now - FORGET_AFTER).delete()


def _record(key: str, now: datetime) -> None:
    for _ in range(2):  # a second try only if another process created the row meanwhile
        try:
            with transaction.atomic():
                counter, _ = AttemptCounter.objects.select_for_update().get_or_create(
                    key=key, defaults={"window_start": now})
                if counter.window_start <= now - WINDOW:
                    counter.window_start, counter.count = now, 0
                counter.count += 1
                if counter.count >= settings.SCHEDLAB_AUTH_ATTEMPTS:
                    counter.blocked_until = now + timedelta(seconds=settings.SCHEDLAB_AUTH_LOCKOUT_SECONDS)
                    counter.window_start, counter.count = now, 0
                counter.save()
                return
        except IntegrityError:
            continue


def forget(keys: list[str]) -> None:
    """A successful login clears its account's failures (never its address's)."""
    AttemptCounter.objects.filter(key__in=[k for k in keys if ":user:" in k]).delete()


def refusal(seconds: int) -> str:
    return (f"Too many attempts from this account or address: wait {_duration(seconds)} and try again "
            f"(at most {settings.SCHEDLAB_AUTH_ATTEMPTS} a minute).")


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"{math.ceil(seconds / 60)} minutes"
