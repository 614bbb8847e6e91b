"""The admin's preview: upload a MetaCentrum trace, a machine description and queue configurations
(line-level errors), then preview current vs proposed side by side."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.webapp.conftest import login, make_trace
from django.template.loader import render_to_string

from tests.webapp.conftest import compute, make_preview
from webapp.experiments.models import Experiment
from webapp.preview.models import MachineFile, Preview, QueueFile
from webapp.traces.models import Trace
from tests.shared_data import SHARED_DATA

pytestmark = pytest.mark.django_db
DATA = (SHARED_DATA / "metacentrum/alea")
WAGAP_MACHINES = (DATA / "wagap-2013.swf.machines").read_text()


@pytest.fixture
def wagap_head(tmp_path) -> Path:
    """The first 400 jobs of the real wagap-2013 trace (extended SWF, bytes, absolute epochs)."""
    path = tmp_path / "wagap-head.txt"
    path.write_text("".join((DATA / "wagap-2013.swf").read_text().splitlines(keepends=True)[:400]))
    return path


def test_a_metacentrum_trace_uploads_and_parses(alice, media_root, wagap_head):
    client = login(alice)
    response = client.post(reverse("traces:upload"), {"name": "wagap", "description": "",
                                                      "file": SimpleUploadedFile("wagap.txt", wagap_head.read_bytes())})
    trace = Trace.objects.get()
    assert response.status_code == 302, response.content.decode()[:500]
    from webapp.traces.tasks import parse_trace

    parse_trace(trace.pk)
    trace.refresh_from_db()
    assert trace.status == "ready", trace.error
    assert trace.summary["metadata"]["format"] == "metacentrum"
    assert trace.format == "metacentrum"
    assert client.get(trace.get_absolute_url()).status_code == 200
    assert client.get(reverse("dashboards:trace_plots", args=[trace.pk])).status_code == 200
    # the page names the clusters the jobs ran on (not the largest job as the "machine size")
    from engine.api import clusters_seen, read_trace
    seen = clusters_seen(read_trace(wagap_head))
    assert [c["name"] for c in seen["clusters"]] == [c["name"] for c in trace.summary["clusters_seen"]["clusters"]]
    assert "zewura" in {c["name"] for c in seen["clusters"]}
    page = client.get(trace.get_absolute_url()).content.decode()
    first = seen["clusters"][0]
    assert f'{first["name"]}: {first["nodes"]} node' in page and f'{seen["cores"]:,} cores on' in page
    assert "Largest job" in page and "Machine size" not in page and "Time zone" in page


def test_a_machine_description_uploaded_with_the_trace_gives_the_whole_machine(alice, media_root, wagap_head):
    """Issue 23: with wagap-2013.swf.machines (zewura 20 x 80 cores, zegox 48 x 12: 1,600 + 576 = 2,176), the
    page gives that machine and says how many hosts ran jobs, instead of counting only those hosts' cores."""
    client = login(alice)
    response = client.post(reverse("traces:upload"), {
        "name": "wagap", "file": SimpleUploadedFile("wagap.txt", wagap_head.read_bytes()),
        "machines": SimpleUploadedFile("wagap-2013.swf.machines", WAGAP_MACHINES.encode())})
    assert response.status_code == 302, response.content.decode()[:2000]
    trace = Trace.objects.get()
    assert trace.procs == 2176 and trace.machine_name == "wagap-2013.swf.machines"
    from webapp.traces.tasks import parse_trace

    parse_trace(trace.pk)                  # what the queued task does
    trace.refresh_from_db()
    assert trace.status == "ready", trace.error
    from engine.api import clusters_seen, read_trace
    seen = clusters_seen(read_trace(wagap_head))
    hosts = sum(c["nodes"] for c in seen["clusters"])
    assert seen["cores"] < 2176           # the head's jobs used part of the machine
    page = client.get(trace.get_absolute_url()).content.decode()
    machine = page[page.index('id="machine"'):]
    assert machine.startswith('id="machine">2,176 cores on 2 clusters: zewura: 20 nodes × 80 cores; zegox: 48 nodes × 12 cores')
    assert "Hosts that ran jobs" in page and f'{hosts:,} host{"s" if hosts != 1 else ""} with {seen["cores"]:,} cores' in page
    size = page[page.index('id="machine-size"'):]
    assert size.startswith('id="machine-size">2,176 processors') and "Largest job" not in page


