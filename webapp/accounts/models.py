"""What an account holds besides Django's user: its API tokens, and the counters of authentication
attempts that webapp.accounts.throttle keeps.

API tokens: only a SHA-256 hash is stored; the token itself is shown once, when it is created. A
fast hash is enough: a token is 160 random bits (nothing to guess from a list, unlike a password),
and every API call checks one. Tokens expire SCHEDLAB_TOKEN_MAX_AGE seconds after they are issued;
their owner lists and revokes them on the tokens page (webapp.accounts.views); the API
(webapp.api.decorators) checks them.

Attempt counters live in the database, not Django's cache: the embedded default's cache would be per
process (LocMem), so each gunicorn worker would allow its own ten attempts; the database is the one
store every web process and host already shares, in `make run` (SQLite) as on a lab server
(PostgreSQL).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import models
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from django.utils import timezone

PREFIX_LENGTH = 6  # shown in the tokens list so that an owner recognises a token; 134 secret bits remain
LAST_USED_RESOLUTION = timedelta(minutes=1)  # at most one write a minute per token, not one per call


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """What a presented key is worth: the user, or why not."""

    user: AbstractBaseUser | None = None
    expired: datetime | None = None  # when a known but expired token expired


class Token(models.Model):
    """An API token. Its table was api_token until the model moved here from webapp.api
    (migration accounts 0002 renames it, rows kept)."""

    OWNER_FIELD = "user"  # webapp.core.permissions: its owner (and staff) may revoke it
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="api_tokens")
    digest = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=100, blank=True, help_text="What it is for, e.g. “laptop scripts”.")
    prefix = models.CharField(max_length=PREFIX_LENGTH, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    expires = models.DateTimeField()
    last_used = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self) -> str:
        return f"token of {self.user} created {self.created:%Y-%m-%d %H:%M}"

    @property
    def is_expired(self) -> bool:
        return self.expires <= timezone.now()

    @classmethod
    def create_for(cls, user: AbstractBaseUser, name: str = "") -> tuple[str, Token]:
        """A new token: its key (to show once) and its row (which holds only the key's hash)."""
        key = secrets.token_hex(20)
        token = cls.objects.create(user=user, digest=digest(key), name=name[:100], prefix=key[:PREFIX_LENGTH],
                                   expires=timezone.now() + timedelta(seconds=settings.SCHEDLAB_TOKEN_MAX_AGE))
        return key, token

    @classmethod
    def issue(cls, user: AbstractBaseUser, name: str = "") -> str:
        return cls.create_for(user, name)[0]

    @classmethod
    def verify(cls, key: str) -> Verdict:
        token = cls.objects.select_related("user").filter(digest=digest(key), user__is_active=True).first()
        if token is None:
            return Verdict()
        now = timezone.now()
        if token.expires <= now:
            return Verdict(expired=token.expires)
        if token.last_used is None or token.last_used < now - LAST_USED_RESOLUTION:
            cls.objects.filter(pk=token.pk).update(last_used=now)
        return Verdict(user=token.user)


class AttemptCounter(models.Model):
    """Attempts of one kind from one account or address, e.g. key "password:user:alice"."""

    key = models.CharField(max_length=300, unique=True)
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)
    blocked_until = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.count} since {self.window_start:%H:%M:%S}"


@receiver(pre_save, sender=settings.AUTH_USER_MODEL)
def _note_password_change(sender: type, instance: AbstractBaseUser, **_: object) -> None:
    """set_password (the password page, the admin, manage.py changepassword) leaves the new password in
    ``_password`` until the save: remember that this save changes it."""
    instance._schedlab_password_changed = (  # type: ignore[attr-defined]
        instance.pk is not None and getattr(instance, "_password", None) is not None)


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def _revoke_tokens_on_password_change(sender: type, instance: AbstractBaseUser, created: bool, **_: object) -> None:
    """A new password revokes every API token of the account: a leaked token must not outlive the
    password change meant to stop the leak (other sessions end by Django's own session hash)."""
    if not created and getattr(instance, "_schedlab_password_changed", False):
        Token.objects.filter(user=instance).delete()
        instance._schedlab_password_changed = False  # type: ignore[attr-defined]
