"""Downloads: a file's content as an attachment, or 409 while what it is made of is not finished."""

from __future__ import annotations

from django.http import HttpResponse


def attachment(content: str | None, filename: str, content_type: str, *, unfinished: str) -> HttpResponse:
    """``content`` as a download named ``filename``; None: a 409 saying ``unfinished``."""
    if content is None:
        return HttpResponse(unfinished, status=409, content_type="text/plain")
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
