"""An admin's path in Chromium with the real Slurm's files (tests/data/slurm_replay): upload the sacct
dump, start a preview on slurm.conf and the sacctmgr dumps, double PriorityWeightFairshare in the form,
run it, and read the diff, the waits per partition, account and user, and the pending reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import ARTIFACTS
from tests.browser.test_comparison_flow import log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SLURM = Path(__file__).resolve().parents[1] / "data" / "slurm_replay"
RESULTS = 300_000   # ms: a loaded shared machine parses and simulates slowly


def test_an_admin_doubles_the_fairshare_weight(page, live_server, celery_worker, django_user_model):  # noqa: ANN001
    django_user_model.objects.create_user("admin", password="admin-password-1")
    base = live_server.url
    log_in(page, base, "admin", "admin-password-1")
    page.goto(base + "/traces/upload/")
    page.fill("#id_name", "our sacct")
    page.set_input_files("#id_file", str(SLURM / "sacct.txt"))
    page.click("main form button[type=submit]")
    page.wait_for_selector('#trace-status[data-status="ready"]', timeout=RESULTS)

    page.goto(base + "/preview/")
    page.click("#new-site-preview")
    page.fill("#id_name", "our cluster")
    page.select_option("#id_trace", label="our sacct")
    page.set_input_files("#id_slurm_conf", str(SLURM / "slurm.conf"))
    page.set_input_files("#id_qos", str(SLURM / "qos.txt"))
    page.set_input_files("#id_assoc", str(SLURM / "assoc.txt"))
    page.click("main form button[type=submit]")
    page.wait_for_selector('#site-results[data-done="yes"]', timeout=RESULTS)
    assert "short" in page.inner_text("#waits-partition") and "QOSMaxJobsPerUserLimit" in page.inner_text("#pending-reasons")

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
