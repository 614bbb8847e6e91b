"""The reconfiguration preview in Chromium: every figure renders from our own BokehJS, no console error."""

from __future__ import annotations


import pytest

from tests.browser.conftest import ARTIFACTS
from tests.browser.test_comparison_flow import log_in
from tests.shared_data import SHARED_DATA

pytestmark = pytest.mark.browser
WAGAP = (SHARED_DATA / "metacentrum/alea/wagap-2013.swf")


@pytest.mark.skipif(not WAGAP.exists(), reason=f"{WAGAP} is not here")
def test_preview_page_renders_every_figure(page, live_server, django_user_model, settings, tmp_path):  # noqa: ANN001
    from engine.platform.queues import CONFIG_DIR
    from tests.webapp.conftest import make_preview, make_trace

    settings.MEDIA_ROOT = tmp_path / "media"
    head = tmp_path / "wagap-head.swf"
    head.write_text("".join(WAGAP.read_text().splitlines(keepends=True)[:600]))
    dave = django_user_model.objects.create_user("dave", password="dave-password-1")
    trace = make_trace(dave, head, name="wagap head")
    machines = (WAGAP.parent / "wagap-2013.swf.machines").read_text()
    preview = make_preview(dave, trace, name="historical -> 2014", machine=machines,
                           current=(CONFIG_DIR / "historical.yaml").read_text(),
                           proposed=(CONFIG_DIR / "2014.yaml").read_text(), run=True)
    assert {run.status for run in preview.experiment.runs.all()} == {"done"}

    log_in(page, live_server.url, "dave", "dave-password-1")
    page.goto(live_server.url + preview.get_absolute_url())
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length === 1 && Bokeh.documents[0].is_idle",
                           timeout=120_000)
    assert page.locator("canvas").count() >= 11     # 2 utilization, 2 weekly, 2 waits, users, 2 usage, 2 fairness
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "preview.png"), full_page=True)
    assert page.watch.errors == [], "console errors"
    assert page.watch.external == [], "requests off the server"
