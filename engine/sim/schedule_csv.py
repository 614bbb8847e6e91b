"""The schedule CSV, byte for byte what ``DataFrame.to_csv(path, index=False)`` writes, but fast.

pandas formats a 200,000-job schedule in about 0.8 s, more than the rest of the command around the
simulation. A schedule is whole numbers and a boolean column (``killed``), so every field is an
optional minus and digits, "True" or "False". Here each column becomes a block of fixed-width
slots (its widest field, then the separator) with a mask of the bytes a row really uses; the
blocks side by side, read in row order through the mask, are the CSV text. A column of any other
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
_WORDS = np.frombuffer(b"True False", np.uint8).reshape(2, 5)   # "True " and "False"

#: one column as fixed-width slots: (bytes, which bytes are written), both rows x slot width
Slots = tuple[np.ndarray, np.ndarray]


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
    blocks = []
    for name in frame.columns:
        block = _slots(frame[name])
        if block is None:
            return None
        blocks.append(block)
    header = (",".join(names) + "\n").encode("ascii")
    return header + _rows(blocks)


def _slots(series: pd.Series) -> Slots | None:
    dtype = series.dtype
    if dtype == np.bool_:
        return _booleans(series.to_numpy(np.bool_))
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        values = series.to_numpy()
        if len(values) and (values.max() > _INT64.max or values.min() == _INT64.min):
            return None     # beyond what an int64 magnitude holds
        return _integers(values.astype(np.int64, copy=False))
    if isinstance(dtype, pd.Int64Dtype | pd.Int32Dtype):
        values = series.to_numpy(np.int64, na_value=0)
        if len(values) and values.min() == _INT64.min:
            return None
        return _integers(values, present=series.notna().to_numpy())
    return None


def _integers(values: np.ndarray, present: np.ndarray | None = None) -> Slots:
    """An optional minus, then the digits, most significant first; a missing value writes nothing.
    The digits come four at a time from a table of "0000" .. "9999" (two divisions per four digits)."""
    negative = values < 0
    magnitude = np.abs(values)
    digits = np.searchsorted(_POWERS, magnitude, side="right")
    digits[digits == 0] = 1                                   # 0 is one digit
    widest = int(digits.max()) if len(digits) else 1
    groups = -(-widest // 4)
    quads = np.empty((len(values), groups), dtype=np.uint32)   # four digit characters in each
    rest = magnitude
    for group in range(groups - 1, -1, -1):
        rest, four = np.divmod(rest, 10_000)
        np.take(_FOUR_DIGITS, four, out=quads[:, group])
    padded = quads.view(np.uint8)                              # zero-padded to 4 x groups digits
    signed = bool(negative.any())
    chars = np.empty((len(values), widest + signed), dtype=np.uint8)
    chars[:, signed:] = padded[:, 4 * groups - widest:]
    written = np.empty(chars.shape, dtype=bool)
    np.less_equal(widest - digits[:, None], np.arange(widest), out=written[:, signed:])
    if signed:
        chars[:, 0] = _MINUS
        written[:, 0] = negative
    if present is not None:
        written &= present[:, None]
    return chars, written


def _booleans(values: np.ndarray) -> Slots:
    """pandas writes booleans as True and False."""
    chars = _WORDS[np.where(values, 0, 1)]
    written = np.ones(chars.shape, dtype=bool)
    written[:, 4] = ~values
    return chars, written


def _rows(blocks: list[Slots]) -> bytes:
    """The blocks side by side with a separator after each field ("," or, at the row's end, "\\n"),
    read in row order through their masks."""
    rows = len(blocks[0][0])
    width = sum(chars.shape[1] + 1 for chars, _ in blocks)
    text = np.empty((rows, width), dtype=np.uint8)
    keep = np.empty((rows, width), dtype=bool)
    at = 0
    for chars, written in blocks:
        span = chars.shape[1]
        text[:, at:at + span], keep[:, at:at + span] = chars, written
        text[:, at + span], keep[:, at + span] = ord(","), True
        at += span + 1
    text[:, -1] = ord("\n")
    return text[keep].tobytes()
