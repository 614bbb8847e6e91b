"""The pages a researcher reads at a glance, in Chromium at 1400 px and 1024 px: nothing wider than the
window, every Bokeh plot drawn with no console error, every run named in the title, legends and
plots, and dates on the time axes of a trace that has a start time (KTH-SP2: Europe/Stockholm).

Screenshots go to test-artifacts/ (looked at by a person, not compared by the test).
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_experiment, make_trace

from .conftest import ARTIFACTS, SHARED_SWF
from .test_comparison_flow import log_in, render_every_plot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TRACE = SHARED_SWF / "KTH-SP2-1996-2.1-cln.swf.gz"
POLICIES = ["fcfs", "easy", "conservative", "sjf", "sorted-easy"]
WIDTHS = (1400, 1024)

#: What every Bokeh document on the page names and draws (labels of legends, figure titles, axis kinds).
BOKEH_CONTENTS = """() => Bokeh.documents.map(doc => {
    const models = [...doc.all_models];
    const name = m => m.constructor.__name__;
    const text = v => (v && typeof v === 'object' && 'value' in v) ? v.value : v;
    return {
        legend: models.filter(m => name(m) === 'LegendItem').map(m => text(m.label)),
        titles: models.filter(m => name(m) === 'Title').map(m => m.text),
        datetime: models.filter(m => name(m) === 'DatetimeAxis').length,
        plots: models.filter(m => name(m) === 'Figure').length,
    };
})"""

NO_OVERFLOW = """() => [document.documentElement.scrollWidth, window.innerWidth,
    [...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className)]"""


@pytest.fixture
def kth_runs(alice, media_root):  # noqa: ANN001, ANN201
    """Five policies over 45 days of KTH-SP2 (long enough for the daily view), and one more experiment."""
    trace = make_trace(alice, TRACE, name="KTH-SP2")
    main = make_experiment(alice, trace, POLICIES, name="five policies on KTH", days="0:45")
    other = make_experiment(alice, trace, ["firstfit"], name="first fit on KTH", days="0:45")
    return main, other


def open_page(browser, live_server, width: int):  # noqa: ANN001, ANN201
    from .conftest import PageWatch

    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.watch = PageWatch(live_server.url)
    page.watch.attach(page)
    log_in(page, live_server.url, "alice", "alice-password")
    return context, page


def check_width_and_errors(page, what: str) -> None:  # noqa: ANN001
    document, window, wide = page.evaluate(NO_OVERFLOW)
    assert document <= window, f"{what}: the page is {document} px wide in a {window} px window: {wide}"
    assert page.watch.errors == [], f"{what}: console errors"
    assert page.watch.failed == [] and page.watch.external == [], what


def check_plots_name_every_run(page, labels: list[str]) -> None:  # noqa: ANN001
    docs = page.evaluate(BOKEH_CONTENTS)
    legends = [set(d["legend"]) for d in docs if len(set(d["legend"])) > 2]
    assert legends, "no multi-run legend"
    for legend in legends:           # the CDF, the raw-step timelines, fairness (label + Jain index): every run
        assert all(any(item == label or item.startswith(label + " ") for item in legend) for label in labels), legend
    titles = " ".join(t for d in docs for t in d["titles"] if t)
    assert all(label in titles for label in labels)   # per-run panels (daily timelines, Gantt) name their run
    assert sum(d["datetime"] for d in docs) >= 3, "timelines, diff Gantt and Gantt should have date axes"


def check_the_download(page, live_server, labels: list[str], tmp_path) -> None:  # noqa: ANN001
    """The self-contained HTML file draws the same plots and table offline (opened from disk)."""
    download = page.request.get(live_server.url + page.get_attribute("#download-html", "href"))
    assert download.ok
    path = tmp_path / "comparison.html"
    path.write_bytes(download.body())
    errors_before = len(page.watch.errors)
    page.goto(path.as_uri())
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents.every(d => d.is_idle)")
    page.screenshot(path=str(ARTIFACTS / "comparison-download.png"), full_page=True)
    assert page.watch.errors[errors_before:] == [], "console errors in the downloaded file"
    assert page.locator(".metrics-table").count() == 1      # the HTML table, inside Bokeh's shadow DOM
    check_plots_name_every_run(page, labels)
    page.watch.external.clear()                               # file:// is not the server: expected here


@pytest.mark.skipif(not TRACE.exists(), reason=f"{TRACE} is not here")
def test_comparison_pages_read_well_at_both_widths(browser, live_server, kth_runs, tmp_path):  # noqa: ANN001
    main, other = kth_runs
    labels = list(main.runs.order_by("position").values_list("label", flat=True))
    assert all(run.status == "done" for run in main.runs.all())
    cross = [*main.runs.order_by("position")[:2], other.runs.get()]
    ARTIFACTS.mkdir(exist_ok=True)
    for width in WIDTHS:
        context, page = open_page(browser, live_server, width)
        try:
            page.goto(live_server.url + reverse("dashboards:comparison", args=[main.pk]))
            state = render_every_plot(page)
            assert state is True, page.locator(".bokeh-status.error").all_inner_texts()
            page.screenshot(path=str(ARTIFACTS / f"comparison-{width}.png"), full_page=True)
            check_width_and_errors(page, f"comparison at {width} px")
            title = page.inner_text("#comparison-title")
            legend = page.inner_text("#run-legend")
            assert all(label in title and label in legend for label in labels)
            table = page.locator(".metrics-scroll")
            box = table.bounding_box()
            assert box["x"] + box["width"] <= width
            check_plots_name_every_run(page, labels)
            if width == WIDTHS[0]:
                check_the_download(page, live_server, labels, tmp_path)

            page.goto(live_server.url + reverse("dashboards:compare") + "?runs=" + ",".join(str(r.pk) for r in cross))
            state = render_every_plot(page)
            assert state is True, page.locator(".bokeh-status.error").all_inner_texts()
            page.screenshot(path=str(ARTIFACTS / f"compare-runs-{width}.png"), full_page=True)
            check_width_and_errors(page, f"cross-experiment comparison at {width} px")
            assert "first fit on KTH" in page.inner_text("main")

            for name, url in (("new-experiment", reverse("experiments:new")),
                              ("reproduce-dbf", reverse("experiments:new") + "?reproduce=dbf"),
                              ("reproduce", reverse("experiments:reproduce")),
                              ("experiment", main.get_absolute_url())):
                page.goto(live_server.url + url)
                page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
                check_width_and_errors(page, f"{name} at {width} px")
        finally:
            context.close()


@pytest.mark.skipif(not TRACE.exists(), reason=f"{TRACE} is not here")
def test_a_policys_parameters_show_only_while_it_is_ticked(browser, live_server, alice):  # noqa: ANN001
    context, page = open_page(browser, live_server, 1400)
    try:
        page.goto(live_server.url + reverse("experiments:new"))
        params = page.locator("#policy-plan2 .policy-params")
        assert not params.is_visible()
        page.check("input[name=policy_plan2]")
        assert params.is_visible() and "initial temperature T0" in params.inner_text()
        page.uncheck("input[name=policy_plan2]")
        assert not params.is_visible()
        assert page.locator("#workload-options").is_visible()
        height = page.evaluate("document.documentElement.scrollHeight")
        # ~5,500 px with nothing ticked since the formula presets, the own-order card and the replicates
        # section came (2026-11-27); every preset's parameters shown would add over 6,000 more
        assert height < 6500, f"the new-experiment page is {height} px tall"
    finally:
        context.close()
