"""The "your own order" card in Chromium: a bad formula is named as it is typed, a literature example
fills the box, a good formula runs and its run is labelled with the formula itself."""

from __future__ import annotations

import pytest

from tests.browser.conftest import ARTIFACTS
from tests.browser.test_comparison_flow import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_type_a_bad_then_a_good_formula_and_run_it(page, live_server, django_user_model, settings,  # noqa: ANN001
                                                   tmp_path, celery_worker):
    from tests.webapp.conftest import make_trace
    from webapp.experiments.models import Run

    settings.MEDIA_ROOT = tmp_path / "media"
    django_user_model.objects.create_user("erin", password="erin-password-1")
    trace = make_trace(django_user_model.objects.get(username="erin"), name="demo")

    log_in(page, live_server.url, "erin", "erin-password-1")
    page.goto(live_server.url + "/experiments/new/")
    page.select_option("#id_trace", value=str(trace.pk))
    page.check("#id_own_use")
    status = page.locator("#formula-check")

    page.locator("#id_own_formula").press_sequentially("(wait / reqested) ** 3", delay=20)
    page.wait_for_function("() => document.getElementById('formula-check').dataset.state === 'bad'")
    assert "column 9: unknown name 'reqested'" in status.inner_text()

    page.click("button.formula-example[data-formula='requested * procs'][data-first='smallest']")
    page.wait_for_function("() => document.getElementById('formula-check').dataset.state === 'ok'")
    assert page.input_value("#id_own_formula") == "requested * procs" and page.input_value("#id_own_first") == "smallest"

    page.fill("#id_own_formula", "")
    page.locator("#id_own_formula").press_sequentially("(wait / requested) ** 3 * procs", delay=10)
    page.select_option("#id_own_first", "largest")
    page.wait_for_function("() => document.getElementById('formula-check').textContent.includes('largest first')")
    assert status.inner_text().startswith("✓ (wait / requested) ** 3 * procs (largest first), easy")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "own-order.png"), full_page=True)

    page.click("form.experiment-form button[type=submit]")
    page.wait_for_selector("#runs")
    page.wait_for_function(
        """() => {
            const cells = [...document.querySelectorAll('#runs [data-field="percent"]')];
            return cells.length > 0 && cells.every(c => c.textContent.trim() === '100 %');
        }""", timeout=180_000)
    assert "(wait / requested) ** 3 * procs (largest first), easy" in page.locator("#runs").inner_text()
    run = Run.objects.get(policy__ordering="formula")
    assert run.status == "done" and run.policy["params"]["formula"] == "(wait / requested) ** 3 * procs"
    assert page.watch.errors == [], "console errors"
    assert page.watch.failed == [], "failed requests"
