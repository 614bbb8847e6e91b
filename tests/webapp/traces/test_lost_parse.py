"""A trace left "parsing" with nobody parsing it (its message lost with a broker restart or a full
disk, its worker killed) is sent again once, then failed with a message and a "Parse again" button;
leftovers of interrupted uploads are removed at start-up and by the periodic check. Messages are real
files in a temporary filesystem broker; "losing" one is deleting its file."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.webapp.conftest import make_trace
from tests.webapp.experiments.test_lost_messages import lose_messages, messages, queue  # noqa: F401 - a fixture
from webapp.traces.models import Trace
from webapp.traces.tasks import PARSE_LOST, parse_trace, reconcile_parsing, reconcile_traces
from webapp.traces.uploads import clean_upload_temp

pytestmark = pytest.mark.django_db


@pytest.fixture
def parsing(alice, queue) -> Trace:  # noqa: F811 - the fixture imported above
    """A trace as an upload leaves it: stored, "parsing", its message sent to the broker."""
    trace = make_trace(alice, parse=False)
    Trace.objects.filter(pk=trace.pk).update(parse_sent_at=timezone.now())
    parse_trace.delay(trace.pk)
    assert len(messages(queue)) == 1
    trace.refresh_from_db()
    return trace


def sent_long_ago(trace: Trace, minutes: int = 10) -> None:
    Trace.objects.filter(pk=trace.pk).update(parse_sent_at=timezone.now() - timedelta(minutes=minutes))


def test_a_parse_whose_message_waits_is_left_alone(parsing):
    sent_long_ago(parsing)
    assert reconcile_parsing() == {"resent": 0, "failed": 0}


def test_a_parse_sent_moments_ago_is_not_judged_yet(parsing, queue):  # noqa: F811
    lose_messages(queue)     # a worker may have just taken it
    assert reconcile_parsing() == {"resent": 0, "failed": 0}


def test_a_lost_parse_is_sent_again_once_then_fails_with_a_message(parsing, queue):  # noqa: F811
    lose_messages(queue)
    sent_long_ago(parsing)
    assert reconcile_parsing() == {"resent": 1, "failed": 0}
    parsing.refresh_from_db()
    assert parsing.status == "parsing" and parsing.parse_resends == 1 and len(messages(queue)) == 1

    lose_messages(queue)
    sent_long_ago(parsing)
    assert reconcile_parsing() == {"resent": 0, "failed": 1}
    parsing.refresh_from_db()
    assert parsing.status == "invalid" and parsing.error == PARSE_LOST and messages(queue) == []


def test_a_parse_whose_worker_was_killed_is_sent_again_once(parsing, queue, settings):  # noqa: F811
    """The worker took the message (so it is not in the broker) and died: past the parse time limit
    and the grace, nobody will finish it."""
    lose_messages(queue)
    taken = timezone.now() - timedelta(seconds=settings.SCHEDLAB_PARSE_TIME_LIMIT + 30 + 61 + 5)
    Trace.objects.filter(pk=parsing.pk).update(parse_started_at=taken)
    assert reconcile_parsing() == {"resent": 1, "failed": 0}
    parsing.refresh_from_db()
    assert parsing.parse_started_at is None and len(messages(queue)) == 1

    parse_trace(parsing.pk)          # the message sent again, handled by a worker this time
    parsing.refresh_from_db()
    assert parsing.status == "ready" and parsing.summary["jobs"] > 0


def test_a_parse_still_within_its_time_limit_is_left_alone(parsing, queue):  # noqa: F811
    lose_messages(queue)
    Trace.objects.filter(pk=parsing.pk).update(parse_started_at=timezone.now() - timedelta(seconds=30))
    sent_long_ago(parsing)
    assert reconcile_parsing() == {"resent": 0, "failed": 0}


def test_when_the_worker_is_known_dead_its_parse_goes_at_once_and_stopping_does_not_count(parsing, queue):  # noqa: F811
    lose_messages(queue)
    Trace.objects.filter(pk=parsing.pk).update(parse_started_at=timezone.now())
    assert reconcile_parsing(worker_gone=True, count=False) == {"resent": 1, "failed": 0}
    parsing.refresh_from_db()
    assert parsing.parse_resends == 0
    lose_messages(queue)
    Trace.objects.filter(pk=parsing.pk).update(parse_started_at=timezone.now())
    assert reconcile_parsing(worker_gone=True) == {"resent": 1, "failed": 0}


def test_traces_stuck_from_before_are_judged_from_their_upload(alice, queue):  # noqa: F811
    """The 15 traces left "parsing" by a disk-full test had no message and no sent time."""
    trace = make_trace(alice, parse=False)
    Trace.objects.filter(pk=trace.pk).update(created=timezone.now() - timedelta(days=2))
    assert reconcile_parsing() == {"resent": 1, "failed": 0}
    parse_trace(trace.pk)
    assert Trace.objects.get(pk=trace.pk).status == "ready"


def test_the_page_offers_to_parse_again_and_it_does(alice, alice_client, bob_client, parsing, queue):  # noqa: F811
    Trace.objects.filter(pk=parsing.pk).update(status="invalid", error=PARSE_LOST, parse_resends=1)
    lose_messages(queue)
    page = alice_client.get(parsing.get_absolute_url()).content.decode()
    assert "Parse again" in page and "lost twice" in page
    url = reverse("traces:parse_again", args=[parsing.pk])
    assert bob_client.post(url).status_code == 404          # not bob's
    assert alice_client.post(url).status_code == 302
    parsing.refresh_from_db()
    assert parsing.status == "parsing" and parsing.parse_resends == 0 and len(messages(queue)) == 1


def test_leftover_upload_files_are_removed_when_old(settings, tmp_path):
    folder = Path(settings.FILE_UPLOAD_TEMP_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    old, fresh = folder / "tmpabc.upload.swf", folder / "tmpdef.upload.swf"
    old.write_bytes(b"x" * 1000)
    fresh.write_bytes(b"y")
    hours_ago = time.time() - settings.SCHEDLAB_UPLOAD_TEMP_MAX_AGE - 60
    os.utime(old, (hours_ago, hours_ago))

    other = folder / "someone-elses-file"
    other.write_bytes(b"z")
    os.utime(other, (hours_ago, hours_ago))

    assert clean_upload_temp() == [old]
    assert not old.exists() and fresh.exists() and other.exists()


def test_the_periodic_check_and_the_start_up_clean_leftovers(settings, queue):  # noqa: F811
    from webapp.supervision import recover_interrupted

    folder = Path(settings.FILE_UPLOAD_TEMP_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("a.upload", "b.upload"):
        (folder / name).write_bytes(b"partial")
        os.utime(folder / name, (0, 0))
    assert reconcile_traces()["temporary_files_removed"] == 2
    (folder / "c.upload").write_bytes(b"partial")
    os.utime(folder / "c.upload", (0, 0))
    recover_interrupted()
    assert list(folder.iterdir()) == []
