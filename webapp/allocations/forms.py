"""Allocations files: upload or paste, then edit in the browser; checked by the engine's reader."""

from __future__ import annotations

from typing import Any

from django import forms

from webapp.allocations.models import AllocationSet

EXAMPLE = ("allocation,members,award,period_days,target_factor,target\n"
           "alice,user:1;user:7,1000000,365,2,\nbob,group:3,,,,58\n")


class AllocationSetForm(forms.ModelForm):
    file = forms.FileField(required=False, help_text="A CSV file; replaces the text below.")

    class Meta:
        model = AllocationSet
        fields = ["name", "description", "shared", "file", "text"]
        widgets = {"text": forms.Textarea(attrs={"rows": 12, "class": "mono", "placeholder": EXAMPLE}),
                   "description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["text"].required = False
        self.fields["text"].help_text = (
            "allocation,members,award,period_days,target_factor,target — members user:ID or group:ID "
            "separated by ';'; award in processor-hours over period_days; target = target_factor (default 2) "
            "x award / (period_days x 24) unless target (processors) is given.")

    def clean(self) -> dict[str, Any]:
        from engine.platform.allocations import MAX_BYTES
        from engine.workload import WorkloadError

        data = super().clean()
        uploaded = data.get("file")
        name = (data.get("name") or "allocations").strip()
        if uploaded is not None:
            if uploaded.size > MAX_BYTES:
                self.add_error("file", f"{uploaded.name}: larger than {MAX_BYTES:,} bytes, not an allocations file.")
                return data
            try:
                data["text"] = uploaded.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error("file", f"{uploaded.name}: not UTF-8 text.")
                return data
            source, field = uploaded.name, "file"
        else:
            source, field = (AllocationSet(name=name).file_name, "text")
        if not (data.get("text") or "").strip():
            self.add_error("text", "Paste the allocations or choose a file.")
            return data
        try:
            from engine.platform.allocations import parse_allocations

            parse_allocations(data["text"], source=source)
        except WorkloadError as error:
            self.add_error(field, str(error))
        return data


class ScenarioForm(forms.Form):
    name = forms.CharField(max_length=190, initial="SFS paper §9 scenario")
    seed = forms.IntegerField(min_value=0, initial=0, help_text="Draws the runtimes (70-95 % of each request).")
    shared = forms.BooleanField(required=False, help_text="Everybody on this server may see and use them.")
