"""Template filters over the one formatting module (engine.metrics.units): ``{% load units %}``, then
``{{ seconds|duration }}``, ``{{ share|percent }}``, ``{{ count|number }}``, ``{{ value|metric:"mean_wait" }}``,
``{{ "mean_wait"|metric_label }}``."""

from __future__ import annotations

from typing import Any

from django import template

from engine.api import duration_text, metric_heading, metric_label, metric_text, number_text, percent_text

register = template.Library()


@register.filter
def duration(seconds: Any) -> str:
    """``30317`` -> ``8.4 h``."""
    return duration_text(seconds)


@register.filter
def percent(share: Any, digits: int = 1) -> str:
    """``0.586`` -> ``58.6 %``."""
    return percent_text(share, int(digits))


@register.filter
def number(value: Any, digits: int = 0) -> str:
    """``1234567`` -> ``1,234,567``; ``8853.052|number:1`` -> ``8,853.1``."""
    return number_text(value, int(digits))


@register.filter
def metric(value: Any, code: str) -> str:
    """A value of the summary metric ``code`` as its kind is written (``8.4 h``, ``58.6 %``)."""
    return metric_text(code, value)


@register.filter(name="metric_label")
def metric_label_filter(code: str) -> str:
    """``mean_wait`` -> ``Mean wait``."""
    return metric_label(code)


@register.filter(name="metric_heading")
def metric_heading_filter(code: str) -> str:
    """``mean_wait`` -> ``Mean wait (s)``."""
    return metric_heading(code)


@register.filter
def get_metric(summary: Any, code: str) -> str:
    """``summary|get_metric:code``: that metric of a run's summary as people read it."""
    return metric_text(code, summary.get(code) if isinstance(summary, dict) else None)
