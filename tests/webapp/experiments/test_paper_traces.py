"""Reproduce-a-paper presets choose the trace the paper used when it is uploaded (by the uploaded file's
name), never simply the first or newest trace, and say which file to upload when it is not (issue 28)."""

from __future__ import annotations

import re
import shutil

import pytest
from django.urls import reverse

from webapp.experiments.reproduce import PRESETS, claim_pairs
from webapp.traces.models import Trace

from ..conftest import DEMO_SWF, make_trace

pytestmark = pytest.mark.django_db


def uploaded_as(owner, name: str, original: str, tmp_path) -> Trace:  # noqa: ANN001
    """The demo trace uploaded under another file name (what matters here is the name)."""
    copy = tmp_path / original
    shutil.copyfile(DEMO_SWF, copy)
    trace = make_trace(owner, copy, name=name)
    assert trace.original_name == original
    return trace


def selected_trace(page: str) -> str:
    select = page[page.index('name="trace"'):page.index("</select>", page.index('name="trace"'))]
    chosen = re.search(r'<option value="(\d+)"[^>]*selected', select)
    return chosen.group(1) if chosen else ""


def test_the_dbf_preset_chooses_the_papers_trace_not_the_first_or_newest(alice, alice_client, tmp_path):
    blue = uploaded_as(alice, "A blue", "SDSC-BLUE-2000-4.2-cln.swf.gz", tmp_path)
    ds = uploaded_as(alice, "B ds", "SDSC-DS-2004-2.1-cln.swf", tmp_path)
    uploaded_as(alice, "C newest", "CTC-SP2-1996-3.1-cln.swf.gz", tmp_path)
    page = alice_client.get(reverse("experiments:new") + "?reproduce=dbf").content.decode()
    assert selected_trace(page) == str(ds.pk), "SDSC-DS is the paper's first trace"
    assert "a trace the paper used" in page and blue.name not in page[page.index('id="paper-trace"'):][:300]


def test_without_the_papers_trace_the_form_says_which_to_upload(alice, alice_client, tmp_path):
    uploaded_as(alice, "ctc", "CTC-SP2-1996-3.1-cln.swf.gz", tmp_path)
    page = alice_client.get(reverse("experiments:new") + "?reproduce=plan").content.decode()
    note = page[page.index('id="paper-trace"'):]
    note = note[:note.index("</p>")]
    assert "upload LLNL-Atlas-2006-2.1-cln.swf.gz" in note


def test_the_paragon_study_preset_chooses_kth_not_the_newest(alice, alice_client, tmp_path):
    kth = uploaded_as(alice, "kth", "KTH-SP2-1996-2.1-cln.swf.gz", tmp_path)
    uploaded_as(alice, "newest", "CTC-SP2-1996-3.1-cln.swf.gz", tmp_path)
    page = alice_client.get(reverse("studies:new") + "?preset=paragon").content.decode()
    form = page[page.index('id="preset-paragon"'):]
    assert selected_trace(form) == str(kth.pk)


def test_easy_run_once_in_a_deadline_sweep_pairs_with_dbf_at_every_share():
    report = {"policies": [
        {"name": "easy", "spec": {"preset": "easy", "params": {"drop_interactive": True}}},
        *({"name": f"dbf {share}", "spec": {"preset": "dbf", "params": {"drop_interactive": True,
                                                                         "deadline_fraction": share}}}
          for share in (0.2, 0.4)),
        {"name": "dbf kept", "spec": {"preset": "dbf", "params": {"drop_interactive": False,
                                                                  "deadline_fraction": 0.2}}},
    ]}
    claim = PRESETS["dbf"].claims[1]
    assert (claim.a, claim.b) == ("easy", "dbf")
    assert claim_pairs(report, claim) == [("easy", "dbf 0.2"), ("easy", "dbf 0.4")]   # not over other jobs


def test_the_sfs_preset_brings_the_scenarios_allocations(alice, alice_client, tmp_path):
    from webapp.allocations.services import create_scenario
    from webapp.traces.tasks import parse_trace

    uploaded_as(alice, "other", "CTC-SP2-1996-3.1-cln.swf.gz", tmp_path)
    page = alice_client.get(reverse("experiments:new") + "?reproduce=sfs").content.decode()
    assert "generate it first" in page
    trace, allocations = create_scenario(alice, seed=3, name="sfs run", shared=False)
    parse_trace(trace.pk)
    page = alice_client.get(reverse("experiments:new") + "?reproduce=sfs").content.decode()
    assert selected_trace(page) == str(trace.pk)
    select = page[page.index('name="allocations"'):page.index("</select>", page.index('name="allocations"'))]
    assert re.search(rf'<option value="{allocations.pk}"[^>]*selected', select)
    assert "with its allocations file “sfs run allocations”" in page
