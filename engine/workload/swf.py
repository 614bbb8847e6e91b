"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF file is a header of ``; Key: value`` comment lines followed by one job per line, 18
whitespace-separated numeric fields. Files may be plain text or gzip; which one is decided by the
first bytes of the file, never by its name.

Reading takes a fast path first: a compiled pass over a large file whose job lines are plain
decimal numbers (engine.workload.swfscan), else pandas' C parser over the whole file. Only when that path meets
something it cannot vouch for (a parser error, a short or long line, text in a numeric field, a
corrupt gzip stream) does a slower line-by-line pass run, which finds the offending physical line
and names the field. With ``skip_bad_lines=True`` that pass collects and counts every bad line and
keeps the rest; lines are never dropped silently.
"""

from __future__ import annotations

import gzip
import math
import re
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from engine.workload.errors import WorkloadError, shown
from engine.workload.names import encode_column
from engine.workload.numbers import MAX_MAGNITUDE
from engine.workload.swfscan import scan_file

#: The 18 SWF fields, in file order.
SWF_FIELDS: tuple[str, ...] = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_procs",
    "avg_cpu_time",
    "used_memory",
    "requested_procs",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)

#: Fields the format allows to be fractional; every other field is an integer (floats there are rounded).
FLOAT_FIELDS: frozenset[str] = frozenset({"avg_cpu_time"})

#: Fields that may hold names instead of numbers (AleaNG's ``user_A``, Tohoku's queue ``sxf``); names
#: become numbers (engine.workload.names) and the mapping is kept in ``SwfTrace.names``.
NAME_FIELDS: dict[str, str] = {"user_id": "user", "group_id": "group", "executable": "executable",
                               "queue": "queue", "partition": "partition"}

GZIP_MAGIC = b"\x1f\x8b"
ENCODING = "latin-1"  # every byte decodes, so odd bytes in comments never stop a read
MAX_KEPT_ERRORS = 1000  # bad lines beyond this are counted but their errors are not kept

_HEADER_KEY = re.compile(r"^([A-Z][A-Za-z0-9_]*)\s*:\s*(.*)$")
_FIELD = re.compile(r"[^ \t\r\n\v\f]+")
# Unambiguous (each digit belongs to exactly one part), so a failed match backtracks in linear
# time: "\d+\.?\d*" would try every split of a long digit run, quadratic per field (a line with
# one 5,000-digit number took 17 s to reject).
_NUMBER_PATTERN = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER = re.compile(f"^{_NUMBER_PATTERN}$")
_SPACE_PATTERN = r"[ \t\r\n\v\f]"
_GOOD_LINE = re.compile(f"{_SPACE_PATTERN}*{_NUMBER_PATTERN}(?:{_SPACE_PATTERN}+{_NUMBER_PATTERN}){{17}}{_SPACE_PATTERN}*")
_INT64_LIMIT = float(MAX_MAGNITUDE)
_EIGHTEEN_NUMBERS = re.compile(f"{_NUMBER_PATTERN}(?: {_NUMBER_PATTERN}){{17}}")
_STREAM_ERRORS = (OSError, EOFError, zlib.error)


@dataclass
class SwfTrace:
    """The raw content of an SWF file: every field of every readable job line, in file order."""

    jobs: pd.DataFrame                       # SWF_FIELDS columns, int64 except avg_cpu_time (float64)
    metadata: dict[str, str]                 # header keys; repeated keys joined with newlines
    source: str                              # the path read
    bad_lines: int = 0                       # lines skipped because skip_bad_lines=True
    bad_line_errors: list[WorkloadError] = field(default_factory=list)  # the first MAX_KEPT_ERRORS of them
    #: names read in NAME_FIELDS, by workload column: {"user": {3: "user_A"}}
    names: dict[str, dict[int, str]] = field(default_factory=dict)

    @property
    def lines(self) -> int:
        """Job lines in the file, readable or not."""
        return len(self.jobs) + self.bad_lines


@dataclass(frozen=True)
class _Source:
    path: str
    compressed: bool

    @property
    def misnamed(self) -> bool:
        """Named like a gzip file but the content is not gzip."""
        return self.path.lower().endswith((".gz", ".gzip")) and not self.compressed


# --------------------------------------------------------------------------- public API


def read_swf(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read an SWF file (plain or gzip) into an :class:`SwfTrace`.

    Raises :class:`WorkloadError` naming file, line and field for the first bad line, unless
    ``skip_bad_lines`` is true, in which case bad lines are counted in ``SwfTrace.bad_lines``.
    """
    source = _inspect(path)
    try:
        metadata = _read_header(source)
        scanned = scan_file(source.path, source.compressed)
        if scanned is not None:
            return SwfTrace(jobs=_frame_from_matrix(scanned), metadata=metadata, source=source.path)
        texts: dict[int, dict[int, str]] = {}
        matrix = _read_fast(source, texts)
        bad_errors: list[WorkloadError] = []
        bad_count = 0
        if matrix is None:
            texts = {}
            matrix, bad_errors, bad_count = _read_validating(source, skip_bad_lines=skip_bad_lines, texts=texts)
    except WorkloadError as error:
        raise _with_name_hint(error, source) from None
    matrix, names = encode_name_fields(matrix, texts)
    return SwfTrace(
        jobs=_frame_from_matrix(matrix),
        metadata=metadata,
        source=source.path,
        bad_lines=bad_count,
        bad_line_errors=bad_errors,
        names=names,
    )


