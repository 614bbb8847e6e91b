"""Login is required everywhere except the login page, static files and the token API."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_pages_redirect_to_the_login_page(client):
    response = client.get("/traces/")
    assert response.status_code == 302 and response.url == "/accounts/login/?next=/traces/"


def test_the_login_page_and_static_files_are_open(client):
    assert client.get("/accounts/login/").status_code == 200
    assert client.get("/static/css/app.css").status_code == 200


def test_logging_in_lands_on_the_traces(alice, client):
    response = client.post("/accounts/login/", {"username": "alice", "password": "alice-password"})
    assert response.status_code == 302 and response.url == "/traces/"


def test_bokehjs_is_served_locally(alice_client):
    import bokeh

    response = alice_client.get("/static/bokeh/js/bokeh.min.js")
    assert response.status_code == 200
    assert f"\"{bokeh.__version__}\"".encode() in b"".join(response.streaming_content)
