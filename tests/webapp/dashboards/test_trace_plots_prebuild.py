"""A parsed trace's page plots are built by the quick worker (webapp.dashboards.tasks), queued by the
parse: the first visitor's request reads them from the cache instead of building them on a web
server thread (issue 27's cold builds). A failed build is logged and left to the page."""

from __future__ import annotations

import gzip
import json
from unittest import mock

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_trace
from webapp.dashboards import tasks as dashboard_tasks
from webapp.dashboards import views
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace

pytestmark = pytest.mark.django_db


def test_the_parse_queues_the_build_of_its_plots(alice, django_capture_on_commit_callbacks):
    trace = make_trace(alice, parse=False)
    with mock.patch.object(dashboard_tasks.build_trace_plots, "delay", autospec=True) as send, \
            django_capture_on_commit_callbacks(execute=True):
        parse_trace(trace.pk)
    assert Trace.objects.get(pk=trace.pk).status == "ready"
    assert [c.args for c in send.call_args_list] == [(trace.pk,)]


def test_an_invalid_trace_queues_nothing(alice, tmp_path, django_capture_on_commit_callbacks):
    bad = tmp_path / "bad.swf"
    bad.write_text("this is not a trace\n")
    trace = make_trace(alice, bad, parse=False)
    with mock.patch.object(dashboard_tasks.build_trace_plots, "delay", autospec=True) as send, \
            django_capture_on_commit_callbacks(execute=True):
        parse_trace(trace.pk)
    assert Trace.objects.get(pk=trace.pk).status == "invalid" and send.call_count == 0


def test_the_first_visitor_gets_the_built_plots_without_building(alice, alice_client, demo_trace):
    assert dashboard_tasks.build_trace_plots(demo_trace.pk) is True
    url = reverse("dashboards:trace_plots", args=[demo_trace.pk])
    with mock.patch.object(views, "trace_characterization", side_effect=AssertionError("built on a web thread")):
        response = alice_client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    item = json.loads(gzip.decompress(response.content))
    assert item["target_id"] == "trace-plots" and item["doc"]["roots"]


def test_a_failed_build_is_logged_and_the_page_builds_them(alice, alice_client, demo_trace, caplog):
    with mock.patch.object(views, "trace_characterization", side_effect=MemoryError):
        assert dashboard_tasks.build_trace_plots(demo_trace.pk) is False
    assert "building the plots of trace" in caplog.text
    response = alice_client.get(reverse("dashboards:trace_plots", args=[demo_trace.pk]))
    assert response.status_code == 200 and json.loads(response.content)["target_id"] == "trace-plots"


def test_a_trace_not_ready_is_left_alone(alice):
    trace = make_trace(alice, parse=False)
    assert dashboard_tasks.build_trace_plots(trace.pk) is False
    assert dashboard_tasks.build_trace_plots(10**6) is False
