"""A preview on a site's own files (issue 24 §4), as an admin uses it: the real Slurm's files and sacct dump
of tests/data/slurm_replay uploaded, the current run replayed under them, a change proposed in the form
(double PriorityWeightFairshare; MaxTime on short), the diff, the tables per partition, account and user,
and the pending reasons as Slurm names them. Bad files answer one line naming file, line and key, and
nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from engine.api import SITE_FILES
from tests.webapp.conftest import compute, login, make_trace
from webapp.experiments.models import Experiment
from webapp.preview.models import SitePreview

DATA = Path(__file__).resolve().parents[2] / "data"
SLURM = DATA / "slurm_replay"
PBS = DATA / "pbs_site"


def upload(name: str, path: Path, text: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (text if text is not None else path.read_text()).encode())


def post_site(client, trace, **files):  # noqa: ANN001, ANN201
    return client.post(reverse("preview:site_new"), {"name": "our cluster", "trace": trace.pk, **files})


def post_pbs_site(client, trace, **fields):  # noqa: ANN001, ANN201
    """The OpenPBS test server's site files (tests/data/pbs_site) posted with ``trace`` on its 4 CPUs."""
    files = {"pbs_server": upload("print_server.txt", PBS / "print_server.txt"),
             "sched_config": upload("sched_config", PBS / "sched_config"),
             "resource_group": upload("resource_group", PBS / "resource_group")}
    return post_site(client, trace, cpus=4, **{**files, **fields})


def openpbs_trace(owner):  # noqa: ANN001, ANN201
    """The OpenPBS test server's accounting log (shared data: fairsharesim/OpenPBS.log) as ``owner``'s trace."""
    from tests.shared_data import SHARED_DATA

    return make_trace(owner, SHARED_DATA / "metacentrum" / "fairsharesim" / "OpenPBS.log", name="openpbs", format="pbs")


def slurm_files(conf: str | None = None) -> dict:
    return {"slurm_conf": upload("slurm.conf", SLURM / "slurm.conf", conf), "qos": upload("qos.txt", SLURM / "qos.txt"),
            "assoc": upload("assoc.txt", SLURM / "assoc.txt")}


def field_of(preview: SitePreview, label: str) -> str:
    """The proposal form's field name of the key labelled ``label`` ("short MaxTime")."""
    from webapp.preview.siteviews import proposal_form

    form = proposal_form(preview)
    return next(f"k{i}" for i, key in enumerate(form.keys) if key.label == label)


def proposal_post(preview: SitePreview, **changes: str) -> dict:
    """The proposal form as the page shows it, with ``changes`` (field label -> value)."""
    from webapp.preview.siteviews import proposal_form

    form = proposal_form(preview)
    data = {"name": "my change"}
    data.update({f"k{i}": key.value for i, key in enumerate(form.keys)})
    data.update({f"text{i}": preview.current.get(name, "") for i, name in enumerate(SITE_FILES[preview.kind])})
    for label, value in changes.items():
        data[field_of(preview, label)] = value
    return data


def propose_text(client, preview: SitePreview, index: int, text: str) -> int:  # noqa: ANN001
    """The proposal form as the page shows it with its ``index``-th file's text edited to ``text``: the status."""
    data = proposal_post(preview)
    data[f"text{index}"] = text
    return client.post(reverse("preview:site_propose", args=[preview.pk]), data).status_code


@pytest.mark.django_db
def test_the_upload_stores_the_site_and_runs_recorded_and_current(alice, sacct_trace):
    response = post_site(login(alice), sacct_trace, **slurm_files())
    assert response.status_code == 302
    preview = SitePreview.objects.get()
    assert preview.kind == "slurm" and set(preview.current) == {"slurm.conf", "qos", "assoc"}
    assert preview.experiment.procs == 16            # slurm.conf's NodeName vm CPUs=16
    assert sorted(r.queues or r.policy["preset"] for r in preview.experiment.runs.all()) == ["current", "recorded"]
    assert preview.site("current").qos["normal"].max_jobs_per_user == 4


@pytest.mark.django_db
def test_a_bad_file_answers_one_line_naming_file_line_and_key_and_stores_nothing(alice, sacct_trace):
    conf = (SLURM / "slurm.conf").read_text().replace("PriorityWeightFairshare=10000", "PriorityWeightFairshare=lots")
    response = post_site(login(alice), sacct_trace, **slurm_files(conf))
    assert response.status_code == 400
    page = response.content.decode()
    line = next(n for n, text in enumerate(conf.splitlines(), 1) if "PriorityWeightFairshare" in text)
    assert f"slurm.conf, line {line}" in page and "PriorityWeightFairshare" in page
    assert not Experiment.objects.exists() and not SitePreview.objects.exists()


