"""Allocations files: upload or paste, then edit in the browser; checked by the engine's reader."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.api import parse_allocations
from webapp.allocations.models import AllocationSet
from webapp.core.forms import TextFileForm

EXAMPLE = ("allocation,members,award,period_days,target_factor,target\n"
           "alice,user:1;user:7,1000000,365,2,\nbob,group:3,,,,58\n")


class AllocationSetForm(TextFileForm):
    file = forms.FileField(required=False, help_text="A CSV file; replaces the text below.")
    empty_message = "Paste the allocations or choose a file."

    class Meta:
        model = AllocationSet
        fields = ["name", "description", "shared", "file", "text"]
        widgets = {"text": forms.Textarea(attrs={"rows": 12, "class": "mono", "placeholder": EXAMPLE}),
                   "description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["text"].help_text = (
            "allocation,members,award,period_days,target_factor,target — members user:ID or group:ID "
            "separated by ';'; award in processor-hours over period_days; target = target_factor (default 2) "
            "x award / (period_days x 24) unless target (processors) is given.")

    def check(self, text: str, source: str) -> None:
        parse_allocations(text, source=source)


class ScenarioForm(forms.Form):
    name = forms.CharField(max_length=190, initial="SFS paper §9 scenario")
    seed = forms.IntegerField(min_value=0, initial=0, help_text="Draws the runtimes (70-95 % of each request).")
    shared = forms.BooleanField(required=False, help_text="Everybody on this server may see and use them.")
