"""Numbers as people read them: the one place that says how a duration, a share, a count, a date or
a metric is written, for the command line, every web page, axis and export heading alike.

- :func:`duration_text`: seconds in the unit that fits (``42 s``, ``12.5 min``, ``3.2 h``, ``4.1 days``);
- :func:`countdown_text`: a time left as a clock reads it (``1 h 05 min``, ``4 min 10 s``);
- :func:`walltime_text`, :func:`memory_text`: a configured limit as written (``12 h``, ``1 d``, ``500 GiB``);
- :func:`percent_text`, :func:`number_text` (thousands separators), :func:`date_text` (a zone's wall clock);
- :data:`METRICS`: each summary metric's code -> its name in words, unit, kind and which way is better;
  :func:`metric_label`, :func:`metric_heading` (name and raw unit, for exports and axes) and
  :func:`metric_text` (a value formatted as its kind says).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import pandas as pd

# a configured limit as written (defined beside the queue limits: the simulator's messages need them too)
from engine.platform.limits_text import memory_text as memory_text
from engine.platform.limits_text import walltime_text as walltime_text

#: Duration units, largest first: (name, seconds, shown from this many seconds on). Days only from
#: two days on (36 h reads better than 1.5 days); the tick formatter of the web's time axes uses it too.
DURATION_UNITS: tuple[tuple[str, float, float], ...] = (
    ("days", 86_400.0, 2 * 86_400.0),
    ("h", 3_600.0, 3_600.0),
    ("min", 60.0, 60.0),
    ("s", 1.0, 0.0),
)
MISSING = "–"

Kind = Literal["duration", "percent", "count", "number", "text"]


def _finite(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def duration_text(seconds: object) -> str:
    """``42 s``, ``12.5 min``, ``3.2 h``, ``4.1 days`` (``–`` when missing); a minus sign is kept; under
    10 s with tenths (``2.5 s``), under 1 s with two figures (``0.04 s``)."""
    value = _finite(seconds)
    if value is None:
        return MISSING
    size = abs(value)
    for unit, length, shown_from in DURATION_UNITS:
        if size >= shown_from:
            if unit == "s":
                return _seconds(value)
            return f"{value / length:,.1f} {unit}"
    return f"{value:,.0f} s"   # pragma: no cover - the last unit is shown from 0


def _seconds(value: float) -> str:
    """Under a minute: whole seconds, tenths under 10 s, two figures under 1 s (a 0.04 s parse is not "0 s")."""
    size = abs(value)
    if size >= 10 or float(value).is_integer():
        return f"{value:,.0f} s"
    return f"{value:.1f} s" if size >= 1 else f"{value:.2g} s"


def countdown_text(seconds: float | None) -> str:
    """``"1 h 05 min"``, ``"4 min 10 s"``, ``"12 s"``: a time left, as a clock reads it; ``"?"`` when unknown."""
    if seconds is None:
        return "?"
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def percent_text(fraction: object, digits: int = 1) -> str:
    """A share (0.586) as ``58.6 %``; ``–`` when missing."""
    value = _finite(fraction)
    return MISSING if value is None else f"{100 * value:,.{digits}f} %"


def number_text(value: object, digits: int = 0) -> str:
    """``1,234,567`` (or with ``digits`` decimals: ``8,853.1``); ``–`` when missing."""
    number = _finite(value)
    return MISSING if number is None else f"{number:,.{digits}f}"


def date_text(epoch_seconds: object, zone: str = "UTC", *, with_time: bool = True) -> str:
    """A Unix time as the wall clock of ``zone`` reads it: ``1996-09-23 10:15`` (``–`` when missing).
    ``zone``: an IANA name (Europe/Stockholm), ``UTC`` or an offset ``UTC+01:00``."""
    value = _finite(epoch_seconds)
    if value is None:
        return MISSING
    stamp = pd.Timestamp(value, unit="s", tz="UTC").tz_convert(_zone(zone))
    return stamp.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")


def _zone(zone: str) -> str:
    """pandas' name for a zone: "UTC+01:00" (the accounting readers' offsets) as "+01:00"."""
    zone = zone or "UTC"
    return zone[3:] if zone.startswith("UTC") and len(zone) > 3 else zone


@dataclass(frozen=True)
class Metric:
    """How one summary metric is named and written."""

    label: str                 # in words, capitalised: "Mean wait"
    kind: Kind                 # how a value is written (duration_text, percent_text, ...)
    unit: str = ""             # the raw value's unit (exports, axes): "s", "jobs/h"; "" = a pure number
    digits: int = 0            # decimals of a number
    lower_is_better: bool = True

    def heading(self) -> str:
        """The name with the raw value's unit, for a column of raw values: ``Mean wait (s)``."""
        return f"{self.label} ({self.unit})" if self.unit else self.label

    def text(self, value: object) -> str:
        if self.kind == "duration":
            return duration_text(value)
        if self.kind == "percent":
            return percent_text(value, max(self.digits, 1))
        if self.kind == "text":
            return MISSING if value is None else str(value)
        shown = number_text(value, self.digits)
        return shown if shown == MISSING or self.kind == "count" or not self.unit else f"{shown} {self.unit}"