@pytest.mark.django_db
def test_slurm_and_pbs_files_do_not_mix_and_one_is_needed(alice, sacct_trace):
    client = login(alice)
    assert post_site(client, sacct_trace).status_code == 400
    mixed = post_site(client, sacct_trace, **slurm_files(), sched_config=upload("sched_config", PBS / "sched_config"))
    assert mixed.status_code == 400 and "does not go with a SLURM site" in mixed.content.decode()
    assert not SitePreview.objects.exists()


@pytest.mark.django_db
def test_double_the_fairshare_weight_as_an_admin_would(alice, sacct_trace):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    compute(preview)
    response = client.post(reverse("preview:site_propose", args=[preview.pk]),
                           proposal_post(preview, PriorityWeightFairshare="20000"))
    assert response.status_code == 302
    preview.refresh_from_db()
    assert "PriorityWeightFairshare=20000" in preview.proposed["slurm.conf"]
    assert preview.site("proposed").conf.weights["fairshare"] == 20000
    # only that line differs: every other line stays as the site wrote it
    before, after = preview.current["slurm.conf"].splitlines(), preview.proposed["slurm.conf"].splitlines()
    assert [(a, b) for a, b in zip(before, after) if a != b] == [("PriorityWeightFairshare=10000",
                                                                  "PriorityWeightFairshare=20000")]
    compute(preview)
    runs = {r.queues or "recorded": r for r in preview.experiment.runs.all()}
    assert all(r.status == "done" for r in runs.values()) and set(runs) == {"recorded", "current", "proposed"}
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "-PriorityWeightFairshare=10000" in page and "+PriorityWeightFairshare=20000" in page
    for heading, names in (("partition", ("short", "long")), ("account", ("physics", "chemistry", "teaching")),
                           ("user", ("alice", "dave", "erin"))):
        assert f'id="waits-{heading}"' in page
        assert all(f"<td>{name}</td>" in page for name in names)
    assert 'id="pending-reasons"' in page
    assert all(f"<td>{reason}</td>" in page for reason in ("Priority", "Resources", "QOSMaxJobsPerUserLimit"))
    # the schedules differ: the weight changed the order
    current, proposed = runs["current"].load_schedule(), runs["proposed"].load_schedule()
    assert (current.sort_values("job_id")["start"].to_numpy() != proposed.sort_values("job_id")["start"].to_numpy()).any()


@pytest.mark.django_db
def test_a_shorter_maxtime_refuses_the_jobs_that_ask_for_more(alice, sacct_trace):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    response = client.post(reverse("preview:site_propose", args=[preview.pk]),
                           proposal_post(preview, **{"short MaxTime": "00:01:00"}))
    assert response.status_code == 302
    preview.refresh_from_db()
    assert preview.site("proposed").conf.partitions["short"].max_time == 60
    compute(preview)
    runs = {r.queues or "recorded": r for r in preview.experiment.runs.all()}
    held = {side: {row["reason"]: row for row in runs[side].summary["site_pending"]} for side in ("current", "proposed")}
    jobs = sacct_trace.workload().jobs
    over = int(((jobs["queue_name"] == "short") & (jobs["requested_time"] > 60)).sum())
    assert over > 0 and "PartitionTimeLimit (refused at submission)" not in held["current"]
    assert held["proposed"]["PartitionTimeLimit (refused at submission)"]["jobs"] == over
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "<td>PartitionTimeLimit (refused at submission)</td>" in page
    # the recorded run's reasons are estimated from its schedule against the current files
    recorded = {row["reason"] for row in runs["recorded"].summary["site_pending"]}
    assert recorded == {"PartitionTimeLimit", "QOSMaxWallDurationPerJobLimit", "QOSMaxJobsPerUserLimit", "Resources",
                        "Priority"}


@pytest.mark.django_db
def test_a_proposal_that_does_not_read_names_file_line_and_key_and_stores_nothing(alice, sacct_trace):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    response = client.post(reverse("preview:site_propose", args=[preview.pk]),
                           proposal_post(preview, **{"short MaxTime": "soon"}))
    assert response.status_code == 400
    line = next(n for n, text in enumerate(preview.current["slurm.conf"].splitlines(), 1)
                if text.startswith("PartitionName=short"))
    assert f"slurm.conf, line {line}" in response.content.decode() and "MaxTime" in response.content.decode()
    preview.refresh_from_db()
    assert preview.proposed == {} and not preview.experiment.runs.filter(queues="proposed").exists()


