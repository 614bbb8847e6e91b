"""Login required everywhere (except the login page, static files and the token-authenticated API);
the Content-Security-Policy header on every response; a full disk answered as a 400."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse

from webapp.core.files import disk_full, disk_full_message

log = logging.getLogger(__name__)

OPEN_PREFIXES = ("/accounts/login/", "/api/", "/static/", "/favicon.ico")


class LoginRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        open_path = path.startswith(OPEN_PREFIXES) or path.startswith("/admin/")
        if not open_path and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    """Sends settings.CONTENT_SECURITY_POLICY (Django 5.2 has no CSP support of its own)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if settings.CONTENT_SECURITY_POLICY:
            response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class DiskFullMiddleware:
    """A full disk (or SQLite's "database or disk is full") while a view stores something answers
    400 with one line, logged as a warning, instead of a 500: the views clean up what they started
    (create_trace removes its file), so nothing is half-stored, and the user may try again later."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not disk_full(exception):
            return None
        log.warning("disk full during %s %s: %s", request.method, request.path, exception)
        if request.path_info.startswith("/api/"):
            return JsonResponse({"error": disk_full_message()}, status=400)
        return HttpResponse(disk_full_message(), status=400, content_type="text/plain; charset=utf-8")
