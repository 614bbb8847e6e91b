"""Context every page gets (the base template's nav)."""

from __future__ import annotations

from django.http import HttpRequest

from engine import __version__


def schedlab(request: HttpRequest) -> dict:
    return {"engine_version": __version__}