def test_a_machine_description_that_does_not_read_is_refused_naming_its_line(alice, media_root, wagap_head):
    response = login(alice).post(reverse("traces:upload"), {
        "name": "wagap", "file": SimpleUploadedFile("wagap.txt", wagap_head.read_bytes()),
        "machines": SimpleUploadedFile("bad.machines", b"0\tzewura\t20\t80\t1\t529426432\n1\tzegox\tmany\t12\t1\t1\n")})
    assert response.status_code == 400 and not Trace.objects.exists()
    page = response.content.decode()
    assert "bad.machines" in page and "line 2" in page, page[page.find("error"):][:600]


def test_the_memory_unit_chosen_at_upload_is_used(alice, media_root, wagap_head):
    client = login(alice)
    client.post(reverse("traces:upload"), {"name": "wagap", "description": "", "memory_unit": "KB",
                                           "file": SimpleUploadedFile("wagap.txt", wagap_head.read_bytes())})
    trace = Trace.objects.get()
    from engine.workload import cache
    from webapp.traces.tasks import parse_trace

    parse_trace(trace.pk)
    trace.refresh_from_db()
    jobs = cache.load(trace.cache_path).jobs
    # the first job asks 68719476736 (64 GiB in bytes); read as KB it stays that number
    assert trace.header["memory_unit"] == "KB" and jobs["mem"].iloc[0] == 68719476736


def test_a_bad_metacentrum_line_is_refused_naming_line_and_field(alice, media_root, wagap_head):
    lines = wagap_head.read_text().splitlines()
    lines[2] = lines[2].replace(":ppn=", ":ppn=x")
    response = login(alice).post(reverse("traces:upload"), {
        "name": "bad", "description": "", "file": SimpleUploadedFile("bad.swf", "\n".join(lines).encode())})
    page = response.content.decode()
    assert response.status_code == 400 and "bad.swf, line 3: field nodespec" in page
    assert not Trace.objects.exists()


def test_machine_descriptions_are_checked_line_by_line(alice):
    client = login(alice)
    bad = client.post(reverse("preview:machine_new"), {"name": "wagap", "text": "0\tzewura\t20\t80\t1\t529426432\n"
                                                                                "1\tzegox\tforty\t12\t1\t94035968\n"})
    assert bad.status_code == 400 and "line 2: field nodes" in bad.content.decode()
    good = client.post(reverse("preview:machine_new"), {
        "name": "wagap", "file": SimpleUploadedFile("wagap.machines", WAGAP_MACHINES.encode())})
    machine = MachineFile.objects.get()
    assert good.status_code == 302 and machine.parsed().cores == 2176
    page = client.get(machine.get_absolute_url()).content.decode()
    assert "zewura" in page and "2176 cores" in page


def test_queue_configurations_start_from_a_shipped_one_and_are_validated(alice):
    client = login(alice)
    form = client.get(reverse("preview:queues_new") + "?from=metacentrum-2014").content.decode()
    assert "q_2w_plus" in form
    bad = client.post(reverse("preview:queues_new"), {"name": "mine", "text": "mode: virtual\nqueues:\n"
                                                                              "  - name: q\n    walltime: soon\n"})
    assert bad.status_code == 400 and "line 4: field walltime" in bad.content.decode()
    ok = client.post(reverse("preview:queues_new"), {"name": "mine", "text": "queues:\n  - {name: q, walltime: 2d}\n"})
    assert ok.status_code == 302 and QueueFile.objects.get().parsed().queues[0].walltime == 172800


