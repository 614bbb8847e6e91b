"""Issue 28 in Chromium at 1400 and 1024 px: an accounting log's impossible recording is no baseline
(one sentence, a compact fidelity table first, no red boxes); an SWF trace's fidelity is a footnote
under the metrics; the DBF reproduce form preselects the paper's trace. Screenshots in test-artifacts/."""

from __future__ import annotations

import shutil

import pytest
from django.urls import reverse

from tests.shared_data import SHARED_DATA
from tests.webapp.conftest import DEMO_SWF, make_experiment, make_trace

from .conftest import ARTIFACTS
from .test_comparison_pages import WIDTHS, check_width_and_errors, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OPENPBS = SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log"


@pytest.fixture
def setup(alice, media_root, tmp_path):  # noqa: ANN001, ANN201
    pbs = make_trace(alice, OPENPBS, name="pbs", format="pbs")
    impossible = make_experiment(alice, pbs, ("easy", "sjf"), procs=3, with_recorded=True, name="pbs on 3")
    demo = make_experiment(alice, make_trace(alice, name="demo"), ("fcfs", "easy"), with_recorded=True, name="demo")
    copy = tmp_path / "SDSC-DS-2004-2.1-cln.swf"
    shutil.copyfile(DEMO_SWF, copy)
    ds = make_trace(alice, copy, name="ds")
    return {"impossible": impossible, "demo": demo, "ds": ds}


@pytest.mark.parametrize("width", WIDTHS)
def test_baselines_fidelity_and_the_papers_trace(browser, live_server, setup, width):  # noqa: ANN001
    context, page = open_page(browser, live_server, width)
    base = live_server.url
    ARTIFACTS.mkdir(exist_ok=True)

    page.goto(base + reverse("dashboards:comparison", args=[setup["impossible"].pk]) + "?baseline=recorded")
    page.wait_for_selector("#fidelity")
    assert page.locator(".error-box").count() == 0
    assert page.locator("#recording-note").count() == 1
    assert page.locator("select[name=baseline] option").all_inner_texts() == ["easy", "sjf"]
    assert "not a baseline" in page.locator("th[data-run=recorded]").inner_text()
    fidelity_top = page.locator("#fidelity").bounding_box()["y"]
    assert fidelity_top < page.locator("#section-metrics").bounding_box()["y"]
    assert page.locator("#fidelity tbody tr").count() == 2
    page.screenshot(path=str(ARTIFACTS / f"baseline-impossible-{width}.png"), full_page=True)
    check_width_and_errors(page, "impossible recording")

    page.goto(base + reverse("dashboards:comparison", args=[setup["demo"].pk]))
    page.wait_for_selector("#fidelity")
    assert page.locator("#section-metrics #fidelity.fidelity-footnote").count() == 1
    page.screenshot(path=str(ARTIFACTS / f"baseline-footnote-{width}.png"), full_page=True)
    check_width_and_errors(page, "footnote")

    page.goto(base + reverse("experiments:new") + "?reproduce=dbf")
    assert page.locator("select[name=trace]").input_value() == str(setup["ds"].pk)
    assert "a trace the paper used" in page.locator("#paper-trace").inner_text()
    check_width_and_errors(page, "dbf form")
    context.close()
