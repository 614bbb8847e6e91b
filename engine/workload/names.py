"""Text identifiers (user, group, queue names) as numbers, with the names kept for display.

Traces name users in text more and more (AleaNG's ``user_A``, PBS's ``user=jdoe``, Slurm's
``User``), while the simulator and the metrics group by integer ids. The mapping is stable: the
same set of names always gets the same numbers, whatever the order of the lines. Names are numbered
in sorted order, after the largest numeric id the same column already holds (so a trace that
mixes numbers and names never gets two owners for one id). The workload keeps the mapping in its
metadata as ``{"<field>_names": {"<id>": name}}`` (JSON-able), e.g. ``user_names``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

#: Metadata keys of the name mappings, by workload column.
NAME_KEYS = {"user": "user_names", "group": "group_names", "queue": "queue_names",
             "partition": "partition_names", "executable": "executable_names"}


def number_names(names: Iterable[str], *, after: int = 0) -> dict[str, int]:
    """Each distinct name's number: ``after + 1``, ``after + 2``, ... in sorted order."""
    return {name: after + 1 + rank for rank, name in enumerate(sorted(set(names)))}


def encode_column(values: np.ndarray, texts: Mapping[int, str]) -> tuple[np.ndarray, dict[int, str]]:
    """``values`` (float, NaN at the rows named in ``texts``) with every text replaced by its
    number (see :func:`number_names`); returns the column and ``{number: name}``."""
    if not texts:
        return values, {}
    column = np.asarray(values, dtype=np.float64).copy()
    known = column[~np.isnan(column)]
    after = max(int(known.max()), 0) if known.size else 0
    numbers = number_names(texts.values(), after=after)
    rows = np.fromiter(texts.keys(), dtype=np.int64, count=len(texts))
    column[rows] = [numbers[text] for text in texts.values()]
    return column, {number: name for name, number in numbers.items()}


def encode_names(names: Iterable[str]) -> tuple[np.ndarray, dict[int, str]]:
    """A column that is all text (user names of an accounting log): numbers and ``{number: name}``.
    Empty names are unknown (-1)."""
    items = list(names)
    numbers = number_names(name for name in items if name)
    codes = np.fromiter((numbers.get(name, -1) if name else -1 for name in items), dtype=np.int64,
                        count=len(items))
    return codes, {number: name for name, number in numbers.items()}


def name_metadata(names: Mapping[str, Mapping[int, str]]) -> dict[str, dict[str, str]]:
    """``{"user": {3: "jdoe"}}`` -> ``{"user_names": {"3": "jdoe"}}`` (JSON-able, for Workload.metadata)."""
    return {NAME_KEYS[column]: {str(number): name for number, name in sorted(mapping.items())}
            for column, mapping in names.items() if mapping}


def names_of(metadata: Mapping, column: str) -> dict[int, str]:
    """The ``{number: name}`` mapping of ``column`` kept in a workload's metadata (empty if none)."""
    mapping = metadata.get(NAME_KEYS.get(column, f"{column}_names")) or {}
    return {int(number): str(name) for number, name in mapping.items()}


def header_names(header: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Name mappings an SWF header written by engine.workload.export carries (``; UserNames: 1=alice
    2=bob``), as workload metadata (``{"user_names": {"1": "alice", ...}}``)."""
    result = {}
    for key in NAME_KEYS.values():
        text = header.get(key.title().replace("_", ""))
        if text:
            pairs = (item.partition("=") for item in text.split())
            result[key] = {number: name for number, sep, name in pairs if sep and number.lstrip("-").isdigit()}
    return result
