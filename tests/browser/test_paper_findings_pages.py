"""A reproduce-a-paper experiment's result page in Chromium at 1400 and 1024 px: the paper's claims beside
our runs (a verdict for each), the sweep plot with EASY and conservative per share, no plot squeezed by the
layout around it, and no category label of any plot (policy names, users, swept values, bins) overlapping
another text.

Bokeh draws on canvases, so the texts are caught where they are drawn: every fillText is recorded with the
canvas's transform (translation and rotation) and the text's measured box, from one fresh paint of every
plot once the page is still. Two texts of one canvas whose boxes (rotated as drawn) intersect overlap.
Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_experiment

from .conftest import ARTIFACTS
from .test_comparison_flow import render_every_plot
from .test_comparison_pages import check_width_and_errors, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDTHS = (1400, 1024)

#: Installed before any page script: records each canvas text's corners as drawn.
RECORD_TEXTS = """(() => {
    const records = new Map();
    let next = 0;
    const ids = new WeakMap();
    const id = (canvas) => { if (!ids.has(canvas)) ids.set(canvas, next++); return ids.get(canvas); };
    const proto = CanvasRenderingContext2D.prototype;
    const fillText = proto.fillText;
    proto.fillText = function (text, x, y) {
        const m = this.measureText(text), t = this.getTransform();
        const left = x - m.actualBoundingBoxLeft, right = x + m.actualBoundingBoxRight;
        const top = y - m.actualBoundingBoxAscent, bottom = y + m.actualBoundingBoxDescent;
        const corners = [[left, top], [right, top], [right, bottom], [left, bottom]]
            .map(([px, py]) => [t.a * px + t.c * py + t.e, t.b * px + t.d * py + t.f]);
        const key = id(this.canvas);
        if (!records.has(key)) records.set(key, []);
        if (String(text).trim()) records.get(key).push({text: String(text), corners});
        return fillText.apply(this, arguments);
    };
    window.__resetTexts = () => records.clear();
    window.__canvasTexts = () => [...records.entries()];
    window.__canvasId = id;
})();"""

#: Every plot painted afresh once the page is still (its texts recorded from nothing), then the pairs of
#: texts on one canvas, one of them a category label (a factor of a FactorRange), whose drawn boxes
#: intersect by more than a pixel (separating axis test); a text painted twice in the same place counts once.
OVERLAPS = """async () => {
    window.__resetTexts();
    // each plot's category labels (the factors of its ranges, at any level, and shortened ones), by canvas
    const factors = new Map();
    const flat = (f, into) => Array.isArray(f) ? f.forEach(g => flat(g, into)) : into.add(String(f));
    const visit = (view) => {
        if (typeof view.request_paint === 'function' && view.frame != null) {
            const own = new Set();
            for (const range of [view.model.x_range, view.model.y_range])
                if (range && range.constructor.__name__ === 'FactorRange') flat(range.factors, own);
            for (const axis of [...view.model.below, ...view.model.left, ...view.model.above, ...view.model.right])
                if (axis.constructor.__name__ === 'CategoricalAxis') flat(Object.values(axis.major_label_overrides || {}), own);
            factors.set(window.__canvasId(view.canvas_view.primary.canvas), own);
            view.request_paint();
        }
        for (const child of (view.child_views || [])) visit(child);
    };
    for (const root of Bokeh.index) visit(root);
    await new Promise(resolve => setTimeout(resolve, 1500));
    const axes = (c) => [0, 1].map(i => { const [x1, y1] = c[i], [x2, y2] = c[i + 1];
        const len = Math.hypot(x2 - x1, y2 - y1) || 1; return [(x2 - x1) / len, (y2 - y1) / len]; });
    const project = (c, [ax, ay]) => { const p = c.map(([x, y]) => x * ax + y * ay);
        return [Math.min(...p), Math.max(...p)]; };
    const apart = (a, b) => [...axes(a), ...axes(b)].some(axis => {
        const [a0, a1] = project(a, axis), [b0, b1] = project(b, axis);
        return a1 - 1 <= b0 || b1 - 1 <= a0; });
    const found = [];
    let count = 0, labels = 0;
    for (const [canvas, drawn] of window.__canvasTexts()) {
        const own = factors.get(canvas) || new Set();
        const category = (t) => own.has(t.text);
        const seen = new Set(), texts = [];
        for (const t of drawn) {
            const key = t.text + JSON.stringify(t.corners.map(([x, y]) => [Math.round(x), Math.round(y)]));
            if (!seen.has(key)) { seen.add(key); texts.push(t); }
        }
        count += texts.length;
        labels += texts.filter(category).length;
        for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
            if ((category(texts[i]) || category(texts[j])) && !apart(texts[i].corners, texts[j].corners))
                found.push(texts[i].text + ' / ' + texts[j].text);
        }
    }
    return {texts: count, labels, overlaps: found.slice(0, 60)};
}"""


#: Every plot's drawn width (its canvas), with its title: none may be squeezed by the layout around it.
PLOT_WIDTHS = """() => {
    const found = [];
    const visit = (view) => {
        if (typeof view.request_paint === 'function' && view.frame != null)
            found.push([view.model.title ? view.model.title.text : '', view.canvas_view.primary.canvas.getBoundingClientRect().width]);
        for (const child of (view.child_views || [])) visit(child);
    };
    for (const root of Bokeh.index) visit(root);
    return found;
}"""


@pytest.fixture
def dbf_preset(alice, media_root):  # noqa: ANN001, ANN201
    """The DBF preset's experiment (EASY and conservative once, DBF at four shares), run here."""
    from tests.webapp.conftest import make_trace

    trace = make_trace(alice, name="demo")
    return make_experiment(alice, trace, ("easy", "conservative", "dbf"), sweep_param="deadline_fraction",
                           sweep_values=[0.2, 0.4, 0.6, 0.8], paper="dbf", name="DBF preset")