def test_a_preview_compares_current_and_proposed_side_by_side(alice, media_root, wagap_head):
    trace = make_trace(alice, wagap_head, name="wagap head")
    assert trace.status == "ready", trace.error
    machine = MachineFile.objects.create(owner=alice, name="wagap", text=WAGAP_MACHINES)
    client = login(alice)
    response = client.post(reverse("preview:new"), {
        "name": "2013 -> 2014", "trace": trace.pk, "machine": machine.pk, "current": "shipped:metacentrum-historical",
        "proposed": "shipped:metacentrum-2014", "policy": "mrfs-easy"})
    preview = Preview.objects.get()
    runs = list(preview.experiment.runs.all())
    assert response.status_code == 302 and {run.status for run in runs} == {"queued"}
    # one experiment: what happened, current and proposed under the policy, proposed under the other fair-share
    assert [(run.label, run.queues) for run in runs] == [
        ("recorded", ""), ("current: mrfs-easy", "current"), ("proposed: mrfs-easy", "proposed"),
        ("proposed: fairshare-easy", "proposed")]
    assert preview.experiment.procs == 2176
    compute(preview)                       # what the queued tasks do
    summaries = {run.label: run.summary for run in preview.experiment.runs.all()}
    assert all(run.status == "done" for run in preview.experiment.runs.all())
    assert set(summaries["current: mrfs-easy"]["per_queue"]) <= {"long", "normal", "short", "backfill"}
    assert set(summaries["proposed: mrfs-easy"]["per_queue"]) >= {"q_1d"}
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "Per queue" in page and "q_1d" in page and "normal" in page
    for title in ("Cluster utilization", "Jobs completed per week", "Mean wait per user", "Fair-share usage over time",
                  "Wait of the jobs the RAM penalty affects", "Penalty increase of affected jobs"):
        assert title in page, title


def test_a_shorter_walltime_is_enforced_and_the_page_says_who_is_refused_and_what_held_the_rest(
        alice, media_root, wagap_head):
    """Issue 23: q_1d at 12 h instead of 1 d showed ±0 everywhere; its longer jobs are refused at
    submission, the page says how many of whose, and what held the jobs that waited."""
    from engine.api import read_trace, shipped_queue_text
    trace = make_trace(alice, wagap_head, name="wagap head")
    current = shipped_queue_text("metacentrum-2014")
    proposed = current.replace("  - name: q_1d\n    walltime: 24h", "  - name: q_1d\n    walltime: 12h")
    assert proposed != current
    preview = make_preview(alice, trace, machine=WAGAP_MACHINES, current=current, proposed=proposed, run=True)
    runs = {run.label: run for run in preview.experiment.runs.all()}
    assert {run.status for run in runs.values()} == {"done"}
    jobs = read_trace(wagap_head).jobs
    over = jobs[(jobs["queue_name"] == "q_1d") & (jobs["requested_time"] > 12 * 3600)]
    assert len(over) > 0
    admission = runs["proposed: mrfs-easy"].summary["admission"]
    line = next(line for line in admission["lines"] if "q_1d" in line)
    assert line == (f"{len(over)} jobs of {over['user'].nunique()} users ask for more than q_1d's 12 h: "
                    "rejected at submission")
    rejected = runs["proposed: mrfs-easy"].load_rejected()
    by_q_1d = rejected[rejected["queue"] == "q_1d"]
    assert sorted(by_q_1d["job_id"]) == sorted(over["job_id"]) and set(by_q_1d["limit"]) == {"walltime 12 h"}
    page = login(alice).get(preview.get_absolute_url()).content.decode()
    assert "Jobs refused or moved at submission" in page and line.replace("'", "&#x27;") in page
    assert f"The {len(rejected)} jobs rejected" in page
    assert 'id="pending"' in page and "<th>queue limit</th>" in page and "<th>priority</th>" in page


