"""The one error type for bad input files: traces (every workload reader) and platform descriptions
(machines, queue configurations, allocations). At the bottom of the layers, so both import it."""

from __future__ import annotations


class WorkloadError(ValueError):
    """Bad input in a trace: names the file, the line (1-based), the field and what was expected."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [p for p in (self.file, f"line {self.line}" if self.line else None) if p]
        prefix = ":".join(where[:1]) + (f", {where[1]}" if len(where) > 1 else "")
        field = f" field {self.field}:" if self.field else ""
        return f"{prefix}:{field} {self.message}" if prefix else f"{field.strip()} {self.message}".strip()


def shown(value: object, limit: int = 40) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters (a 5,000-digit field stays one
    readable line)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
