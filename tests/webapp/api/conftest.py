from __future__ import annotations

import pytest
from django.test import Client

from webapp.accounts.models import Token


@pytest.fixture
def api(alice) -> Client:
    """A client that sends alice's token, as a script would."""
    return Client(HTTP_AUTHORIZATION=f"Token {Token.issue(alice)}")
