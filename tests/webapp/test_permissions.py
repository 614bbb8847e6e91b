"""Every URL checks permissions: nobody sees, downloads, changes, re-runs or deletes another
user's private object (404, never 403, so ids leak nothing), through pages and the API alike.

The URL list is read from the URLconf: a new URL pattern that is not described in URLS below
fails `test_every_url_is_covered`, so nobody can add a page and forget its permission test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.webapp.conftest import compute, login, make_experiment, make_trace
from webapp.allocations.models import AllocationSet
from webapp.accounts.models import Token
from webapp.experiments.models import Experiment, Run
from webapp.studies.models import Study, StudyPoint
from webapp.traces.models import Machine, Trace

# name → (object kind or None, HTTP method, "view" | "change" | "public"[, other URL arguments])
URLS: dict[str, tuple] = {
    "home": (None, "GET", "view"),
    "login": (None, "GET", "public"),
    "logout": (None, "POST", "public"),
    "traces:list": (None, "GET", "view"),
    "traces:upload": (None, "GET", "view"),
    "traces:detail": ("trace", "GET", "view"),
    "traces:status": ("trace", "GET", "view"),
    "traces:download": ("trace", "GET", "view"),
    "traces:download_swf": ("trace", "GET", "view", {"kind": "swf"}),
    "traces:edit": ("trace", "GET", "change"),
    "traces:delete": ("trace", "POST", "change"),
    "traces:parse_again": ("trace", "POST", "change"),
    "traces:machine_new": (None, "GET", "view"),
    "traces:machine_delete": ("machine", "POST", "change"),
    "experiments:list": (None, "GET", "view"),
    "experiments:new": (None, "GET", "view"),
    "experiments:formula_check": (None, "GET", "view"),   # a formula checked as it is typed: no object
    "experiments:reproduce": (None, "GET", "view"),
    "experiments:detail": ("experiment", "GET", "view"),
    "experiments:progress": ("experiment", "GET", "view"),
    "experiments:metrics_csv": ("experiment", "GET", "view"),
    "experiments:edit": ("experiment", "GET", "change"),
    "experiments:cancel": ("experiment", "POST", "change"),
    "experiments:delete": ("experiment", "POST", "change"),
    "experiments:run_cancel": ("run", "POST", "change"),
    "experiments:run_rerun": ("run", "POST", "change"),
    "experiments:run_schedule_csv": ("run", "GET", "view"),
    "experiments:replicates_retry": ("replicated", "POST", "change"),
    "api:experiment_replicates": ("replicated", "GET", "view"),
    "dashboards:forest": ("replicated", "GET", "view"),
    "api:token": (None, "POST", "public"),
    # The accounts app (webapp.accounts): one's own API tokens.
    "accounts:tokens": (None, "GET", "view"),
    "accounts:tokens_new": (None, "GET", "view"),
    "accounts:token_create": (None, "POST", "view"),
    "accounts:token_revoke": ("token", "POST", "change"),
    "accounts:password_change": (None, "GET", "view"),
    # One's own usage and limits (webapp.quotas).
    "quotas:usage": (None, "GET", "view"),
    "api:usage": (None, "GET", "view"),
    "api:traces": (None, "GET", "view"),
    "api:trace": ("trace", "GET", "view"),
    "api:experiments": (None, "GET", "view"),
    "api:experiment": ("experiment", "GET", "view"),
    "api:run_schedule_csv": ("run", "GET", "view"),
    "api:studies": (None, "GET", "view"),
    "api:study": ("study", "GET", "view"),
    "api:study_csv": ("study", "GET", "view"),
    # The dashboards app (webapp.dashboards): pages about one trace or one experiment.
    "dashboards:trace_plots": ("trace", "GET", "view"),
    "dashboards:comparison": ("experiment", "GET", "view"),
    "dashboards:comparison_plot": ("experiment", "GET", "view", {"name": "metrics"}),
    "dashboards:comparison_download": ("experiment", "GET", "view"),
    # Runs of any experiments, named in ?runs= (their permissions: tests/webapp/dashboards).
    "dashboards:compare": (None, "GET", "view"),
    "dashboards:compare_plot": (None, "GET", "view", {"name": "metrics"}),
    "dashboards:compare_download": (None, "GET", "view"),
    # The allocations app (webapp.allocations): allocations files, owned and shared like traces.
    "allocations:list": (None, "GET", "view"),
    "allocations:new": (None, "GET", "view"),
    "allocations:scenario": (None, "GET", "view"),
    "allocations:detail": ("allocations", "GET", "view"),
    "allocations:download": ("allocations", "GET", "view"),
    "allocations:edit": ("allocations", "GET", "change"),
    "allocations:delete": ("allocations", "POST", "change"),
    # The studies app (webapp.studies): grids of runs; a study is seen and changed through its experiment.
    "studies:list": (None, "GET", "view"),
    "studies:new": (None, "GET", "view"),
    "studies:preset": (None, "POST", "view"),
    "studies:detail": ("study", "GET", "view"),
    "studies:progress": ("study", "GET", "view"),
    "studies:plot": ("study", "GET", "view"),
    "studies:csv": ("study", "GET", "view"),
    "studies:rerun_failed": ("study", "POST", "change"),
    "studies:point_rerun": ("run", "POST", "change"),
    # The preview app (webapp.preview): machine descriptions, queue configurations, previews.
    "preview:index": (None, "GET", "view"),
    "preview:new": (None, "GET", "view"),
    "preview:detail": ("preview", "GET", "view"),
    "preview:delete": ("preview", "POST", "change"),
    "preview:propose": ("preview", "POST", "change"),
    "preview:download": ("preview", "GET", "view"),
    "preview:tables_csv": ("preview", "GET", "view"),
    "preview:site_new": (None, "GET", "view"),
    "preview:site_detail": ("site_preview", "GET", "view"),
    "preview:site_propose": ("site_preview", "POST", "change"),
    "preview:site_delete": ("site_preview", "POST", "change"),
    "preview:site_sweep": ("site_preview", "POST", "change"),
    "preview:site_download": ("site_preview", "GET", "view"),
    "preview:site_tables_csv": ("site_preview", "GET", "view"),
    "preview:site_jobs_csv": ("site_preview", "GET", "view"),
    "preview:site_calibrate": ("site_preview", "POST", "change"),
    "preview:site_calibration_progress": ("site_preview", "GET", "view"),
    "preview:site_calibration_apply": ("site_preview", "POST", "change"),
    "preview:site_calibration_cancel": ("site_preview", "POST", "change"),
    "experiments:run_rejected_csv": ("run", "GET", "view"),
    "preview:machine_new": (None, "GET", "view"),
    "preview:machine_detail": ("machine_file", "GET", "view"),
    "preview:machine_edit": ("machine_file", "GET", "change"),
    "preview:machine_delete": ("machine_file", "POST", "change"),
    "preview:queues_new": (None, "GET", "view"),
    "preview:queues_detail": ("queue_file", "GET", "view"),
    "preview:queues_edit": ("queue_file", "GET", "change"),
    "preview:queues_delete": ("queue_file", "POST", "change"),
    "preview:edit_inferred": ("preview", "POST", "change", {"kind": "queues"}),
}


ALLOCATIONS = "allocation,members,award,period_days,target_factor,target\nalice,user:1,,,,8\n"


def url_names() -> list[str]:
    """Every named URL pattern except Django admin's own (covered by test_admin_is_staff_only)."""
    names: list[str] = []

    def walk(patterns, prefix: str) -> None:  # noqa: ANN001
        for p in patterns:
            if isinstance(p, URLResolver):
                if p.namespace == "admin":
                    continue
                walk(p.url_patterns, prefix + (p.namespace + ":" if p.namespace else ""))
            elif isinstance(p, URLPattern) and p.name:
                names.append(prefix + p.name)

    walk(get_resolver().url_patterns, "")
    return names


