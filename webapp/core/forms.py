"""A form for small text objects (allocations, machine descriptions, queue configurations): upload
a file or edit the text in the page; an engine reader must accept it, and its error names the line."""

from __future__ import annotations

from typing import Any

from django import forms

from engine.api import WorkloadError, error_line


class TextFileForm(forms.ModelForm):
    """Subclasses name their model (with ``name``, ``text`` and a ``file_name`` property) and
    implement :meth:`check`, which raises the engine's WorkloadError for bad text."""

    file = forms.FileField(required=False, help_text="A file; replaces the text below.")
    max_bytes = 1_000_000
    empty_message = "Paste the text or choose a file."

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["text"].required = False

    def check(self, text: str, source: str) -> None:
        raise NotImplementedError

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        uploaded = data.get("file")
        source, field = type(self.instance)(name=(data.get("name") or "").strip()).file_name, "text"
        if uploaded is not None:
            if uploaded.size > self.max_bytes:
                self.add_error("file", f"{uploaded.name}: larger than {self.max_bytes:,} bytes.")
                return data
            try:
                data["text"] = uploaded.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error("file", f"{uploaded.name}: not UTF-8 text.")
                return data
            source, field = uploaded.name, "file"
        if not (data.get("text") or "").strip():
            self.add_error("text", self.empty_message)
            return data
        try:
            self.check(data["text"], source)
        except WorkloadError as error:
            self.add_error(field, error_line(error))
        return data
