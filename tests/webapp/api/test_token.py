"""POST /api/auth/token/ {username, password} → {token}; the token authenticates later calls."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_token_is_issued_for_the_right_password(alice, client):
    response = client.post("/api/auth/token/", {"username": "alice", "password": "alice-password"}, content_type="application/json")
    token = response.json()["token"]
    listing = Client(HTTP_AUTHORIZATION=f"Token {token}").get("/api/traces/")
    assert listing.status_code == 200 and listing.json() == {"traces": []}


def test_a_wrong_password_is_a_json_error(alice, client):
    response = client.post("/api/auth/token/", {"username": "alice", "password": "nope"}, content_type="application/json")
    assert response.status_code == 401 and response.json() == {"error": "wrong username or password"}


def test_a_bad_token_is_refused(client):
    response = client.get("/api/traces/", HTTP_AUTHORIZATION="Token 0123")
    assert response.status_code == 401 and "Authorization: Token" in response.json()["error"]


def test_malformed_json_is_a_json_error(client):
    response = client.post("/api/auth/token/", "{nope", content_type="application/json")
    assert response.status_code == 400 and "not valid JSON" in response.json()["error"]
