"""Issue 23: a preview's page shows every value of its sweep at once (current beside proposed), and
offers its runs beside other experiments' in the cross-experiment comparison."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from engine.api import metric_text
from tests.webapp.conftest import DEMO_SWF, ONE_QUEUE, login, make_experiment, make_preview
from webapp.experiments.models import Run
from webapp.preview.templatetags.preview_extras import signed

pytestmark = pytest.mark.django_db
JOBS_IN_FILE = sum(1 for line in DEMO_SWF.read_text().splitlines() if line.strip() and not line.startswith(";"))
ONE_HOUR = "queues:\n  - {name: q, walltime: 1h}\n"    # the demo trace's 3 jobs asking 2 h are refused


def cells_of(page: str, value: str) -> list[str]:
    """The texts of the sweep table's cells in the row of ``value`` (its heading cell first)."""
    table = page[page.index('id="sweep"'):]
    row = re.search(rf'<tr data-value="{re.escape(value)}"[^>]*>(.*?)</tr>', table, re.S)
    assert row, f"no row for {value}"
    return [re.sub(r"<[^>]+>", "", unescape(cell)).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row[1], re.S)]


def expected(run: Run) -> dict[str, str]:
    """What the table should say of ``run``, worked from the trace's file and the run's stored schedule:
    the jobs left out are the file's jobs the schedule does not hold (refused at submission or at reading)."""
    schedule = run.load_schedule()
    left_out = JOBS_IN_FILE - len(schedule)
    return {"rejected_total": metric_text("rejected_total", left_out),
            "mean_wait": metric_text("mean_wait", float(schedule["wait"].mean()))}


def test_the_page_shows_every_swept_value_current_beside_proposed(alice, demo_trace):
    preview = make_preview(alice, demo_trace, current=ONE_QUEUE, proposed=ONE_HOUR,
                           sweep_param="backfill_bound", sweep_values=[1, "inf"], run=True)
    runs = preview.experiment.runs
    assert all(run.status == "done" for run in runs.all()), [run.error for run in runs.all()]
    client = login(alice)
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "Across the sweep of backfill bound" in page and 'id="sweep-plot"' in page
    assert "Mean wait across backfill bound" in page        # the figure's title, in its JSON
    for value in ("1", "inf"):
        swept = 1 if value == "1" else "inf"
        current = runs.get(queues="current", sweep_value=swept)
        proposed = runs.get(queues="proposed", sweep_value=swept, policy__preset="mrfs-easy")
        cells = cells_of(page, value)
        assert cells[0].startswith(value)
        want_current, want_proposed = expected(current), expected(proposed)
        # columns: rejected, mean wait, p95 wait, mean bsld, utilization (current, proposed each), change
        assert cells[1:3] == [want_current["rejected_total"], want_proposed["rejected_total"]]
        assert cells[3:5] == [want_current["mean_wait"], want_proposed["mean_wait"]]
        change = proposed.load_schedule()["wait"].mean() - current.load_schedule()["wait"].mean()
        assert cells[-1] == signed(change)
        assert int(want_proposed["rejected_total"]) == int(want_current["rejected_total"]) + 3   # the 2 h jobs
    # the tables below are the chosen value's; another value is one click away, and the download has all
    assert re.search(r'<tr data-value="1" class="chosen">', page)
    other = client.get(preview.get_absolute_url() + "?value=1").content.decode()
    assert re.search(r'<tr data-value="inf" class="chosen">', other)
    html = client.get(reverse("preview:download", args=[preview.pk])).content.decode()
    assert "Across the sweep of backfill bound" in html and "backfill bound = 1" in html


def test_a_sweep_whose_runs_are_not_done_shows_their_state(alice, demo_trace):
    preview = make_preview(alice, demo_trace, sweep_param="backfill_bound", sweep_values=[1, 2])
    page = login(alice).get(preview.get_absolute_url()).content.decode()
    assert cells_of(page, "2")[1:3] == ["queued", "queued"] and 'id="no-sweep-figure"' in page


def test_the_preview_page_offers_other_experiments_runs_to_compare_with(alice, bob, demo_trace):
    preview = make_preview(alice, demo_trace, run=True)
    other = make_experiment(alice, demo_trace, ["fcfs"], name="plain fcfs").runs.get()
    private = make_experiment(bob, demo_trace, ["easy"], name="bob private").runs.get()
    client = login(alice)
    page = client.get(preview.get_absolute_url()).content.decode()
    picker = page[page.index('id="compare-with"'):]
    picker = picker[:picker.index("</details>")]
    assert reverse("dashboards:compare") in picker
    for run in preview.experiment.runs.all():           # this preview's runs, ticked
        assert f'value="{run.pk}" checked' in picker
    assert f'value="{other.pk}"' in picker and "plain fcfs" in picker and f'value="{private.pk}"' not in picker
    mine = preview.experiment.runs.get(queues="current").pk
    response = client.get(reverse("dashboards:compare") + f"?runs={mine}&runs={other.pk}")
    assert response.status_code == 200, response.content.decode()[:500]
