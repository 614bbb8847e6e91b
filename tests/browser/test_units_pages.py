"""The pages whose numbers are written by the formatting module, in Chromium at 1400 px and 1024 px:
durations, shares and counts in human units (no "Mean wait (s) 30317", no "Utilization 0.586"),
metric names in words, day 0's date, the Gantt window's message, the warning of runs over different
jobs; nothing wider than the window, no console error. Screenshots go to test-artifacts/."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.webapp.conftest import make_experiment, make_trace
from webapp.experiments.tasks import run_simulation
from webapp.studies import services as studies

from .conftest import ARTIFACTS
from .test_comparison_pages import WIDTHS, check_width_and_errors, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

#: a number written raw: four or more digits without a thousands separator
RAW_NUMBER = re.compile(r"(?<![\d,.#-])\d{4,}(?![\d,])")


@pytest.fixture
def pages(alice, media_root):  # noqa: ANN001, ANN201
    trace = make_trace(alice, name="demo")
    whole = make_experiment(alice, trace, ["fcfs", "easy"], name="whole demo")
    early = make_experiment(alice, trace, ["conservative"], name="early demo", days="0:0.05")
    study = studies.create_study(alice, name="demo study", trace=trace, policies=[{"preset": "fcfs"}],
                                 grid={"load": [1, 2]})
    for pk in study.experiment.runs.values_list("pk", flat=True):
        run_simulation(pk)
    return {"trace": trace, "whole": whole, "early": early, "study": study}


def shot(page, name: str, width: int) -> None:  # noqa: ANN001
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"units-{name}-{width}.png"), full_page=True)


def cells(page, selector: str) -> list[str]:  # noqa: ANN001
    return [text.strip() for text in page.locator(selector).all_inner_texts()]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_pages_write_numbers_for_people(browser, live_server, pages, width):  # noqa: ANN001
    context, page = open_page(browser, live_server, width)
    base = live_server.url
    try:
        page.goto(base + pages["whole"].get_absolute_url())
        page.wait_for_selector("#runs[data-finished='true']")
        headings = cells(page, "#runs thead th.num")
        assert headings == ["Jobs simulated", "Mean wait", "Mean bounded slowdown (τ = 10 s)", "Utilization"]
        for row in page.locator("#runs tbody tr").all():
            jobs, wait, bsld, utilization = [c.strip() for c in row.locator("td.metric-cell").all_inner_texts()]
            assert jobs == "28" and re.fullmatch(r"\d+(\.\d)? (s|min|h|days)", wait), wait
            assert re.fullmatch(r"\d+\.\d %", utilization), utilization
        check_width_and_errors(page, f"experiment page at {width}")
        shot(page, "experiment", width)

        page.goto(base + pages["trace"].get_absolute_url())
        summary = page.locator("dl.summary").inner_text()
        assert "Day 0\n2023-11-14 23:13 (Europe/Prague)" in summary
        # submits from 0 to 17,400 s (job 30, at 18,000 s, is too large for the machine)
        assert "Span\n4.8 h (first submit 2023-11-14 23:13 (Europe/Prague), last 2023-11-15 04:03)" in summary
        stats = page.locator("#job-stats").inner_text()
        assert "Runtime" in stats and "Runtime (s)" not in stats and " min" in stats
        assert not RAW_NUMBER.search(re.sub(r"\d{4}-\d\d-\d\d", "", summary)), summary
        check_width_and_errors(page, f"trace page at {width}")
        shot(page, "trace", width)

        page.goto(base + reverse("experiments:new") + f"?trace={pages['trace'].pk}")
        assert page.locator("#day-zero").inner_text() == \
            "Days count from the chosen trace's first submit: day 0 is 2023-11-14 23:13 (Europe/Prague)."
        check_width_and_errors(page, f"new experiment at {width}")

        page.goto(base + pages["study"].get_absolute_url())
        options = cells(page, "select[name=metric] option")
        assert "Size-weighted turnaround" in options and "Simulation time" in options
        assert not any("_" in option for option in options), options
        assert cells(page, "#points thead th[data-metric]") == ["Size-weighted turnaround", "Mean |skipping count|",
                                                               "Mean wait", "Utilization"]
        page.wait_for_selector(".bokeh-slot[data-bokeh-state='done']")
        check_width_and_errors(page, f"study page at {width}")
        shot(page, "study", width)

        comparison = reverse("dashboards:comparison", args=[pages["whole"].pk])
        page.goto(base + comparison + "?start=garbage")
        assert "“garbage” is not a time" in page.locator("#window-error").inner_text()
        page.wait_for_function("() => [...document.querySelectorAll('.bokeh-slot[data-bokeh-src]')].every("
                               "s => s.dataset.bokehState === 'done' || s.dataset.bokehState === 'waiting')")
        assert page.locator("#plot-gantt[data-bokeh-src]").count() == 1   # a window was asked for: drawn at once
        assert page.locator(".bokeh-status.error").count() == 0   # the plots draw the default window
        check_width_and_errors(page, f"comparison with a bad window at {width}")
        shot(page, "window-error", width)

        runs = [pages["early"].runs.get().pk, *pages["whole"].runs.values_list("pk", flat=True)]
        page.goto(base + reverse("dashboards:compare") + "?runs=" + ",".join(map(str, runs)))
        warning = page.locator("#job-sets").inner_text()
        assert warning.startswith("These runs do not simulate the same jobs (days 0:0.05 for “conservative” vs "
                                  "the whole trace for “fcfs”, “easy”")
        assert "compare the 12 jobs every run has" in warning
        check_width_and_errors(page, f"cross-experiment comparison at {width}")
        shot(page, "job-sets", width)
    finally:
        context.close()