def test_a_preview_whose_configuration_names_a_missing_cluster_is_refused_and_nothing_stored(
        alice, media_root, wagap_head):
    trace = make_trace(alice, wagap_head, name="wagap head")
    tiny = MachineFile.objects.create(owner=alice, name="tiny", text="0\ttiny\t1\t4\t1\t1048576\n")
    bad = QueueFile.objects.create(owner=alice, name="bad", text="queues:\n  - {name: q, walltime: 1d, pool: [nope]}\n")
    response = login(alice).post(reverse("preview:new"), {
        "name": "p", "trace": trace.pk, "machine": tiny.pk, "current": str(bad.pk),
        "proposed": "shipped:metacentrum-2014", "policy": "mrfs-easy"})
    assert response.status_code == 400
    assert "queue q: pool names cluster &#x27;nope&#x27;, which the machine lacks" in response.content.decode()
    assert not Preview.objects.exists() and not Experiment.objects.exists()


# -- the current configuration inferred from the trace, reality beside the runs ----------------------


def test_the_new_preview_form_starts_from_the_configuration_inferred_from_the_trace(alice):
    page = login(alice).get(reverse("preview:new")).content.decode()
    assert '<option value="inferred" selected>inferred from the trace</option>' in page
    assert "inferred from the trace (the hosts its jobs ran on)" in page


def test_a_preview_on_the_inferred_configuration_and_machine_holds_current_against_reality(
        alice, media_root, wagap_head):
    trace = make_trace(alice, wagap_head, name="wagap head")
    client = login(alice)
    response = client.post(reverse("preview:new"), {
        "name": "as it is -> 2014", "trace": trace.pk, "machine": "", "current": "inferred",
        "proposed": "shipped:metacentrum-2014", "policy": "mrfs-easy"})
    assert response.status_code == 302, response.content.decode()[:2000]
    preview = Preview.objects.get()
    # the texts inferred when the preview was made are kept in it, with their evidence
    assert "cores running at once on 2013-01-" in preview.current_text and "mode: virtual" in preview.current_text
    assert "# Inferred from wagap head by" in preview.current_text
    assert "clusters:" in preview.machine_text and "hosts seen:" in preview.machine_text
    compute(preview)
    assert all(run.status == "done" for run in preview.experiment.runs.all())
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "Is “current” like what really happened?" in page
    assert ("warning-box" in page) != ("ok-box" in page)
    assert "Mean wait per queue: recorded, current, proposed" in page and "q_1d" in page
    assert "Users who gain and lose most" in page and "Times in UTC." in page
    assert 'class="better"' in page or 'class="worse"' in page or 'class="same"' in page


def test_the_inferred_configuration_is_edited_like_any_other(alice, bob, media_root, wagap_head):
    trace = make_trace(alice, wagap_head, name="wagap head")
    preview = make_preview(alice, trace, machine=WAGAP_MACHINES, current="",
                           proposed=Path("engine/platform/configs/2014.yaml").read_text())
    Preview.objects.filter(pk=preview.pk).update(current_name="inferred from the trace")
    client = login(alice)
    response = client.post(reverse("preview:edit_inferred", args=[preview.pk, "queues"]))
    saved = QueueFile.objects.get()
    assert response.status_code == 302 and response.url == reverse("preview:queues_edit", args=[saved.pk])
    assert saved.owner == alice and saved.text == preview.current_text
    assert saved.parsed().mode == "virtual"
    # the machine was given, not inferred: nothing to copy; somebody else's private preview is a 404
    assert client.post(reverse("preview:edit_inferred", args=[preview.pk, "machine"])).status_code == 404
    assert login(bob).post(reverse("preview:edit_inferred", args=[preview.pk, "queues"])).status_code == 404


def test_a_trace_without_recorded_starts_cannot_infer(alice, media_root, tmp_path):
    path = tmp_path / "nowait.swf"
    path.write_text("; MaxProcs: 4\n" + "".join(f"{i} {i * 10} -1 100 1 -1 -1 1 200 -1 1 1 1 1 1 1 -1 -1\n"
                                               for i in range(1, 6)))
    trace = make_trace(alice, path, name="no waits")
    machine = MachineFile.objects.create(owner=alice, name="m", text="0\tm\t4\t1\t1\t1048576\n")
    response = login(alice).post(reverse("preview:new"), {
        "name": "p", "trace": trace.pk, "machine": machine.pk, "current": "inferred",
        "proposed": "shipped:metacentrum-2014", "policy": "mrfs-easy"})
    assert response.status_code == 400
    assert "records no start times" in response.content.decode()
    assert not Preview.objects.exists()


