"""Trace and machine upload forms. Checks run here; storing happens in the view."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.api import WorkloadError, declared_procs, error_line, parse_machines, time_zone_named
from webapp.traces.models import Machine, Trace
from webapp.traces.uploads import InspectedUpload, UploadRejected, inspect_upload


class TraceUploadForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    procs = forms.IntegerField(
        label="Machine size (processors)", min_value=1, required=False,
        help_text="Needed only when the trace header has no MaxProcs or MaxNodes.",
    )
    shared = forms.BooleanField(required=False, help_text="Everybody on this server may see and use it.")
    machines = forms.FileField(
        label="Machine description", required=False,
        help_text="Optional: the machine the trace ran on (an AleaNG .machines file such as wagap-2013.swf.machines, "
                  "or the CSV or YAML of a preview's machine). The page then gives the whole machine's size, and "
                  "jobs are cleaned against it; without one an extended trace shows only the hosts its jobs ran on.")
    file = forms.FileField(help_text="SWF, plain or gzip-compressed (.swf, .swf.gz), or an extended MetaCentrum / "
                                     "AleaNG trace (recognised by its content).")
    memory_unit = forms.ChoiceField(
        label="Memory unit (extended traces)", required=False,
        choices=[("", "the format's: bytes for MetaCentrum, KB for AleaNG"), ("bytes", "bytes"), ("KB", "KB"),
                 ("MB", "MB"), ("GB", "GB")],
        help_text="Unit of the requested-memory field of a MetaCentrum or AleaNG trace (RAM per node).")

    skip_bad_lines = forms.BooleanField(
        label="Skip bad lines", required=False,
        help_text="Leave out lines that cannot be read, count them and name the first ten on the trace's page "
                  "(as the command line's --skip-bad-lines). Off: the first bad lines are named and nothing is stored.")

    time_zone = forms.CharField(
        label="Time zone", max_length=64, required=False,
        help_text="The zone the log's dates are in and are shown in: an IANA name (Europe/Prague) or an offset "
                  "(UTC+01:00). Empty: the log's own (a PBS log's is read from its records; else the header's, "
                  "else UTC).")

    inspected: InspectedUpload | None = None
    machine: Any = None       # the machine description read (engine.api.Machine), when one came

    def clean_time_zone(self) -> str:
        return checked_zone(self.cleaned_data.get("time_zone", ""))

    def clean_machines(self) -> dict | None:
        """A machine description that reads (else the line and field at fault): its file name, text and cores."""
        uploaded = self.cleaned_data.get("machines")
        if not uploaded:
            return None
        if uploaded.size > MACHINES_MAX_BYTES:
            raise forms.ValidationError(f"{uploaded.name}: a machine description is at most "
                                        f"{MACHINES_MAX_BYTES // 1024:,} KB; this file has {uploaded.size:,} bytes.")
        try:
            text = uploaded.read().decode("utf-8")
        except UnicodeDecodeError:
            raise forms.ValidationError(f"{uploaded.name}: not a text file (UTF-8).") from None
        try:
            self.machine = parse_machines(text, source=uploaded.name)
        except WorkloadError as problem:
            raise forms.ValidationError(error_line(problem)) from None
        return {"name": uploaded.name[:255], "text": text, "cores": self.machine.cores}

    def clean(self) -> dict:
        data = super().clean()
        uploaded = data.get("file")
        if uploaded is None:
            return data
        try:
            self.inspected = inspect_upload(uploaded, uploaded.name, skip_bad_lines=bool(data.get("skip_bad_lines")))
        except UploadRejected as rejected:
            for problem in rejected.problems:
                self.add_error("file", problem)
            if rejected.bad_lines_only:
                self.add_error("file", "Tick \"Skip bad lines\" to store the trace without these lines.")
            return data
        extended = self.inspected.format != "swf"   # its machine comes from a machine description
        if data.get("procs") is None and declared_procs(self.inspected.header) is None and not extended \
                and self.machine is None:
            self.discard()
            self.add_error("procs", f"{uploaded.name}: the header has no MaxProcs or MaxNodes; give the machine size.")
        return data

    def discard(self) -> None:
        if self.inspected is not None:
            self.inspected.discard()
            self.inspected = None


#: the largest machine description taken with a trace (wagap-2013's is 55 bytes; a site of 10,000
#: clusters described in YAML stays far below)
MACHINES_MAX_BYTES = 1024 * 1024


class TraceEditForm(forms.ModelForm):
    class Meta:
        model = Trace
        fields = ["name", "description", "shared", "time_zone"]

    def clean_time_zone(self) -> str:
        return checked_zone(self.cleaned_data.get("time_zone", ""))


def checked_zone(text: str) -> str:
    """A time zone as typed (stripped), if the engine knows it; else a form error."""
    name = (text or "").strip()
    if name and time_zone_named(name) is None:
        raise forms.ValidationError(f"Unknown time zone {name[:64]!r}: give an IANA name such as Europe/Prague "
                                    "or an offset such as UTC+01:00.")
    return name


class MachineForm(forms.ModelForm):
    class Meta:
        model = Machine
        fields = ["name", "procs", "shared"]
