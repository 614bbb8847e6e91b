"""Staff see every user's items; each that is not theirs is marked in lists and on its page, so other
users' private items are never silently mixed with their own (issue 27)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_experiment, make_trace
from webapp.core.templatetags.staff import follow, owner_of
from webapp.studies.models import Study

pytestmark = pytest.mark.django_db


def rows_marked(page: str, name: str) -> bool:
    """Whether the table row of the item called ``name`` carries the marker."""
    row = next(line for line in page.split("<tr") if f">{name}</a>" in line)
    return "not yours" in row


def test_staff_see_others_items_marked_and_their_own_not(staff, staff_client, alice, bob):
    make_trace(alice, name="alices-private")
    make_trace(bob, name="bobs-shared", shared=True)
    make_trace(staff, name="staffs-own")

    page = staff_client.get(reverse("traces:list")).content.decode()

    assert rows_marked(page, "alices-private") and "not yours · private" in page
    assert rows_marked(page, "bobs-shared")
    assert not rows_marked(page, "staffs-own")
    assert "As staff you see every user" in page


def test_ordinary_users_see_no_marker(alice, alice_client, bob):
    make_trace(bob, name="bobs-shared", shared=True)
    page = alice_client.get(reverse("traces:list")).content.decode()
    assert "bobs-shared" in page and "not yours" not in page and "As staff" not in page


def test_an_items_page_says_whose_it_is_to_staff(staff_client, alice, alice_client):
    trace = make_trace(alice, name="alices-private")
    experiment = make_experiment(alice, trace, ["fcfs"], run=False)

    for url in (trace.get_absolute_url(), experiment.get_absolute_url()):
        staff_page = staff_client.get(url).content.decode()
        assert "This is alice’s <strong>private</strong> item" in staff_page
        assert "private</strong> item" not in alice_client.get(url).content.decode()

    listing = staff_client.get(reverse("experiments:list")).content.decode()
    assert "not yours · private" in listing


def test_a_shared_items_page_and_a_studys_marker_follow_their_paths(staff, staff_client, bob):
    """A shared item's banner says shared (not private); a study's owner and sharing are its
    experiment's (OWNER_FIELD / SHARED_FIELD paths), so a study of bob's shared experiment is marked
    "not yours" without "private"."""
    trace = make_trace(bob, name="bobs-shared", shared=True)
    page = staff_client.get(trace.get_absolute_url()).content.decode()
    assert "This is bob’s (shared)" in page and "<strong>private</strong>" not in page

    experiment = make_experiment(bob, trace, ["fcfs"], run=False, shared=True)
    study = Study(experiment=experiment)
    assert owner_of(study) == bob and follow(study, "SHARED_FIELD", "shared") is True
    assert owner_of(experiment) == bob and follow(trace, "SHARED_FIELD", "shared") is True
