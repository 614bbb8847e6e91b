"""Forms: machine descriptions and queue configurations (upload or edit in the page, checked by the
engine's readers, errors naming the line), and a new preview."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.api import SHIPPED_QUEUE_CONFIGS, list_policies, parse_machines, parse_queue_config, shipped_queue_text
from webapp.core.forms import TextFileForm
from webapp.experiments.forms import param_field
from webapp.preview.models import INFERRED, INFERRED_LABEL, POLICIES, MachineFile, QueueFile
from webapp.preview.services import inference_problem

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


#: the one policy parameter a preview asks (the registry's; engine.policies.backfill)
BOUND = "backfill_bound"


def bound_schema() -> dict[str, Any]:
    """The registry's ``backfill_bound`` parameter (label, help, default), as the preview's backfilling
    policies share it; the preview asks it once for all its runs."""
    schemas = {p["name"]: p for preset in list_policies() for p in preset["params"]}
    return schemas[BOUND]


def accepts_bound(policy: str) -> bool:
    return any(p["name"] == BOUND for preset in list_policies() if preset["name"] == policy for p in preset["params"])


class PreviewForm(forms.Form):
    name = forms.CharField(max_length=190, initial="Queue reconfiguration")
    trace = forms.ModelChoiceField(queryset=None, help_text="A MetaCentrum trace (or any parsed trace).")
    machine = forms.ModelChoiceField(queryset=None, required=False,
                                     empty_label=f"{INFERRED_LABEL} (the hosts its jobs ran on)")
    current = forms.ChoiceField(label="Current configuration",
                                help_text="“Inferred from the trace”: every queue the trace names, with the walltime, "
                                          "core and per-user limits its recorded schedule shows (you can edit it "
                                          "afterwards like any configuration).")
    proposed = forms.ChoiceField(label="Proposed configuration")
    policy = forms.ChoiceField(choices=[(p, p) for p in POLICIES], initial="mrfs-easy",
                               help_text="Also run with the other fair-share on the proposed configuration "
                                         "(CPU-only vs multi-resource).")
    shared = forms.BooleanField(required=False, help_text="Everybody on this server may see it.")

    def __init__(self, *args: Any, traces: Any, machines: Any, queue_files: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        bound = param_field(bound_schema())
        bound.help_text = ("Backfilling policies: " + bound.help_text + " A bound like a production scheduler's "
                           "makes previews of long queues faster.")
        self.fields = {**{k: v for k, v in self.fields.items() if k != "shared"}, BOUND: bound,
                       "shared": self.fields["shared"]}
        self.fields["trace"].queryset = traces
        self.fields["machine"].queryset = machines
        choices = shipped_choices() + [(str(q.pk), q.name) for q in queue_files]
        self.queue_files = {str(q.pk): q for q in queue_files}
        self.fields["current"].choices = [(INFERRED, INFERRED_LABEL), *choices]
        self.fields["proposed"].choices = choices
        self.fields["current"].initial = INFERRED
        self.fields["proposed"].initial = "shipped:metacentrum-2014"

    def clean(self) -> dict[str, Any]:
        """Inferring needs a trace that records start times and queues (and hosts, for the machine)."""
        data = super().clean()
        trace = data.get("trace")
        wants_queues = data.get("current") == INFERRED
        wants_machine = "machine" in data and data.get("machine") is None
        if trace is not None and (wants_queues or wants_machine):
            problem = inference_problem(trace, queues=wants_queues, machine=wants_machine)
            if problem:
                self.add_error("current" if wants_queues else "machine", problem)
        data["params"] = self._params(data)
        return data

    def _params(self, data: dict[str, Any]) -> dict[str, Any]:
        """The policy parameters every run takes: a finite backfill bound, checked by the registry."""
        value = str(data.get(BOUND) or "").strip().lower()
        if value in ("", "inf"):
            return {}
        policy = data.get("policy")
        if policy and not accepts_bound(policy):
            self.add_error(BOUND, f"{policy} does not backfill: leave the bound at inf (or empty).")
            return {}
        try:
            bound = int(value)
        except ValueError:
            self.add_error(BOUND, f"a whole number of jobs (at least 1) or inf, not {value!r}")
            return {}
        if bound < 1:
            self.add_error(BOUND, "at least 1 job (or inf)")
            return {}
        return {BOUND: bound}

    def configuration(self, key: str) -> tuple[str, str]:
        """(name, YAML text) of a chosen configuration."""
        value = self.cleaned_data[key]
        if value == INFERRED:
            return INFERRED_LABEL, ""                 # the worker infers it and stores the text
        if value.startswith("shipped:"):
            name = value.split(":", 1)[1]
            return name, shipped_queue_text(name)
        chosen = self.queue_files[value]
        return chosen.name, chosen.text
