"""Lockout without locking the rightful owner out (issue 27): strangers' wrong passwords lock an
account for strangers, but a browser that logged in as that account before (a signed cookie) is
counted on its own and still gets in with the right password. Tokens are revoked on a password
change; users change their own password on a page."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from webapp.accounts import throttle
from webapp.accounts.models import Token

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"


def attacker(times: int = 10, username: str = "alice", address: str = "10.6.6.6") -> Client:
    client = Client(REMOTE_ADDR=address)
    for _ in range(times):
        client.post(LOGIN, {"username": username, "password": "wrong"})
    return client


def owners_browser(address: str = "192.0.2.10") -> Client:
    """alice's own browser: it logged in once and out again, keeping the known-browser cookie."""
    client = Client(REMOTE_ADDR=address)
    response = client.post(LOGIN, {"username": "alice", "password": "alice-password"})
    assert response.status_code == 302 and throttle.KNOWN_COOKIE in response.cookies
    client.post(reverse("logout"))
    return client


def test_a_stranger_cannot_lock_the_owner_out_of_her_own_browser(alice):
    browser = owners_browser()
    attacker(10)
    assert attacker(0).post(LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 429
    assert Client(REMOTE_ADDR="198.51.100.7").post(   # a fresh browser elsewhere waits out the lockout
        LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 429

    response = browser.post(LOGIN, {"username": "alice", "password": "alice-password"})

    assert response.status_code == 302 and browser.session["_auth_user_id"] == str(alice.pk)


def test_the_owners_browser_is_still_limited_on_its_own(alice):
    browser = owners_browser()
    for _ in range(10):
        browser.post(LOGIN, {"username": "alice", "password": "wrong"})
    assert browser.post(LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 429
    # and its failures did not lock the account for another browser of hers
    assert Client(REMOTE_ADDR="198.51.100.8").post(
        LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 302


def test_the_cookie_is_for_one_account_and_cannot_be_forged(alice, bob):
    browser = owners_browser()
    attacker(10, username="bob")
    # alice's cookie does not vouch for bob
    assert browser.post(LOGIN, {"username": "bob", "password": "bob-password"}).status_code == 429
    forged = Client(REMOTE_ADDR="192.0.2.99")
    forged.cookies[throttle.KNOWN_COOKIE] = '{"u": "bob", "d": "x"}'
    assert forged.post(LOGIN, {"username": "bob", "password": "bob-password"}).status_code == 429


def test_the_address_of_the_attack_stays_locked_even_with_the_cookie(alice):
    browser = owners_browser(address="10.6.6.6")
    attacker(10, address="10.6.6.6")
    assert browser.post(LOGIN, {"username": "alice", "password": "alice-password"}).status_code == 429


def test_tokens_are_revoked_when_the_password_changes(alice, bob):
    key = Token.issue(alice)
    Token.issue(alice)
    kept = Token.issue(bob)
    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/traces/").status_code == 200

    alice.set_password("a-new-long-password-1")
    alice.save()

    assert not Token.objects.filter(user=alice).exists()
    assert api.get("/api/traces/").status_code == 401
    assert Client(HTTP_AUTHORIZATION=f"Token {kept}").get("/api/traces/").status_code == 200


def test_saving_a_user_without_a_new_password_keeps_the_tokens(alice):
    Token.issue(alice)
    alice.first_name = "Alice"
    alice.save()
    get_user_model().objects.get(pk=alice.pk).save()
    assert Token.objects.filter(user=alice).count() == 1


def test_manage_py_changepassword_revokes_too(alice, monkeypatch):
    Token.issue(alice)
    monkeypatch.setattr("getpass.getpass", lambda *a, **k: "another-long-password-2")
    call_command("changepassword", "alice", stdout=open("/dev/null", "w"))
    assert not Token.objects.filter(user=alice).exists()


def test_users_change_their_own_password_on_a_page(alice):
    browser = Client()
    browser.post(LOGIN, {"username": "alice", "password": "alice-password"})
    other_session = Client()
    other_session.post(LOGIN, {"username": "alice", "password": "alice-password"})
    Token.issue(alice)
    page = browser.get(reverse("accounts:password_change"))
    assert page.status_code == 200 and "old_password" in page.content.decode()

    wrong = browser.post(reverse("accounts:password_change"), {
        "old_password": "not-it", "new_password1": "brand-new-pass-77", "new_password2": "brand-new-pass-77"})
    assert wrong.status_code == 400
    done = browser.post(reverse("accounts:password_change"), {
        "old_password": "alice-password", "new_password1": "brand-new-pass-77", "new_password2": "brand-new-pass-77"})

    assert done.status_code == 302
    alice.refresh_from_db()
    assert alice.check_password("brand-new-pass-77")
    assert browser.get(reverse("accounts:tokens")).status_code == 200          # still logged in here
    assert other_session.get(reverse("accounts:tokens")).status_code == 302    # logged out elsewhere
    assert not Token.objects.filter(user=alice).exists()
    assert "Password" in browser.get(reverse("accounts:tokens")).content.decode()
