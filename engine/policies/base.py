"""What a policy is: an ordering of the waiting queue times an algorithm that decides what starts.

A policy is plain data (:class:`PolicySpec`, JSON-able) that the command line, the web form, the
database and result files share; :mod:`engine.policies.registry` names the presets.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.errors import shown


#: the entry-point group installed packages list their policy plugins in (engine.policies.plugins)
PLUGIN_GROUP = "schedlab.policies"


class PolicyError(ValueError):
    """A policy spec that names an unknown preset, parameter or a bad value."""


@dataclass(frozen=True)
class Param:
    """One parameter of a policy, with what a form needs to offer it."""

    name: str
    type: str                      # "int" | "float" | "bool" | "choice" | "text"
    default: Any
    description: str
    minimum: float | None = None
    choices: tuple[str, ...] | None = None
    allow_infinity: bool = False   # "inf" (or None) means unbounded
    label: str = ""                # in words, for forms ("maximum skipping count"); default: the name
    unit: str = ""                 # of the value ("h", "jobs", "share 0-1"); "" when it has none
    #: a further check of a coerced value (e.g. a formula's grammar): raises PolicyError
    check: Callable[[Any], object] | None = field(default=None, compare=False)

    def coerce(self, value: Any) -> Any:
        """Turn a value from JSON, a form or ``--set`` into this parameter's type, or raise PolicyError."""
        if self.allow_infinity and (value is None or _is_infinite(value)):
            return math.inf
        try:
            if self.type == "int":
                value = _whole(value)
            elif self.type == "float":
                value = float(value)
                if not math.isfinite(value):
                    raise ValueError
            elif self.type == "bool":
                value = _parse_bool(value)
            elif self.type == "choice":
                value = str(value)
                if self.choices and value not in self.choices:
                    raise ValueError
            elif self.type == "text":
                if not isinstance(value, str):
                    raise ValueError
        except (TypeError, ValueError, OverflowError):
            expected = {"int": "an integer between -2^62 and 2^62", "float": "a number", "bool": "true or false",
                        "choice": "one of " + ", ".join(self.choices or ()), "text": "text"}[self.type]
            if self.allow_infinity:
                expected += ' or "inf"'
            raise PolicyError(f"parameter {self.name}: expected {expected}, got {shown(value)}") from None
        if self.minimum is not None and value < self.minimum:
            raise PolicyError(f"parameter {self.name}: must be at least {self.minimum:g}, got {value!r}")
        if self.check is not None:
            self.check(value)
        return value

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "type": self.type, "default": to_json_value(self.default),
            "description": self.description, "minimum": self.minimum,
            "choices": list(self.choices) if self.choices else None, "allow_infinity": self.allow_infinity,
            "label": self.label or self.name.replace("_", " "), "unit": self.unit,
        }


#: The largest magnitude of an integer parameter: seeds, counts and limits stay within int64 sums.
MAX_PARAM = 2**62


def _is_infinite(value: Any) -> bool:
    """"inf", "infinity", "∞", "none", "" or a number too large for a float (``1e999``, JSON's too)."""
    if isinstance(value, float):
        return math.isinf(value) and value > 0
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text is None:
        return False
    if text in ("inf", "infinity", "+inf", "∞", "none", ""):
        return True
    try:
        return math.isinf(float(text)) and not text.startswith("-")
    except (ValueError, OverflowError):
        return False


def _whole(value: Any) -> int:
    """An integer from an int, a float that is whole (``3.0``) or text (``"12"``, ``"1e3"``), with
    magnitude at most MAX_PARAM; ValueError otherwise (bools too: ``true`` is not a count)."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not value.is_integer():
            raise ValueError(value)
        number = int(value)
    else:
        text = str(value).strip()
        if len(text) > 40:
            raise ValueError(value)
        try:
            number = int(text)
        except ValueError:
            as_float = float(text)
            if not as_float.is_integer():
                raise ValueError(value) from None
            number = int(as_float)
    if abs(number) > MAX_PARAM:
        raise ValueError(value)
    return number


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(value)


def to_json_value(value: Any) -> Any:
    """Infinity has no JSON spelling: it is written "inf"."""
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return value


@dataclass(frozen=True)
class PolicySpec:
    """A resolved policy: preset name, its ordering and algorithm, and every parameter's value.

    ``defaults`` are the preset's own values (set by the registry's resolve), so the label can name
    what differs without looking the preset up; ``title``, when set, is what the label calls the
    policy instead of the preset's name (a custom formula: the formula itself). Neither is part of
    the spec's data or equality."""

    preset: str
    ordering: str
    algorithm: str
    params: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    title: str = field(default="", compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"preset": self.preset, "ordering": self.ordering, "algorithm": self.algorithm,
                "params": {k: to_json_value(v) for k, v in self.params.items()}}

    @property
    def label(self) -> str:
        """A short human label: the preset and the parameters that differ from its defaults."""
        return self.label_without(())

    def label_without(self, names: Iterable[str]) -> str:
        """The label leaving out the parameters ``names`` (e.g. settings every run of an experiment shares)."""
        left_out = set(names)
        changed = [f"{k}={to_json_value(v)}" for k, v in self.params.items()
                   if self.defaults.get(k) != v and k not in left_out]
        return (self.title or self.preset) + (f" ({', '.join(changed)})" if changed else "")
