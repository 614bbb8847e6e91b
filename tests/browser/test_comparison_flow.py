"""A person's whole path in the browser: log in, upload a real trace, run two policies, compare.

Checks the trace page's characterization plots and every Bokeh plot of the comparison rendered from
our own static files (no outside host), with no console error, and keeps screenshots in test-artifacts/.
"""

from __future__ import annotations

import bokeh
import pytest

from .conftest import ARTIFACTS, SHARED_SWF

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TRACE = SHARED_SWF / "lublin_256.swf.gz"
ALL_PLOTS_RENDERED = """() => {
    const slots = [...document.querySelectorAll('[data-bokeh-src]')];
    if (slots.some(s => s.dataset.bokehState === 'error')) return 'error';
    return slots.length > 0 && slots.every(s => s.dataset.bokehState === 'done')
        && window.Bokeh && Bokeh.documents.length === slots.length
        && Bokeh.documents.every(d => d.is_idle);
}"""


def log_in(page, base: str, username: str, password: str) -> None:  # noqa: ANN001
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


TRACE_PLOTS_RENDERED = """() => {
    const slot = document.getElementById('trace-plots');
    if (!slot || slot.dataset.bokehState === 'error') return slot ? 'error' : false;
    return slot.dataset.bokehState === 'done' && Bokeh.documents.length === 1 && Bokeh.documents[0].is_idle;
}"""


def upload_trace(page, base: str, name: str) -> str:  # noqa: ANN001
    """Upload, wait for the parse; returns the status the trace page first showed."""
    page.goto(base + "/traces/upload/")
    page.fill("#id_name", name)
    page.set_input_files("#id_file", str(TRACE))
    page.click("main form button[type=submit]")
    page.wait_for_selector("#trace-status")
    first_status = page.get_attribute("#trace-status", "data-status")
    page.evaluate("window.sameDocument = true")  # gone if the page reloads
    page.wait_for_selector('#trace-status[data-status="ready"]', timeout=120_000)
    return first_status


def render_every_plot(page) -> object:  # noqa: ANN001
    """Ask for the plots drawn on demand (their buttons), then scroll each plot slot into view in turn
    (plots below the fold are drawn when they come near)."""
    while page.locator("button.show-plot").count():     # a clicked button makes way for the spinner
        page.locator("button.show-plot").first.click()
    for i in range(page.locator("[data-bokeh-src]").count()):
        page.locator("[data-bokeh-src]").nth(i).scroll_into_view_if_needed()
        page.wait_for_function(f"() => document.querySelectorAll('[data-bokeh-src]')[{i}].dataset.bokehState"
                               " !== 'waiting'")
    return page.wait_for_function(ALL_PLOTS_RENDERED, timeout=120_000).json_value()


def run_two_policies(page, base: str, trace_name: str) -> None:  # noqa: ANN001
    page.goto(base + "/experiments/new/")
    page.fill("#id_name", "FCFS vs EASY in the browser")
    page.select_option("#id_trace", label=trace_name)
    page.check("input[name=policy_fcfs]")
    page.check("input[name=policy_easy]")
    page.click("form.experiment-form button[type=submit]")
    page.wait_for_selector("#runs")
    page.wait_for_function(
        """() => {
            const cells = [...document.querySelectorAll('#runs [data-field="percent"]')];
            return cells.length === 2 && cells.every(c => c.textContent.trim() === '100 %');
        }""", timeout=180_000)


@pytest.mark.skipif(not TRACE.exists(), reason=f"{TRACE} is not here")
def test_upload_run_and_compare_in_chromium(page, live_server, celery_worker, django_user_model):  # noqa: ANN001
    django_user_model.objects.create_user("carol", password="carol-password-1")
    base = live_server.url
    log_in(page, base, "carol", "carol-password-1")
    first_status = upload_trace(page, base, "Lublin 256")
    state = page.wait_for_function(TRACE_PLOTS_RENDERED, timeout=120_000).json_value()
    assert state is True, page.locator(".bokeh-status.error").all_inner_texts()
    if first_status == "parsing":  # the plots came without a reload when the parse finished
        assert page.evaluate("window.sameDocument === true")
    assert page.locator("#trace-plots canvas").count() >= 6  # arrivals ×2, sizes, runtimes, estimates, users
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trace.png"), full_page=True)

    run_two_policies(page, base, "Lublin 256")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "experiment-progress-100.png"), full_page=True)

    page.click("#comparison-link")
    page.wait_for_selector(".metrics-table", timeout=120_000)   # the metrics are HTML, in the page itself
    page.wait_for_selector("#plot-timelines[data-bokeh-state=done]", timeout=120_000)
    assert page.locator("#plot-gantt").get_attribute("data-bokeh-src") is None   # drawn when asked (a button)
    assert page.locator("#plot-ratio").get_attribute("data-bokeh-state") == "waiting"  # far below the fold
    state = render_every_plot(page)
    assert state is True, page.locator(".bokeh-status.error").all_inner_texts()
    page.screenshot(path=str(ARTIFACTS / "comparison.png"), full_page=True)

    slots = page.locator("[data-bokeh-src]").count()
    assert slots >= 7  # timelines, cdf, fairness, heat maps, ratio, job by job, Gantt
    assert page.locator("canvas").count() >= slots  # the locator pierces Bokeh's shadow DOM
    assert page.evaluate("Bokeh.version") == bokeh.__version__
    watch = page.watch
    assert watch.external == [], "requests to outside hosts"
    assert watch.errors == [], "console errors"
    assert watch.failed == [], "failed responses"

    download = page.request.get(base + page.get_attribute("#download-html", "href"))
    assert download.ok and "attachment" in download.headers["content-disposition"]