@pytest.mark.django_db
def test_an_edited_text_is_the_proposal_too(alice, sacct_trace):
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    assert propose_text(client, preview, 1, preview.current["qos"].replace(
        "normal|0|00:00:00|||cluster|||1.000000||||||||||||4|", "normal|0|00:00:00|||cluster|||1.000000||||||||||||50|")) == 302
    preview.refresh_from_db()
    assert preview.site("proposed").qos["normal"].max_jobs_per_user == 50
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "<td>normal MaxJobsPU</td><td>4</td><td>50</td>" in page.replace("\n", "")


@pytest.mark.django_db
def test_a_pbs_site_with_the_openpbs_log(alice):
    trace = openpbs_trace(alice)
    client = login(alice)
    response = post_pbs_site(client, trace)
    assert response.status_code == 302
    preview = SitePreview.objects.get()
    assert preview.experiment.procs == 4          # 2 nodes of 2 cores, given: the print server names no nodes
    response = client.post(reverse("preview:site_propose", args=[preview.pk]),
                           proposal_post(preview, **{"workq max_run": "[u:PBS_GENERIC=1]"}))
    assert response.status_code == 302
    compute(preview)
    runs = {r.queues or "recorded": r for r in preview.experiment.runs.all()}
    assert all(r.status == "done" for r in runs.values()), [r.error for r in runs.values()]
    held = {row["reason"]: row for row in runs["proposed"].summary["site_pending"]}
    assert held["Queue max_run limit reached"]["jobs"] > 0         # the replay's own reasons, at each cycle
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "+set queue workq max_run = [u:PBS_GENERIC=1]" in page and "<td>workq</td>" in page


def pbs_proposal_run(user, lines: str):  # noqa: ANN001, ANN201
    """A PBS site preview of the OpenPBS log whose proposal adds ``lines`` to the print server, run:
    the client, the preview and its runs by side."""
    trace = openpbs_trace(user)
    client = login(user)
    post_pbs_site(client, trace)
    preview = SitePreview.objects.get()
    data = proposal_post(preview)
    data["text0"] = preview.current["print server"] + lines
    assert client.post(reverse("preview:site_propose", args=[preview.pk]), data).status_code == 302
    compute(preview)
    return client, preview, {r.queues or "recorded": r for r in preview.experiment.runs.all()}


@pytest.mark.django_db
def test_a_pbs_queues_shorter_walltime_bound_refuses_and_names_the_jobs_asking_more(alice):
    # the OpenPBS log's 200 jobs each ask ncpus 1-3 and walltime 02:00:00: a resources_max.ncpus of 2
    # on workq refuses the 45 asking 3 at submission, as PBS's server does (svr_chkque), named on the
    # page with the server's message and the setting; the current run refuses none
    client, preview, runs = pbs_proposal_run(alice, "set queue workq resources_max.ncpus = 2\n")
    message = "Job violates queue and/or server resource limits"
    assert runs["current"].load_rejected() is None or not len(runs["current"].load_rejected())
    rejected = runs["proposed"].load_rejected()
    assert len(rejected) == 45 and set(rejected["procs"]) == {3} and set(rejected["reason"]) == {message}
    held = {row["reason"]: row for row in runs["proposed"].summary["site_pending"]}
    assert held[f"{message} (refused at submission)"]["jobs"] == 45
    page = client.get(preview.get_absolute_url()).content.decode()
    assert 'id="refused-jobs"' in page and "proposed: 45 jobs" in page and "<h3>Per queue</h3>" in page
    assert f"<td>{message}</td><td>queue workq resources_max.ncpus = 2</td>" in page
    assert rejected["native_id"].iloc[0] in page


@pytest.mark.django_db
def test_a_pbs_queues_access_list_typed_in_the_text_refuses_and_names_the_users_jobs(alice):
    # the OpenPBS log's 200 jobs are vchlum's and klusacek's (100 each, group meta, workq): workq's
    # acl_users restricted to vchlum refuses klusacek's 100 at submission, as svr_chkque does
    # (PBSE_PERM, "Unauthorized Request"), the list named on the page
    client, preview, runs = pbs_proposal_run(alice, "set queue workq acl_user_enable = True\n"
                                                    "set queue workq acl_users = vchlum\n")
    rejected = runs["proposed"].load_rejected()
    assert len(rejected) == 100 and set(rejected["reason"]) == {"Unauthorized Request"}
    assert set(rejected["limit"]) == {"queue workq acl_users = vchlum"}
    page = client.get(preview.get_absolute_url()).content.decode()
    assert "<td>Unauthorized Request</td><td>queue workq acl_users = vchlum</td>" in page


