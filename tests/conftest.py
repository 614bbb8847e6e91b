"""Fixtures shared by every test package: three users and a private MEDIA_ROOT."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings as hypothesis_settings

# Playwright's sync API runs an event loop in the test thread; Django must still allow ORM calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# In CI the property tests draw the same examples every run (a failure there is reproducible, never
# a fluke); on a developer's machine they keep exploring new ones.
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-password")


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password="bob-password")


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("staff", password="staff-password", is_staff=True, is_superuser=True)


@pytest.fixture
def media_root(settings, tmp_path):
    """MEDIA_ROOT and the upload temp dir in this test's own directory."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "upload-tmp")
    settings.MEDIA_ROOT.mkdir()
    os.makedirs(settings.FILE_UPLOAD_TEMP_DIR)
    return settings.MEDIA_ROOT
