"""The background parse: a problem past the first lines makes the trace invalid, with the reason."""

from __future__ import annotations

import pytest

from tests.webapp.conftest import make_trace, synthetic_swf

pytestmark = pytest.mark.django_db


def test_a_bad_line_deep_in_the_file_makes_the_trace_invalid(alice, alice_client, tmp_path):
    path = synthetic_swf(tmp_path / "deep.swf", jobs=400)
    lines = path.read_text().splitlines()
    lines[350] = lines[350].replace(" -1 ", " x ", 1)
    path.write_text("\n".join(lines) + "\n")
    trace = make_trace(alice, path, name="deep")
    assert trace.status == "invalid"
    assert trace.error.startswith("deep.swf, line 351")
    assert alice_client.get(trace.get_absolute_url()).content.decode().count("deep.swf, line 351") == 1
    assert alice_client.get(f"/traces/{trace.pk}/status/").json()["status"] == "invalid"


def test_a_parsed_trace_has_summary_report_and_cache(demo_trace):
    assert demo_trace.status == "ready"
    assert demo_trace.summary["report"]["rejected"]  # demo.swf has jobs cleaning removes
    assert demo_trace.cache == f"traces/{demo_trace.sha256}-p16.npz" and demo_trace.cache_path.exists()
    assert demo_trace.parse_seconds is not None
