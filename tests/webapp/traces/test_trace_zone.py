"""A trace's time zone is stored with it (chosen at upload or read from the log), shown on its page
and used by the comparison's time axis; a trace parsed before the readers kept recorded starts is
parsed again on demand, so its recorded run appears too."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import has_recorded_starts, load_parsed, save_parsed
from tests.shared_data import SHARED_DATA
from tests.webapp.conftest import make_trace
from tests.webapp.traces.test_upload import upload
from webapp.dashboards.data import trace_time_axis
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace

pytestmark = pytest.mark.django_db

OPENPBS = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"
FIRST_SUBMIT = 1734800289            # 12/21/2024 17:58:09 in the log's records: UTC+01:00


def parsed_upload(client, **fields) -> Trace:  # noqa: ANN001
    response = upload(client, OPENPBS.read_bytes(), filename="OpenPBS.log", **fields)
    assert response.status_code == 302, response.content.decode()[:500]
    trace = Trace.objects.get()
    parse_trace(trace.pk)
    trace.refresh_from_db()
    return trace


def test_a_pbs_log_keeps_its_own_zone_on_the_page_and_the_time_axis(alice_client):
    trace = parsed_upload(alice_client)
    assert trace.time_zone == "UTC+01:00"
    assert "UTC+01:00" in alice_client.get(trace.get_absolute_url()).content.decode()
    axis = trace_time_axis(trace, {"recorded": trace.workload().jobs})
    assert axis.tz == "UTC+01:00" and axis.label == "date and time (UTC+01:00)"
    assert axis.text(FIRST_SUBMIT) == "2024-12-21 17:58"            # the log's own wall clock, not 16:58 UTC


def test_a_zone_chosen_at_upload_is_kept_and_used(alice_client):
    trace = parsed_upload(alice_client, time_zone="America/New_York")
    assert trace.time_zone == "America/New_York"
    axis = trace_time_axis(trace, {"recorded": trace.workload().jobs})
    assert axis.text(FIRST_SUBMIT) == "2024-12-21 11:58"


def test_an_unknown_zone_is_refused_by_the_upload_form(alice_client):
    response = upload(alice_client, OPENPBS.read_bytes(), filename="OpenPBS.log", time_zone="Mars/Olympus")
    assert response.status_code == 400 and not Trace.objects.exists()
    assert "Unknown time zone" in response.content.decode()


def test_a_trace_parsed_before_zones_were_stored_gets_the_logs_own(alice):
    trace = make_trace(alice, OPENPBS, name="pbs")
    Trace.objects.filter(pk=trace.pk).update(time_zone="")
    trace.refresh_from_db()
    assert trace.zone() == "UTC+01:00"
    assert Trace.objects.get(pk=trace.pk).time_zone == "UTC+01:00"


def test_a_cache_without_recorded_starts_is_parsed_again(alice):
    trace = make_trace(alice, OPENPBS, name="pbs")
    old = load_parsed(trace.cache_path)
    old.jobs = old.jobs.drop(columns=["wait_trace"])          # what a cache written before them holds
    save_parsed(old, trace.cache_path)
    assert not has_recorded_starts(load_parsed(trace.cache_path))
    workload = trace.workload()
    assert has_recorded_starts(workload) and len(workload) == 200
    assert "wait_trace" in load_parsed(trace.cache_path).jobs      # the cache is written again


SACCT = Path(__file__).resolve().parents[2] / "data" / "accounting" / "slurm_real_allocations.txt"


def test_a_sacct_dump_shows_the_wall_clock_sacct_printed_in_the_zone_named_for_it(alice_client):
    """sacct prints local times without an offset: they are read as if UTC, so a zone chosen for the
    dump names its clock and must not shift the times (15:48 stays 15:48, not 16:48 in Prague)."""
    response = upload(alice_client, SACCT.read_bytes(), filename="sacct.txt", time_zone="Europe/Prague")
    assert response.status_code == 302, response.content.decode()[:500]
    trace = Trace.objects.get()
    parse_trace(trace.pk)
    trace.refresh_from_db()
    assert trace.format == "slurm" and trace.time_zone == "Europe/Prague"
    jobs = trace.workload().jobs
    axis = trace_time_axis(trace, {"recorded": jobs})
    assert axis.label == "date and time (Europe/Prague)"
    assert axis.text(float(jobs["submit"].min())) == "2026-11-23 15:48"     # the dump's first Submit
    assert axis.seconds("2026-11-23 15:48") == pytest.approx(float(jobs["submit"].min()) // 60 * 60)
