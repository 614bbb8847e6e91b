"""Dashboard views: permissions (another user's private objects are 404) and the JSON they return."""

from __future__ import annotations

import json
import re

import bokeh
import pytest
from django.urls import reverse

from webapp.dashboards.comparison import PLOTS
from webapp.experiments.models import Run

from ..conftest import make_experiment

pytestmark = pytest.mark.django_db


def plot_url(experiment, name: str, query: str = "") -> str:  # noqa: ANN001
    return reverse("dashboards:comparison_plot", args=[experiment.pk, name]) + query


# ---- permissions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("url_name", ["comparison", "comparison_download"])
def test_other_users_private_experiment_is_404(bob_client, done_experiment, url_name):
    assert bob_client.get(reverse(f"dashboards:{url_name}", args=[done_experiment.pk])).status_code == 404


@pytest.mark.parametrize("name", list(PLOTS))
def test_other_users_private_plots_are_404(bob_client, done_experiment, name):
    assert bob_client.get(plot_url(done_experiment, name)).status_code == 404


def test_other_users_private_trace_plots_are_404(bob_client, demo_trace):
    assert bob_client.get(reverse("dashboards:trace_plots", args=[demo_trace.pk])).status_code == 404


def test_shared_experiment_is_visible_to_others(bob_client, alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, shared=True)
    assert bob_client.get(reverse("dashboards:comparison", args=[experiment.pk])).status_code == 200
    assert bob_client.get(plot_url(experiment, "metrics")).status_code == 200


def test_staff_sees_private_experiments(staff_client, done_experiment):
    assert staff_client.get(plot_url(done_experiment, "cdf")).status_code == 200


