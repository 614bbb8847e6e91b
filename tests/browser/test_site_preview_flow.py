"""An admin's path in Chromium with the real Slurm's files (tests/data/slurm_replay): upload the sacct
dump, start a preview on slurm.conf and the sacctmgr dumps, double PriorityWeightFairshare in the form,
run it, and read the diff, the waits per partition, account and user, and the pending reasons; sweep a
key; download the page and its tables (the file says what SchedLab read from the files); calibrate the
baseline, cancel it, calibrate it again and apply the closest candidate."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import ARTIFACTS
from tests.browser.test_comparison_flow import log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SLURM = Path(__file__).resolve().parents[1] / "data" / "slurm_replay"
RESULTS = 300_000   # ms: a loaded shared machine parses and simulates slowly


def admin_with_the_sacct_dump(page, base: str, users) -> None:  # noqa: ANN001
    """An admin logged in, the real Slurm's sacct dump uploaded as "our sacct" and ready."""
    users.objects.create_user("admin", password="admin-password-1")
    log_in(page, base, "admin", "admin-password-1")
    page.goto(base + "/traces/upload/")
    page.fill("#id_name", "our sacct")
    page.set_input_files("#id_file", str(SLURM / "sacct.txt"))
    page.click("main form button[type=submit]")
    page.wait_for_selector('#trace-status[data-status="ready"]', timeout=RESULTS)


def fill_the_site_form(page, name: str) -> None:  # noqa: ANN001
    """On the new site preview's form: its name, the sacct dump and the real Slurm's three files."""
    page.fill("#id_name", name)
    page.select_option("#id_trace", label="our sacct")
    page.set_input_files("#id_slurm_conf", str(SLURM / "slurm.conf"))
    page.set_input_files("#id_qos", str(SLURM / "qos.txt"))
    page.set_input_files("#id_assoc", str(SLURM / "assoc.txt"))


def a_site_preview_of_the_real_files(page, base: str, users) -> None:  # noqa: ANN001
    """The admin's new site preview on the sacct dump and the real Slurm's files, its current runs done."""
    admin_with_the_sacct_dump(page, base, users)
    page.goto(base + "/preview/")
    page.click("#new-site-preview")
    fill_the_site_form(page, "our cluster")
    page.click("main form button[type=submit]")
    page.wait_for_selector('#site-results[data-done="yes"]', timeout=RESULTS)


def test_an_admin_doubles_the_fairshare_weight(page, live_server, celery_worker, django_user_model):  # noqa: ANN001
    base = live_server.url
    a_site_preview_of_the_real_files(page, base, django_user_model)
    assert "short" in page.inner_text("#waits-partition") and "QOSMaxJobsPerUserLimit" in page.inner_text("#pending-reasons")
    assert page.is_visible("#site-read") and "QOS normal: priority 0, max_jobs_per_user 4" in page.inner_text("#site-read")

    field = page.get_by_label("PriorityWeightFairshare", exact=True)
    assert field.input_value() == "10000"
    field.fill("20000")
    page.fill("#id_name", "double fair-share")
    page.click("#run-proposal")
    page.wait_for_selector("#site-diff")
    page.wait_for_selector('#site-results[data-done="yes"]', timeout=RESULTS)
    diff = page.inner_text("#site-diff")
    assert "-PriorityWeightFairshare=10000" in diff and "+PriorityWeightFairshare=20000" in diff
    assert diff.count("\n+") == 2          # the file header and the one changed line
    assert "PriorityWeightFairshare" in page.inner_text("#changed-keys")
    for heading in ("partition", "account", "user"):
        table = page.inner_text(f"#waits-{heading}")
        assert "recorded" in table and "current" in table and "proposed" in table
    assert "physics" in page.inner_text("#waits-account") and "dave" in page.inner_text("#waits-user")
    reasons = page.inner_text("#pending-reasons")
    assert all(name in reasons for name in ("Priority", "Resources", "QOSMaxJobsPerUserLimit"))
    assert page.get_by_label("PriorityWeightFairshare", exact=True).input_value() == "20000"   # the next edit starts here
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site-preview.png"), full_page=True)
    assert not page.watch.errors and not page.watch.external, (page.watch.errors, page.watch.external)


def sweep_cells(page, value: str) -> list[str]:  # noqa: ANN001
    """The sweep table's cells in the row of ``value``: the value, then current and proposed per metric, the change."""
    return [t.strip() for t in page.locator(f'#sweep tr[data-value="{value}"] th, '
                                            f'#sweep tr[data-value="{value}"] td').all_inner_texts()]


