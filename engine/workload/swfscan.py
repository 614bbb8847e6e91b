"""A compiled pass over an SWF file whose job lines are plain decimal numbers (the archive's cleaned
traces): the jobs as the float64 matrix pandas' parser makes of them, or nothing.

pandas' C parser spends about 0.35 s of CPU on HPC2N-2002's 202,871 lines, typing each column
first; this kernel reads the bytes once (about 0.03 s). It accepts only text it can vouch for:

* lines of exactly 18 fields separated by spaces or tabs, with optional spaces or tabs before and
  after, ending at ``\\n`` or at the end of the file; a field is an optional ``-``, ASCII digits,
  and optionally a ``.`` and more digits, 15 digits at most in all, not a negative zero. Its
  value is the digits as a whole number (exact in a float64) divided by the power of ten of its
  decimals (exact too): the correctly rounded value, which is what pandas' parser
  (``precise_xstrtod``: the same division) and Python's ``float`` (the validating pass) read;
* comment lines starting with ``;`` in their first column, and empty lines.

Anything else (an exponent, a ``+``, ``.5`` or ``5.``, a name, ``\\r``, a comment after a job or
indented, a blank line of spaces, a line of another length, no job at all) returns None, and the
reader goes the way it always did (engine.workload.swf: pandas, then the validating pass). So the
jobs, their order and their values are the same either way; tests read traces both ways.
"""

from __future__ import annotations

import gzip
import sys
import zlib

import numpy as np

from engine.jit import njit

FIELDS = 18
#: from this many line breaks on (about 30,000 jobs, where a command's run loads numba anyway:
#: engine.sim.simulator.COMPILED_FROM_JOBS), or once numba is loaded, the kernel pays for loading
#: numba; below, pandas' parser is quicker than numba's import
COMPILED_FROM_LINES = 30_000
_NEWLINE, _SEMICOLON, _SPACE, _TAB, _MINUS, _DOT, _ZERO, _NINE = 10, 59, 32, 9, 45, 46, 48, 57
_MOST_DIGITS = 15
#: 10**0 .. 10**15, each exact in a float64
_POWERS_OF_TEN = 10.0 ** np.arange(_MOST_DIGITS + 1)


def scan_file(path: str, compressed: bool, *, force: bool = False) -> np.ndarray | None:
    """The job lines of ``path`` (gzip if ``compressed``) as an (n, 18) float64 matrix, or None when
    the text is not plain SWF (see the module docstring), the gzip stream is not sound,
    or the file is too small for the kernel to pay (unless ``force``)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if compressed:
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        return None
    lines = data.count(b"\n") + 1
    if not force and lines < COMPILED_FROM_LINES and "numba" not in sys.modules:
        return None
    out = np.empty((FIELDS, lines), dtype=np.float64)     # a field per row: each column of the result contiguous
    rows = int(scan(np.frombuffer(data, dtype=np.uint8), out))
    return out[:, :rows].T if rows > 0 else None


@njit(cache=True)
def scan(data, out):  # pragma: no cover - compiled (tests run it through numba and as Python)
    """Fill ``out``'s first columns with the job lines (``out[field, job]``); their count, or -1 if a
    line is not plain."""
    n = len(data)
    i = 0
    row = 0
    while i < n:
        c = data[i]
        if c == _NEWLINE:                      # an empty line
            i += 1
            continue
        if c == _SEMICOLON:                    # a comment line
            while i < n and data[i] != _NEWLINE:
                i += 1
            continue
        column = 0
        while True:
            while i < n and (data[i] == _SPACE or data[i] == _TAB):
                i += 1
            if i >= n or data[i] == _NEWLINE:
                break
            if column == FIELDS:
                return -1
            negative = data[i] == _MINUS
            if negative:
                i += 1
            digits = 0
            value = 0
            while i < n and _ZERO <= data[i] <= _NINE:
                value = value * 10 + (int(data[i]) - _ZERO)
                digits += 1
                i += 1
            if digits == 0:
                return -1
            decimals = 0
            if i < n and data[i] == _DOT:
                i += 1
                while i < n and _ZERO <= data[i] <= _NINE:
                    value = value * 10 + (int(data[i]) - _ZERO)
                    decimals += 1
                    i += 1
                if decimals == 0:
                    return -1
            if digits + decimals > _MOST_DIGITS or (negative and value == 0):
                return -1
            if i < n and data[i] != _SPACE and data[i] != _TAB and data[i] != _NEWLINE:
                return -1
            number = float(value) / _POWERS_OF_TEN[decimals]
            out[column, row] = -number if negative else number
            column += 1
        if column != FIELDS:
            return -1
        row += 1
    return row