def encode_name_fields(matrix: np.ndarray, texts: dict[int, dict[int, str]]) -> tuple[np.ndarray, dict]:
    """The matrix with the names read in NAME_FIELDS (NaN placeholders; ``texts`` = {field index:
    {row: name}}) replaced by their numbers, and the mappings by workload column."""
    names: dict[str, dict[int, str]] = {}
    for index, rows in texts.items():
        if rows:
            matrix[:, index], mapping = encode_column(matrix[:, index], rows)
            names[NAME_FIELDS[SWF_FIELDS[index]]] = mapping
    return matrix, names


def check_head(
    path: str | Path, *, max_lines: int = 200, max_errors: int = 20
) -> tuple[dict[str, str], list[WorkloadError]]:
    """Cheap checks for an upload: the file opens (gzip or plain), the header parses, and the first
    ``max_lines`` job lines have 18 numeric fields.

    Never raises for bad content: returns the header metadata and up to ``max_errors`` problems,
    each naming the line and the field.
    """
    try:
        source = _inspect(path)
    except WorkloadError as error:
        return {}, [error]
    header: list[str] = []
    errors: list[WorkloadError] = []
    data_lines = 0
    lineno = 0
    try:
        with _open_text(source) as stream:
            for lineno, line in enumerate(stream, start=1):
                if data_lines == 0 and _is_header_line(line):
                    header.append(line)
                    continue
                fields = _data_fields(line)
                if not fields:
                    continue
                data_lines += 1
                errors.extend(_parse_line(fields, lineno, source.path, first_only=False, texts={})[1])
                if len(errors) >= max_errors or data_lines >= max_lines:
                    break
    except _STREAM_ERRORS as exc:
        errors.append(_corrupt_stream_error(source, lineno, exc))
    except WorkloadError as error:      # the stream broke (see _open_text)
        errors.append(error)
    if data_lines == 0 and not errors:
        errors.append(_empty_file_error(source))
    errors = [_with_name_hint(error, source) for error in errors[:max_errors]]
    return parse_header(header), errors


def read_header(path: str | Path) -> dict[str, str]:
    """Only the header metadata (cheap: stops at the first job line)."""
    source = _inspect(path)
    return _read_header(source)


