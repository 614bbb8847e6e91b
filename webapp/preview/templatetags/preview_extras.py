"""Small filters for the preview tables."""

from __future__ import annotations

from typing import Any

from django import template

from engine.api import duration_text, percent_text, walltime_text
from webapp.preview.proposal import pool_words

register = template.Library()


@register.filter
def get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def split(text: str) -> list[str]:
    return text.split()


@register.filter
def percent(value: Any) -> str:
    return "" if value is None else percent_text(value)


@register.filter
def human(seconds: Any) -> str:
    """A duration in human units (``42 s``, ``12.5 min``, ``3.2 h``, ``2.1 d``)."""
    return duration_text(seconds)


@register.filter
def signed(seconds: Any) -> str:
    """A change of duration with its sign: ``+3.2 h``, ``−12.5 min``, ``±0 s``."""
    if seconds is None:
        return "–"
    value = float(seconds)
    if abs(value) < 0.5:
        return "±0 s"
    return ("+" if value > 0 else "−") + duration_text(abs(value))


@register.filter
def change_class(seconds: Any) -> str:
    """``better`` (jobs wait less), ``worse`` or ``same``: the colour of a change in the tables."""
    if seconds is None or abs(float(seconds)) < 0.5:
        return "same"
    return "better" if float(seconds) < 0 else "worse"


@register.filter
def ratio(value: Any) -> str:
    return "–" if value is None else f"{float(value):.2f}×"


@register.filter
def pairs(keys: str, titles: str) -> list[tuple[str, str]]:
    """``"a b"|pairs:"A,B"`` -> ``[("a", "A"), ("b", "B")]`` (table sections with their titles)."""
    return list(zip(keys.split(), titles.split(",")))


@register.filter
def reason(key: str) -> str:
    """An engine's reason key in words: ``request_over_queue_walltime`` -> ``request over queue walltime``."""
    return str(key).replace("_", " ")


@register.filter
def walltime(seconds: Any) -> str:
    """A queue's walltime as configured, in days or hours (``1 d``, ``12 h``)."""
    return "–" if seconds is None else walltime_text(int(seconds))


@register.filter
def pool(clusters: Any) -> str:
    """A queue's pool: its clusters, or "all clusters" when it has none (``None``)."""
    return pool_words(tuple(clusters) if clusters else None)


@register.filter
def held_pairs(row: dict) -> list[tuple[Any, Any]]:
    """A pending row's hours per reason as (current, proposed) pairs ("–" where that side has none)."""
    current, proposed = row.get("current"), row.get("proposed")
    count = len(current or proposed or [])
    return [((current or ["–"] * count)[i], (proposed or ["–"] * count)[i]) for i in range(count)]
