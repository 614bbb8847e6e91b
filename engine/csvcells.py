"""Text cells that a spreadsheet would run as formulas, made inert: the one rule every CSV export
follows (the schedule CSV of the command line and the web, the metrics and study CSVs).

A cell whose text starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is opened by
Excel, LibreOffice and Google Sheets as a formula (``=HYPERLINK(...)``, ``@SUM(...)`` in an
allocation's name reached schedule.csv as it was); such a cell gets a leading ``'`` (OWASP's advice:
the spreadsheet shows the text, and the quote tells a reader it was added). Numbers (``-5``,
``+1.5e3``), a lone sign and numeric columns are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_FORMULA_START = frozenset("=+-@\t\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan)", re.IGNORECASE)


def neutralised(text: str) -> str:
    """``text`` with a leading ``'`` if a spreadsheet would take it for a formula, else itself."""
    if len(text) > 1 and text[0] in _FORMULA_START and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def safe_cells(row: Iterable[object]) -> list[object]:
    """A CSV row with its text cells neutralised (numbers and other values as they are)."""
    return [neutralised(cell) if isinstance(cell, str) else cell for cell in row]
