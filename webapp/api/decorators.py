"""Token authentication and JSON errors for the API (no framework needed for a dozen endpoints)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from webapp.accounts.models import Token, Verdict

log = logging.getLogger(__name__)


def error(message: str, status: int = 400, **extra: Any) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def authorize(*methods: str) -> Callable:
    """Require `Authorization: Token <key>` and one of `methods`; every failure is a JSON error."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in methods:
                return error(f"method {request.method} not allowed; use {' or '.join(methods)}", 405)
            scheme, _, key = request.headers.get("Authorization", "").partition(" ")
            verdict = Token.verify(key.strip()) if scheme.lower() == "token" and key.strip() else Verdict()
            if verdict.expired is not None:
                return error(f"this token expired on {verdict.expired:%Y-%m-%d %H:%M} UTC; "
                             "get a new one from POST /api/auth/token/", 401)
            if verdict.user is None:
                return error("authentication required: send the header 'Authorization: Token <token>' "
                             "(get one from POST /api/auth/token/)", 401)
            request.user = verdict.user
            try:
                return view(request, *args, **kwargs)
            except Http404:
                return error("not found", 404)

        return wrapper

    return decorator


def one_line(exc: BaseException, limit: int = 200) -> str:
    """An exception's message as one short line for a 400 answer."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def json_body(request: HttpRequest) -> dict[str, Any]:
    """The request's JSON object (or its form fields); raises ValueError with a message."""
    if request.content_type == "application/json":
        try:
            data = json.loads(request.body or b"{}")
        except RecursionError:
            raise ValueError("the body is not valid JSON (nested too deeply)") from None
        except ValueError as e:     # also a number of more than 4,300 digits, bytes that are not UTF-8
            raise ValueError(f"the body is not valid JSON ({one_line(e)})") from None
        if not isinstance(data, dict):
            raise ValueError("the body must be a JSON object")
        return data
    return request.POST.dict()
