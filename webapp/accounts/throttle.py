"""Throttling of password attempts and token requests, per account and per address.

Each (kind, account) and (kind, address) pair has a counter in the database
(:class:`~webapp.accounts.models.AttemptCounter`). SCHEDLAB_AUTH_ATTEMPTS attempts within a minute
block that account or address for SCHEDLAB_AUTH_LOCKOUT_SECONDS; the refusal says how long to wait.

Known browsers: a browser that logged in as an account gets a signed cookie naming the account and
a random device id (KNOWN_COOKIE, a year). On the login page such a browser is counted under its
own device key instead of the account's: strangers' wrong passwords lock the account for strangers
(and their addresses), never for the owner's own browser, whose own wrong passwords lock only that
browser. A fresh browser of the owner waits out the account's lockout like anyone else; an address
shared with the attacker is locked for everyone on it. The API token endpoint has no cookies: account
and address, as before.
"""

from __future__ import annotations

import math
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.core import signing
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
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


KNOWN_COOKIE = "schedlab_known"
KNOWN_SALT = "webapp.accounts.throttle.known-browser"
KNOWN_MAX_AGE = 365 * 24 * 3600


def keys(kind: str, request: HttpRequest, username: str, *, device: str | None = None) -> list[str]:
    """The counters an attempt counts against: its address, and its account or (a known browser of
    that account, see :func:`known_device`) its device."""
    found = [f"{kind}:addr:{client_address(request)}"]
    if device:
        found.append(f"{kind}:device:{device}")
    elif username.strip():
        found.append(f"{kind}:user:{_account(username)}")
    return found


def _account(username: str) -> str:
    return username.strip().lower()[:150]


def known_device(request: HttpRequest, username: str) -> str | None:
    """The device id of this browser if it logged in as ``username`` before (a valid signed cookie)."""
    try:
        value = signing.loads(request.COOKIES.get(KNOWN_COOKIE, ""), salt=KNOWN_SALT, max_age=KNOWN_MAX_AGE)
    except signing.BadSignature:
        return None
    if isinstance(value, dict) and value.get("u") == _account(username) and isinstance(value.get("d"), str):
        return str(value["d"])
    return None


def remember_device(response: HttpResponse, username: str, device: str | None) -> None:
    """After a successful login: this browser is known for ``username`` (its device id kept if it had one)."""
    value = signing.dumps({"u": _account(username), "d": device or secrets.token_hex(12)}, salt=KNOWN_SALT)
    response.set_cookie(KNOWN_COOKIE, value, max_age=KNOWN_MAX_AGE, httponly=True, samesite="Lax",
                        secure=settings.SESSION_COOKIE_SECURE)


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
    """A successful login clears its account's or device's failures (never its address's)."""
    AttemptCounter.objects.filter(key__in=[k for k in keys if ":user:" in k or ":device:" in k]).delete()


def refusal(seconds: int) -> str:
    return (f"Too many attempts from this account or address: wait {_duration(seconds)} and try again "
            f"(at most {settings.SCHEDLAB_AUTH_ATTEMPTS} a minute).")


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"{math.ceil(seconds / 60)} minutes"
