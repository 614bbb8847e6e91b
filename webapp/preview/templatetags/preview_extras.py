"""Small filters for the preview tables."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def split(text: str) -> list[str]:
    return text.split()


@register.filter
def hours(seconds: Any) -> str:
    return "" if seconds is None else f"{float(seconds) / 3600:.1f}"


@register.filter
def percent(value: Any) -> str:
    return "" if value is None else f"{float(value):.1%}"