def test_every_url_is_covered():
    missing = [n for n in url_names() if n not in URLS]
    assert not missing, f"describe these URLs in URLS of {__file__}: {missing}"


@pytest.fixture
def objects(alice, bob, demo_trace):
    """Alice's private trace, machine, experiment (finished runs) and run."""
    machine = Machine.objects.create(owner=alice, name="alice's machine", procs=16)
    experiment = make_experiment(alice, demo_trace, ["fcfs"])
    study = Study.objects.create(experiment=experiment, grid={"load": [1.0]}, policies=[{"preset": "fcfs"}])
    StudyPoint.objects.create(study=study, run=experiment.runs.get(), policy_label="fcfs", coords={"load": 1.0})
    return {"trace": demo_trace, "machine": machine, "experiment": experiment, "run": experiment.runs.get(),
            "allocations": AllocationSet.objects.create(owner=alice, name="alice's allocations", text=ALLOCATIONS),
            "study": study, "token": Token.objects.get(pk=Token.create_for(alice, "alice's token")[1].pk),
            "replicated": replicated_experiment(alice, demo_trace), **preview_objects(alice, demo_trace)}


def replicated_experiment(alice, trace):  # noqa: ANN001, ANN201
    """Alice's experiment with a (finished) replicate set: its report, the API's and the forest plot's."""
    from webapp.experiments.models import ReplicateSet

    def experiment(name: str) -> Experiment:
        return Experiment.objects.create(owner=alice, name=name, trace=trace, procs=16)

    report = {"sets": [{"name": "weeks", "description": "2 weekly windows"}], "pairs": []}
    return ReplicateSet.objects.create(experiment=experiment("alice's replicated"), runs_experiment=experiment("hidden"),
                                       spec="weeks", plan={"runs": []}, report=report).experiment


