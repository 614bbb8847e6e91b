"""While a preview computes, its page says how far it got and about how long is left (at its pace so
far, engine.api.time_left), as the run page does for a run."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from webapp.preview.models import Preview

pytestmark = pytest.mark.django_db
QUEUES = "queues:\n  - {name: q, walltime: 1d}\n"


@pytest.fixture
def preview(alice, demo_trace) -> Preview:
    return Preview.objects.create(owner=alice, name="p", trace=demo_trace, machine_name="m",
                                  machine_text="0\tzewura\t20\t80\t1\t529426432\n", current_name="a",
                                  current_text=QUEUES, proposed_name="b", proposed_text=QUEUES, policy="mrfs-easy")


def progress_line(client, preview: Preview) -> str:  # noqa: ANN001
    page = client.get(preview.get_absolute_url()).content.decode()
    found = re.search(r'<span data-field="percent">([^<]*)</span>', page)
    return found[1] if found else ""


def test_a_running_preview_shows_its_progress_and_about_how_long_is_left(alice_client, preview):
    """A quarter done after a minute: three minutes left (plus three times the test's own delay)."""
    before = timezone.now()
    Preview.objects.filter(pk=preview.pk).update(status="running", progress=0.25, heartbeat_at=before,
                                                 started=before - timedelta(minutes=1))
    line = progress_line(alice_client, preview)
    delay = (timezone.now() - before).total_seconds()
    match = re.fullmatch(r"25 %, about (\d+) min (\d+) s left", line)
    assert match, line
    assert 180 <= int(match[1]) * 60 + int(match[2]) <= 180 + 3 * delay + 1


def test_a_preview_that_has_not_started_shows_no_estimate(alice_client, preview):
    page = alice_client.get(preview.get_absolute_url()).content.decode()
    assert "Waiting for a worker" in page and "left" not in progress_line(alice_client, preview)


def test_a_preview_just_started_shows_progress_without_a_guess(alice_client, preview):
    Preview.objects.filter(pk=preview.pk).update(status="running", progress=0.0, started=timezone.now(),
                                                 heartbeat_at=timezone.now())
    assert progress_line(alice_client, preview) == "0 %"
