"""The schedule CSV, byte for byte what ``DataFrame.to_csv(path, index=False)`` writes, but fast.

pandas formats a 200,000-job schedule in about 0.8 s, more than the rest of the command around the
simulation. A schedule is whole numbers and a boolean column (``killed``), so every field is an
optional minus and digits, "True" or "False". Here each row is laid out in fixed-width slots (a
column's widest field, then the separator) of one byte matrix, the bytes a field does not use
left NUL; the matrix without its NULs is the CSV text (no CSV field holds a NUL). A column of any other
kind sends the whole frame to pandas, so the output is always pandas'.

Text columns (a node-level run's clusters, nodes and queues, user names) and fractions (a fair-share
weight) are written by the compiled kernel only (the numpy layout sends them to pandas): each
distinct value is formatted once, as pandas does (a string as the csv module writes a field, quoted
where it holds a comma, a quote or a line break; a fraction as numpy's ``astype(str)``), and the
kernel copies those bytes into each row.

A large schedule (or any, once numba is loaded) is formatted by a compiled kernel instead
(:func:`format_rows`, one pass over the values: 0.25 -> 0.03 s CPU for HPC2N-2002's 202,871 rows);
the numpy layout stays for small ones, where loading numba would cost more than it saves. Both
write the same bytes (tests compare them with each other and with pandas).
"""

from __future__ import annotations

import csv
import io
import re
import sys

import numpy as np
import pandas as pd

from engine.csvcells import neutralised
from engine.jit import njit

_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_]+$")   # a header pandas writes unquoted
_POWERS = 10 ** np.arange(19, dtype=np.int64)  # 1 .. 10**18
_UNSIGNED_POWERS = _POWERS.astype(np.uint64)     # the same, for the kernel's magnitudes (no sign to mind)
_INT64 = np.iinfo(np.int64)
_MINUS = ord("-")
#: "0000" .. "9999", each as the four bytes of one uint32 (a gather of whole words is quick)
_FOUR_DIGITS = (ord("0") + np.arange(10_000)[:, None] // np.array([1000, 100, 10, 1]) % 10).astype(np.uint8).view(
    np.uint32).ravel()
#: a mask per count of leading bytes to blank in a group of four digit characters (first byte lowest)
_KEEP_FROM = np.array([0xFFFFFFFF, 0xFFFFFF00, 0xFFFF0000, 0xFF000000, 0], dtype=np.uint32)
if np.little_endian is False:   # pragma: no cover - the masks count bytes from the lowest address
    _KEEP_FROM = _KEEP_FROM.byteswap()
_WORDS = np.frombuffer(b"True\0False", np.uint8).reshape(2, 5)   # "True" (and a NUL), "False"
#: from this many rows on (where a run has loaded numba anyway: engine.sim.simulator.COMPILED_FROM_JOBS),
#: or once numba is loaded, the compiled kernel formats the rows
COMPILED_FROM_ROWS = 30_000
_COMMA, _NEWLINE, _ZERO = ord(","), ord("\n"), ord("0")
_TRUE, _FALSE = np.frombuffer(b"True", np.uint8), np.frombuffer(b"False", np.uint8)


def write_schedule_csv(frame: pd.DataFrame, path: str) -> None:
    """The schedule as CSV at ``path`` (header, no index, "\\n" line ends), the text pandas writes;
    ``deadline`` in whole seconds, empty for regular jobs."""
    if "deadline" in frame:
        frame = frame.assign(deadline=frame["deadline"].round().astype("Int64"))
    frame = with_inert_text(frame)
    data = fast_text(frame)
    if data is None:
        frame.to_csv(path, index=False)
        return
    with open(path, "wb") as handle:
        handle.write(data)


