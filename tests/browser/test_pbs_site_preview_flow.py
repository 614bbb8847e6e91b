"""A PBS admin's path in Chromium: upload the OpenPBS test server's accounting log (shared data:
fairsharesim/OpenPBS.log), start a preview on tests/data/pbs_site's print server, sched_config and
resource_group, propose a per-user max_run on workq and read the diff, the waits per queue and user
and the pending reasons in PBS's words; then a shorter resources_max.walltime, and read the jobs the
server would refuse at submission, named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser.test_comparison_flow import log_in
from tests.shared_data import SHARED_DATA

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SITE = Path(__file__).resolve().parents[1] / "data" / "pbs_site"
LOG = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"
RESULTS = 300_000


def run_the_proposal(page, name: str) -> None:  # noqa: ANN001
    """Name the proposal, run it, wait for its results; its page's text and a screenshot go to the
    folder $PBS_DUMP when set (to read what an admin sees)."""
    page.fill("#id_name", name)
    page.click("#run-proposal")
    page.wait_for_selector("#site-diff")
    page.wait_for_selector('#site-results[data-done="yes"]', timeout=RESULTS)
    dump = os.environ.get("PBS_DUMP")
    if dump:
        Path(dump, f"{name}.txt").write_text(page.inner_text("main"))
        page.screenshot(path=str(Path(dump, f"{name}.png")), full_page=True)


def test_a_pbs_admin_limits_each_user_to_one_running_job(page, live_server, celery_worker, django_user_model):  # noqa: ANN001
    base = live_server.url
    django_user_model.objects.create_user("admin", password="admin-password-1")
    log_in(page, base, "admin", "admin-password-1")
    page.goto(base + "/traces/upload/")
    page.fill("#id_name", "our pbs log")
    page.set_input_files("#id_file", str(LOG))
    page.click("main form button[type=submit]")
    page.wait_for_selector('#trace-status[data-status="ready"]', timeout=RESULTS)

    page.goto(base + "/preview/site/new/")
    page.fill("#id_name", "our pbs site")
    page.select_option("#id_trace", label="our pbs log")
    page.fill("#id_cpus", "4")
    page.set_input_files("#id_pbs_server", str(SITE / "print_server.txt"))
    page.set_input_files("#id_sched_config", str(SITE / "sched_config"))
    page.set_input_files("#id_resource_group", str(SITE / "resource_group"))
    page.click("main form button[type=submit]")
    page.wait_for_selector('#site-results[data-done="yes"]', timeout=RESULTS)
    page.get_by_label("workq max_run", exact=True).fill("[u:PBS_GENERIC=1]")
    run_the_proposal(page, "one job per user")
    diff = page.inner_text("#site-diff")
    assert "+set queue workq max_run = [u:PBS_GENERIC=1]" in diff
    assert "Per queue" in page.inner_text("#site-results")
    for heading in ("partition", "user"):               # (the queue table keeps its id)
        table = page.inner_text(f"#waits-{heading}")
        assert "recorded" in table and "current" in table and "proposed" in table
    assert "klusacek" in page.inner_text("#waits-user")
    assert "Queue max_run limit reached" in page.inner_text("#pending-reasons")

    page.get_by_label("workq max_run", exact=True).fill("")
    page.get_by_label("workq resources_max.walltime", exact=True).fill("01:30:00")
    run_the_proposal(page, "walltime 1.5 h")
    # every job asks 02:00:00: all 200 refused at submission, as PBS's server would, and named
    assert "+set queue workq resources_max.walltime = 01:30:00" in page.inner_text("#site-diff")
    refused = page.inner_text("#site-results")
    assert "Jobs refused at submission" in refused and "proposed: 200 jobs" in refused
    assert "112461.torque1.grid.cesnet.cz" in page.inner_text(".refused-proposed")
    assert "queue workq resources_max.walltime = 01:30:00" in page.inner_text(".refused-proposed")
    assert not page.watch.errors and not page.watch.external, (page.watch.errors, page.watch.external)
