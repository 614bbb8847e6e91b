"""The schedule CSV, byte for byte what ``DataFrame.to_csv(path, index=False)`` writes, but fast.

pandas formats a 200,000-job schedule in about 0.8 s, more than the rest of the command around the
simulation. A schedule is whole numbers and a boolean column (``killed``), so every field is an
optional minus and digits, "True" or "False". Here each row is laid out in fixed-width slots (a
column's widest field, then the separator) of one byte matrix, the bytes a field does not use
left NUL; the matrix without its NULs is the CSV text (no CSV field holds a NUL). A column of any other
kind (names, fractions: a node-level run's clusters, a fair-share weight) sends the whole frame to
pandas, so the output is always pandas'.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_]+$")   # a header pandas writes unquoted
_POWERS = 10 ** np.arange(19, dtype=np.int64)  # 1 .. 10**18
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


def write_schedule_csv(frame: pd.DataFrame, path: str) -> None:
    """The schedule as CSV at ``path`` (header, no index, "\\n" line ends), the text pandas writes;
    ``deadline`` in whole seconds, empty for regular jobs."""
    if "deadline" in frame:
        frame = frame.assign(deadline=frame["deadline"].round().astype("Int64"))
    data = fast_text(frame)
    if data is None:
        frame.to_csv(path, index=False)
        return
    with open(path, "wb") as handle:
        handle.write(data)


def fast_text(frame: pd.DataFrame) -> bytes | None:
    """The CSV text of a frame of integer, boolean and nullable-integer columns, else None."""
    names = [str(name) for name in frame.columns]
    if not names or len(set(names)) != len(names) or not all(_PLAIN_NAME.match(name) for name in names):
        return None
    if len(names) == 1 and frame[frame.columns[0]].hasnans:
        return None     # csv quotes a row that is one empty field: ""
    fields = []
    for name in frame.columns:
        field = _field(frame[name])
        if field is None:
            return None
        fields.append(field)
    header = (",".join(names) + "\n").encode("ascii")
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


def _field(series: pd.Series) -> _Integers | _Booleans | None:
    dtype = series.dtype
    if dtype == np.bool_:
        return _Booleans(series.to_numpy(np.bool_))
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        values = series.to_numpy()
        if len(values) and (values.max() > _INT64.max or values.min() == _INT64.min):
            return None     # beyond what an int64 magnitude holds
        return _Integers(values.astype(np.int64, copy=False))
    if isinstance(dtype, pd.Int64Dtype | pd.Int32Dtype):
        values = series.to_numpy(np.int64, na_value=0)
        if len(values) and values.min() == _INT64.min:
            return None
        return _Integers(values, present=series.notna().to_numpy())
    return None


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
