"""A replicated comparison in the browser, on a real in-process Celery worker: choose 5 windows on the
new-experiment form, watch the set's one bar reach done, then read the verdicts and the forest plot."""

from __future__ import annotations

import pytest

from tests.synthetic import synthetic_swf
from tests.webapp.conftest import make_trace

from .conftest import ARTIFACTS
from .test_comparison_flow import log_in

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_replicated_comparison_shows_its_verdicts_and_forest_plot(page, live_server, celery_worker,
                                                                     django_user_model, tmp_path):  # noqa: ANN001
    carol = django_user_model.objects.create_user("carol", password="carol-password-1")
    make_trace(carol, synthetic_swf(tmp_path / "small.swf", jobs=600, procs=64), name="small")
    base = live_server.url
    log_in(page, base, "carol", "carol-password-1")
    page.goto(base + "/experiments/new/")
    page.fill("#id_name", "FCFS vs EASY, replicated")
    page.select_option("#id_trace", label="small")
    page.check("input[name=policy_fcfs]")
    page.check("input[name=policy_easy]")
    page.check("input[name=replicates][value=windows]")
    page.fill("#id_replicate_count", "5")
    page.click("form.experiment-form button[type=submit]")
    page.wait_for_selector("#replicates")
    page.wait_for_selector('#replicates[data-status="done"]', timeout=180_000)
    assert "5 of 5 replicates done" in page.inner_text("#replicates")

    page.click("#comparison-link")
    page.wait_for_selector("#verdicts li")
    verdicts = page.locator("#verdicts li").all_inner_texts()
    assert len(verdicts) == 5 and all(v.strip() for v in verdicts)      # fcfs/easy x five metrics
    assert page.locator(".metrics-table small.ci").count() >= 1
    page.locator("#plot-forest").scroll_into_view_if_needed()
    page.wait_for_selector("#plot-forest[data-bokeh-state=done]", timeout=120_000)
    assert page.locator("#plot-forest canvas").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "replicated-comparison.png"), full_page=True)
    assert page.watch.errors == [], "console errors"
    assert page.watch.failed == [], "failed responses"
