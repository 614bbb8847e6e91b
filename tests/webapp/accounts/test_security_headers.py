"""Security headers on every page; secure cookies and HSTS behind TLS; `check --deploy` clean there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]


def test_every_page_sends_the_headers(alice_client):
    response = alice_client.get("/traces/")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"
    csp = response["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    script_src = next(d for d in csp.split("; ") if d.startswith("script-src"))
    assert "'unsafe-inline'" not in script_src  # pages carry no inline script


def test_no_page_template_has_an_inline_script_or_handler():
    import re

    # an inline <script>, an on…= handler, or a view's script markup printed raw (Bokeh's components())
    executable = re.compile(r'<script(?![^>]*(\bsrc=|type="application/json"))[^>]*>|\son[a-z]+="|\{\{\s*\w*script\w*\|safe',
                            re.I)
    offenders = [str(p.relative_to(ROOT)) for p in [*ROOT.glob("templates/**/*.html"), *ROOT.glob("webapp/**/*.html")]
                 if executable.search(p.read_text())]
    assert offenders == []


def test_the_login_page_sets_http_only_cookies_not_secure_ones_on_plain_http(client):
    response = client.get("/accounts/login/")
    cookie = response.cookies["csrftoken"]
    assert cookie["httponly"] and not cookie["secure"]


def deploy_environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    unset = ("DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(SCHEDLAB_DATA_DIR=str(tmp_path), ALLOWED_HOSTS="schedlab.example.org", **extra)
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_check_deploy_is_clean_behind_tls(tmp_path):
    result = manage(deploy_environment(tmp_path, SCHEDLAB_BEHIND_TLS="1"), "check", "--deploy", "--fail-level", "DEBUG")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_without_it(tmp_path):
    result = manage(deploy_environment(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode != 0 and "security.W004" in result.stderr  # no HSTS: the check is not vacuous


def test_behind_tls_cookies_are_secure_and_hsts_is_sent(settings, client, alice):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    response = client.post("/accounts/login/", {"username": "alice", "password": "alice-password"},
                           HTTP_X_FORWARDED_PROTO="https")
    assert response.cookies["sessionid"]["secure"] and response.cookies["sessionid"]["httponly"]
    page = client.get("/traces/", HTTP_X_FORWARDED_PROTO="https")
    assert page["Strict-Transport-Security"].startswith("max-age=31536000")
