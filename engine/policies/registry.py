"""The one place that names policies: orderings, algorithms, their parameters and the presets.

The command line (``python -m engine policies``) and the web form both read :func:`catalog`;
:func:`resolve` turns a preset name, a JSON string or a dict into a validated :class:`PolicySpec`.
A new preset added here appears in both without touching either.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from engine.policies.base import Param, PolicyError, PolicySpec

#: Parameters of each ordering.
ORDERING_PARAMS: dict[str, tuple[Param, ...]] = {
    "fcfs": (),
    "sjf": (),
    "largest": (
        Param("masc", "int", math.inf,
              "maximum skipping count: no job is passed by more than this many later arrivals (inf = plain sorting)",
              minimum=0, allow_infinity=True),
    ),
}

#: Parameters of each algorithm.
ALGORITHM_PARAMS: dict[str, tuple[Param, ...]] = {
    "none": (),
    "firstfit": (),
    "easy": (),
    "conservative": (),
}

ORDERING_DESCRIPTIONS = {
    "fcfs": "submit order",
    "sjf": "shortest requested time first",
    "largest": "largest job first, with a maximum skipping count",
}


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    ordering: str
    algorithm: str
    overrides: dict[str, Any] = field(default_factory=dict)

    def params(self) -> tuple[Param, ...]:
        return ORDERING_PARAMS[self.ordering] + ALGORITHM_PARAMS[self.algorithm]

    def defaults(self) -> dict[str, Any]:
        values = {p.name: p.default for p in self.params()}
        values.update(self.overrides)
        return values


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("fcfs", "First come, first served: start jobs in submit order while the head fits (SSS).",
           "fcfs", "none"),
    Preset("sjf", "Shortest requested time first, no backfilling.", "sjf", "none"),
    Preset("sorted", "Largest job first, unlimited skipping (Paragon paper §5.1).", "largest", "none"),
    Preset("sorted-masc", "Largest job first, no job passed by more than MASC later arrivals (MASC 10).",
           "largest", "none", {"masc": 10}),
    Preset("easy", "FCFS with EASY backfilling: a reservation for the head job only.", "fcfs", "easy"),
    Preset("conservative", "FCFS with conservative backfilling: a reservation for every waiting job.",
           "fcfs", "conservative"),
    Preset("firstfit", "Any waiting job that fits starts, in submit order; no reservation.", "fcfs", "firstfit"),
    Preset("sorted-easy", "Largest job first with EASY backfilling (Paragon paper §5.2).", "largest", "easy"),
)}


def register(preset: Preset) -> None:
    """Add a preset (later policy families call this when their ordering/algorithm exists)."""
    PRESETS[preset.name] = preset


def catalog() -> list[dict[str, Any]]:
    """Every preset with its description and parameter schema, JSON-able (for forms and --help)."""
    result = []
    for preset in PRESETS.values():
        defaults = preset.defaults()
        params = []
        for param in preset.params():
            entry = param.to_dict()
            entry["default"] = Param(**{**param.__dict__, "default": defaults[param.name]}).to_dict()["default"]
            params.append(entry)
        result.append({"name": preset.name, "description": preset.description,
                       "ordering": preset.ordering, "algorithm": preset.algorithm, "params": params})
    return result


def resolve(spec: str | dict | PolicySpec) -> PolicySpec:
    """A preset name, a JSON string, ``{"preset": ..., "params": {...}}`` or
    ``{"ordering": ..., "algorithm": ..., "params": {...}}`` -> a validated PolicySpec."""
    if isinstance(spec, PolicySpec):
        spec = spec.to_dict()
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith("{"):
            try:
                spec = json.loads(text)
            except json.JSONDecodeError as exc:
                raise PolicyError(f"policy is not valid JSON: {exc.msg} at column {exc.colno}") from None
        else:
            spec = {"preset": text}
    if not isinstance(spec, dict):
        raise PolicyError(f"a policy is a preset name or an object, got {type(spec).__name__}")
    preset = _preset_of(spec)
    given = spec.get("params") or {}
    if not isinstance(given, dict):
        raise PolicyError("policy params must be an object of name: value")
    schema = {p.name: p for p in preset.params()}
    unknown = sorted(set(given) - set(schema))
    if unknown:
        known = ", ".join(schema) or "none"
        raise PolicyError(f"policy {preset.name}: unknown parameter {unknown[0]!r} (parameters: {known})")
    values = preset.defaults()
    for name, value in given.items():
        values[name] = schema[name].coerce(value)
    return PolicySpec(preset.name, preset.ordering, preset.algorithm, values)


def _preset_of(spec: dict) -> Preset:
    if "preset" in spec and spec["preset"] not in (None, "custom"):
        name = str(spec["preset"])
        if name not in PRESETS:
            raise PolicyError(f"unknown policy {name!r}: choose from {', '.join(PRESETS)}")
        return PRESETS[name]
    ordering, algorithm = spec.get("ordering"), spec.get("algorithm")
    if ordering not in ORDERING_PARAMS:
        raise PolicyError(f"unknown ordering {ordering!r}: choose from {', '.join(ORDERING_PARAMS)}")
    if algorithm not in ALGORITHM_PARAMS:
        raise PolicyError(f"unknown algorithm {algorithm!r}: choose from {', '.join(ALGORITHM_PARAMS)}")
    return Preset("custom", f"{ORDERING_DESCRIPTIONS[ordering]} with {algorithm}", ordering, algorithm)


def build_scheduler(spec: PolicySpec, sim: Any, *, seed: int = 0) -> Any:
    """The scheduler object the simulator drives for ``spec``."""
    from engine.policies.backfill import Easy, FirstFit, InOrder
    from engine.policies.conservative import Conservative
    from engine.policies.ordering import make_queue

    algorithms = {"none": InOrder, "firstfit": FirstFit, "easy": Easy, "conservative": Conservative}
    queue = make_queue(spec.ordering, sim, spec.params)
    return algorithms[spec.algorithm](sim, queue, spec.params)