def test_anonymous_is_sent_to_login(client, done_experiment):
    response = client.get(plot_url(done_experiment, "metrics"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


# ---- JSON shape ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in PLOTS if n != "sweep"])
def test_every_plot_is_a_json_item(alice_client, done_experiment, name):
    response = alice_client.get(plot_url(done_experiment, name))
    assert response.status_code == 200
    item = response.json()
    assert set(item) >= {"target_id", "root_id", "doc", "version"}
    assert item["target_id"] == f"plot-{name}"
    assert item["version"] == bokeh.__version__
    assert '"DataTable"' not in response.content.decode()    # the comparison page loads no bokeh-tables bundle


def test_unknown_plot_is_404(alice_client, done_experiment):
    assert alice_client.get(plot_url(done_experiment, "nope")).status_code == 404


def test_ratio_and_gantt_read_their_query_parameters(alice_client, done_experiment):
    labels = list(done_experiment.runs.order_by("position").values_list("label", flat=True))
    ratio = alice_client.get(plot_url(done_experiment, "ratio", f"?a={labels[1]}&b={labels[0]}")).content.decode()
    assert f"Wait ratio {labels[1]} / {labels[0]}" in ratio
    gantt = alice_client.get(plot_url(done_experiment, "gantt", "?start=0&end=3600")).content.decode()
    assert "between 2023-11-14 23:13 and 2023-11-15 00:13" in gantt   # the demo trace starts then, in Prague


def test_trace_plots_json(alice_client, demo_trace):
    response = alice_client.get(reverse("dashboards:trace_plots", args=[demo_trace.pk]))
    assert response.status_code == 200
    assert response.json()["target_id"] == "trace-plots"


def test_page_lists_every_plot_and_loads_bokeh_locally(alice_client, done_experiment):
    html = alice_client.get(reverse("dashboards:comparison", args=[done_experiment.pk])).content.decode()
    for name in PLOTS:
        assert (f'id="plot-{name}"' in html) == (name not in ("sweep", "deadlines", "metrics"))   # no deadline jobs here
    assert "/static/bokeh/js/bokeh.min.js\" defer" in html and "bokeh-gl" not in html   # no figure uses WebGL
    assert "bokeh-tables" not in html     # no plot of the page is a DataTable (test_every_plot_is_a_json_item)


def test_the_gantt_charts_and_the_job_diff_are_drawn_when_asked(alice_client, done_experiment):
    """They cost the browser as much as the rest of the page: a button each, their JSON not fetched before;
    drawn at once when the address chooses their window or pair (the reader asked for them)."""
    url = reverse("dashboards:comparison", args=[done_experiment.pk])
    html = alice_client.get(url).content.decode()
    prefetched = json.loads(html.split('<script id="bokeh-prefetch" type="application/json">')[1].split("</script>")[0])
    for name in ("gantt", "diff"):
        assert f'data-slot="plot-{name}"' in html                                     # its button
        assert re.search(f'id="plot-{name}" data-bokeh-on-demand="[^"]+/{name}.json"', html)
        assert not any(f"/{name}.json" in u for u in prefetched)
    assert any("/timelines.json" in u for u in prefetched) and 'id="plot-timelines" data-bokeh-src=' in html
    chosen = alice_client.get(url + "?start=0&end=3600").content.decode()
    assert 'id="plot-gantt" data-bokeh-src=' in chosen and 'data-slot="plot-diff"' in chosen
    assert html.index('id="section-metrics"') < html.index("bokeh.min.js")   # the tables are painted first
    assert "cdn.bokeh.org" not in html


def test_unfinished_runs_are_named_and_left_out(alice_client, alice, demo_trace):
    experiment = make_experiment(alice, demo_trace)
    run = experiment.runs.order_by("position").last()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED, error="boom: out of memory")
    metrics = alice_client.get(plot_url(experiment, "metrics")).content.decode()
    assert f"{run.label} failed (boom: out of memory)" in metrics


def test_experiment_without_finished_runs(alice_client, alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, run=False)
    response = alice_client.get(plot_url(experiment, "metrics"))
    assert response.status_code == 409 and "finished" in response.json()["error"]
    page = alice_client.get(reverse("dashboards:comparison", args=[experiment.pk])).content.decode()
    assert "No run has finished yet" in page


def test_download_is_self_contained_html(alice_client, done_experiment):
    response = alice_client.get(reverse("dashboards:comparison_download", args=[done_experiment.pk]))
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    html = response.content.decode()
    assert "<script src=" not in html  # BokehJS inline: opens offline
    assert "Bokeh.embed" in html and "Gantt" in html


def test_sweep_trend_for_a_sweep_experiment(alice_client, alice, demo_trace):
    experiment = make_experiment(alice, demo_trace, policies=("easy", "sorted-masc"),
                                 sweep_param="masc", sweep_values=[1, 5, "inf"])
    page = alice_client.get(reverse("dashboards:comparison", args=[experiment.pk])).content.decode()
    assert 'id="plot-sweep"' in page
    sweep = alice_client.get(plot_url(experiment, "sweep"))
    assert sweep.status_code == 200
    text = sweep.content.decode()
    assert "vs masc" in text
    assert "\\u221e" in text or "∞" in text
    assert "easy (not swept)" in text.lower()


def test_plots_are_cached_gzipped_and_rebuilt_after_a_rerun(alice_client, done_experiment, media_root):
    import gzip
    import json

    from django.utils import timezone

    url = plot_url(done_experiment, "cdf")
    first = alice_client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert first["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(first.content))["target_id"] == "plot-cdf"
    cached = list((media_root / "dashboards" / f"experiments/{done_experiment.pk}").glob("cdf-*.json.gz"))
    assert len(cached) == 1
    assert alice_client.get(url, HTTP_ACCEPT_ENCODING="gzip").content == first.content
    done_experiment.runs.filter(pk=done_experiment.runs.first().pk).update(finished_at=timezone.now())
    alice_client.get(url)
    assert len(list(cached[0].parent.glob("cdf-*.json.gz"))) == 2


def test_prebuild_fills_the_cache_for_every_default_plot(done_experiment, media_root):
    from webapp.dashboards.views import prebuild_comparison

    prebuild_comparison(done_experiment)
    folder = media_root / "dashboards" / f"experiments/{done_experiment.pk}"
    built = {p.name.split("-")[0] for p in folder.glob("*.json.gz")}
    assert built == {name for name in PLOTS if name not in ("sweep", "deadlines", "metrics")}   # metrics: HTML in the page


def test_the_last_run_of_an_experiment_prebuilds_its_plots_in_the_worker(alice, demo_trace, media_root):
    from webapp.experiments.tasks import run_simulation

    experiment = make_experiment(alice, demo_trace, run=False)
    folder = media_root / "dashboards" / f"experiments/{experiment.pk}"
    first, last = experiment.runs.order_by("position")
    run_simulation.apply(args=[first.pk])  # as a worker runs it (not a direct call)
    assert not folder.exists()             # one run still queued: nothing built yet
    run_simulation.apply(args=[last.pk])
    built = {p.name.split("-")[0] for p in folder.glob("*.json.gz")}
    assert built == {name for name in PLOTS if name not in ("sweep", "deadlines", "metrics")}   # metrics: HTML in the page


def test_a_failing_prebuild_never_fails_the_run(alice, demo_trace, monkeypatch, caplog):
    import webapp.dashboards.views
    from webapp.experiments.tasks import run_simulation

    def broken(experiment):  # noqa: ANN001
        raise RuntimeError("disk full")

    monkeypatch.setattr(webapp.dashboards.views, "prebuild_comparison", broken)
    experiment = make_experiment(alice, demo_trace, policies=("easy",), run=False)
    run = experiment.runs.get()
    run_simulation.apply(args=[run.pk])
    run.refresh_from_db()
    assert run.status == Run.Status.DONE and run.error == ""
    assert "building the comparison plots after run" in caplog.text
