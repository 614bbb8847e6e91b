"""`make run` creates the first admin once: from the environment, or with a generated password."""

from __future__ import annotations

import pytest
from django.contrib.auth import authenticate

from webapp.run import port_free
from webapp.supervision import ensure_admin

pytestmark = pytest.mark.django_db


def test_a_generated_password_is_shown_once_and_works(monkeypatch):
    monkeypatch.delenv("SCHEDLAB_ADMIN_USER", raising=False)
    monkeypatch.delenv("SCHEDLAB_ADMIN_PASSWORD", raising=False)
    hint = ensure_admin()
    password = hint.split("with password ")[1].split()[0]
    assert authenticate(username="admin", password=password).is_superuser
    assert "with password" not in ensure_admin()  # the second start does not show or change it


def test_the_admin_can_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("SCHEDLAB_ADMIN_USER", "boss")
    monkeypatch.setenv("SCHEDLAB_ADMIN_PASSWORD", "s3cret-enough")
    assert "SCHEDLAB_ADMIN_PASSWORD" in ensure_admin()
    assert authenticate(username="boss", password="s3cret-enough").is_staff


def test_a_busy_port_is_detected():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert not port_free("127.0.0.1", s.getsockname()[1])
