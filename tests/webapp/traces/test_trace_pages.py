"""Trace detail, download, edit and delete."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.webapp.conftest import DEMO_SWF, make_experiment, make_trace

pytestmark = pytest.mark.django_db


def test_the_download_is_the_uploaded_file_under_the_traces_name(alice_client, demo_trace):
    response = alice_client.get(reverse("traces:download", args=[demo_trace.pk]))
    assert b"".join(response.streaming_content) == DEMO_SWF.read_bytes()
    assert 'filename="demo.swf"' in response["Content-Disposition"]


def test_the_detail_page_shows_summary_and_cleaning_report(alice_client, demo_trace):
    page = alice_client.get(demo_trace.get_absolute_url()).content.decode()
    assert "Summary" in page and "Cleaning report" in page and "removed" in page


def test_the_owner_can_share_it(alice_client, bob_client, demo_trace):
    alice_client.post(reverse("traces:edit", args=[demo_trace.pk]), {"name": "demo", "description": "", "shared": "on"})
    assert bob_client.get(demo_trace.get_absolute_url()).status_code == 200


def test_delete_keeps_a_file_another_trace_still_uses(alice, alice_client, bob, demo_trace):
    bobs = make_trace(bob)
    alice_client.post(reverse("traces:delete", args=[demo_trace.pk]))
    assert bobs.path.exists()
    from tests.webapp.conftest import login

    login(bob).post(reverse("traces:delete", args=[bobs.pk]))
    assert not bobs.path.exists() and not bobs.cache_path.exists()


def test_a_trace_in_use_is_removed_but_its_experiments_stay(alice, alice_client, demo_trace):
    """(Issue 27: it was refused; test_remove_used_trace.py has the whole behaviour.)"""
    experiment = make_experiment(alice, demo_trace, ["fcfs"], run=False)
    response = alice_client.post(reverse("traces:delete", args=[demo_trace.pk]), follow=True)
    assert "keep their results" in response.content.decode() and not demo_trace.path.exists()
    assert "removed by its owner" in alice_client.get(experiment.get_absolute_url()).content.decode()


def test_an_edit_the_form_refuses_shows_the_form_again_and_saves_nothing(alice_client, demo_trace):
    # (webapp.core.formpage: these edit pages answer 200 with the form's errors; a valid edit is saved)
    url = reverse("traces:edit", args=[demo_trace.pk])
    response = alice_client.post(url, {"name": "demo", "description": "", "time_zone": "Mars/Olympus"})
    assert response.status_code == 200 and response.context["form"].errors["time_zone"]
    demo_trace.refresh_from_db()
    assert demo_trace.time_zone != "Mars/Olympus"
    response = alice_client.post(url, {"name": "renamed", "description": "", "time_zone": ""}, follow=True)
    assert response.redirect_chain[-1][0] == demo_trace.get_absolute_url()
    assert "Saved." in [str(m) for m in response.context["messages"]]
    demo_trace.refresh_from_db()
    assert demo_trace.name == "renamed"


def test_an_experiment_edit_is_saved_by_its_owner(alice, alice_client, demo_trace):
    experiment = make_experiment(alice, demo_trace, run=False)
    url = reverse("experiments:edit", args=[experiment.pk])
    response = alice_client.post(url, {"name": "renamed", "description": "", "shared": "on"}, follow=True)
    assert response.redirect_chain[-1][0] == experiment.get_absolute_url()
    experiment.refresh_from_db()
    assert experiment.name == "renamed" and experiment.shared
