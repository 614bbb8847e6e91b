"""A preview's CSV downloads write the names that come from uploads (queue and user names) inert: a
queue named like a spreadsheet formula is shown as text, never run (engine.csvcells, the rule of every
CSV export)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_preview
from webapp.experiments.tasks import write_results

pytestmark = pytest.mark.django_db
FORMULA = "=HYPERLINK(\"http://x.example\",\"q\")"
QUEUE = f"queues:\n  - {{name: '{FORMULA}', walltime: 1d}}\n"


def rows(body: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO("".join(line for line in body.decode().splitlines(keepends=True)
                                               if not line.startswith("#")))))


@pytest.fixture
def preview(alice, demo_trace):  # noqa: ANN001, ANN201
    """On a one-core machine (the demo's wider jobs are rejected), its one queue named like a formula."""
    return make_preview(alice, demo_trace, machine="0\ttiny\t1\t1\t1\t1048576\n", current=QUEUE, proposed=QUEUE,
                        run=True)


def test_the_rejected_jobs_csv_writes_names_from_the_trace_inert(preview, alice_client):
    """The jobs a run rejected carry the trace's own names (an accounting log's user and job names): its
    CSV writes them inert, numbers as they are; the page's own copy (rejected.npz) keeps them as they are."""
    run = preview.experiment.runs.get(queues="current")
    assert run.status == "done", run.error
    rejected = run.load_rejected()
    assert len(rejected) > 0
    rejected["user_name"] = ["@SUM(A1:A9)"] + ["alice"] * (len(rejected) - 1)
    rejected["native_id"] = ["-2+3"] + ["-5"] * (len(rejected) - 1)
    result = SimpleNamespace(schedule=run.load_schedule(), meta={}, rejected_jobs=rejected,
                             to_csv=lambda path: Path(path).write_text("job_id\n"))
    write_results(run, result, run.summary)
    body = b"".join(alice_client.get(reverse("experiments:run_rejected_csv", args=[run.pk])).streaming_content)
    table = rows(body)
    user, native, procs = (table[0].index(name) for name in ("user_name", "native_id", "procs"))
    assert table[1][user] == "'@SUM(A1:A9)" and table[1][native] == "'-2+3"
    assert {row[user] for row in table[2:]} == {"alice"} and {row[native] for row in table[2:]} == {"-5"}
    assert [int(row[procs]) for row in table[1:]] == list(rejected["procs"])
    assert run.load_rejected()["user_name"].iloc[0] == "@SUM(A1:A9)"


def test_the_tables_csv_writes_it_inert(preview, alice_client):
    body = alice_client.get(reverse("preview:tables_csv", args=[preview.pk])).content
    names = {row[1] for row in rows(body)[1:]}
    assert "'" + FORMULA in names and FORMULA not in names