def test_the_fidelity_warning_is_plain_and_on_top(alice, media_root):
    """The results' tables as the page and the download show them, from a hand-made summary."""
    warning = "The simulated baseline is far from what really happened: mean wait 77.0 h simulated vs 14.2 h recorded."
    side = {"mean_wait": 3600.0, "p95_wait": 7200.0, "utilization": 0.5}
    context = {"summaries": {}, "recorded": {"jobs": 10}, "time_zone": "Europe/Prague", "rows": [],
               "fidelity": {"jobs": {"matched": 10}, "warning": warning,
                            "overall": {"recorded": side, "simulated": dict(side, mean_wait=5.5 * 86400),
                                        "mean_wait_ratio": 132.0, "wait_rank_correlation": 0.31}},
               "changes": [{"queue": "overall", "jobs": 10, "change": -5400.0,
                            "mean_wait": {"recorded": 3600.0, "current": 9000.0, "proposed": 3600.0}}],
               "users": {"gain": [{"user": 7, "jobs": 3, "before": 7200.0, "after": 60.0, "change": -7140.0}],
                         "lose": []}}
    page = render_to_string("preview/_results.html", context)
    assert page.index("warning-box") < page.index("Mean wait per queue")
    assert warning in page and "5.5 days</strong> simulated vs" in page and "132.00×" in page
    assert '<td class="better">−1.5 h</td>' in page and '<td class="better">−2.0 h</td>' in page
    assert "<td>7</td><td>3</td><td>2.0 h</td><td>1.0 min</td>" in page and "Nobody." in page
    assert "Times in Europe/Prague." in page


def test_a_configuration_and_a_machine_start_from_what_a_trace_shows(alice, bob, media_root, wagap_head):
    trace = make_trace(alice, wagap_head, name="wagap head")
    client = login(alice)
    assert "Infer the queue configuration" in client.get(reverse("preview:index")).content.decode()
    form = client.get(reverse("preview:queues_new") + f"?trace={trace.pk}").content.decode()
    assert "wagap head: inferred from the trace" in form and "running at once on 2013-01-" in form
    machine = client.get(reverse("preview:machine_new") + f"?trace={trace.pk}").content.decode()
    assert "clusters:" in machine and "hosts seen:" in machine
    # somebody else's private trace is a 404
    assert login(bob).get(reverse("preview:queues_new") + f"?trace={trace.pk}").status_code == 404


def test_inferring_from_a_trace_without_recorded_starts_says_why(alice, media_root, tmp_path):
    path = tmp_path / "nowait.swf"
    path.write_text("; MaxProcs: 4\n" + "".join(f"{i} {i * 10} -1 100 1 -1 -1 1 200 -1 1 1 1 1 1 1 -1 -1\n"
                                               for i in range(1, 6)))
    trace = make_trace(alice, path, name="no waits")
    page = login(alice).get(reverse("preview:queues_new") + f"?trace={trace.pk}", follow=True).content.decode()
    assert "no waits: this trace records no start times" in page


# -- a production-like backfill bound, asked once for every run -------------------------------------


def _preview_post(trace, machine, **extra) -> dict:
    return {"name": "bounded", "trace": trace.pk, "machine": machine.pk, "current": "shipped:metacentrum-historical",
            "proposed": "shipped:metacentrum-2014", "policy": "mrfs-easy", **extra}


def test_the_preview_form_offers_the_backfill_bound_of_the_registry(alice):
    page = login(alice).get(reverse("preview:new")).content.decode()
    assert 'name="backfill_bound"' in page and "bf_max_job_test" in page