def _durations(stem: str, label: str) -> dict[str, Metric]:
    return {f"mean_{stem}": Metric(f"Mean {label}", "duration", "s"),
            f"median_{stem}": Metric(f"Median {label}", "duration", "s"),
            f"p95_{stem}": Metric(f"95th percentile {label}", "duration", "s"),
            f"max_{stem}": Metric(f"Maximum {label}", "duration", "s")}


def _ratios(stem: str, label: str) -> dict[str, Metric]:
    return {f"mean_{stem}": Metric(f"Mean {label}", "number", digits=2),
            f"median_{stem}": Metric(f"Median {label}", "number", digits=2),
            f"p95_{stem}": Metric(f"95th percentile {label}", "number", digits=2),
            f"max_{stem}": Metric(f"Maximum {label}", "number", digits=2)}


#: Every metric of engine.metrics.summary (and those policies and the deadline scenario add), by code.
METRICS: dict[str, Metric] = {
    "jobs": Metric("Jobs simulated", "count", "jobs"),
    "rejected_total": Metric("Jobs left out", "count", "jobs"),
    **_durations("wait", "wait"),
    **_durations("response", "response time"),
    **_ratios("bsld", "bounded slowdown (τ = 10 s)"),
    "max_stretch": Metric("Maximum stretch", "number", digits=2),
    "mean_stretch": Metric("Mean stretch", "number", digits=2),
    "weighted_turnaround": Metric("Size-weighted turnaround", "duration", "s"),
    "mean_abs_skip": Metric("Mean |skipping count|", "number", digits=1),
    "max_skip": Metric("Maximum skipping count", "count"),
    "utilization": Metric("Utilization", "percent", "fraction of capacity", lower_is_better=False),
    "makespan": Metric("Makespan", "duration", "s"),
    "throughput": Metric("Throughput", "number", "jobs/h", digits=1, lower_is_better=False),
    "jain_bsld": Metric("Jain fairness index (users' bounded slowdown)", "number", digits=3, lower_is_better=False),
    "killed": Metric("Jobs killed at their limit", "count", "jobs"),
    "wall_seconds": Metric("Simulation time", "duration", "s"),
    "mean_decision_ms": Metric("Mean decision time", "number", "ms", digits=1),
    "max_decision_ms": Metric("Maximum decision time", "number", "ms", digits=0),
    "deadline_jobs": Metric("Deadline jobs", "count", "jobs"),
    "regular_jobs": Metric("Regular jobs", "count", "jobs"),
    "mean_wait_regular": Metric("Mean wait, regular jobs", "duration", "s"),
    "mean_wait_deadline": Metric("Mean wait, deadline jobs", "duration", "s"),
    "mean_stretch_regular": Metric("Mean stretch, regular jobs", "number", digits=2),
    "mean_stretch_deadline": Metric("Mean stretch, deadline jobs", "number", digits=2),
    "max_stretch_regular": Metric("Maximum stretch, regular jobs", "number", digits=2),
    "deadline_misses": Metric("Deadlines missed", "count", "jobs"),
    "load_factor": Metric("Load factor", "number", "×", digits=2, lower_is_better=False),
}


def metric(code: str) -> Metric:
    """The metric ``code`` names; an unknown code gets its words (``foo_bar`` -> ``Foo bar``), a plain number."""
    known = METRICS.get(code)
    if known is not None:
        return known
    words = code.replace("_", " ").strip()
    return Metric(words[:1].upper() + words[1:], "number", digits=2)


def metric_label(code: str) -> str:
    """``mean_wait`` -> ``Mean wait``."""
    return metric(code).label


def metric_heading(code: str) -> str:
    """``mean_wait`` -> ``Mean wait (s)``: the name with the unit of the raw values (exports, axes)."""
    return metric(code).heading()


def metric_text(code: str, value: object) -> str:
    """A value of metric ``code`` as people read it: ``8.4 h``, ``58.6 %``, ``1,234``."""
    return metric(code).text(value)
