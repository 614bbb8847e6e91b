"""The new-experiment form, generated from the engine's policy registry.

Every preset in engine.policies.registry.catalog() gets a checkbox and one field per parameter,
typed after its schema; a preset added to the registry appears here without touching this file.
"""

from __future__ import annotations

from typing import Any

from django import forms

from webapp.allocations.models import AllocationSet
from webapp.core.permissions import visible_to
from engine.api import list_policies
from webapp.experiments.models import Experiment
from webapp.experiments.services import ExperimentError, parse_sweep_values, plan_runs, resolve_policy
from webapp.traces.models import Machine, Trace

MACHINE_SOURCES = [
    ("header", "the trace's own size (header or upload)"),
    ("machine", "a machine description"),
    ("size", "a number of processors"),
]


def param_field(param: dict[str, Any]) -> forms.Field:
    """A form field for one registry parameter schema."""
    label = param["name"]
    help_text = param.get("description", "")
    default = param.get("default")
    kind = param.get("type")
    if param.get("allow_infinity"):
        return forms.CharField(label=label, help_text=help_text + " (inf for unbounded)",
                               initial="inf" if default in (None, "inf") else default, required=False)
    if kind == "bool":
        return forms.BooleanField(label=label, help_text=help_text, initial=bool(default), required=False)
    if kind == "choice":
        choices = [(c, c) for c in param.get("choices") or []]
        # not required: only the presets ticked are read, and an empty value means the default
        return forms.ChoiceField(label=label, help_text=help_text, choices=choices, initial=default, required=False)
    if kind == "int":
        return forms.IntegerField(label=label, help_text=help_text, initial=default, min_value=param.get("minimum"), required=False)
    return forms.FloatField(label=label, help_text=help_text, initial=default, min_value=param.get("minimum"), required=False)


class ExperimentForm(forms.Form):
    name = forms.CharField(max_length=200, required=False, help_text="Optional; named after trace and policies otherwise.")
    trace = forms.ModelChoiceField(queryset=Trace.objects.none(), empty_label=None)
    machine_source = forms.ChoiceField(label="Machine", choices=MACHINE_SOURCES, initial="header", widget=forms.RadioSelect)
    machine = forms.ModelChoiceField(queryset=Machine.objects.none(), required=False, label="Machine description")
    procs = forms.IntegerField(label="Processors", min_value=1, required=False)
    allocation = forms.ChoiceField(choices=Experiment.Allocation.choices, initial="count")
    exact_estimates = forms.BooleanField(required=False, help_text="Use actual runtimes as the requested times.")
    seed = forms.IntegerField(initial=0)
    allocations = forms.ModelChoiceField(
        queryset=AllocationSet.objects.none(), required=False, label="Allocations",
        help_text="Targets for Simultaneous Fair-Share (sfs presets) and target lines on the comparison.")
    load_factor = forms.FloatField(label="Load factor", initial=1.0, required=False, min_value=0.01,
                                   help_text="Inter-arrival times divided by this: 2 = the same jobs arriving twice as fast.")
    sweep_param = forms.ChoiceField(label="Sweep parameter", required=False)
    sweep_values = forms.CharField(label="Sweep values", required=False, help_text="For example: 1, 2, 5, 10, 20, inf")
    shared = forms.BooleanField(required=False, help_text="Everybody on this server may see it.")

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["trace"].queryset = visible_to(Trace, user).filter(status=Trace.Status.READY)
        self.fields["machine"].queryset = visible_to(Machine, user)
        self.fields["allocations"].queryset = visible_to(AllocationSet, user)
        self.catalog = list_policies()
        names: set[str] = set()
        for preset in self.catalog:
            self.fields[f"policy_{preset['name']}"] = forms.BooleanField(
                label=preset["name"], help_text=preset["description"], required=False)
            for param in preset["params"]:
                self.fields[f"param_{preset['name']}_{param['name']}"] = param_field(param)
                names.add(param["name"])
        self.fields["sweep_param"].choices = [("", "no sweep")] + [(n, n) for n in sorted(names)]

    def policy_groups(self) -> list[dict[str, Any]]:
        """For the template: each preset's checkbox and its parameter fields."""
        return [
            {"preset": p, "use": self[f"policy_{p['name']}"],
             "params": [self[f"param_{p['name']}_{q['name']}"] for q in p["params"]]}
            for p in self.catalog
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        source = data.get("machine_source")
        if source == "machine" and not data.get("machine"):
            self.add_error("machine", "Choose a machine description (or add one).")
        if source == "size" and not data.get("procs"):
            self.add_error("procs", "Give the number of processors.")
        policies = []
        for preset in self.catalog:
            if not data.get(f"policy_{preset['name']}"):
                continue
            params = {}
            for param in preset["params"]:
                value = data.get(f"param_{preset['name']}_{param['name']}")
                if value not in (None, "") or param["type"] == "bool":
                    params[param["name"]] = value
            spec = {"preset": preset["name"], "params": params}
            try:
                resolve_policy(spec)
            except ExperimentError as e:
                self.add_error(f"policy_{preset['name']}", str(e))
                continue
            policies.append(spec)
        if not policies and not any(data.get(f"policy_{p['name']}") for p in self.catalog):
            self.add_error(None, "Choose at least one policy.")
        try:
            values = parse_sweep_values(data.get("sweep_values", "")) if data.get("sweep_param") else []
            if policies:
                plan_runs(policies, data.get("sweep_param", "") if values or data.get("sweep_param") else "", values)
        except ExperimentError as e:
            self.add_error("sweep_values", str(e))
            values = []
        data["policies"] = policies
        data["sweep_list"] = values
        return data


class ExperimentEditForm(forms.ModelForm):
    class Meta:
        model = Experiment
        fields = ["name", "description", "shared"]