def with_inert_text(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cell a spreadsheet would run as a formula neutralised
    (engine.csvcells), each distinct value looked at once; the frame itself when none is."""
    changed = {}
    for name in frame.columns:
        column = frame[name]
        if not (column.dtype == object or isinstance(column.dtype, pd.StringDtype)):
            continue
        distinct = pd.unique(column.dropna())
        inert = {value: neutralised(value) for value in distinct if isinstance(value, str)}
        replaced = {value: text for value, text in inert.items() if text != value}
        if replaced:
            changed[name] = column.replace(replaced)
    return frame.assign(**changed) if changed else frame


def fast_text(frame: pd.DataFrame) -> bytes | None:
    """The CSV text of a frame of integer, boolean and nullable-integer columns, else None."""
    names = [str(name) for name in frame.columns]
    if not names or len(set(names)) != len(names) or not all(_PLAIN_NAME.match(name) for name in names):
        return None
    if len(names) == 1 and frame[frame.columns[0]].hasnans:
        return None     # csv quotes a row that is one empty field: ""
    compiled = compiled_pays(len(frame))
    columns: list[Column | TextColumn] = []
    for name in frame.columns:
        column: Column | TextColumn | None = _column(frame[name])
        if column is None and compiled:
            column = _text_column(frame[name])
        if column is None or isinstance(column, TextColumn) and len(names) == 1:
            return None     # (one text column: an empty field would be quoted, as above)
        columns.append(column)
    header = (",".join(names) + "\n").encode("ascii")
    if compiled:
        return header + compiled_rows(columns, len(frame))
    numbers = [column for column in columns if not isinstance(column, TextColumn)]   # all of them, here
    fields = [_Booleans(values) if boolean else _Integers(values, present) for values, boolean, present in numbers]
    return header + _rows(fields, len(frame))


class _Integers:
    """Whole numbers: an optional minus, then the digits, most significant first; a missing value
    (``present`` False) is empty. The digits come four at a time from a table of "0000" .. "9999"."""

    def __init__(self, values: np.ndarray, present: np.ndarray | None = None) -> None:
        self.negative = values < 0
        self.magnitude = np.abs(values)
        top = int(self.magnitude.max()) if len(values) else 0
        self.widest = len(str(top))
        self.digits = np.ones(len(values), dtype=np.uint8)      # 0 is one digit
        for power in _POWERS[1:self.widest]:                     # (quicker than a searchsorted)
            self.digits += self.magnitude >= power
        self.signed = bool(self.negative.any())
        self.present = present
        self.width = self.widest + self.signed

    def write(self, out: np.ndarray) -> None:
        """Digits into ``out[:, signed:]`` (rows x widest), four at a time, leading zeros as NUL."""
        if not len(self.magnitude):
            return
        groups = -(-self.widest // 4)
        blank = (4 * groups - self.digits).astype(np.int64)       # leading zeros of the padded digits
        most = int(blank.max())
        rest = self.magnitude
        digits = out[:, self.signed:]
        for group in range(groups - 1, -1, -1):                   # least significant four first
            rest, four = np.divmod(rest, 10_000)
            quad = _FOUR_DIGITS[four]
            if 4 * group < most:
                quad &= _KEEP_FROM[np.clip(blank - 4 * group, 0, 4)]
            chars = quad.view(np.uint8).reshape(-1, 4)
            skip = max(4 * groups - self.widest - 4 * group, 0)     # only the widest number's places
            first = 4 * group - (4 * groups - self.widest) + skip
            digits[:, first:first + 4 - skip] = chars[:, skip:]
        if self.signed:
            out[:, 0] = np.where(self.negative, _MINUS, 0)
        if self.present is not None:
            out[~self.present] = 0


class _Booleans:
    """pandas writes booleans as True and False."""

    width = 5

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def write(self, out: np.ndarray) -> None:
        out[:] = _WORDS[np.where(self.values, 0, 1)]


#: a column as the writers take it: values (int64, or bool), whether it is boolean, which values are present
Column = tuple[np.ndarray, bool, np.ndarray | None]


def _column(series: pd.Series) -> Column | None:
    dtype = series.dtype
    if dtype == np.bool_:
        return series.to_numpy(np.bool_), True, None
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        values = series.to_numpy()
        if len(values) and (values.max() > _INT64.max or values.min() == _INT64.min):
            return None     # beyond what an int64 magnitude holds
        return values.astype(np.int64, copy=False), False, None
    if isinstance(dtype, pd.Int64Dtype | pd.Int32Dtype):
        values = series.to_numpy(np.int64, na_value=0)
        if len(values) and values.min() == _INT64.min:
            return None
        return values, False, series.notna().to_numpy()
    return None


class TextColumn:
    """A column of strings (missing values written empty): each row's value as a number (``codes``,
    -1: missing) into the distinct values' CSV text, ``text[offsets[k]:offsets[k + 1]]`` (UTF-8)."""

    def __init__(self, codes: np.ndarray, fields: list[str]) -> None:
        self.codes = codes
        encoded = [field.encode("utf-8") for field in fields]
        self.text = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        self.offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(field) for field in encoded], out=self.offsets[1:])
        self.widest = int(np.diff(self.offsets).max()) if encoded else 0


def _text_column(series: pd.Series) -> TextColumn | None:
    """A column of strings and missing values, or of float64, as a :class:`TextColumn`, else None
    (what pandas writes otherwise, e.g. ``str()`` of numbers in an object column, is left to it)."""
    dtype = series.dtype
    if dtype == np.float64:
        return _float_column(series.to_numpy())
    if not (isinstance(dtype, np.dtype) and dtype.kind == "O" or isinstance(dtype, pd.StringDtype)):
        return None
    values = series.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
        return None
    codes, uniques = pd.factorize(values)     # missing values: code -1
    return TextColumn(codes.astype(np.int64, copy=False), csv_fields(list(uniques)))


def _float_column(values: np.ndarray) -> TextColumn:
    """float64 values as pandas writes them (``astype(str)``, NaN empty: pandas.io.formats' CSV path
    without a float_format), each distinct bit pattern formatted once (so -0.0 stays "-0.0")."""
    missing = np.isnan(values)
    bits, codes = np.unique(values.view(np.int64), return_inverse=True)
    codes = codes.astype(np.int64, copy=False).reshape(-1)
    codes[missing] = -1
    return TextColumn(codes, bits.view(np.float64).astype(str).tolist())


