"""Wrong passwords and token requests are throttled per account and per address: ten a minute, then
a wait, and the refusal says how long. The counters live in the database (every web process shares it)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from webapp.accounts.models import AttemptCounter

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
TOKEN = "/api/auth/token/"


def fail_login(client: Client, username: str = "alice", times: int = 1):  # noqa: ANN201
    for _ in range(times):
        response = client.post(LOGIN, {"username": username, "password": "wrong"})
    return response


def client_from(address: str) -> Client:
    return Client(REMOTE_ADDR=address)


def test_ten_wrong_passwords_are_answered_the_eleventh_is_refused_with_the_wait(alice):
    client = client_from("10.0.0.1")
    assert fail_login(client, times=10).status_code == 200  # the form again, "wrong username or password"
    refused = client.post(LOGIN, {"username": "alice", "password": "alice-password"})  # even the right one
    assert refused.status_code == 429
    assert "wait 60 seconds" in refused.content.decode() and refused["Retry-After"] == "60"
    assert "_auth_user_id" not in client.session


def test_the_account_is_locked_from_every_address(alice, bob):
    for i in range(10):
        fail_login(client_from(f"10.0.1.{i}"))  # one attempt from each of ten addresses
    assert client_from("10.0.2.1").post(LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 429
    assert client_from("10.0.2.1").post(LOGIN, {"username": "bob", "password": "bob-password"}).status_code == 302


def test_the_address_is_locked_for_every_account(alice, bob):
    client = client_from("10.0.3.1")
    for i in range(10):
        fail_login(client, username=f"guess{i}")
    assert client.post(LOGIN, {"username": "bob", "password": "bob-password"}).status_code == 429
    assert client_from("10.0.3.2").post(LOGIN, {"username": "bob", "password": "bob-password"}).status_code == 302


def test_after_the_wait_logging_in_works_again(alice):
    client = client_from("10.0.4.1")
    fail_login(client, times=10)
    AttemptCounter.objects.update(blocked_until=timezone.now() - timedelta(seconds=1))
    assert client.post(LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 302


def test_failures_spread_over_more_than_a_minute_do_not_lock(alice):
    client = client_from("10.0.5.1")
    fail_login(client, times=9)
    AttemptCounter.objects.update(window_start=timezone.now() - timedelta(seconds=61))
    fail_login(client, times=9)
    assert client.post(LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 302


def test_a_successful_login_clears_the_accounts_failures_not_the_addresss(alice):
    client = client_from("10.0.6.1")
    fail_login(client, times=9)
    assert client.post(LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 302
    assert not AttemptCounter.objects.filter(key="password:user:alice").exists()
    assert AttemptCounter.objects.get(key="password:addr:10.0.6.1").count == 9


def test_token_requests_are_limited_even_with_the_right_password(alice):
    client = client_from("10.0.7.1")
    body = {"username": "alice", "password": "alice-password"}
    answers = [client.post(TOKEN, body, content_type="application/json") for _ in range(11)]
    assert [a.status_code for a in answers] == [200] * 10 + [429]
    assert answers[-1].json()["retry_after"] == 60 and "wait 60 seconds" in answers[-1].json()["error"]


def test_wrong_passwords_on_the_api_count_for_the_login_page_too(alice):
    client = client_from("10.0.8.1")
    for _ in range(10):
        client.post(TOKEN, {"username": "alice", "password": "nope"}, content_type="application/json")
    assert client.post(LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 429


def test_the_admin_login_goes_through_the_throttled_page(client):
    response = client.get("/admin/login/?next=/admin/")
    assert response.status_code == 302 and response.url == "/accounts/login/?next=/admin/"


def test_behind_a_proxy_the_forwarded_address_counts(alice, settings):
    settings.SCHEDLAB_PROXIES = 1
    for i in range(10):  # ten clients behind one proxy: only their own addresses are counted
        Client(REMOTE_ADDR="10.9.9.9", HTTP_X_FORWARDED_FOR=f"spoofed, 10.0.9.{i}").post(
            LOGIN, {"username": f"guess{i}", "password": "x"})
    assert Client(REMOTE_ADDR="10.9.9.9", HTTP_X_FORWARDED_FOR="10.0.9.99").post(
        LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 302