def wait_for_sweep(page, lines: int) -> None:  # noqa: ANN001
    """The page reloads itself when its last run ends: then the chosen value's tables and the figure
    across the values, drawn by BokehJS with ``lines`` configurations (a line and its markers each)."""
    page.wait_for_selector('#site-results[data-done="yes"]', timeout=RESULTS)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length === 1 && Bokeh.documents[0].is_idle",
                           timeout=RESULTS)
    drawn = page.evaluate("() => Bokeh.documents[0].roots()[0].renderers.length")
    assert drawn == 2 * lines, drawn


def test_an_admin_sweeps_the_backfill_bound_of_their_site(page, live_server, celery_worker,  # noqa: ANN001
                                                         django_user_model):
    """bf_max_job_test at 10 and 100: the current files replayed once per value, then a proposal (the
    fair-share weight doubled) once per value too; every value's current and proposed side by side in
    one table and one figure, and any value's tables below at a click."""
    base = live_server.url
    admin_with_the_sacct_dump(page, base, django_user_model)
    page.goto(base + "/preview/site/new/")
    fill_the_site_form(page, "backfill bound")
    page.fill("#id_sweep_key", "bf_max_job_test")
    page.fill("#id_sweep_values", "10, 100")
    page.click("main form button[type=submit]")
    wait_for_sweep(page, lines=1)                 # no proposal yet: the current files alone
    assert page.locator("#sweep tbody tr").count() == 2
    for value in ("10", "100"):
        cells = sweep_cells(page, value)
        assert cells[0].startswith(value) and cells[3] not in ("–", "") and cells[4] == "–", cells

    page.get_by_label("PriorityWeightFairshare", exact=True).fill("20000")
    page.fill("#id_name", "double fair-share")
    page.click("#run-proposal")
    wait_for_sweep(page, lines=2)
    for value in ("10", "100"):
        cells = sweep_cells(page, value)
        assert cells[3] not in ("–", "") and cells[4] not in ("–", ""), cells   # mean waits of both, side by side
        assert cells[-1] not in ("–", ""), cells                                 # and the change
    assert page.locator("#sweep tr.chosen").get_attribute("data-value") == "10"
    assert "at bf_max_job_test = 10" in page.inner_text("#site-results")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site-preview-sweep.png"), full_page=True)
    page.click('#sweep tr[data-value="100"] th a')
    page.wait_for_selector('#sweep tr.chosen[data-value="100"]')
    assert page.input_value("#sweep-value select") == "1"
    assert "at bf_max_job_test = 100" in page.inner_text("#site-results")
    assert "proposed" in page.inner_text("#waits-partition")
    assert not page.watch.errors and not page.watch.external, (page.watch.errors, page.watch.external)


def wait_for_every_run(page) -> None:  # noqa: ANN001
    """Every run of the page ended (the page reloads itself when its last one ends; the server then
    says so), and the shown value's tables are drawn."""
    page.wait_for_selector('#site-results[data-runs-final="yes"][data-done="yes"]', timeout=RESULTS)