_SPECIAL = re.compile(r'[,"\r\n]')


def csv_fields(values: list[str]) -> list[str]:
    """Each string as the csv module writes it as one field of a row of several (pandas' dialect:
    quote only where needed, a quote doubled): the csv module formats those that hold a comma, a
    quote or a line break; every other string is its own text."""
    if not _SPECIAL.search("".join(values)):
        return values
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    fields = []
    for value in values:
        if _SPECIAL.search(value):
            buffer.seek(0)
            buffer.truncate()
            writer.writerow([value, ""])
            value = buffer.getvalue()[:-2]      # without the empty second field's "," and the "\n"
        fields.append(value)
    return fields


def compiled_pays(rows: int) -> bool:
    """Whether the kernel formats ``rows`` rows: from COMPILED_FROM_ROWS on, or once numba is loaded."""
    return rows >= COMPILED_FROM_ROWS or "numba" in sys.modules


def compiled_rows(columns: list[Column | TextColumn], rows: int) -> bytes:
    """The rows' text (no header) as :func:`format_rows` writes it: the same bytes as :func:`_rows`
    (and, for text columns, as pandas)."""
    values = np.empty((len(columns), rows), dtype=np.int64)     # a column per row of this matrix
    present = np.ones((len(columns), rows), dtype=np.bool_)
    kinds = np.zeros(len(columns), dtype=np.int64)
    # every text column's distinct values one after the other: value v is text[starts[v]:starts[v + 1]]
    texts, offsets, text_at, distinct = [], [np.zeros(1, dtype=np.int64)], 0, 0
    widest = 0
    for index, column in enumerate(columns):
        if isinstance(column, TextColumn):
            kinds[index] = TEXT
            values[index] = column.codes + distinct
            present[index] = column.codes >= 0
            texts.append(column.text)
            offsets.append(column.offsets[1:] + text_at)
            text_at += len(column.text)
            distinct += len(column.offsets) - 1
            widest += column.widest
            continue
        values_, boolean, known = column
        values[index] = values_
        kinds[index] = BOOLEAN if boolean else NUMBER
        if known is not None:
            present[index] = known
        if boolean:
            widest += 5
        elif rows:
            widest += max(len(str(int(values_.max()))), len(str(int(values_.min()))))
    text = np.concatenate(texts) if texts else np.zeros(0, dtype=np.uint8)
    starts = np.concatenate(offsets)
    out = np.empty(rows * (widest + len(columns)), dtype=np.uint8)     # each field, then "," or "\n"
    return out[:format_rows(values, kinds, present, text, starts, out)].tobytes()


#: the kinds of column :func:`format_rows` writes
NUMBER, BOOLEAN, TEXT = 0, 1, 2


@njit(cache=True)
def format_rows(values, kinds, present, text, starts, out):  # pragma: no cover - compiled (tests run it as Python too)
    """Each row (``values[:, row]``) as CSV into ``out``, by the column's kind: True/False (BOOLEAN),
    empty where not ``present``, else the whole number (NUMBER) or ``text[starts[v]:starts[v + 1]]``
    (TEXT, v the value); the bytes written."""
    columns, rows = values.shape
    at = 0
    for row in range(rows):
        for column in range(columns):
            if column:
                out[at] = _COMMA
                at += 1
            value = values[column, row]
            kind = kinds[column]
            if kind == BOOLEAN:
                word = _TRUE if value else _FALSE
                for k in range(len(word)):
                    out[at + k] = word[k]
                at += len(word)
            elif not present[column, row]:
                continue
            elif kind == TEXT:
                first, last = starts[value], starts[value + 1]
                for k in range(last - first):
                    out[at + k] = text[first + k]
                at += last - first
            else:
                if value < 0:
                    out[at] = 45    # "-"
                    at += 1
                    value = -value
                magnitude = np.uint64(value)
                count = 1
                while count < 19 and magnitude >= _UNSIGNED_POWERS[count]:
                    count += 1
                end = at + count
                for k in range(1, count + 1):
                    out[end - k] = np.uint8(_ZERO + magnitude % np.uint64(10))
                    magnitude //= np.uint64(10)
                at = end
        out[at] = _NEWLINE
        at += 1
    return at


def _rows(fields: list[_Integers | _Booleans], rows: int) -> bytes:
    """Each row as fixed-width slots (a field's widest text, then "," or, at the row's end, "\\n"),
    the bytes a field does not use left NUL; the text is the slots in row order without the NULs."""
    text = np.zeros((rows, sum(field.width + 1 for field in fields)), dtype=np.uint8)
    at = 0
    for field in fields:
        field.write(text[:, at:at + field.width])
        text[:, at + field.width] = ord(",")
        at += field.width + 1
    text[:, -1] = ord("\n")
    return text.tobytes().translate(None, b"\0")
