"""How long a run still needs, from the share of jobs done so far and the time it took.

The estimate assumes the rest goes at the average pace so far; a queue that grows later makes
the real end later, so callers show it as an estimate ("about ... left", written by
engine.metrics.units.countdown_text).
"""

from __future__ import annotations


def time_left(fraction: float, elapsed: float) -> float | None:
    """Seconds left at the average pace so far; None before anything is done (no pace yet)."""
    if fraction <= 0.0 or elapsed <= 0.0:
        return None
    if fraction >= 1.0:
        return 0.0
    return elapsed * (1.0 - fraction) / fraction