def check_the_download(page, live_server, tmp_path) -> None:  # noqa: ANN001
    """The self-contained HTML file: the paper's claims, no plot squeezed, no category label over a text."""
    download = page.request.get(live_server.url + page.get_attribute("#download-html", "href"))
    assert download.ok
    path = tmp_path / "comparison.html"
    path.write_bytes(download.body())
    page.goto(path.as_uri())
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents.every(d => d.is_idle)")
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "paper-findings-download.png"), full_page=True)
    assert "Against the paper" in page.content() or page.locator("text=Against the paper").count() > 0
    squeezed = [(title, w) for title, w in page.evaluate(PLOT_WIDTHS) if w < 300]
    assert squeezed == [], f"download: plots squeezed: {squeezed}"
    assert page.evaluate(OVERLAPS)["overlaps"] == []
    page.watch.external.clear()                               # file:// is not the server: expected here


def test_the_paper_beside_our_runs_and_no_text_over_another(browser, live_server, dbf_preset, tmp_path):  # noqa: ANN001
    ARTIFACTS.mkdir(exist_ok=True)
    for width in WIDTHS:
        context, page = open_page(browser, live_server, width)
        try:
            page.add_init_script(RECORD_TEXTS)
            page.goto(live_server.url + reverse("dashboards:comparison", args=[dbf_preset.pk]))
            findings = page.locator("#paper-findings")
            assert findings.is_visible()
            statuses = page.locator("#paper-findings tr.claim").evaluate_all("rows => rows.map(r => r.dataset.status)")
            assert len(statuses) == 4 and set(statuses) <= {"agree", "partly", "disagree"}, statuses
            assert "(Fig. 2)" in findings.inner_text() and "at deadline_fraction 0.8" in findings.inner_text()
            box = findings.bounding_box()
            assert box is not None and box["x"] + box["width"] <= width
            render_every_plot(page)
            page.wait_for_timeout(500)   # the last resize's redraw
            page.screenshot(path=str(ARTIFACTS / f"paper-findings-{width}.png"), full_page=True)
            drawn = page.evaluate(OVERLAPS)
            assert drawn["texts"] > 50 and drawn["labels"] > 20, drawn
            assert drawn["overlaps"] == [], f"{width} px: {drawn['overlaps']}"
            legend = page.evaluate("() => Bokeh.documents.flatMap(d => [...d.all_models]).filter(m => "
                                   "m.constructor.__name__ === 'LegendItem').map(m => m.label && m.label.value)")
            assert "easy (run once, per deadline_fraction)" in legend
            widths = page.evaluate(PLOT_WIDTHS)
            squeezed = [(title, w) for title, w in widths if w < 300]
            # every plot found (19 figures since runs share figures as panels: Gantt, heat maps, timelines)
            assert len(widths) >= 15 and squeezed == [], f"{width} px: plots squeezed: {squeezed}"
            check_width_and_errors(page, f"DBF preset at {width} px")
            if width == WIDTHS[0]:
                check_the_download(page, live_server, tmp_path)
        finally:
            context.close()
