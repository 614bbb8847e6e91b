"""Accounting logs through the upload page, and any trace downloaded as SWF."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.shared_data import SHARED_DATA
from tests.webapp.conftest import make_trace
from tests.webapp.traces.test_upload import upload
from webapp.traces.models import Trace
from webapp.traces.tasks import parse_trace

pytestmark = pytest.mark.django_db

OPENPBS = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"


def accounting_file(name: str):  # noqa: ANN201
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "data" / "accounting" / name


@pytest.mark.parametrize("path, fmt, jobs", [(OPENPBS, "pbs", 200),
                                             (accounting_file("slurm_real_allocations.txt"), "slurm", 16)])
def test_an_accounting_log_uploads_and_parses(alice_client, path, fmt, jobs):
    response = upload(alice_client, path.read_bytes(), filename=path.name)
    trace = Trace.objects.get()
    assert response.status_code == 302 and trace.format == fmt
    parse_trace(trace.pk)
    trace.refresh_from_db()
    assert trace.status == "ready", trace.error
    assert trace.summary["jobs"] == jobs and trace.summary["recorded_starts"] == jobs


def test_a_bad_pbs_record_is_refused_naming_line_and_field(alice_client):
    content = b"06/01/2024 09:00:00;E;9.srv;user=a queue=q ctime=1 start=2 end=3\n06/01/2024 10:00:00;Q;oops;q=1\n"
    response = upload(alice_client, content, filename="20240601")
    assert response.status_code == 400 and not Trace.objects.exists()
    assert "20240601, line 2: field jobid" in response.content.decode()


def test_download_as_swf_and_extended_swf(alice, alice_client):
    trace = make_trace(alice, OPENPBS, name="pbs")
    page = alice_client.get(trace.get_absolute_url()).content.decode()
    assert reverse("traces:download_swf", args=[trace.pk, "swf"]) in page
    swf = alice_client.get(reverse("traces:download_swf", args=[trace.pk, "swf"]))
    lines = swf.content.decode().splitlines()
    assert swf["Content-Disposition"] == 'attachment; filename="OpenPBS.swf"'
    assert "; UserNames: 1=klusacek 2=vchlum" in lines
    assert len([line for line in lines if not line.startswith(";")]) == 200
    extended = alice_client.get(reverse("traces:download_swf", args=[trace.pk, "extended"])).content.decode()
    assert extended.splitlines()[-1].endswith("{torque2} workq 1:ppn=2")
    assert alice_client.get(reverse("traces:download_swf", args=[trace.pk, "other"])).status_code == 404
