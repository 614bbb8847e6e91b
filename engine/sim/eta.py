"""How long a run still needs, from the share of jobs done so far and the time it took.

The estimate assumes the rest goes at the average pace so far; a queue that grows later makes
the real end later, so callers show it as an estimate ("about ... left").
"""

from __future__ import annotations


def time_left(fraction: float, elapsed: float) -> float | None:
    """Seconds left at the average pace so far; None before anything is done (no pace yet)."""
    if fraction <= 0.0 or elapsed <= 0.0:
        return None
    if fraction >= 1.0:
        return 0.0
    return elapsed * (1.0 - fraction) / fraction


def format_duration(seconds: float | None) -> str:
    """``"1 h 05 min"``, ``"4 min 10 s"``, ``"12 s"``; ``"?"`` when unknown."""
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
