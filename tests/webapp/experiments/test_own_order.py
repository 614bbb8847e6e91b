"""The new-experiment page's "your own order" card: a priority formula, checked as it is typed
(a small JSON endpoint), run with the chosen algorithm and labelled with the formula itself."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from engine.api import formula_grammar
from webapp.experiments.models import Experiment, Run
from webapp.experiments.tasks import run_simulation

pytestmark = pytest.mark.django_db


def form_data(trace, **extra):  # noqa: ANN001, ANN201
    return {"trace": trace.pk, "machine_source": "header", "allocation": "count", "seed": "0", **extra}


def check(client, formula: str, **extra: str) -> dict:  # noqa: ANN001
    response = client.get(reverse("experiments:formula_check"), {"formula": formula, **extra})
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    return response.json()


def test_the_card_shows_the_variables_with_units_and_the_literature_examples(alice_client, demo_trace):
    page = alice_client.get(reverse("experiments:new")).content.decode()
    card = page[page.index('id="family-own"'):page.index('id="family-queue"')]
    assert 'name="own_formula"' in card and 'name="own_first"' in card and 'name="own_algorithm"' in card
    grammar = formula_grammar()
    for variable in grammar["variables"]:
        assert f"<code>{variable['name']}</code></th><td>{escape(variable['unit'])}</td>" in card
    for example in grammar["examples"]:
        assert f'data-formula="{escape(example["formula"])}"' in card


def test_the_check_answers_with_the_label_or_the_engine_s_line(alice_client):
    good = check(alice_client, "(wait / requested) ** 3 * procs", first="largest")
    assert good == {"ok": True, "label": "(wait / requested) ** 3 * procs (largest first), easy", "dynamic": True}
    assert check(alice_client, "requested * procs", first="smallest", algorithm="conservative")["dynamic"] is False
    bad = check(alice_client, "wait / reqested")
    assert bad["ok"] is False and bad["error"].startswith("formula, column 8: unknown name 'reqested'")
    assert "first" in check(alice_client, "wait", first="biggest")["error"]
    assert "__import__" in check(alice_client, "__import__('os').system('true')")["error"]


def test_the_check_needs_a_login(client):  # noqa: ANN001
    response = client.get(reverse("experiments:formula_check"), {"formula": "wait"})
    assert response.status_code == 302 and "login" in response["Location"]


def test_a_formula_runs_with_its_algorithm_and_is_labelled_with_itself(alice_client, demo_trace):
    data = form_data(demo_trace, policy_easy="on", own_use="on", own_formula="requested * procs",
                     own_first="smallest", own_algorithm="conservative")
    assert alice_client.post(reverse("experiments:new"), data).status_code == 302
    runs = list(Run.objects.order_by("position"))
    assert [r.label for r in runs] == ["easy", "requested * procs (smallest first), conservative"]
    assert runs[1].policy["ordering"] == "formula" and runs[1].policy["algorithm"] == "conservative"
    run_simulation(runs[1].pk)
    runs[1].refresh_from_db()
    assert runs[1].status == "done" and runs[1].summary["policy"]["params"]["formula"] == "requested * procs"


def test_a_bad_formula_is_a_form_error_on_its_box_and_nothing_is_stored(alice_client, demo_trace):
    data = form_data(demo_trace, own_use="on", own_formula="procs ^ 2", own_first="largest", own_algorithm="easy")
    response = alice_client.post(reverse("experiments:new"), data)
    assert response.status_code == 400
    page = response.content.decode()
    card = page[page.index('id="family-own"'):page.index('id="family-queue"')]
    assert "column 7: unsupported operator ^" in card
    assert not Experiment.objects.exists()


def test_an_unticked_card_is_ignored(alice_client, demo_trace):
    data = form_data(demo_trace, policy_fcfs="on", own_formula="not checked at all ^^")
    assert alice_client.post(reverse("experiments:new"), data).status_code == 302
    assert [r.label for r in Run.objects.all()] == ["fcfs"]


def test_a_formula_is_not_offered_as_a_sweep_parameter(alice_client, demo_trace):
    page = alice_client.get(reverse("experiments:new")).content.decode()
    sweep = page[page.index('name="sweep_param"'):]
    sweep = sweep[:sweep.index("</select>")]
    assert 'value="formula"' not in sweep and 'value="backfill_bound"' in sweep
