"""Which instant a trace's time 0 is: one answer for every reader of a trace's times (calendars,
charts by hour and weekday, exports, dated messages).

A plain SWF counts seconds from its header's ``UnixStartTime``; MetaCentrum's traces, AleaNG's
after reading (``TimeBase: absolute``) and the accounting logs (``TimeBase: absolute``) give Unix
epochs already, and a header's ``UnixStartTime`` then only says when the trace starts: adding it
again would count it twice (the OpenPBS jobs of a Saturday evening read as a Tuesday morning).
"""

from __future__ import annotations

from collections.abc import Mapping

#: submit times above this (1980-01-01) are Unix epochs already, whatever the header says
EPOCH_THRESHOLD = 315_532_800
#: what readers whose times are Unix epochs write as the metadata's ``TimeBase``
ABSOLUTE = "absolute (Unix epochs)"


def epoch_origin(metadata: Mapping[str, object], first_submit: float | None) -> int | None:
    """The Unix time of the trace's time 0: 0 when its times are epochs already (``TimeBase``
    absolute, or a first submit past :data:`EPOCH_THRESHOLD`), its ``UnixStartTime`` when they count
    from it, None when the trace has no calendar."""
    if str(metadata.get("TimeBase", "")).startswith("absolute"):
        return 0
    if first_submit is not None and first_submit > EPOCH_THRESHOLD:
        return 0
    try:
        start = int(float(str(metadata.get("UnixStartTime", "")).split()[0]))
    except (ValueError, IndexError):
        return None
    return start if start > 0 else None
