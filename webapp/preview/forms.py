"""Forms: machine descriptions and queue configurations (upload or edit in the page, checked by the
engine's readers, errors naming the line), and a new preview."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.api import SHIPPED_QUEUE_CONFIGS, list_policies, parse_machines, parse_queue_config, shipped_queue_text
from webapp.core.forms import TextFileForm
from webapp.experiments.forms import param_field, param_label, window_days
from webapp.experiments.services import ExperimentError, parse_sweep_values, resolve_policy
from webapp.preview.models import INFERRED, INFERRED_LABEL, PARAMS, POLICIES, MachineFile, QueueFile
from webapp.preview.services import Setup, Texts, inference_problem

MAX_BYTES = 1_000_000
MACHINE_HELP = ("Alea .machines (TAB: id name nodes cores speed RAM_KB [properties]), AleaNG (8 columns, RAM in GB, "
                "GPUs), or YAML: clusters: [{name, nodes, cores, ram: 64 GiB, gpus, speed, properties, "
                "available_from, available_to}].")


class _TextFileForm(TextFileForm):
    max_bytes = MAX_BYTES


class MachineFileForm(_TextFileForm):
    class Meta:
        model = MachineFile
        fields = ["name", "description", "shared", "file", "text"]
        widgets = {"text": forms.Textarea(attrs={"rows": 14, "class": "mono"}),
                   "description": forms.Textarea(attrs={"rows": 2})}
        help_texts = {"text": MACHINE_HELP}

    def check(self, text: str, source: str) -> None:
        parse_machines(text, source=source)


class QueueFileForm(_TextFileForm):
    class Meta:
        model = QueueFile
        fields = ["name", "description", "shared", "file", "text"]
        widgets = {"text": forms.Textarea(attrs={"rows": 24, "class": "mono"}),
                   "description": forms.Textarea(attrs={"rows": 2})}
        help_texts = {"text": "YAML: mode (priority | virtual) and queues: name, walltime, priority, max_cores, "
                              "max_share, user_max_jobs, user_max_cores, pool, single_node (see the README)."}

    def check(self, text: str, source: str) -> None:
        parse_queue_config(text, source=source)


def shipped_choices() -> list[tuple[str, str]]:
    return [(f"shipped:{name}", f"{name} (shipped)") for name in SHIPPED_QUEUE_CONFIGS]


#: the one parameter only backfilling presets take
BOUND = "backfill_bound"


def param_schemas() -> dict[str, dict[str, Any]]:
    """The registry's schemas of PARAMS (label, help, default, type), as the preview's presets share them."""
    schemas = {p["name"]: p for preset in list_policies() if preset["name"] in POLICIES for p in preset["params"]}
    return {name: schemas[name] for name in PARAMS}


def accepts(policy: str, param: str) -> bool:
    return any(p["name"] == param for preset in list_policies() if preset["name"] == policy for p in preset["params"])


class PreviewForm(forms.Form):
    name = forms.CharField(max_length=190, initial="Queue reconfiguration")
    trace = forms.ModelChoiceField(queryset=None, help_text="A MetaCentrum trace (or any parsed trace).")
    machine = forms.ModelChoiceField(queryset=None, required=False,
                                     empty_label=f"{INFERRED_LABEL} (the hosts its jobs ran on)")
    current = forms.ChoiceField(label="Current configuration",
                                help_text="“Inferred from the trace”: every queue the trace names, with the walltime, "
                                          "core and per-user limits its recorded schedule shows (you can edit it "
                                          "afterwards like any configuration).")
    proposed = forms.ChoiceField(label="Proposed configuration",
                                 help_text="You can change it on the preview's page and run it again there: "
                                           "start from the inferred one to change a limit or two.")
    policy = forms.ChoiceField(choices=[(p, p) for p in POLICIES], initial="mrfs-easy",
                               help_text="Also run with the other fair-share on the proposed configuration "
                                         "(CPU-only vs multi-resource).")
    days_from = forms.FloatField(label="From day", required=False, min_value=0,
                                 help_text="Only the jobs submitted from this many days after the first submit; "
                                           "empty = from the start. The page shows the window as dates.")
    days_to = forms.FloatField(label="To day", required=False, min_value=0, help_text="Empty = to the end of the trace.")
    sweep_param = forms.ChoiceField(label="Sweep parameter", required=False)
    sweep_values = forms.CharField(label="Sweep values", required=False,
                                   help_text="A current, proposed and counterpart run per value, e.g. 10, 100, inf.")
    shared = forms.BooleanField(required=False, help_text="Everybody on this server may see it.")

    def __init__(self, *args: Any, traces: Any, machines: Any, queue_files: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        schemas = param_schemas()
        asked = {name: param_field(schema) for name, schema in schemas.items()}
        asked[BOUND].help_text = ("Backfilling policies: " + asked[BOUND].help_text + " A bound like a production "
                                  "scheduler's makes previews of long queues faster.")
        order = list(self.fields)
        at = order.index("days_from")
        self.fields = {**{k: self.fields[k] for k in order[:at]}, **asked, **{k: self.fields[k] for k in order[at:]}}
        self.fields["sweep_param"].choices = [("", "no sweep")] + [(name, param_label(schemas[name])) for name in PARAMS]
        self.fields["trace"].queryset = traces
        self.fields["machine"].queryset = machines
        choices = shipped_choices() + [(str(q.pk), q.name) for q in queue_files]
        self.queue_files = {str(q.pk): q for q in queue_files}
        self.fields["current"].choices = [(INFERRED, INFERRED_LABEL), *choices]
        self.fields["proposed"].choices = [(INFERRED, INFERRED_LABEL), *choices]
        self.fields["current"].initial = INFERRED
        self.fields["proposed"].initial = "shipped:metacentrum-2014"

    def clean(self) -> dict[str, Any]:
        """Inferring needs a trace that records start times and queues (and hosts, for the machine)."""
        data = super().clean()
        trace = data.get("trace")
        wants_queues = INFERRED in (data.get("current"), data.get("proposed"))
        wants_machine = "machine" in data and data.get("machine") is None
        if trace is not None and (wants_queues or wants_machine):
            problem = inference_problem(trace, queues=wants_queues, machine=wants_machine)
            if problem:
                self.add_error("current" if wants_queues else "machine", problem)
        data["params"] = self._params(data)
        data["days"] = window_days(self, data)
        data["sweep_list"] = self._sweep(data)
        return data

    def _params(self, data: dict[str, Any]) -> dict[str, Any]:
        """The policy parameters every run takes: those given, each checked by the registry."""
        params: dict[str, Any] = {}
        policy = data.get("policy") or ""
        bound = str(data.get(BOUND) or "").strip().lower()
        if bound not in ("", "inf"):
            if policy and not accepts(policy, BOUND):
                self.add_error(BOUND, f"{policy} does not backfill: leave the bound at inf (or empty).")
            else:
                try:
                    params[BOUND] = int(bound)
                except ValueError:
                    self.add_error(BOUND, f"a whole number of jobs (at least 1) or inf, not {bound!r}")
                else:
                    if params[BOUND] < 1:
                        self.add_error(BOUND, "at least 1 job (or inf)")
        params.update({name: data[name] for name in PARAMS if name != BOUND and data.get(name) is not None})
        if policy and not self.errors:
            try:
                resolve_policy({"preset": policy, "params": params})
            except ExperimentError as error:
                self.add_error(None, str(error))
        return params

    def _sweep(self, data: dict[str, Any]) -> list[Any]:
        if not data.get("sweep_param"):
            return []
        try:
            values = parse_sweep_values(data.get("sweep_values", ""))
        except ExperimentError as error:
            self.add_error("sweep_values", str(error))
            return []
        if not values:
            self.add_error("sweep_values", f"sweep over {data['sweep_param']}: give at least one value")
        return values

    def configuration(self, key: str) -> tuple[str, str]:
        """(name, YAML text) of a chosen configuration ("" text: inferred when the preview is made)."""
        value = self.cleaned_data[key]
        if value == INFERRED:
            return INFERRED_LABEL, ""
        if value.startswith("shipped:"):
            name = value.split(":", 1)[1]
            return name, shipped_queue_text(name)
        chosen = self.queue_files[value]
        return chosen.name, chosen.text

    def texts(self) -> Texts:
        machine = self.cleaned_data["machine"]
        return Texts((machine.name, machine.text) if machine else (INFERRED_LABEL, ""),
                     self.configuration("current"), self.configuration("proposed"))

    def setup(self) -> Setup:
        data = self.cleaned_data
        return Setup(data["policy"], data["params"], data["days"], data["sweep_param"] if data["sweep_list"] else "",
                     data["sweep_list"])
