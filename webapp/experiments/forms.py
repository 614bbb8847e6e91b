"""The new-experiment form, generated from the engine's policy registry.

Every preset in engine.policies.registry.catalog() gets a checkbox and one field per parameter,
typed after its schema; a preset added to the registry appears here without touching this file.
"""

from __future__ import annotations

from typing import Any

from django import forms

from engine.api import POLICY_FAMILIES, formula_grammar, list_policies, workload_options
from webapp.allocations.models import AllocationSet
from webapp.core.permissions import Viewer, visible_to
from webapp.experiments.models import MAX_PROCS, MAX_SEED, Experiment
from webapp.experiments.replicates import KINDS as REPLICATE_KINDS
from webapp.experiments.replicates import ReplicateChoice, counted_of
from webapp.experiments.services import (
    ExperimentError,
    checked_days,
    parse_sweep_values,
    plan_runs,
    resolve_policy,
)
from webapp.traces.models import Machine, Trace

#: the algorithms the "your own order" card offers (each has a node-level form too)
OWN_ALGORITHMS = ("easy", "conservative", "none", "firstfit")

MACHINE_SOURCES = [
    ("header", "the trace's own size (header or upload)"),
    ("machine", "a machine description"),
    ("size", "a number of processors"),
]


def param_label(param: dict[str, Any]) -> str:
    """The parameter in words, with its unit: "fair-share half-life (h)"."""
    label = param.get("label") or param["name"].replace("_", " ")
    return f"{label} ({param['unit']})" if param.get("unit") else label


def param_field(param: dict[str, Any]) -> forms.Field:
    """A form field for one registry parameter schema: labelled in words and units, default shown."""
    label = param_label(param)
    description = param.get("description", "")
    default = param.get("default")
    kind = param.get("type")
    shown = "inf" if default in (None, "inf") and param.get("allow_infinity") else default
    help_text = f"{description}. Default: {shown}." if description else f"Default: {shown}."
    if param.get("allow_infinity"):
        return forms.CharField(label=label, help_text=help_text.replace("Default", "inf = unbounded. Default"),
                               initial=shown, required=False)
    if kind == "bool":
        return forms.BooleanField(label=label, help_text=f"{description}." if description else "",
                                  initial=bool(default), required=False)
    if kind == "text":
        return forms.CharField(label=label, help_text=help_text, initial=default, required=False)
    if kind == "choice":
        choices = [(c, c) for c in param.get("choices") or []]
        # not required: only the presets ticked are read, and an empty value means the default
        return forms.ChoiceField(label=label, help_text=help_text, choices=choices, initial=default, required=False)
    if kind == "int":
        return forms.IntegerField(label=label, help_text=help_text, initial=default, min_value=param.get("minimum"), required=False)
    return forms.FloatField(label=label, help_text=help_text, initial=default, min_value=param.get("minimum"), required=False)


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of a preset's description (the full text is in its tooltip)."""
    sentence = text.split(". ")[0].rstrip(".") + "."
    return sentence if len(sentence) <= limit else sentence[:limit - 1].rsplit(" ", 1)[0] + " …"


