"""The new-study form: a trace, a machine, policies from the registry and the grid's value lists."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.api import list_policies
from webapp.core.permissions import Viewer
from webapp.experiments.forms import RunSettingsForm, first_sentence
from webapp.experiments.services import ExperimentError
from webapp.experiments.models import MAX_PROCS
from webapp.studies.models import LOAD
from webapp.studies.services import parse_grid, plan_points


class StudyForm(RunSettingsForm):
    name = forms.CharField(max_length=200, required=False, help_text="Optional; named after the trace and grid otherwise.")
    procs = forms.IntegerField(label="Processors", min_value=1, max_value=MAX_PROCS, required=False,
                               help_text="Empty: the trace's own machine size.")
    policies = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    load_values = forms.CharField(label="Load factors", required=False, initial="1",
                                  help_text="Inter-arrival times divided by each, e.g. 0.5, 0.75, 1, 1.25")
    param = forms.ChoiceField(label="Policy parameter", required=False)
    param_values = forms.CharField(label="Its values", required=False, help_text="e.g. 1, 2, 5, 10, 20, inf")

    def __init__(self, user: Viewer, *args: Any, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        catalog = list_policies()
        self.fields["policies"].choices = [(p["name"], f"{p['name']}: {first_sentence(p['description'])}") for p in catalog]
        names = sorted({q["name"] for p in catalog for q in p["params"]})
        self.fields["param"].choices = [("", "none")] + [(n, n) for n in names]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        try:
            grid = parse_grid({LOAD: data.get("load_values", ""),
                               **({data["param"]: data.get("param_values", "")} if data.get("param") else {})})
            if data.get("param") and data["param"] not in grid:
                raise ExperimentError(f"give the values of {data['param']}")
            if data.get("policies"):
                data["planned"] = len(plan_points([{"preset": p} for p in data["policies"]], grid))
        except ExperimentError as e:
            self.add_error(None, str(e))
            grid = {}
        data["grid"] = grid
        return data
