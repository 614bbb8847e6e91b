"""Forms of a preview on a site's own files: the upload (Slurm's slurm.conf and sacctmgr dumps, or PBS's
print server, sched_config and resource_group, with a trace) and the proposal (the common keys as
fields, every file as text; both edit one copy of the files)."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.api import SITE_FILES, SiteKey, print_server_text
from webapp.preview.sites import MAX_FILE_CHARS

#: the upload's file fields: field name -> (site kind, file name, label, help)
UPLOADS = {
    "slurm_conf": ("slurm", "slurm.conf", "slurm.conf", "The controller's slurm.conf (or scontrol write config's copy)."),
    "qos": ("slurm", "qos", "QOS dump (optional)", "sacctmgr -P show qos > qos.txt"),
    "assoc": ("slurm", "assoc", "Association dump (optional)", "sacctmgr -P show assoc > assoc.txt"),
    "pbs_server": ("pbs", "print server", "PBS print server", "qmgr -c 'print server' > print_server.txt"),
    "sched_config": ("pbs", "sched_config", "sched_config (optional)", "$PBS_HOME/sched_priv/sched_config"),
    "resource_group": ("pbs", "resource_group", "resource_group (optional)", "$PBS_HOME/sched_priv/resource_group"),
}


def sweep_fields(required: bool) -> dict[str, forms.Field]:
    """The two fields that ask a sweep: the key's label and its values (the upload's, optional; and
    the site preview page's, to sweep after creation)."""
    return {
        "sweep_key": forms.CharField(
            required=required, max_length=100, label="Sweep a key" + ("" if required else " (optional)"),
            help_text="A key as the proposal form names it: bf_max_job_test, PriorityWeightFairshare, long MaxTime "
                      "(a partition's), normal MaxJobsPU (a QOS's); PBS: backfill_depth, workq max_run (a queue's). "
                      "Current and proposed then run once per value."),
        "sweep_values": forms.CharField(
            required=required, max_length=1000, label="Sweep values",
            help_text="As the file writes them, separated by commas: 100, 500, 1000 or 1-00:00:00, 2-00:00:00 or "
                      "[u:PBS_GENERIC=1], [u:PBS_GENERIC=2]."),
    }


class SiteSweepForm(forms.Form):
    """A sweep added to an existing site preview (replacing its current and proposed runs, and any
    earlier sweep, by one per value)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields.update(sweep_fields(required=True))


class SiteUploadForm(forms.Form):
    name = forms.CharField(max_length=190, initial="My site as configured")
    trace = forms.ModelChoiceField(queryset=None, help_text="The site's accounting log (sacct dump or PBS "
                                                              "accounting log), uploaded as a trace.")
    cpus = forms.IntegerField(required=False, min_value=1, max_value=100_000_000, label="CPUs of the machine",
                              help_text="PBS: the print server names no nodes, so give the machine's CPUs (default: "
                                        "the trace's). Slurm: slurm.conf's NodeName lines say it; this overrides them.")
    shared = forms.BooleanField(required=False, label="Share with everybody on this server")

    def __init__(self, *args: Any, traces: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["trace"].queryset = traces
        for field, (_, _, label, help_text) in UPLOADS.items():
            self.fields[field] = forms.FileField(required=False, label=label, help_text=help_text)
        self.fields.update(sweep_fields(required=False))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        kinds = {UPLOADS[field][0] for field in ("slurm_conf", "pbs_server") if data.get(field)}
        if len(kinds) != 1:
            raise forms.ValidationError("Give either slurm.conf (Slurm) or the print server (PBS); without them, "
                                        "preview a reconfiguration inferred from the trace instead.")
        kind = kinds.pop()
        texts = {}
        for field, (field_kind, name, label, _) in UPLOADS.items():
            upload = data.get(field)
            if not upload:
                continue
            if field_kind != kind:
                raise forms.ValidationError(f"{label} is a {field_kind.upper()} file: it does not go with a "
                                            f"{kind.upper()} site")
            raw = upload.read(MAX_FILE_CHARS + 1)
            if len(raw) > MAX_FILE_CHARS:
                raise forms.ValidationError(f"{name}: more than {MAX_FILE_CHARS:,} bytes")
            texts[name] = raw.decode("utf-8", errors="replace")
            if name == "print server":       # qstat -Qf output is taken too: stored as print server writes it
                texts[name] = print_server_text(texts[name])
        data["kind"], data["texts"] = kind, texts
        return data


class SiteProposalForm(forms.Form):
    """The proposal: a field per common key (its value in ``base``) and a text per file. The texts as
    posted are the starting point (edited or not); each field whose value differs from the base's is then
    written into them (engine.platform.sitefiles.with_change)."""

    name = forms.CharField(max_length=190, label="Name of the proposal")

    def __init__(self, *args: Any, kind: str, base: dict[str, str], keys: list[SiteKey], swept: str = "",
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind, self.base, self.keys = kind, base, keys
        for index, key in enumerate(keys):
            self.fields[f"k{index}"] = forms.CharField(
                required=False, initial=key.value, label=key.label, max_length=200,
                help_text="Swept: each run sets it to its value." if key.label == swept else "")
        for index, name in enumerate(SITE_FILES[kind]):
            self.fields[f"text{index}"] = forms.CharField(
                required=index == 0, initial=base.get(name, ""), label=name, strip=False,
                widget=forms.Textarea(attrs={"rows": 16, "class": "mono", "spellcheck": "false"}))

    def groups(self) -> list[tuple[str, list[Any]]]:
        """The key fields by file, for the template."""
        found: dict[str, list[Any]] = {}
        for index, key in enumerate(self.keys):
            found.setdefault(key.file, []).append(self[f"k{index}"])
        return list(found.items())

    def text_fields(self) -> list[Any]:
        return [self[f"text{index}"] for index in range(len(SITE_FILES[self.kind]))]

    def texts(self) -> dict[str, str]:
        data = self.cleaned_data
        return {name: data.get(f"text{index}") or "" for index, name in enumerate(SITE_FILES[self.kind])}

    def values(self) -> dict[int, str]:
        return {index: self.cleaned_data.get(f"k{index}") or "" for index in range(len(self.keys))}
