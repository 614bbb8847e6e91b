"""Context every page gets (the base template's nav)."""

from __future__ import annotations

from django.http import HttpRequest


def schedlab(request: HttpRequest) -> dict:
    from engine import __version__

    return {"engine_version": __version__}
