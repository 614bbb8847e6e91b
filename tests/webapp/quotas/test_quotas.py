"""Per-user limits at their edges (runs per experiment, runs queued or running, disk), a Quota an admin
sets, and the usage page that shows them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.webapp.conftest import DEMO_SWF, make_experiment
from webapp.experiments.models import Experiment, Run
from webapp.quotas.models import Quota
from webapp.quotas.services import limits_of, usage_of
from webapp.traces.models import Trace

pytestmark = pytest.mark.django_db


def post_experiment(api, trace: Trace, policies: list, **extra):  # noqa: ANN001, ANN201
    return api.post("/api/experiments/", {"trace": trace.pk, "policies": policies, **extra},
                    content_type="application/json")


def test_a_post_of_2000_policies_is_refused_with_a_message_and_stores_nothing(api, demo_trace):
    response = post_experiment(api, demo_trace, [{"preset": "fcfs"}] * 2000)
    assert response.status_code == 400
    assert response.json()["error"].startswith("2000 runs: an experiment, sweep or study may have at most 200")
    assert Experiment.objects.count() == 0 and Run.objects.count() == 0


def test_runs_per_experiment_at_the_limit(api, demo_trace, settings):
    settings.SCHEDLAB_MAX_RUNS_PER_EXPERIMENT = 3
    assert post_experiment(api, demo_trace, [{"preset": "fcfs"}] * 3).status_code == 201
    refused = post_experiment(api, demo_trace, [{"preset": "fcfs"}] * 4)
    assert refused.status_code == 400 and "at most 3" in refused.json()["error"]
    # a sweep counts each value: 2 policies x 2 values = 4
    sweep = post_experiment(api, demo_trace, [{"preset": "sorted-masc"}, {"preset": "sorted-masc", "params": {}}],
                            sweep={"param": "masc", "values": [1, 5]})
    assert sweep.status_code == 400 and sweep.json()["error"].startswith("4 runs")
    assert Run.objects.count() == 3


def test_a_study_counts_every_point(alice, demo_trace, settings):
    from webapp.experiments.services import ExperimentError
    from webapp.studies.services import create_study

    settings.SCHEDLAB_MAX_RUNS_PER_EXPERIMENT = 8
    with pytest.raises(ExperimentError, match="^9 runs"):
        create_study(alice, name="", trace=demo_trace, policies=[{"preset": "fcfs"}], grid={"load": [0.5, 1, 2] * 3})
    assert create_study(alice, name="", trace=demo_trace, policies=[{"preset": "fcfs"}],
                        grid={"load": [0.5, 1, 2, 3, 4, 5, 6, 7]}).points.count() == 8


def test_runs_queued_or_running_at_the_limit(api, alice, demo_trace, settings):
    settings.SCHEDLAB_MAX_ACTIVE_RUNS = 5
    assert post_experiment(api, demo_trace, [{"preset": "fcfs"}] * 3).status_code == 201
    assert post_experiment(api, demo_trace, [{"preset": "easy"}] * 2).status_code == 201  # 5: exactly the limit
    refused = post_experiment(api, demo_trace, [{"preset": "easy"}])
    assert refused.status_code == 400
    assert refused.json()["error"] == ("1 more runs would make 6 queued or running: you may have at most 5 at once "
                                       "(5 now); wait for some to finish or cancel some")
    Run.objects.filter(pk=Run.objects.first().pk).update(status="done")
    assert post_experiment(api, demo_trace, [{"preset": "easy"}]).status_code == 201  # one finished: room again


def test_one_users_runs_do_not_count_against_another(api, bob, demo_trace, settings):
    settings.SCHEDLAB_MAX_ACTIVE_RUNS = 2
    make_experiment(bob, demo_trace, ["fcfs", "easy"], run=False, name="bob's")
    assert post_experiment(api, demo_trace, [{"preset": "fcfs"}] * 2).status_code == 201


def test_an_admin_quota_overrides_the_defaults_field_by_field(alice, settings, staff_client):
    settings.SCHEDLAB_MAX_ACTIVE_RUNS, settings.SCHEDLAB_MAX_RUNS_PER_EXPERIMENT = 7, 3
    settings.SCHEDLAB_DISK_QUOTA_BYTES = 1000
    response = staff_client.post(reverse("admin:quotas_quota_add"), {
        "user": alice.pk, "max_active_runs": "", "max_runs_per_experiment": "50", "disk_bytes": "123456"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Quota.objects.get(user=alice).max_runs_per_experiment == 50
    limits = limits_of(alice)
    assert (limits.max_active_runs, limits.max_runs_per_experiment, limits.disk_bytes) == (7, 50, 123456)
    listing = staff_client.get(reverse("admin:quotas_quota_changelist")).content.decode()
    assert "0/7 runs" in listing


def upload(client, name: str = "demo"):  # noqa: ANN001, ANN201
    return client.post(reverse("traces:upload"), {"name": name, "file": SimpleUploadedFile("demo.swf", DEMO_SWF.read_bytes())})


def test_disk_quota_at_the_limit(alice_client, alice, settings):
    size = DEMO_SWF.stat().st_size
    settings.SCHEDLAB_DISK_QUOTA_BYTES = size - 1
    refused = upload(alice_client)
    assert refused.status_code == 400 and "disk quota reached: you use 0\xa0bytes of" in refused.content.decode()
    assert Trace.objects.count() == 0 and not list(Path(settings.MEDIA_ROOT).rglob("*.swf"))
    assert not os.listdir(settings.FILE_UPLOAD_TEMP_DIR)  # the staged upload is gone too
    settings.SCHEDLAB_DISK_QUOTA_BYTES = size  # exactly fits
    assert upload(alice_client).status_code == 302
    assert usage_of(alice).disk["traces"] == size
    refused = upload(alice_client, "again")  # full: even the same content is refused
    assert refused.status_code == 400 and Trace.objects.count() == 1


def test_a_full_disk_quota_refuses_new_runs_too(api, alice, demo_trace, settings):
    settings.SCHEDLAB_DISK_QUOTA_BYTES = usage_of(alice).disk_bytes
    refused = post_experiment(api, demo_trace, [{"preset": "fcfs"}])
    assert refused.status_code == 400 and refused.json()["error"].startswith("disk quota reached")


def files_under(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def test_usage_counts_traces_caches_and_results(alice, bob, demo_trace, settings):
    media = Path(settings.MEDIA_ROOT)
    experiment = make_experiment(alice, demo_trace, ["fcfs", "easy"])  # run here: results written
    usage = usage_of(alice)
    expected_traces = files_under(media / "traces")  # the upload and its parsed cache(s), all alice's
    assert usage.disk["traces"] == expected_traces > DEMO_SWF.stat().st_size
    assert usage.disk["results"] == files_under(media / "runs") > 0
    assert usage.disk == {"traces": expected_traces, "results": files_under(media / "runs"), "previews": 0,
                          "plots": files_under(media / "dashboards")}
    assert (usage.queued_runs, usage.running_runs) == (0, 0)
    assert usage_of(bob).disk_bytes == 0
    assert experiment.runs.count() == 2


def test_the_usage_page_shows_ones_own_runs_disk_and_limits(alice_client, bob_client, alice, demo_trace, settings):
    settings.SCHEDLAB_MAX_ACTIVE_RUNS = 40
    make_experiment(alice, demo_trace, ["fcfs", "easy", "conservative"], run=False)
    page = alice_client.get(reverse("quotas:usage"))
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-field="queued">3<' in text and "3 of 40" in text
    data = alice_client.get(reverse("quotas:usage") + "?format=json").json()
    assert data["runs"] == {"queued": 3, "running": 0, "active": 3, "max_active": 40, "max_per_experiment": 200}
    assert data["disk"]["total"] == usage_of(alice).disk_bytes > 0 and data["disk"]["quota"] == 10 * 1024**3
    other = bob_client.get(reverse("quotas:usage") + "?format=json").json()
    assert other["runs"]["queued"] == 0 and other["disk"]["total"] == 0
    assert 'href="/usage/"' in text  # in the top bar of every page


def test_a_script_reads_its_usage_with_its_token(api, alice, demo_trace):
    make_experiment(alice, demo_trace, ["fcfs", "easy"], run=False)
    data = api.get("/api/usage/").json()
    assert data["runs"]["queued"] == 2 and data["disk"]["traces"] == usage_of(alice).disk["traces"] > 0
    assert data["server"]["simulation_slots"] >= 1