class RunSettingsForm(forms.Form):
    """The settings every run of an experiment or a study shares besides its policy: the trace (a
    parsed one the user may see), processor allocation, estimates, seed, and who may see the result."""

    trace = forms.ModelChoiceField(queryset=Trace.objects.none(), empty_label=None)
    allocation = forms.ChoiceField(choices=Experiment.Allocation.choices, initial="count")
    exact_estimates = forms.BooleanField(required=False, help_text="Use actual runtimes as the requested times.")
    seed = forms.IntegerField(initial=0, min_value=0, max_value=MAX_SEED)
    shared = forms.BooleanField(required=False, help_text="Everybody on this server may see it.")

    def __init__(self, user: Viewer, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["trace"].queryset = visible_to(Trace, user).filter(status=Trace.Status.READY)


class ExperimentForm(RunSettingsForm):
    name = forms.CharField(max_length=200, required=False, help_text="Optional; named after trace and policies otherwise.")
    machine_source = forms.ChoiceField(label="Machine", choices=MACHINE_SOURCES, initial="header", widget=forms.RadioSelect)
    machine = forms.ModelChoiceField(queryset=Machine.objects.none(), required=False, label="Machine description")
    procs = forms.IntegerField(label="Processors", min_value=1, max_value=MAX_PROCS, required=False)
    with_recorded = forms.BooleanField(
        required=False, initial=True, label="Show what really happened",
        help_text="Where the trace records start times (SWF wait field, PBS S records, sacct Start), add the "
                  "recorded run beside the simulations and compare each simulation with it.")
    allocations = forms.ModelChoiceField(
        queryset=AllocationSet.objects.none(), required=False, label="Allocations",
        help_text="Targets for Simultaneous Fair-Share (sfs presets) and target lines on the comparison.")
    load_factor = forms.FloatField(label="Load factor (× recorded arrival rate)", initial=1.0, required=False, min_value=0.01,
                                   help_text="Inter-arrival times divided by this: 2 = the same jobs arriving twice as fast. Default: 1.")
    days_from = forms.FloatField(label="From day", required=False, min_value=0,
                                 help_text="Days after the trace's first submit (day 0); empty = from the start.")
    days_to = forms.FloatField(label="To day", required=False, min_value=0,
                               help_text="Days after the first submit; empty = to the end of the trace.")
    own_use = forms.BooleanField(label="your own order", required=False,
                                 widget=forms.CheckboxInput(attrs={"class": "policy-use"}))
    own_formula = forms.CharField(label="Priority formula", required=False, max_length=500,
                                  widget=forms.TextInput(attrs={"placeholder": "(wait / requested) ** 3 * procs",
                                                                "autocomplete": "off", "spellcheck": "false"}))
    own_first = forms.ChoiceField(label="First", choices=[("largest", "largest value first"),
                                                          ("smallest", "smallest value first")],
                                  initial="largest", required=False)
    own_algorithm = forms.ChoiceField(label="Algorithm", choices=[(a, a) for a in OWN_ALGORITHMS], initial="easy",
                                      required=False)
    sweep_param = forms.ChoiceField(label="Sweep parameter", required=False)
    sweep_values = forms.CharField(label="Sweep values", required=False, help_text="For example: 1, 2, 5, 10, 20, inf")

    replicates = forms.ChoiceField(
        label="Replicates", required=False, initial="", widget=forms.RadioSelect,
        choices=[(key, text + (f" ({citation})" if citation else "")) for key, (text, citation) in REPLICATE_KINDS.items()],
        help_text="Is a difference real? Every policy also runs on many replicates of the trace; each difference "
                  "then comes with a paired bootstrap 95 % confidence interval and a verdict in words.")
    replicate_count = forms.IntegerField(label="N windows / K copies / N traces", required=False, min_value=2,
                                         max_value=1000, help_text="Weekly windows: empty = every week.")
    replicate_load = forms.FloatField(label="Resampling load F (× the trace's offered work)", required=False,
                                      min_value=0.05, initial=1.0)
    confirm_shake = forms.IntegerField(
        label="Confirm by shaking: K copies", required=False, min_value=2, max_value=1000,
        help_text="Optional: also K shaken copies of the whole trace (Tsafrir, Ouaknine & Feitelson, MASCOTS 2007); "
                  "each verdict then says whether it holds under shaking.")
    warmup = forms.CharField(label="Warm-up left out", required=False, max_length=20, initial="0",
                             help_text="The first part of each run the metrics leave out: days (2d) or jobs (500j).")
    cooldown = forms.CharField(label="Cool-down left out", required=False, max_length=20, initial="0",
                               help_text="The last part of each run left out: days (1d) or jobs (200j).")
    without_flurries = forms.BooleanField(
        label="Without flurries", required=False,
        help_text="Leave out the jobs of every flurry (one user's burst; Tsafrir & Feitelson, IPDPS 2006) "
                  "found in the trace, as the trace page lists them.")

    def __init__(self, user: Viewer, *args: Any, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.fields["machine"].queryset = visible_to(Machine, user)
        self.fields["allocations"].queryset = visible_to(AllocationSet, user)
        self.catalog = list_policies()
        self.workload = workload_options()
        for option in self.workload:  # once, for every run: the engine applies them to the workload
            self.fields[f"workload_{option['name']}"] = param_field(option)
        names: dict[str, str] = {option["name"]: param_label(option) for option in self.workload}
        for preset in self.catalog:
            self.fields[f"policy_{preset['name']}"] = forms.BooleanField(
                label=preset["name"], help_text=preset["description"], required=False,
                widget=forms.CheckboxInput(attrs={"class": "policy-use"}))
            for param in self.policy_params(preset):
                self.fields[f"param_{preset['name']}_{param['name']}"] = param_field(param)
                if param["type"] != "text":          # sweep values are numbers (a formula is not swept)
                    names.setdefault(param["name"], param_label(param))
        self.fields["sweep_param"].choices = [("", "no sweep")] + sorted(
            ((name, f"{label} [{name}]") for name, label in names.items()), key=lambda c: c[1])

    @staticmethod
    def policy_params(preset: dict[str, Any]) -> list[dict[str, Any]]:
        """A preset's own parameters (the workload options are asked once, for every policy)."""
        return [p for p in preset["params"] if not p.get("workload")]

    def workload_fields(self) -> list[Any]:
        return [self[f"workload_{option['name']}"] for option in self.workload]

    def policy_families(self) -> list[dict[str, Any]]:
        """For the template: families in registry order, each with its presets' checkbox and parameters."""
        families: dict[str, dict[str, Any]] = {key: {"key": key, "title": title, "policies": []}
                                               for key, title in POLICY_FAMILIES.items()}
        for p in self.catalog:
            family = families.setdefault(p["family"], {"key": p["family"], "title": p["family_title"], "policies": []})
            family["policies"].append({
                "preset": p, "summary": first_sentence(p["description"]), "use": self[f"policy_{p['name']}"],
                "params": [self[f"param_{p['name']}_{q['name']}"] for q in self.policy_params(p)]})
        return [family for family in families.values() if family["policies"]]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        source = data.get("machine_source")
        if source == "machine" and not data.get("machine"):
            self.add_error("machine", "Choose a machine description (or add one).")
        if source == "size" and not data.get("procs"):
            self.add_error("procs", "Give the number of processors.")
        workload = {}
        for option in self.workload:
            value = data.get(f"workload_{option['name']}")
            if value not in (None, "") or option["type"] == "bool":
                workload[option["name"]] = value
        policies = []
        for preset in self.catalog:
            if not data.get(f"policy_{preset['name']}"):
                continue
            params = {}
            for param in self.policy_params(preset):
                value = data.get(f"param_{preset['name']}_{param['name']}")
                if value not in (None, "") or param["type"] == "bool":
                    params[param["name"]] = value
            params.update(workload)
            spec = {"preset": preset["name"], "params": params}
            try:
                resolve_policy(spec)
            except ExperimentError as e:
                self.add_error(f"policy_{preset['name']}", str(e))
                continue
            policies.append(spec)
        if data.get("own_use"):
            own = self.own_policy(data, workload)
            if own is not None:
                policies.append(own)
        elif not policies and not any(data.get(f"policy_{p['name']}") for p in self.catalog):
            self.add_error(None, "Choose at least one policy.")
        try:
            values = parse_sweep_values(data.get("sweep_values", "")) if data.get("sweep_param") else []
            if policies:
                plan_runs(policies, data.get("sweep_param", "") if values or data.get("sweep_param") else "", values)
        except ExperimentError as e:
            self.add_error("sweep_values", str(e))
            values = []
        data["days"] = window_days(self, data)
        data["replicate_choice"] = self._replicates(data)
        data["policies"] = policies
        data["sweep_list"] = values
        return data

    def own_policy(self, data: dict[str, Any], workload: dict[str, Any]) -> dict[str, Any] | None:
        """The "your own order" card's policy (a formula ordering), or None with the error on its field."""
        spec = {"ordering": "formula", "algorithm": data.get("own_algorithm") or "easy",
                "params": {"formula": data.get("own_formula", ""), "first": data.get("own_first") or "largest",
                           **workload}}
        try:
            resolve_policy(spec)
        except ExperimentError as e:
            self.add_error("own_formula", str(e))
            return None
        return spec

    @staticmethod
    def formula_grammar() -> dict[str, Any]:
        """For the template: the formula's variables with units, functions and the literature's examples."""
        return formula_grammar()

    def _replicates(self, data: dict[str, Any]) -> ReplicateChoice | None:
        """The replicates asked for (None: none), or None with the error on its field."""
        kind = data.get("replicates") or ""
        if not kind:
            return None
        count = data.get("replicate_count")
        if kind != "weeks" and not count:
            noun = {"windows": "windows", "shake": "copies"}.get(kind, "traces")
            self.add_error("replicate_count", f"Give the number of {noun}.")
            return None
        choice = ReplicateChoice(kind, count, data.get("replicate_load") or 1.0, (data.get("warmup") or "0").strip(),
                                 (data.get("cooldown") or "0").strip(), bool(data.get("without_flurries")),
                                 confirm=data.get("confirm_shake"))
        try:
            counted_of(choice)
        except ExperimentError as e:
            self.add_error("cooldown" if "cool-down" in str(e) else "warmup", str(e))
            return None
        return choice


def window_days(form: forms.Form, data: dict[str, Any]) -> str:
    """The time window "FROM:TO" of a form's days_from and days_to fields ("" = the whole trace); a
    window that cannot be is the form's error on days_to."""
    low, high = data.get("days_from"), data.get("days_to")
    if low is None and high is None:
        return ""
    try:
        return checked_days(f"{'' if low is None else f'{low:g}'}:{'' if high is None else f'{high:g}'}")
    except ExperimentError as e:
        form.add_error("days_to", str(e))
        return ""


class ExperimentEditForm(forms.ModelForm):
    class Meta:
        model = Experiment
        fields = ["name", "description", "shared"]