@pytest.mark.parametrize(("policy", "value", "message"), [
    ("mrfs-fcfs", "10", "mrfs-fcfs does not backfill"),
    ("mrfs-easy", "0", "at least 1 job"),
    ("mrfs-easy", "ten", "a whole number of jobs"),
])
def test_a_bound_that_cannot_apply_is_refused_and_nothing_is_stored(alice, media_root, wagap_head, policy, value,
                                                                      message):
    trace = make_trace(alice, wagap_head, name="wagap head")
    machine = MachineFile.objects.create(owner=alice, name="wagap", text=WAGAP_MACHINES)
    response = login(alice).post(reverse("preview:new"),
                                 _preview_post(trace, machine, policy=policy, backfill_bound=value))
    assert response.status_code == 400 and message in response.content.decode()
    assert not Preview.objects.exists()


def test_a_bounded_preview_runs_every_simulation_with_the_bound_and_says_so(alice, media_root, wagap_head):
    trace = make_trace(alice, wagap_head, name="wagap head")
    machine = MachineFile.objects.create(owner=alice, name="wagap", text=WAGAP_MACHINES)
    client = login(alice)
    response = client.post(reverse("preview:new"), _preview_post(trace, machine, backfill_bound="3"))
    preview = Preview.objects.get()
    assert response.status_code == 302
    compute(preview)
    for run in preview.experiment.runs.exclude(policy__preset="recorded"):   # as the engine reports it
        assert run.status == "done", run.error
        assert run.summary["policy"]["params"]["backfill_bound"] == 3, run.label
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "backfill bound 3, decay hours 72.0, decay factor 0.5;" in page


def test_an_unbounded_preview_passes_no_parameter(alice, media_root, wagap_head):
    trace = make_trace(alice, wagap_head, name="wagap head")
    machine = MachineFile.objects.create(owner=alice, name="wagap", text=WAGAP_MACHINES)
    login(alice).post(reverse("preview:new"), _preview_post(trace, machine, backfill_bound="inf"))
    runs = Preview.objects.get().experiment.runs.exclude(policy__preset="recorded")
    assert [run.policy["params"]["backfill_bound"] for run in runs] == ["inf", "inf", "inf"]


def test_fair_share_parameters_a_window_and_a_sweep_make_the_runs_of_one_experiment(alice, media_root, wagap_head):
    """decay and the bound go to every run; a sweep over the bound makes current, proposed and counterpart
    per value; the window is kept in days and shown as the trace's dates."""
    trace = make_trace(alice, wagap_head, name="wagap head")
    machine = MachineFile.objects.create(owner=alice, name="wagap", text=WAGAP_MACHINES)
    client = login(alice)
    response = client.post(reverse("preview:new"), _preview_post(
        trace, machine, decay_hours="24", days_from="1", days_to="3", sweep_param="backfill_bound",
        sweep_values="5, inf"))
    assert response.status_code == 302, response.content.decode()[:3000]
    experiment = Preview.objects.get().experiment
    simulated = [(r.label, r.queues, r.sweep_value, r.policy["params"]) for r in experiment.runs.all()][1:]
    assert [(label.split(" ")[0], queues, value) for label, queues, value, _ in simulated] == [
        ("current:", "current", 5), ("proposed:", "proposed", 5), ("current:", "current", "inf"),
        ("proposed:", "proposed", "inf"), ("proposed:", "proposed", 5), ("proposed:", "proposed", "inf")]
    assert {params["decay_hours"] for *_, params in simulated} == {24.0}
    assert experiment.days == "1:3" and experiment.sweep_param == "backfill_bound"
    first = int(Trace.objects.get().workload().jobs["submit"].min())
    page = client.get(Preview.objects.get().get_absolute_url()).content.decode()
    zone = Trace.objects.get().zone()     # the trace's own (the upload's, else its log's)
    day = lambda n: pd.Timestamp(first + n * 86400, unit="s", tz="UTC").tz_convert(zone).strftime("%Y-%m-%d %H:%M")  # noqa: E731
    assert f"jobs submitted from {day(1)} to {day(3)} (days 1:3 of the trace)" in page