def test_an_admin_downloads_calibrates_applies_and_sweeps_from_the_page(page, live_server, celery_worker,  # noqa: ANN001
                                                                       django_user_model, tmp_path):
    """After the preview is made: its page as one HTML file and its tables and jobs as CSV; the
    baseline calibrated in the background (progress, then the candidates' table and the trust per
    partition) and the closest candidate's --set applied to both sides; then a sweep of
    bf_max_job_test asked from the page."""
    import csv

    base = live_server.url
    admin_with_the_sacct_dump(page, base, django_user_model)
    page.goto(base + "/preview/site/new/")
    fill_the_site_form(page, "our cluster")
    page.click("main form button[type=submit]")
    wait_for_every_run(page)

    # the downloads: the page (BokehJS inline, nothing from elsewhere) and the tables
    with page.expect_download() as download:
        page.click("#download-html")
    html = (tmp_path / "page.html")
    download.value.save_as(html)
    text = html.read_text()
    assert "waits-partition" in text and "cdn.bokeh.org" not in text and "<script src=" not in text
    # the file, opened offline, says what SchedLab read from the files and warns as the page does
    on_page = page.inner_text("#site-read")
    report = page.context.new_page()
    report.goto(html.as_uri())
    report.wait_for_selector("#site-read", timeout=RESULTS)
    assert "What SchedLab read from your files" in report.inner_text("#site-read")
    line = "QOS normal: priority 0, max_jobs_per_user 4"
    assert line in report.inner_text("#site-read") and line in on_page
    assert report.locator(".site-warning").count() == page.locator(".site-warning").count() >= 1
    report.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    report.close()
    with page.expect_download() as download:
        page.click("#download-tables")
    tables = tmp_path / "tables.csv"
    download.value.save_as(tables)
    rows = list(csv.DictReader(tables.open()))
    assert {"long", "short"} <= {row["name"] for row in rows if row["table"] == "mean wait per partition (minutes)"}
    assert all(row["recorded"] and row["current"] for row in rows if row["table"].startswith("mean wait"))

    # calibrate, and cancel it while it runs: it stops at its next progress check, the page says
    # "cancelled", and it can be run again
    page.click("#calibrate")
    page.wait_for_selector("#calibration-progress .status-running", timeout=RESULTS)    # (the page's poll)
    page.click("#cancel-calibration")
    page.wait_for_selector("#calibration-cancelling, #calibration-cancelled", timeout=RESULTS)
    page.wait_for_selector('#calibration[data-status="cancelled"] #calibration-cancelled', timeout=RESULTS)
    assert "cancelled" in page.inner_text("#calibration-cancelled")
    assert page.locator("#calibration-table").count() == 0 and page.locator("#cancel-calibration").count() == 0
    assert page.inner_text("#calibrate") == "Calibrate again"

    # calibrate: progress while it runs, then its table; apply the closest
    page.click("#calibrate")
    page.wait_for_selector("#calibration-progress")
    page.wait_for_selector('#calibration[data-status="done"] #calibration-table', timeout=RESULTS)
    closest = page.locator("#calibration-table tr.chosen").get_attribute("data-candidate")
    assert page.locator("#calibration-table tbody tr").count() >= 10
    assert "long" in page.inner_text("#calibration-trust") and "short" in page.inner_text("#calibration-trust")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site-preview-calibration.png"), full_page=True)
    applied = page.locator("#calibration-table tr.chosen button.apply-best")
    if applied.count() == 0:     # the closest changes the limits (or is the site as configured): the next one
        row = page.locator("#calibration-table tbody tr:has(button)").first
        closest = row.get_attribute("data-candidate")
        applied = row.locator("button")
    applied.click()
    page.wait_for_selector("#calibrated")
    wait_for_every_run(page)
    assert closest in page.inner_text("#calibrated")
    assert "current" in page.inner_text("#waits-partition")

    # a sweep from the page: both values of bf_max_job_test, current (calibrated) once per value
    page.fill("#id_sweep_key", "bf_max_job_test")
    page.fill("#id_sweep_values", "10, 100")
    page.click("#run-sweep")
    page.wait_for_selector("#sweep")
    wait_for_every_run(page)
    wait_for_sweep(page, lines=1)
    for value in ("10", "100"):
        cells = sweep_cells(page, value)
        assert cells[0].startswith(value) and cells[3] not in ("–", ""), cells
    assert closest in page.inner_text("#calibrated")        # the sweep's runs replay calibrated too
    page.screenshot(path=str(ARTIFACTS / "site-preview-after.png"), full_page=True)
    assert not page.watch.errors and not page.watch.external, (page.watch.errors, page.watch.external)


def test_an_admin_closes_the_long_partition_to_an_account(page, live_server, celery_worker, django_user_model):  # noqa: ANN001
    """AllowAccounts typed into slurm.conf's text: the page names every chemistry job of long as one
    Slurm would leave pending for ever (AccountNotAllowed, as squeue shows it), and the proposed side's
    waits without them."""
    a_site_preview_of_the_real_files(page, live_server.url, django_user_model)
    page.click("summary:has-text('The files (every key)')")
    conf = page.locator("#id_text0")
    text = conf.input_value()
    line = "PartitionName=long MaxTime=00:20:00 DefaultTime=00:10:00 PriorityJobFactor=1"
    assert line in text
    conf.fill(text.replace(line, line + " AllowAccounts=physics,teaching"))
    page.fill("#id_name", "long for physics and teaching")
    page.click("#run-proposal")
    page.wait_for_selector("#site-diff")
    page.wait_for_selector('#site-results[data-done="yes"]', timeout=RESULTS)
    assert "+" + line + " AllowAccounts=physics,teaching" in page.inner_text("#site-diff")
    chemistry_long = sum(1 for row in (SLURM / "sacct.txt").read_text().splitlines()[1:]
                         if row.split("|")[2] == "long" and row.split("|")[4] == "chemistry")
    assert chemistry_long > 0
    refused = page.inner_text("#refused-jobs ~ details.refused-proposed")
    assert f"proposed: {chemistry_long} jobs" in refused
    assert "Job's account not permitted to use this partition (long allows physics,teaching not chemistry)" in refused
    assert "partition long AllowAccounts physics,teaching" in refused
    assert "AllowAccounts physics,teaching" in page.inner_text("#site-read")
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#refused-jobs").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "site-preview-allow-accounts.png"))
    assert not page.watch.errors and not page.watch.external, (page.watch.errors, page.watch.external)
