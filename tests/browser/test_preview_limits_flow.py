"""An admin's whole path in Chromium on a real OpenPBS accounting log: upload it, preview it as it is,
lower workq's walltime to 1 h in the page's form, run that, and read the 200 jobs rejected at
submission by name; run it again as a new preview and cancel it while it runs; download the page."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import ARTIFACTS
from tests.browser.test_comparison_flow import log_in
from tests.shared_data import SHARED_DATA

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
OPENPBS = SHARED_DATA / "metacentrum/fairsharesim/OpenPBS.log"
RESULTS = 300_000   # ms: a loaded shared machine parses and simulates slowly


def upload(page, base: str) -> None:  # noqa: ANN001
    page.goto(base + "/traces/upload/")
    page.fill("#id_name", "OpenPBS")
    page.set_input_files("#id_file", str(OPENPBS))
    page.click("main form button[type=submit]")
    page.wait_for_selector('#trace-status[data-status="ready"]', timeout=RESULTS)


def admin_with_the_log(page, live_server, django_user_model) -> str:  # noqa: ANN001
    """An admin logged in, the OpenPBS log uploaded and read; the server's address."""
    django_user_model.objects.create_superuser("admin", password="admin-password-1")
    base = live_server.url
    log_in(page, base, "admin", "admin-password-1")
    upload(page, base)
    return base


def new_preview(page, base: str, name: str, sweep: tuple[str, str] | None = None) -> None:  # noqa: ANN001
    """A new preview of the OpenPBS log, its queues inferred and proposed = current (``sweep``: the
    parameter and its values), submitted."""
    page.goto(base + "/preview/new/")
    page.fill("#id_name", name)
    page.select_option("#id_trace", label="OpenPBS")
    page.select_option("#id_proposed", value="inferred")
    if sweep is not None:
        page.select_option("#id_sweep_param", value=sweep[0])
        page.fill("#id_sweep_values", sweep[1])
    page.click("main form button[type=submit]")


def wait_for_results(page, figures: bool = True, documents: int = 1) -> None:  # noqa: ANN001
    """The page reloads itself when its last run ends; then the tables and figures are there (``documents``
    Bokeh documents: a sweep's page draws its figure across the values besides the chosen value's)."""
    page.wait_for_selector("#submission", timeout=RESULTS)
    if figures:
        page.wait_for_function(f"() => window.Bokeh && Bokeh.documents.length === {documents} "
                               "&& Bokeh.documents.every(d => d.is_idle)", timeout=RESULTS)


@pytest.mark.skipif(not OPENPBS.exists(), reason=f"{OPENPBS} is not here")
def test_an_admin_lowers_a_walltime_and_reads_the_jobs_rejected(page, live_server, celery_worker,  # noqa: ANN001
                                                                 django_user_model, tmp_path):
    base = admin_with_the_log(page, live_server, django_user_model)

    # as it is: the machine and the queues inferred from the log, proposed = current to start from
    new_preview(page, base, "workq at 1 h")
    wait_for_results(page)
    assert "The proposal is the current configuration: no limit differs." in page.inner_text("#proposal-diff")

    # lower workq's walltime in the form; the page shows the difference before anything runs
    row = page.locator('#proposal-rows tr[data-queue="workq"]')
    before = page.input_value("#proposal-form textarea[name=yaml]")
    row.locator("input[name$=_walltime]").fill("1")
    row.locator("select[name$=_unit]").select_option("h")
    page.wait_for_function("() => document.getElementById('proposal-diff').innerText.includes('workq')")
    diff = page.inner_text("#proposal-diff")
    assert re.search(r"workq\s+walltime\s+2 h\s+1 h", diff), diff
    after = page.input_value("#proposal-form textarea[name=yaml]")
    assert "walltime: 1h" in after and after != before        # the YAML follows the form
    page.screenshot(path=str(ARTIFACTS / "preview-proposal.png"), full_page=True)
    page.click("#proposal-form button[value=run]")
    wait_for_results(page, figures=False)     # every job rejected under the proposal: nothing ran to draw
    assert "No job ran under the proposed and the counterpart run" in page.inner_text("#no-figures")

    proposed = page.inner_text(".submission-proposed")
    assert re.search(r"200 jobs of \d+ users? ask for more than workq's 1 h: rejected at submission", proposed), proposed
    jobs = page.locator(".submission-proposed .rejected-jobs tbody tr")
    assert jobs.count() == 200
    assert "112461.torque1.grid.cesnet.cz" in page.inner_text(".submission-proposed .rejected-jobs")
    assert "vchlum" in page.inner_text(".submission-proposed .rejected-jobs")
    assert "None: every job was accepted by its own queue." in page.inner_text(".submission-current")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "preview-rejected.png"), full_page=True)

    # the whole page as one file
    with page.expect_download() as download:
        page.click("#download-html")
    saved = tmp_path / "preview.html"
    download.value.save_as(saved)
    html = saved.read_text()
    assert "1 h: rejected at submission" in html and "112461.torque1.grid.cesnet.cz" in html   # in the Div's JSON
    assert "cdn.bokeh.org" not in html

    # the same change as a new preview, cancelled while its runs are unfinished
    page.click("#proposal-form button[value=copy]")
    page.wait_for_selector("#runs")
    page.click("text=Cancel unfinished")
    said = page.inner_text(".messages")
    page.wait_for_function("""() => {
        const statuses = [...document.querySelectorAll('#runs [data-field="status"]')].map(s => s.textContent.trim());
        return statuses.length === 4 && statuses.every(s => ['done', 'cancelled'].includes(s));
    }""", timeout=RESULTS)
    statuses = [s.strip() for s in page.locator('#runs [data-field="status"]').all_inner_texts()]
    # the in-process worker runs the four 200-job runs quickly, so the click may find them all ended: the page says
    # what it did, and the runs it cancelled while queued show it (a cancel that really ends a running task is tested
    # on a real worker, tests/webapp/test_fair_workers.py)
    queued = re.search(r"Cancelled (\d+) queued run", said)
    if queued:
        assert statuses.count("cancelled") >= int(queued.group(1)), (said, statuses)
    else:
        assert "to stop" in said or "Every run had already ended: nothing to cancel." in said, said
    page.screenshot(path=str(ARTIFACTS / "preview-cancelled.png"), full_page=True)
    assert page.watch.errors == [], "console errors"
    assert page.watch.external == [], "requests off the server"


