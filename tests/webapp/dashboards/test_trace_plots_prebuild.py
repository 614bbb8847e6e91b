"""A trace's page plots are built by the parse (the quick worker), before the trace says ready: the
first visitor reads them from the cache instead of building them on a web server thread (issue 27's
cold builds). A failed build is logged and left to the page; the trace is parsed all the same."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.urls import reverse

from tests.webapp.conftest import make_trace
from webapp.dashboards import views
from webapp.traces.models import Trace
from webapp.traces.signals import trace_parsed

pytestmark = pytest.mark.django_db


def plots_of(trace: Trace) -> list[Path]:
    return sorted((Path(settings.MEDIA_ROOT) / "dashboards" / "traces" / str(trace.pk)).glob("characterization-*"))


def test_the_first_visitor_gets_the_plots_the_parse_built(alice, alice_client):
    trace = make_trace(alice)
    assert trace.status == "ready" and len(plots_of(trace)) == 1
    url = reverse("dashboards:trace_plots", args=[trace.pk])
    with mock.patch.object(views, "trace_characterization", side_effect=AssertionError("built on a web thread")):
        response = alice_client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    item = json.loads(gzip.decompress(response.content))
    assert item["target_id"] == "trace-plots" and item["doc"]["roots"]


def test_the_plots_are_built_before_the_trace_says_ready(alice):
    """Whoever polls the status and then asks for the plots finds them built."""
    seen = []

    def look(sender: object, trace: Trace, **_: object) -> None:
        seen.append((Trace.objects.get(pk=trace.pk).status, trace.cache))

    trace_parsed.connect(look, dispatch_uid="test-look")
    try:
        trace = make_trace(alice)
    finally:
        trace_parsed.disconnect(dispatch_uid="test-look")
    assert seen == [("parsing", trace.cache)]


def test_a_failed_build_is_logged_and_the_page_builds_them(alice, alice_client, caplog):
    with mock.patch.object(views, "trace_characterization", side_effect=MemoryError):
        trace = make_trace(alice)
    assert trace.status == "ready" and trace.error == "" and plots_of(trace) == []
    assert "building the plots of trace" in caplog.text
    response = alice_client.get(reverse("dashboards:trace_plots", args=[trace.pk]))
    assert response.status_code == 200 and json.loads(response.content)["target_id"] == "trace-plots"


def test_an_invalid_trace_builds_no_plots(alice, tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("this is not a trace\n")
    trace = make_trace(alice, bad)
    assert trace.status == "invalid" and plots_of(trace) == []
