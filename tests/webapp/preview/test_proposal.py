"""Editing the proposal in the preview's page: the rows and the YAML edit one proposal (the YAML wins
when edited), the difference from the current configuration limit by limit, and "run with this change"
re-running the proposed side in place; walltimes in hours and days, "all clusters" for a queue
without a pool."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engine.api import config_yaml, parse_queue_config
from tests.webapp.conftest import compute, make_preview
from webapp.preview.models import Preview, QueueFile
from webapp.preview.proposal import ProposalForm, differences, yaml_diff

pytestmark = pytest.mark.django_db
CLUSTERS = ["zewura", "zegox"]
TWO_CLUSTERS = "0\tzewura\t20\t80\t1\t529426432\n1\tzegox\t48\t12\t1\t94035968\n"
CURRENT = """mode: priority
queues:
  - name: workq
    walltime: 2h
    priority: 10
  - name: long
    walltime: 3d
    pool: [zewura]
    user_max_jobs: 4
"""


def posted(form: ProposalForm, **changes: object) -> dict:
    """What the browser posts for ``form`` untouched, with ``changes`` (field name -> value)."""
    data: dict = {"name": "mine", "yaml": form.fields["yaml"].initial, "yaml_base": form.fields["yaml_base"].initial}
    for name, field in form.fields.items():
        if name[0] == "q" and "_" in name:
            value = field.initial
            data[name] = value if value is not None else ""
    data.update(changes)
    return data


def editor(text: str = CURRENT, data: dict | None = None) -> ProposalForm:
    return ProposalForm(data, base=parse_queue_config(text), base_text=text, clusters=CLUSTERS)


def test_the_rows_start_from_the_proposal_in_hours_and_days_and_all_clusters_ticked():
    form = editor()
    assert (form["q0_walltime"].initial, form["q0_unit"].initial) == (2, "h")
    assert (form["q1_walltime"].initial, form["q1_unit"].initial) == (3, "d")
    assert form["q0_pool"].initial == CLUSTERS and form["q1_pool"].initial == ["zewura"]
    assert form["q1_user_max_jobs"].initial == 4 and form["q0_max_cores"].initial is None


def test_rows_left_alone_give_back_the_same_configuration():
    form = editor(data=None)
    again = editor(data=posted(form))
    assert again.is_valid(), again.errors
    assert again.cleaned_data["config"] == parse_queue_config(CURRENT)
    assert parse_queue_config(again.cleaned_data["text"]).queues == parse_queue_config(CURRENT).queues


def test_an_edited_row_writes_the_yaml_in_whole_units():
    form = editor(data=posted(editor(), q0_walltime="1", q0_unit="h", q0_user_max_cores="8", q1_pool=CLUSTERS,
                              q1_walltime="36", q1_unit="h"))
    assert form.is_valid(), form.errors
    workq, long = form.cleaned_data["config"].queues
    assert (workq.walltime, workq.user_max_cores, workq.priority) == (3600, 8, 10)
    assert (long.walltime, long.pool, long.user_max_jobs) == (36 * 3600, None, 4)   # every cluster ticked: no pool
    assert "    walltime: 1h\n" in form.cleaned_data["text"] and "    walltime: 36h\n" in form.cleaned_data["text"]
    assert "pool" not in form.cleaned_data["text"]


def test_the_yaml_wins_when_it_was_edited():
    edited = CURRENT.replace("walltime: 2h", "walltime: 30m").replace("user_max_jobs: 4", "user_max_jobs: 2")
    form = editor(data=posted(editor(), yaml=edited, q0_walltime="9", q0_unit="d"))   # the row says 9 d
    assert form.is_valid(), form.errors
    assert form.cleaned_data["text"] == edited
    workq, long = form.cleaned_data["config"].queues
    assert (workq.walltime, long.user_max_jobs) == (1800, 2)
    # the page's script then shows the YAML's values in the rows
    values = form.field_values()
    assert (values["q0_walltime"], values["q0_unit"], values["q1_user_max_jobs"]) == (0.5, "h", 2)


def test_a_queue_with_no_cluster_ticked_or_a_yaml_naming_a_missing_cluster_is_refused():
    none = editor(data=posted(editor(), q1_pool=[]))
    assert not none.is_valid() and "long pool: tick at least one cluster" in none.errors["__all__"][0]
    missing = editor(data=posted(editor(), yaml=CURRENT.replace("[zewura]", "[zebra]")))
    assert not missing.is_valid()
    assert missing.errors["yaml"] == ["mine: field pool: queue long: pool names cluster 'zebra', which the machine "
                                      "lacks (clusters: zewura, zegox)"]


def test_the_difference_lists_each_changed_limit_in_hours_and_days():
    proposed = parse_queue_config(CURRENT.replace("walltime: 2h", "walltime: 1h").replace("    pool: [zewura]\n", "")
                                  + "  - {name: short, walltime: 12h}\n")
    changes = [(c.queue, c.limit, c.current, c.proposed) for c in differences(parse_queue_config(CURRENT), proposed)]
    assert changes == [("workq", "walltime", "2 h", "1 h"), ("long", "pool", "zewura", "all clusters"),
                       ("short", "queue", "—", "new, walltime 12 h")]
    diff = yaml_diff(parse_queue_config(CURRENT), proposed)
    assert "-    walltime: 2h\n+    walltime: 1h\n" in diff and "+  - name: short\n" in diff
    assert differences(parse_queue_config(CURRENT), parse_queue_config(config_yaml(parse_queue_config(CURRENT)))) == []


def test_the_queue_page_shows_hours_days_and_all_clusters(alice, alice_client):
    queues = QueueFile.objects.create(owner=alice, name="mine", text=CURRENT)
    page = alice_client.get(queues.get_absolute_url()).content.decode()
    assert "<td>workq</td><td>2 h</td>" in page and "<td>long</td><td>3 d</td>" in page
    assert "<td>all clusters</td>" in page and "a, l, l" not in page and "<td>zewura</td>" in page


# -- in the page ------------------------------------------------------------------------------------


@pytest.fixture
def done_preview(alice, demo_trace) -> Preview:
    return make_preview(alice, demo_trace, machine=TWO_CLUSTERS, current=CURRENT, proposed=CURRENT, run=True)


def page_form(preview: Preview) -> ProposalForm:
    from webapp.preview.page import proposal_form

    return proposal_form(preview)


def test_checking_an_edit_answers_the_yaml_rows_and_difference(done_preview, alice_client):
    response = alice_client.post(reverse("preview:propose", args=[done_preview.pk]),
                                 {**posted(page_form(done_preview), q0_walltime="1"), "action": "check"})
    answer = response.json()
    assert response.status_code == 200 and "    walltime: 1h\n" in answer["yaml"]
    assert answer["fields"]["q0_walltime"] == 1 and answer["fields"]["q0_unit"] == "h"
    assert "<td>workq</td><td>walltime</td><td class=\"removed\">2 h</td><td class=\"added\">1 h</td>" in answer["diff"]
    assert Preview.objects.get(pk=done_preview.pk).proposed_text == CURRENT   # only checked: nothing stored
    bad = alice_client.post(reverse("preview:propose", args=[done_preview.pk]),
                            {**posted(page_form(done_preview), yaml="queues: []\n"), "action": "check"})
    assert bad.status_code == 400 and "'queues' must be a non-empty list" in bad.json()["errors"][0]


def test_running_with_a_change_reruns_only_the_proposed_side_in_place(done_preview, alice_client, monkeypatch, settings,
                                                                        django_capture_on_commit_callbacks):
    from webapp.experiments import tasks

    settings.SCHEDLAB_SIM_SLOTS, settings.SCHEDLAB_SLOTS_PER_USER = 4, 4   # room for both: the dispatcher sends them
    sent: list[int] = []
    monkeypatch.setattr(tasks.run_simulation, "delay", lambda pk: sent.append(pk))
    before = {run.pk: (run.status, run.finished_at) for run in done_preview.experiment.runs.all()}
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("preview:propose", args=[done_preview.pk]),
                                     {**posted(page_form(done_preview), q0_walltime="1"), "action": "run"})
    assert response.status_code == 302 and response.url == done_preview.get_absolute_url()
    preview = Preview.objects.get(pk=done_preview.pk)
    assert preview.proposed_name == "mine" and "    walltime: 1h\n" in preview.proposed_text
    runs = {run.pk: run for run in preview.experiment.runs.all()}
    proposed = sorted(pk for pk, run in runs.items() if run.queues == "proposed")
    assert sorted(sent) == proposed and len(proposed) == 2
    for pk, run in runs.items():
        if run.queues == "proposed":
            assert run.status == "queued" and not run.result_dir.exists()
        else:
            assert (run.status, run.finished_at) == before[pk]   # current and recorded stay as they were
    compute(preview)
    assert {run.status for run in preview.experiment.runs.all()} == {"done"}


def test_a_change_is_refused_while_a_proposed_run_is_unfinished(done_preview, alice_client):
    run = done_preview.experiment.runs.filter(queues="proposed").first()
    type(run).objects.filter(pk=run.pk).update(status="running")
    response = alice_client.post(reverse("preview:propose", args=[done_preview.pk]),
                                 {**posted(page_form(done_preview), q0_walltime="1"), "action": "run"})
    assert response.status_code == 400 and "is still running: wait for it or cancel it first" in response.content.decode()
    assert Preview.objects.get(pk=done_preview.pk).proposed_text == CURRENT


def test_a_change_can_be_run_as_a_new_preview(done_preview, alice_client):
    response = alice_client.post(reverse("preview:propose", args=[done_preview.pk]),
                                 {**posted(page_form(done_preview), q1_user_max_jobs="1"), "action": "copy"})
    copy = Preview.objects.exclude(pk=done_preview.pk).get()
    assert response.status_code == 302 and response.url == copy.get_absolute_url()
    assert copy.current_text == CURRENT and parse_queue_config(copy.proposed_text).queues[1].user_max_jobs == 1
    assert copy.experiment.runs.count() == done_preview.experiment.runs.count()
    assert Preview.objects.get(pk=done_preview.pk).proposed_text == CURRENT


def test_the_page_of_a_finished_preview_has_the_editor_for_its_owner_only(done_preview, alice_client, bob_client):
    page = alice_client.get(done_preview.get_absolute_url()).content.decode()
    assert 'id="proposal-form"' in page and 'name="q0_walltime"' in page and "Run with this change" in page
    assert "The proposal is the current configuration: no limit differs." in page
    assert 'name="q1_pool" value="zewura"' in page
    from webapp.experiments.models import Experiment

    Experiment.objects.filter(pk=done_preview.experiment.pk).update(shared=True)
    assert 'id="proposal-form"' not in bob_client.get(done_preview.get_absolute_url()).content.decode()


def test_a_pool_naming_every_cluster_stays_as_written_when_its_row_is_left_alone():
    """A one-cluster machine's inferred pool [zewura] is "all clusters" ticked: not a change to report."""
    text = "queues:\n  - {name: q, walltime: 2h, pool: [zewura]}\n"
    form = ProposalForm(None, base=parse_queue_config(text), base_text=text, clusters=["zewura"])
    again = ProposalForm(posted(form, q0_walltime="1"), base=parse_queue_config(text), base_text=text,
                         clusters=["zewura"])
    assert again.is_valid(), again.errors
    assert again.cleaned_data["config"].queues[0].pool == ("zewura",)
    assert [c.limit for c in differences(parse_queue_config(text), again.cleaned_data["config"])] == ["walltime"]