def sweep_cells(page, value: str) -> list[str]:  # noqa: ANN001
    """The sweep table's cells in the row of ``value``: the value, then current and proposed per metric, the change."""
    return [t.strip() for t in page.locator(f'#sweep tr[data-value="{value}"] th, '
                                            f'#sweep tr[data-value="{value}"] td').all_inner_texts()]


@pytest.mark.skipif(not OPENPBS.exists(), reason=f"{OPENPBS} is not here")
def test_an_admin_reads_every_swept_value_at_once_and_compares_with_another_preview(  # noqa: ANN001
        page, live_server, celery_worker, django_user_model):
    """A sweep over the backfill bound shows all its values in one table and figure, current beside
    proposed (after a limit is changed in the page); the "compare with" picker puts this preview's runs
    beside another preview's on the same log."""
    base = admin_with_the_log(page, live_server, django_user_model)

    # another preview of the log as it is: its runs are offered by the sweep's picker
    new_preview(page, base, "as it is")
    wait_for_results(page)

    new_preview(page, base, "bound sweep", sweep=("backfill_bound", "1, inf"))
    wait_for_results(page, figures=False)
    assert page.locator("#sweep tbody tr").count() == 2
    for value in ("1", "inf"):
        cells = sweep_cells(page, value)
        assert cells[0].startswith(value) and cells[1] == cells[2], cells      # the same configuration on both sides:
        assert cells[3] == cells[4] and cells[-1] == "±0 s", cells            # as many left out, the same waits

    # workq's per-user cores down to 2 (inferred 4): jobs asking 4 could never start there, others are held
    row = page.locator('#proposal-rows tr[data-queue="workq"]')
    row.locator("input[name$=_user_max_cores]").fill("2")
    row.locator("input[name$=_user_max_cores]").press("Tab")        # as a person leaves the field: change
    page.wait_for_function("() => document.getElementById('proposal-diff').innerText.includes('workq')")
    page.click("#proposal-form button[value=run]")
    wait_for_results(page, documents=2)      # two figures drawn: the mean waits across the values, the chosen value's
    for value in ("1", "inf"):
        cells = sweep_cells(page, value)
        left_out = [int(c.replace(",", "")) for c in cells[1:3]]
        assert left_out[1] > left_out[0], cells                               # the proposal refuses some at submission
        assert cells[3] != "–" and cells[4] != "–", cells                     # mean waits of both, side by side
    assert page.locator("#sweep tr.chosen").get_attribute("data-value") == "1"
    page.screenshot(path=str(ARTIFACTS / "preview-sweep.png"), full_page=True)
    page.click('#sweep tr[data-value="inf"] th a')
    page.wait_for_selector('#sweep tr.chosen[data-value="inf"]')
    assert page.input_value("#sweep-value select") == "1"            # the value whose tables are below

    # compare with the other preview: this one's finished runs are ticked, the other's offered
    page.click("#compare-with summary")
    others = page.locator("#compare-with fieldset").nth(1)
    assert "as it is" in others.inner_text()
    others.locator("input[type=checkbox]").first.check()
    ticked = page.locator("#compare-with input[type=checkbox]:checked").count()
    assert ticked >= 2
    page.click("#compare-with button[type=submit]")
    page.wait_for_selector("#comparison-title")
    assert page.locator("#run-legend li").count() == ticked, page.inner_text("#run-legend")
    picked = page.inner_text("main")
    assert "Runs picked from 2 experiments" in picked and "as it is" in picked and "bound sweep" in picked
    page.screenshot(path=str(ARTIFACTS / "preview-compare-with.png"), full_page=True)
    assert page.watch.errors == [], "console errors"
    assert page.watch.external == [], "requests off the server"
