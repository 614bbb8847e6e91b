"""API tokens expire after SCHEDLAB_TOKEN_MAX_AGE, are stored as hashes, and their owner lists,
creates and revokes them on the tokens page."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from webapp.accounts.models import Token, digest

pytestmark = pytest.mark.django_db


def api(key: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def test_only_the_hash_is_stored(alice):
    key = Token.issue(alice)
    token = Token.objects.get()
    assert token.digest == hashlib.sha256(key.encode()).hexdigest() and key not in (token.digest, token.prefix)


def test_a_token_expires_after_the_settings_age(alice, settings, client):
    settings.SCHEDLAB_TOKEN_MAX_AGE = 3600
    answer = client.post("/api/auth/token/", {"username": "alice", "password": "alice-password"},
                         content_type="application/json").json()
    token = Token.objects.get()
    assert abs((token.expires - token.created) - timedelta(hours=1)) < timedelta(seconds=1)
    assert answer["expires"] == token.expires.isoformat()
    assert api(answer["token"]).get("/api/traces/").status_code == 200
    Token.objects.update(expires=timezone.now() - timedelta(seconds=1))
    refused = api(answer["token"]).get("/api/traces/")
    assert refused.status_code == 401 and "expired" in refused.json()["error"]


def test_use_is_recorded(alice):
    key = Token.issue(alice)
    api(key).get("/api/traces/")
    assert Token.objects.get().last_used is not None


def test_the_owner_sees_their_tokens_not_others(alice, bob, alice_client):
    Token.issue(alice, "laptop")
    Token.issue(bob, "bobs secret script")
    page = alice_client.get("/accounts/tokens/").content.decode()
    assert "laptop" in page and "bobs secret script" not in page


def test_a_token_made_on_the_page_is_shown_once_and_works(alice, alice_client):
    shown = alice_client.post("/accounts/tokens/create/", {"name": "cluster"}, follow=True).content.decode()
    key = shown.split('<code id="new-token-key">')[1].split("</code>")[0]
    assert Token.objects.get().name == "cluster" and api(key).get("/api/traces/").status_code == 200
    assert key not in alice_client.get("/accounts/tokens/new/", follow=True).content.decode()


def test_revoking_stops_the_token(alice, alice_client):
    key = Token.issue(alice)
    response = alice_client.post(f"/accounts/tokens/{Token.objects.get().pk}/revoke/")
    assert response.status_code == 302 and not Token.objects.exists()
    assert api(key).get("/api/traces/").status_code == 401


def test_nobody_revokes_someone_elses_token(alice, bob_client):
    Token.issue(alice)
    assert bob_client.post(f"/accounts/tokens/{Token.objects.get().pk}/revoke/").status_code == 404
    assert Token.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_tokens_from_before_expiry_get_one_at_least_a_week_away(alice, settings):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    settings.SCHEDLAB_TOKEN_MAX_AGE = 30 * 86400
    executor = MigrationExecutor(connection)
    executor.migrate([("api", "0001_initial")])
    old = executor.loader.project_state([("api", "0001_initial")]).apps.get_model("api", "Token")
    recent = old.objects.create(user_id=alice.pk, digest="a" * 64)
    ancient = old.objects.create(user_id=alice.pk, digest="b" * 64)
    old.objects.filter(pk=ancient.pk).update(created=timezone.now() - timedelta(days=400))
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    now = timezone.now()
    assert abs(Token.objects.get(pk=recent.pk).expires - (now + timedelta(days=30))) < timedelta(minutes=1)
    assert abs(Token.objects.get(pk=ancient.pk).expires - (now + timedelta(days=7))) < timedelta(minutes=1)


@pytest.mark.django_db(transaction=True)
def test_moving_the_token_model_to_accounts_keeps_every_token(alice):
    """accounts 0002 takes api's tokens over: same rows, same keys still valid, the table renamed, the
    content type (and so its permissions) moved; backwards, they return to api_token."""
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("api", "0002_token_expiry"), ("accounts", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps.get_model("api", "Token")
        key, expires = "c0ffee" + "1" * 34, timezone.now() + timedelta(days=3)
        kept = old.objects.create(user_id=alice.pk, digest=digest(key), name="laptop", prefix=key[:6], expires=expires)
        ContentType.objects.filter(app_label="accounts", model="token").delete()  # as on a server before the move
        api_type, _ = ContentType.objects.get_or_create(app_label="api", model="token")
        Permission.objects.get_or_create(content_type=api_type, codename="add_token", defaults={"name": "Can add token"})

        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        token = Token.objects.get()
        assert (token.pk, token.name, token.prefix, token.expires) == (kept.pk, "laptop", "c0ffee", expires)
        assert Token.verify(key).user == alice
        tables = connection.introspection.table_names()
        assert "accounts_token" in tables and "api_token" not in tables
        assert ContentType.objects.get(pk=api_type.pk).app_label == "accounts"
        assert Permission.objects.filter(codename="add_token", content_type__app_label="accounts").exists()

        executor = MigrationExecutor(connection)
        executor.migrate(before)
        back = executor.loader.project_state(before).apps.get_model("api", "Token").objects.get()
        assert (back.pk, back.digest, back.name) == (kept.pk, digest(key), "laptop")
        assert ContentType.objects.get(pk=api_type.pk).app_label == "api"
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
