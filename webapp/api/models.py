"""API tokens. Only a hash is stored; the token itself is shown once, when it is created."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class Token(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="api_tokens")
    digest = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"token of {self.user} created {self.created:%Y-%m-%d %H:%M}"

    @classmethod
    def issue(cls, user) -> str:  # noqa: ANN001
        key = secrets.token_hex(20)
        cls.objects.create(user=user, digest=digest(key))
        return key

    @classmethod
    def user_for(cls, key: str):  # noqa: ANN206
        token = cls.objects.select_related("user").filter(digest=digest(key), user__is_active=True).first()
        return token.user if token else None