def parse_header(lines: Iterable[str]) -> dict[str, str]:
    """Turn ``; Key: value`` comment lines into a dict.

    A repeated key (Note, Queue, Partition, ...) collects its values joined by newlines. A comment
    line that does not start with a capitalised ``Key:`` continues the previous key (the archive
    wraps long notes that way); a blank ``;`` line ends that continuation. Text that continues no
    key is kept under ``Comment``.
    """
    metadata: dict[str, str] = {}
    last_key: str | None = None
    for raw in lines:
        body = _utf8_if_possible(raw.strip())
        if body.startswith(";"):
            body = body[1:].strip()
        if not body:
            last_key = None
            continue
        match = _HEADER_KEY.match(body)
        if match:
            key, value = match.group(1), match.group(2).strip()
            last_key = key
        else:
            key, value = (last_key or "Comment"), body
        metadata[key] = f"{metadata[key]}\n{value}" if key in metadata else value
    return metadata


def _utf8_if_possible(text: str) -> str:
    """The file is read as latin-1 (every byte decodes); a header line that is valid UTF-8 (the
    archive's newer files, our own scenarios' "§9") is shown as the UTF-8 it is, not as "Â§9"."""
    try:
        return text.encode(ENCODING).decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


# --------------------------------------------------------------------------- opening the file


def _inspect(path: str | Path) -> _Source:
    """Decide gzip or plain from the magic bytes and make sure the content is text."""
    name = str(path)
    try:
        with open(name, "rb") as raw:
            head = raw.read(4096)
    except OSError as exc:
        raise WorkloadError(f"cannot read the file: {exc.strerror or exc}", file=name) from None
    compressed = head[:2] == GZIP_MAGIC
    sample = head
    if compressed:
        try:
            with gzip.open(name, "rb") as unzipped:
                sample = unzipped.read(4096)
        except _STREAM_ERRORS as exc:
            raise WorkloadError(
                f"starts like gzip (magic bytes 1f 8b) but the compressed stream is corrupt: {exc}",
                file=name,
            ) from None
    source = _Source(name, compressed)
    if b"\x00" in sample:
        kind = "gzip whose content is binary" if compressed else "binary content"
        raise _with_name_hint(WorkloadError(f"not an SWF text file ({kind})", file=name), source)
    return source


@contextmanager
def _open_text(source: _Source) -> Iterator[Iterator[str]]:
    """The file's lines (gzip or plain). A corrupt or truncated stream raises WorkloadError naming
    the file and the line where it broke, for every reader that goes through here."""
    opener = gzip.open if source.compressed else open
    with opener(source.path, "rt", encoding=ENCODING) as stream:  # type: ignore[operator]
        yield _checked_lines(stream, source)


def _checked_lines(stream: IO[str], source: _Source) -> Iterator[str]:
    lineno = 0
    try:
        for lineno, line in enumerate(stream, start=1):  # noqa: B007 - the except clause reads it
            yield line
    except _STREAM_ERRORS as exc:
        raise _corrupt_stream_error(source, lineno, exc) from None


def _is_header_line(line: str) -> bool:
    stripped = line.lstrip()
    return not stripped or stripped.startswith(";")


def _read_header(source: _Source) -> dict[str, str]:
    """Parse the comment lines before the first job line (comments later in the file are ignored)."""
    lines: list[str] = []
    lineno = 0
    try:
        with _open_text(source) as stream:
            for lineno, line in enumerate(stream, start=1):  # noqa: B007 - the except clause reads it
                if not _is_header_line(line):
                    break
                lines.append(line)
    except _STREAM_ERRORS as exc:
        raise _corrupt_stream_error(source, lineno, exc) from None
    return parse_header(lines)


# --------------------------------------------------------------------------- the two reading paths


