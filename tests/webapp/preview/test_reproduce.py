""""Reproduce a paper" for the MetaCentrum paper opens the preview form with the paper's setup: the
shipped 2014 queues proposed, multi-resource fair-share (so the counterpart run is CPU fair-share)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from tests.webapp.conftest import make_trace
from webapp.experiments.reproduce import PRESETS
from webapp.preview.models import POLICIES, MachineFile

pytestmark = pytest.mark.django_db
URL = reverse("preview:new") + "?reproduce=metacentrum"
MACHINES = "0\tzewura\t20\t80\t1\t529426432\n1\tzegox\t48\t12\t1\t94035968\n"


def selected(page: str, field: str) -> list[str]:
    """The values selected in a <select name=field>."""
    select = re.search(rf'<select name="{field}"[^>]*>(.*?)</select>', page, re.S)
    assert select, f"no select {field}"
    return re.findall(r'<option value="([^"]*)"[^>]*\bselected\b', select.group(1))


def test_the_preview_form_has_the_2014_queues_and_mrfs_selected(alice_client):
    page = alice_client.get(URL).content.decode()
    assert selected(page, "proposed") == ["shipped:metacentrum-2014"]
    assert selected(page, "policy") == ["mrfs-easy"] and POLICIES["mrfs-easy"] == "fairshare-easy"
    preset = PRESETS["metacentrum"]
    assert escape(preset.found) in page and escape(preset.citation) in page
    assert "wagap-2013.swf.machines" in page and "No trace of yours or shared" in page


def test_a_visible_wagap_trace_and_machine_are_preselected(alice, bob, alice_client):
    demo = make_trace(alice, name="demo")
    wagap = make_trace(alice, name="my wagap-2013")
    make_trace(bob, name="bob's wagap (private)")                 # newer, but alice may not see it
    machine = MachineFile.objects.create(owner=alice, name="wagap-2013 clusters", text=MACHINES)
    page = alice_client.get(URL).content.decode()
    assert selected(page, "trace") == [str(wagap.pk)] != [str(demo.pk)]
    assert selected(page, "machine") == [str(machine.pk)]
    assert "No trace of yours or shared" not in page


def test_without_the_preset_the_form_says_nothing_about_a_paper(alice_client):
    page = alice_client.get(reverse("preview:new")).content.decode()
    assert "paper-preset" not in page and selected(page, "trace") == [""]