@pytest.mark.django_db
@pytest.mark.parametrize(("field", "name", "text", "where"), [
    ("pbs_server", "print_server.txt", "create queue workq\nset queue workq max_run = [u:PBS_GENERIC=ten]\n",
     "print server, line 2: field max_run: expected a limit like [u:PBS_GENERIC=10]"),
    ("pbs_server", "print_server.txt", "create queue workq\nset queue workq resources_max.walltime = soon\n",
     "print server, line 2: field resources_max.walltime"),
    ("sched_config", "sched_config", "fair_share: true ALL\nfairshare_decay_factor: 2\n",
     "sched_config, line 2: field fairshare_decay_factor: expected a number between 0 and 1"),
    ("resource_group", "resource_group", "meta 10 root 100\nann 11 physics 5\n",
     "resource_group, line 2: field parent: parent physics is not defined above this line"),
])
def test_a_bad_pbs_file_names_file_line_and_key_and_stores_nothing(alice, field, name, text, where):
    trace = openpbs_trace(alice)
    response = post_pbs_site(login(alice), trace, **{field: upload(name, PBS / "print_server.txt", text)})
    assert response.status_code == 400
    assert where in response.content.decode()
    assert not Experiment.objects.exists() and not SitePreview.objects.exists()


@pytest.mark.django_db
def test_qstat_qf_output_is_taken_as_the_print_server_and_its_keys_edit_as_qmgr_lines(alice):
    # qstat -Qf instead of print server: stored translated line for line, so the form's keys and the
    # diff work on qmgr lines
    trace = openpbs_trace(alice)
    qstat = ("Queue: workq\n    queue_type = Execution\n    total_jobs = 0\n    max_run = [u:PBS_GENERIC=2]\n"
             "    enabled = True\n    started = True\n\nServer: pbs\n    server_state = Active\n"
             "    default_queue = workq\n")
    client = login(alice)
    response = post_pbs_site(client, trace, pbs_server=upload("qstat.txt", PBS / "print_server.txt", qstat))
    assert response.status_code == 302
    preview = SitePreview.objects.get()
    assert preview.current["print server"].splitlines()[:4] == [
        "create queue workq", "set queue workq queue_type = Execution", "# total_jobs = 0",
        "set queue workq max_run = [u:PBS_GENERIC=2]"]
    assert client.post(reverse("preview:site_propose", args=[preview.pk]),
                       proposal_post(preview, **{"workq max_run": "[u:PBS_GENERIC=1]"})).status_code == 302
    preview.refresh_from_db()
    assert preview.site("proposed").queues["workq"].max_run.generic_user() == 1


@pytest.mark.django_db
def test_the_site_files_count_in_the_owners_disk_use(alice, sacct_trace):
    from webapp.preview.services import disk_bytes_of

    before = disk_bytes_of(alice)
    post_site(login(alice), sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    assert disk_bytes_of(alice) - before == sum(len(text) for text in preview.current.values())


@pytest.mark.django_db
def test_the_jobs_over_their_time_limit_end_at_slurmctlds_check_and_a_proposed_over_time_limit_moves_it(alice, sacct_trace):
    # the 4 jobs Slurm killed at their time limit (TIMEOUT; the trace's reading cuts them at it) hold
    # their CPUs until slurmctld's next time-limit check (every 30 s from the first submission) at or
    # after start + limit; a proposed OverTimeLimit=1 kills them a minute later, at the check after
    # start + limit + 60
    client = login(alice)
    post_site(client, sacct_trace, **slurm_files())
    preview = SitePreview.objects.get()
    assert propose_text(client, preview, 0, preview.current["slurm.conf"].replace("OverTimeLimit=0", "OverTimeLimit=1")) == 302
    preview.refresh_from_db()
    assert preview.site("proposed").conf.over_time_limit == 60
    compute(preview)
    runs = {r.queues or "recorded": r for r in preview.experiment.runs.all()}
    origin = int(sacct_trace.workload().jobs["submit"].min())
    for side, grace in (("current", 0), ("proposed", 60)):
        schedule = runs[side].load_schedule()
        killed = schedule[schedule["killed"]]
        assert len(killed) == 4
        for start, limit, end in zip(killed["start"], killed["requested_time"], killed["end"]):
            due = start + limit + grace
            assert (end - origin) % 30 == 0 and due <= end < due + 30       # the first check at or after it