def _read_fast(source: _Source, texts: dict[int, dict[int, str]] | None = None) -> np.ndarray | None:
    """The whole file through pandas' C parser, or None when the result cannot be trusted.

    Column types are inferred rather than forced to float so that anything pandas would read
    differently from a plain number (it turns "TRUE" into 1.0 under a float dtype) shows up as a
    non-numeric column and sends the file to the validating pass. Text in NAME_FIELDS is a name:
    NaN in the matrix, the text in ``texts`` ({field index: {row: name}})."""
    try:
        frame = pd.read_csv(
            source.path,
            sep=r"\s+",
            comment=";",
            header=None,
            engine="c",
            na_filter=False,
            compression="gzip" if source.compressed else None,
            encoding=ENCODING,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, *_STREAM_ERRORS):
        return None
    if frame.shape[1] != len(SWF_FIELDS) or frame.empty:
        return None
    named = [i for i, dtype in enumerate(frame.dtypes) if not _is_plain_number(dtype)]
    if any(SWF_FIELDS[i] not in NAME_FIELDS for i in named) or (named and texts is None):
        return None
    for index in named:
        column = frame[index].astype(str)
        numbers = [_to_number(text) for text in column.tolist()]
        if not all(number is not None or _is_name(text) for text, number in zip(column.tolist(), numbers)):
            return None
        texts[index] = {row: text for row, (text, number) in enumerate(zip(column.tolist(), numbers))  # type: ignore[index]
                        if number is None}
        frame[index] = [np.nan if number is None else number for number in numbers]
    matrix = frame.to_numpy(dtype=np.float64)
    if named:
        placeholders = np.zeros(matrix.shape, dtype=bool)
        for index in named:
            placeholders[:, index] = np.isnan(matrix[:, index])
        matrix = np.where(placeholders, 0.0, matrix)
        if not np.isfinite(matrix).all() or (np.abs(matrix) >= _INT64_LIMIT).any():
            return None
        return np.where(placeholders, np.nan, matrix)
    if not np.isfinite(matrix).all() or (np.abs(matrix) >= _INT64_LIMIT).any():
        return None
    return matrix


def _is_plain_number(dtype: np.dtype) -> bool:
    return pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype)


def _read_validating(
    source: _Source, *, skip_bad_lines: bool, texts: dict[int, dict[int, str]] | None = None
) -> tuple[np.ndarray, list[WorkloadError], int]:
    """Line by line: the first bad line raises, or with skip_bad_lines all are counted and skipped.
    Names in NAME_FIELDS are NaN in the matrix and collected in ``texts`` ({field index: {row: name}})."""
    texts = {} if texts is None else texts
    rows: list[list[float]] = []
    errors: list[WorkloadError] = []
    bad_count = 0
    lineno = 0
    try:
        with _open_text(source) as stream:
            for lineno, line in enumerate(stream, start=1):
                values = _good_line_values(line)
                if values is not None:
                    rows.append(values)
                    continue
                fields = _data_fields(line)
                if not fields:
                    continue
                line_texts: dict[int, str] = {}
                values, problems = _parse_line(fields, lineno, source.path, first_only=True, texts=line_texts)
                if not problems:
                    for index, text in line_texts.items():
                        texts.setdefault(index, {})[len(rows)] = text
                    rows.append(values)
                    continue
                if not skip_bad_lines:
                    raise problems[0]
                bad_count += 1
                if len(errors) < MAX_KEPT_ERRORS:
                    errors.append(problems[0])
    except _STREAM_ERRORS as exc:
        raise _corrupt_stream_error(source, lineno, exc) from None
    if not rows:
        raise _empty_file_error(source, bad_count)
    return np.asarray(rows, dtype=np.float64), errors, bad_count


def _good_line_values(line: str) -> list[float] | None:
    """The values of a line that is plainly fine (18 numbers, no comment), else None.
    One regular expression per line keeps the validating pass quick on large traces; anything
    else goes through the field-by-field checks."""
    if not _GOOD_LINE.fullmatch(line):
        return None
    values = [float(text) for text in line.split()]
    if max(map(abs, values)) >= _INT64_LIMIT:
        return None
    return values


def _data_fields(line: str) -> list[str]:
    """The fields of a line, ignoring anything after a ';'. Only ASCII whitespace separates
    fields, as in the C parser (str.split would also split on a latin-1 no-break space)."""
    return _FIELD.findall(line.split(";", 1)[0])