def preview_objects(alice, trace):  # noqa: ANN001, ANN201
    """Alice's machine description, queue configuration and a (queued) preview using them."""
    from tests.webapp.conftest import ONE_CLUSTER, ONE_QUEUE, make_preview
    from webapp.preview.models import MachineFile, Preview, QueueFile
    from webapp.preview.sites import create_site_preview

    preview = make_preview(alice, trace, name="alice's preview")
    Preview.objects.filter(pk=preview.pk).update(current_name="inferred from the trace")
    slurm = Path(__file__).resolve().parents[1] / "data" / "slurm_replay"
    site = create_site_preview(alice, name="alice's site", trace=trace, kind="slurm",
                               texts={"slurm.conf": (slurm / "slurm.conf").read_text()})
    return {"machine_file": MachineFile.objects.create(owner=alice, name="alice's machine file", text=ONE_CLUSTER),
            "queue_file": QueueFile.objects.create(owner=alice, name="alice's queues", text=ONE_QUEUE),
            "preview": Preview.objects.get(pk=preview.pk), "site_preview": site}


def url_for(name: str, objects: dict) -> str:  # noqa: ANN001
    kind, extra = URLS[name][0], (URLS[name][3] if len(URLS[name]) > 3 else {})
    return reverse(name, kwargs={**({"pk": objects[kind].pk} if kind else {}), **extra})


def request(client, name: str, url: str, user=None):  # noqa: ANN001, ANN201
    method = URLS[name][1]
    headers = {}
    if name.startswith("api:") and user is not None:
        headers["HTTP_AUTHORIZATION"] = f"Token {Token.issue(user)}"
    return client.get(url, **headers) if method == "GET" else client.post(url, **headers)


def still_there(objects: dict) -> bool:  # noqa: ANN001
    return (Trace.objects.filter(pk=objects["trace"].pk).exists()
            and Machine.objects.filter(pk=objects["machine"].pk).exists()
            and Experiment.objects.filter(pk=objects["experiment"].pk).exists()
            and AllocationSet.objects.filter(pk=objects["allocations"].pk).exists()
            and all(type(objects[k]).objects.filter(pk=objects[k].pk).exists()
                    for k in ("machine_file", "queue_file", "preview", "site_preview"))
            and Token.objects.filter(pk=objects["token"].pk).exists()
            and Run.objects.get(pk=objects["run"].pk).status == "done")


