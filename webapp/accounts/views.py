"""The login page (throttled) the API tokens page (list, create, revoke) and one's own password."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.forms import PasswordChangeForm
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from webapp.accounts import throttle
from webapp.accounts.models import Token
from webapp.core.permissions import get_owned_or_404


class ThrottledLoginView(LoginView):
    """Django's login view; SCHEDLAB_AUTH_ATTEMPTS wrong passwords a minute per account or address
    lock that account or address out for a while (429, with how long); a browser that logged in as
    the account before counts under its own device instead (webapp.accounts.throttle)."""

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        username = request.POST.get("username", "")
        device = throttle.known_device(request, username)
        keys = throttle.keys(throttle.PASSWORD, request, username, device=device)
        wait = throttle.wait_seconds(keys)
        if wait:
            form = self.get_form()
            form.errors.clear()
            response = self.render_to_response(self.get_context_data(form=form, refusal=throttle.refusal(wait)),
                                               status=429)
            response["Retry-After"] = str(wait)
            return response
        response = super().post(request, *args, **kwargs)
        if request.user.is_authenticated:
            throttle.forget(keys)
            throttle.remember_device(response, username, device)
        else:
            throttle.record(keys)
        return response


def _tokens_page(request: HttpRequest, **extra: object) -> HttpResponse:
    return render(request, "accounts/tokens.html", {
        "tokens": request.user.api_tokens.all(), "max_age_days": round(settings.SCHEDLAB_TOKEN_MAX_AGE / 86400, 1),
        **extra})


@require_GET
def tokens(request: HttpRequest) -> HttpResponse:
    return _tokens_page(request)


@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    key = Token.issue(request.user, request.POST.get("name", "").strip())
    # Shown on the next page only: the session holds it for one request, the database only its hash.
    request.session["new_token"] = key
    return redirect("accounts:tokens_new")


@require_GET
def token_new(request: HttpRequest) -> HttpResponse:
    key = request.session.pop("new_token", None)
    if key is None:
        return redirect("accounts:tokens")
    return _tokens_page(request, new_token=key)


@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_owned_or_404(Token, request.user, pk)
    label = token.name or (f"{token.prefix}…" if token.prefix else f"created {token.created:%Y-%m-%d %H:%M}")
    token.delete()
    messages.success(request, f"Revoked the token {label}; scripts using it now get 401.")
    return redirect("accounts:tokens")


@require_http_methods(["GET", "POST"])
def password_change(request: HttpRequest) -> HttpResponse:
    """Change one's own password (the old one asked again). This browser stays logged in; every other
    session ends and every API token is revoked (webapp.accounts.models: on any password change)."""
    form = PasswordChangeForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        tokens = request.user.api_tokens.count()
        form.save()
        update_session_auth_hash(request, form.user)
        messages.success(request, "Password changed: your other sessions are logged out"
                                  + (f" and your {tokens} API token(s) revoked." if tokens else "."))
        return redirect("accounts:tokens")
    return render(request, "accounts/password_change.html", {"form": form},
                  status=400 if request.method == "POST" else 200)
