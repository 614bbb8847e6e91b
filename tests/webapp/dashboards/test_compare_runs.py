"""Runs of several experiments on one trace, compared on one page: /dashboards/compare/?runs=ID,ID.

The same permission rules as everywhere: another user's private run is a 404, a shared one is fine.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from webapp.experiments.models import Run

from ..conftest import make_experiment, make_trace

pytestmark = pytest.mark.django_db


def compare_url(*runs: Run, name: str = "compare", extra: str = "") -> str:
    return reverse(f"dashboards:{name}") + "?runs=" + ",".join(str(r.pk) for r in runs) + extra


@pytest.fixture
def two_experiments(alice, demo_trace):  # noqa: ANN001, ANN201
    first = make_experiment(alice, demo_trace, ["fcfs", "easy"], name="first")
    second = make_experiment(alice, demo_trace, ["conservative", "sjf", "sorted"], name="second")
    return first, second


def test_runs_of_two_experiments_share_one_page_with_every_run_named(alice_client, two_experiments):
    runs = list(Run.objects.order_by("pk"))
    page = alice_client.get(compare_url(*runs)).content.decode()
    title = page[page.index("<h1"):page.index("</h1>")]
    legend = page[page.index('id="run-legend"'):page.index("</ul>", page.index('id="run-legend"'))]
    for run in runs:
        assert escape(run.label) in title and escape(run.label) in legend
    assert "first" in page and "second" in page
    assert page.count("data-bokeh-src=") + page.count("data-bokeh-on-demand=") >= 6   # gantt, diff: on demand


def test_the_metrics_table_compares_with_the_chosen_baseline(alice_client, two_experiments):
    runs = list(Run.objects.order_by("pk"))
    page = alice_client.get(compare_url(*runs, extra="&baseline=sjf")).content.decode()
    table = page[page.index("metrics-table"):page.index("</table>")]
    assert "Mean wait (" in table and "Utilization (%)" in table
    sjf = table.index("data-run='sjf'")
    assert "baseline" in table[sjf:table.index("</th>", sjf)]
    assert "class='delta better'" in table or "class='delta worse'" in table


def test_the_plots_of_the_picked_runs_are_json_items(alice_client, two_experiments):
    runs = list(Run.objects.order_by("pk"))[1:4]
    response = alice_client.get(reverse("dashboards:compare_plot", args=["cdf"]) + "?runs="
                                + ",".join(str(r.pk) for r in runs))
    assert response.status_code == 200
    text = response.content.decode()
    assert response.json()["target_id"] == "plot-cdf"
    assert all(run.label in text for run in runs)


def test_another_users_private_run_is_404(alice, bob_client, demo_trace):
    private = make_experiment(alice, demo_trace, ["fcfs"], name="alice's").runs.get()
    assert bob_client.get(compare_url(private)).status_code == 404
    assert bob_client.get(reverse("dashboards:compare_plot", args=["cdf"]) + f"?runs={private.pk}").status_code == 404
    assert bob_client.get(reverse("dashboards:compare_download") + f"?runs={private.pk}").status_code == 404


def test_a_private_run_among_visible_ones_is_still_404(bob, bob_client, alice, demo_trace):
    shared = make_experiment(alice, demo_trace, ["fcfs"], name="shared", shared=True).runs.get()
    private = make_experiment(alice, demo_trace, ["easy"], name="private").runs.get()
    assert bob_client.get(compare_url(shared)).status_code == 200
    assert bob_client.get(compare_url(shared, private)).status_code == 404


def test_runs_on_different_traces_are_refused(alice, alice_client, demo_trace, tmp_path):
    from tests.webapp.conftest import synthetic_swf

    other = make_trace(alice, synthetic_swf(tmp_path / "other.swf", jobs=50), name="other")
    a = make_experiment(alice, demo_trace, ["fcfs"]).runs.get()
    b = make_experiment(alice, other, ["fcfs"]).runs.get()
    response = alice_client.get(compare_url(a, b))
    assert response.status_code == 400 and b"different traces" in response.content


@pytest.mark.parametrize("query", ["", "?runs=", "?runs=1,x"])
def test_a_request_without_runs_says_what_is_expected(alice_client, query):
    response = alice_client.get(reverse("dashboards:compare") + query)
    assert response.status_code == 400 and (b"runs=ID,ID" in response.content or b"run number" in response.content)


def test_anonymous_is_sent_to_login(client, two_experiments):
    response = client.get(compare_url(Run.objects.first()))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_download_keeps_every_run_and_the_metrics_table(alice_client, two_experiments):
    runs = list(Run.objects.order_by("pk"))
    response = alice_client.get(compare_url(*runs, name="compare_download"))
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    html = response.content.decode()
    assert "metrics-table" in html and "Two runs side by side" in html
    for run in runs:
        assert run.label in html


def test_the_experiment_page_offers_other_visible_runs_on_its_trace(alice, bob, alice_client, demo_trace):
    mine = make_experiment(alice, demo_trace, ["fcfs"], name="mine")
    other = make_experiment(alice, demo_trace, ["easy"], name="other").runs.get()
    shared = make_experiment(bob, demo_trace, ["sjf"], name="bob shared", shared=True).runs.get()
    private = make_experiment(bob, demo_trace, ["sorted"], name="bob private").runs.get()
    page = alice_client.get(mine.get_absolute_url()).content.decode()
    picker = page[page.index('id="compare-with"'):page.index("</details>")]
    assert reverse("dashboards:compare") in picker
    assert f'value="{mine.runs.get().pk}" checked' in picker
    assert f'value="{other.pk}"' in picker and f'value="{shared.pk}"' in picker
    assert f'value="{private.pk}"' not in picker