#: posts of a form, which answer an empty post with its errors
FORM_POSTS = ("preview:propose", "preview:site_propose", "preview:site_sweep")
#: what a preview shows only once it is done (409 before)
DONE_PREVIEW_URLS = ("preview:download", "preview:tables_csv", "preview:site_download", "preview:site_tables_csv",
                     "preview:site_jobs_csv")


def share(obj) -> None:  # noqa: ANN001
    """Mark ``obj`` shared: a preview through its experiment (SHARED_FIELD names the path)."""
    target = obj.experiment if hasattr(type(obj), "SHARED_FIELD") and type(obj).SHARED_FIELD.startswith("experiment__") \
        else obj
    type(target).objects.filter(pk=target.pk).update(shared=True)


OBJECT_URLS = sorted(n for n, (kind, *_) in URLS.items() if kind and n in set(url_names()))
CHANGE_URLS = sorted(n for n in OBJECT_URLS if URLS[n][2] == "change")
PRIVATE_URLS = sorted(n for n, (_, _, access, *_) in URLS.items() if access != "public" and n in set(url_names()))


@pytest.mark.django_db
@pytest.mark.parametrize("name", OBJECT_URLS)
def test_another_users_private_object_is_not_found(name, objects, bob):
    response = request(login(bob), name, url_for(name, objects), bob)
    assert response.status_code == 404, f"{name}: {response.status_code}"
    assert still_there(objects)


@pytest.mark.django_db
@pytest.mark.parametrize("name", CHANGE_URLS)
def test_a_shared_object_is_still_changed_only_by_its_owner(name, objects, bob):
    for kind in ("trace", "machine", "experiment", "allocations", "machine_file", "queue_file", "preview", "replicated",
                 "site_preview"):
        share(objects[kind])
    response = request(login(bob), name, url_for(name, objects), bob)
    assert response.status_code == 404, f"{name}: {response.status_code}"
    assert still_there(objects)


@pytest.mark.django_db
@pytest.mark.parametrize("name", [n for n in OBJECT_URLS if URLS[n][2] == "view"])
def test_a_shared_object_is_visible_to_others(name, objects, bob):
    for kind in ("trace", "experiment", "allocations", "machine_file", "queue_file", "preview", "replicated",
                 "site_preview"):
        share(objects[kind])
    if name in DONE_PREVIEW_URLS:
        compute(objects[URLS[name][0]])
    response = request(login(bob), name, url_for(name, objects), bob)
    assert response.status_code == 200, f"{name}: {response.status_code}"


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["alice", "staff"])
@pytest.mark.parametrize("name", OBJECT_URLS)
def test_the_owner_and_staff_get_through(name, role, objects, request_user):
    user = request_user(role)
    if name in DONE_PREVIEW_URLS:
        compute(objects[URLS[name][0]])
    response = request(login(user), name, url_for(name, objects), user)
    through = (200, 302, 400) if name in FORM_POSTS else (200, 302)   # 400: the form's answer to an empty post
    assert response.status_code in through, f"{name} as {role}: {response.status_code}"


@pytest.fixture
def request_user(request):  # noqa: ANN001, ANN201
    return lambda role: request.getfixturevalue(role)


@pytest.mark.django_db
@pytest.mark.parametrize("name", PRIVATE_URLS)
def test_anonymous_users_are_sent_to_log_in(name, objects, client):
    response = request(client, name, url_for(name, objects))
    if name.startswith("api:"):
        assert response.status_code == 401 and "error" in response.json()
    else:
        assert response.status_code == 302 and response.url.startswith(reverse("login"))


@pytest.mark.django_db
def test_lists_show_only_what_a_user_may_see(alice, bob, objects):
    bobs = make_trace(bob, name="bob's trace")
    page = login(alice).get(reverse("traces:list")).content.decode()
    assert "bob&#x27;s trace" not in page and objects["trace"].name in page
    api = login(bob).get(reverse("api:traces"), HTTP_AUTHORIZATION=f"Token {Token.issue(bob)}").json()
    assert [t["id"] for t in api["traces"]] == [bobs.pk]


@pytest.mark.django_db
def test_admin_is_staff_only(alice, staff):
    assert login(alice).get("/admin/").status_code == 302
    assert login(staff).get("/admin/").status_code == 200