def _parse_line(
    fields: list[str], lineno: int, path: str, *, first_only: bool, texts: dict[int, str] | None = None
) -> tuple[list[float], list[WorkloadError]]:
    """Parse one job line's fields; problems name the line and the field.

    Text in a field is reported before a wrong field count, because a line such as
    "these are my notes" is better described by its first word than by its length.
    With ``texts`` (a dict), text in NAME_FIELDS is a name: NaN in the values, the text in
    ``texts[field index]``."""
    problems: list[WorkloadError] = []
    values: list[float] = []
    for index, (name, text) in enumerate(zip(SWF_FIELDS, fields)):
        value = _to_number(text)
        if value is None and texts is not None and name in NAME_FIELDS and _is_name(text):
            texts[index] = text
            values.append(math.nan)
        elif value is None:
            problems.append(
                WorkloadError(f"expected a number, got {shown(text)}", file=path, line=lineno, field=name)
            )
            if first_only:
                return values, problems
        else:
            values.append(value)
    count_problem = _field_count_problem(fields, lineno, path)
    if count_problem is not None:
        problems.append(count_problem)
    return values, problems


def _field_count_problem(fields: list[str], lineno: int, path: str) -> WorkloadError | None:
    expected = len(SWF_FIELDS)
    if len(fields) < expected:
        missing = SWF_FIELDS[len(fields)]
        return WorkloadError(
            f"line has {len(fields)} fields, expected {expected} (short line: {missing} and later "
            f"fields are missing)",
            file=path,
            line=lineno,
            field=missing,
        )
    if len(fields) > expected:
        return WorkloadError(
            f"line has {len(fields)} fields, expected {expected} (unexpected {shown(fields[expected])} "
            f"after think_time)",
            file=path,
            line=lineno,
            field=SWF_FIELDS[-1],
        )
    return None


def _is_name(text: str) -> bool:
    """A word that can name a user, group or queue: printable, starting with a letter, digit or _."""
    return text.isprintable() and (text[0].isalnum() or text[0] == "_")


def _to_number(text: str) -> float | None:
    """A finite decimal number (int or float notation), or None. Stricter than float():
    no 'nan', 'inf' or '1_000'."""
    if not _NUMBER.match(text):
        return None
    value = float(text)
    if not math.isfinite(value) or abs(value) >= _INT64_LIMIT:
        return None
    return value


def plain_values(fields: list[str]) -> list[float] | None:
    """The values of the first 18 fields when each is what :func:`_to_number` reads (one regular
    expression for the 18, not one call each: an extended trace's reader spent most of its time
    there), else None (the caller then checks field by field)."""
    if not _EIGHTEEN_NUMBERS.fullmatch(" ".join(fields[:len(SWF_FIELDS)])):
        return None
    values = [float(text) for text in fields[:len(SWF_FIELDS)]]
    return values if max(map(abs, values)) < _INT64_LIMIT else None


def _frame_from_matrix(matrix: np.ndarray) -> pd.DataFrame:
    """Typed columns: float fields stay float64, the others are rounded to int64 (traces write 1.00)."""
    columns: dict[str, np.ndarray] = {}
    for index, name in enumerate(SWF_FIELDS):
        column = matrix[:, index]
        columns[name] = column.copy() if name in FLOAT_FIELDS else np.rint(column).astype(np.int64)
    return pd.DataFrame(columns)


# --------------------------------------------------------------------------- errors


def _corrupt_stream_error(source: _Source, lines_read: int, exc: BaseException) -> WorkloadError:
    kind = "gzip stream" if source.compressed else "file"
    return WorkloadError(
        f"the {kind} is corrupt or truncated after line {lines_read}: {exc}",
        file=source.path,
        line=lines_read + 1,
    )


def _empty_file_error(source: _Source, bad_count: int = 0) -> WorkloadError:
    if bad_count:
        return WorkloadError(f"no jobs: all {bad_count} job lines are bad", file=source.path)
    return WorkloadError("no jobs: the file has no job lines (only comments or nothing)", file=source.path)


def _with_name_hint(error: WorkloadError, source: _Source) -> WorkloadError:
    """Mention a misleading '.gz' name, since that is usually the real cause of odd content."""
    if not source.misnamed or "name ends in .gz" in error.message:
        return error
    return WorkloadError(
        f"{error.message} (note: the file name ends in .gz but the content is not gzip; "
        f"it was read as plain text)",
        file=error.file,
        line=error.line,
        field=error.field,
    )
