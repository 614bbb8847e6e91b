"""Queue limits written back as a configuration writes them (``12 h``, ``1 d``, ``500 GiB``): what
admission's messages and the preview's forms show. The platform's own, since the simulator's
messages need them (engine.sim may not import engine.metrics); engine.metrics.units re-exports
them beside the other formatting."""

from __future__ import annotations


def walltime_text(seconds: int) -> str:
    """A configured limit as it was most likely written: ``12 h``, ``1 d``, ``90 min``, ``36 h`` (exact:
    whole days as days, else whole hours, minutes or seconds; not rounded as :func:`duration_text`)."""
    if seconds % 86400 == 0:
        return f"{seconds // 86400} d"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def memory_text(kb: int) -> str:
    """``500 GiB``, ``1.5 GiB``, ``300 MiB`` (binary units, as the machine descriptions)."""
    for unit, size in (("TiB", 1 << 30), ("GiB", 1 << 20), ("MiB", 1 << 10)):
        if kb >= size:
            return f"{kb / size:.3g} {unit}"
    return f"{kb} KiB"
