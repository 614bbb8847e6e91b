"""Bounds for the numbers every reader takes from text.

A field of 400 digits is a bad value that the reader names in a WorkloadError, never an
OverflowError when it reaches an int64 column, nor a ValueError from Python's limit on converting
long digit strings. Unicode digits (``٣``, ``²``) are not numbers here either.
"""

from __future__ import annotations

import re

#: The largest magnitude a reader accepts for a number: sums and differences of two such values
#: still fit the int64 arithmetic of the simulator.
MAX_MAGNITUDE = 2**62
#: The largest count of nodes, processors per node, GPUs or hosts one request may give: the
#: product of two such counts still fits int64.
MAX_COUNT = 2**31 - 1

_DIGITS = re.compile(r"[0-9]{1,19}")


def whole_number(text: str, *, maximum: int = MAX_MAGNITUDE) -> int | None:
    """``text`` (ASCII digits only) as an integer from 0 to ``maximum``, else None."""
    if not _DIGITS.fullmatch(text):
        return None
    value = int(text)
    return value if value <= maximum else None
