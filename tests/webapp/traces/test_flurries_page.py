"""The trace page lists the trace's flurries (Tsafrir & Feitelson, IPDPS 2006) with their definition."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_trace
from webapp.traces.flurries import found_flurries

pytestmark = pytest.mark.django_db


def trace_with_a_flurry(path):
    """1,000 jobs of users 1-9, one every 10 min, and user 42's 120 jobs within 2 h starting on day 3."""
    lines = ["; MaxProcs: 64", "; MaxNodes: 64"]
    jobs = [(i * 600, 1 + i % 9) for i in range(1000)] + [(3 * 86400 + k * 60, 42) for k in range(120)]
    for number, (submit, user) in enumerate(sorted(jobs), start=1):
        lines.append(f"{number} {submit} -1 300 4 -1 -1 4 900 -1 1 {user} 1 -1 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_planted_flurry_is_listed_with_its_span_and_share(alice, alice_client, tmp_path):
    trace = make_trace(alice, trace_with_a_flurry(tmp_path / "flurry.swf"), name="flurry")
    page = alice_client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert 'id="flurry-list"' in page and "IPDPS 2006" in page
    row = page.split('id="flurry-list"')[1].split("</tbody>")[0]
    assert row.count("<tr>") == 2                              # the heading and one flurry
    assert "<td>42</td>" in row and "day 3.0" in row
    assert "120" in row and "10.7 %" in row                    # 120 of 1,120 jobs
    assert "2.0 h" in row                                      # 119 min from first to last
    # computed once, then read from the trace's summary
    trace.refresh_from_db()
    assert trace.summary["flurries"]["found"][0]["user"] == 42
    assert found_flurries(trace) is trace.summary["flurries"]


def test_a_trace_without_one_says_so(alice, alice_client):
    trace = make_trace(alice)
    page = alice_client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert 'id="no-flurries"' in page and "Without flurries" in page
