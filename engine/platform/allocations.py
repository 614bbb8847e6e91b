"""Allocations: who may use how much of the machine, read from a small CSV file.

The file has a header line and one allocation per line::

    allocation,members,award,period_days,target_factor,target
    alice,user:1;user:7,1000000,365,2,
    bob,group:3,200000,365,,
    chris,user:12,,,,750

- ``members``: ``;``-separated ``user:ID`` / ``group:ID`` (SWF fields 12 and 13);
- ``award``: processor-hours over ``period_days`` days, so the *ideal occupancy* is
  ``award / (period_days x 24)`` processors (the SFS paper's eq. 1: one job of that size running the
  whole period uses the award exactly);
- *target occupancy* = ``target_factor`` (default 2, the paper's eq. 2) x ideal, unless ``target``
  (processors) is given, in which case award and period may be left empty.

Blank lines and lines starting with ``#`` are ignored. A job maps to the allocation listing its user,
else to the one listing its group; jobs of neither go to the allocation named :data:`DEFAULT`, which
has no target (unbounded) unless the file has a ``default`` line (with no members). The number of
such unmapped jobs is counted. Bad input raises :class:`~engine.workload.WorkloadError` naming file,
line and field.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.errors import WorkloadError, shown

#: Header of an allocations file (target_factor and target may be empty on every line).
COLUMNS = ("allocation", "members", "award", "period_days", "target_factor", "target")
#: Where jobs of users and groups no allocation lists go.
DEFAULT = "default"
DEFAULT_TARGET_FACTOR = 2.0
#: Largest allocations file read (they are a few lines; this stops a trace uploaded by mistake).
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Allocation:
    name: str
    users: frozenset[int] = frozenset()
    groups: frozenset[int] = frozenset()
    award: float | None = None          # processor-hours over the period
    period_days: float | None = None
    target_factor: float = DEFAULT_TARGET_FACTOR
    target: float = math.inf            # processors; inf = no target

    @property
    def ideal(self) -> float | None:
        """Ideal occupancy in processors: the award spread evenly over the period."""
        if self.award is None or not self.period_days:
            return None
        return self.award / (self.period_days * 24.0)


@dataclass(frozen=True)
class JobAllocations:
    """Which allocation each job of a workload belongs to."""

    index: np.ndarray                   # per job, the position in Allocations.names
    names: tuple[str, ...]
    targets: tuple[float, ...]          # per allocation, processors (inf = none)
    unmapped: int                       # jobs that went to the default allocation

    def labels(self) -> np.ndarray:
        """Per job, the allocation's name."""
        return np.asarray(self.names, dtype=object)[self.index]


@dataclass(frozen=True)
class Allocations:
    allocations: tuple[Allocation, ...]
    source: str = ""
    _by_user: dict[int, int] = field(default_factory=dict, compare=False, repr=False)
    _by_group: dict[int, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for position, allocation in enumerate(self.allocations):
            for user in allocation.users:
                self._by_user[user] = position
            for group in allocation.groups:
                self._by_group[group] = position

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.allocations)

    def targets(self) -> dict[str, float]:
        """Allocation name -> target occupancy (processors; inf when it has none)."""
        return {a.name: a.target for a in self.allocations}

    def assign(self, jobs: pd.DataFrame) -> JobAllocations:
        """Map each job through its user, else its group, else to the default allocation."""
        names = list(self.names)
        targets = [a.target for a in self.allocations]
        if DEFAULT in names:
            default = names.index(DEFAULT)
        else:
            default = len(names)
            names.append(DEFAULT)
            targets.append(math.inf)
        users = jobs["user"].to_numpy(dtype=np.int64) if "user" in jobs else np.full(len(jobs), -1)
        groups = jobs["group"].to_numpy(dtype=np.int64) if "group" in jobs else np.full(len(jobs), -1)
        index = np.full(len(jobs), -1, dtype=np.int64)
        for key, table in ((users, self._by_user), (groups, self._by_group)):
            if table:
                found = pd.Series(key).map(table).to_numpy(dtype=np.float64)
                take = (index < 0) & ~np.isnan(found)
                index[take] = found[take].astype(np.int64)
        unmapped = int((index < 0).sum())
        index[index < 0] = default
        return JobAllocations(index, tuple(names), tuple(targets), unmapped)


def no_allocations() -> Allocations:
    """Every job in the one unbounded default allocation (SFS then orders by priority alone)."""
    return Allocations(())


def read_allocations(path: str | Path) -> Allocations:
    """Read an allocations file (see the module docstring)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise WorkloadError(f"larger than {MAX_BYTES:,} bytes: not an allocations file", file=str(path))
        raw = path.read_bytes()
    except OSError as exc:
        raise WorkloadError(f"cannot read the allocations file: {exc.strerror or exc}", file=str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise WorkloadError("not UTF-8 text: not an allocations file", file=str(path)) from None
    return parse_allocations(text, source=path.name)


def parse_allocations(text: str, *, source: str = "allocations") -> Allocations:
    """Parse the text of an allocations file; ``source`` names it in error messages."""
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise WorkloadError(f"empty: expected the header {','.join(COLUMNS)}", file=source, line=1)
    header_line, header = lines[0][0], _cells(lines[0][1], source, lines[0][0])
    if tuple(c.strip().lower() for c in header) != COLUMNS:
        raise WorkloadError(f"the header must be {','.join(COLUMNS)}, got {shown(lines[0][1].strip(), 80)}",
                            file=source, line=header_line)
    allocations: list[Allocation] = []
    seen_names: dict[str, int] = {}
    member_line: dict[tuple[str, int], int] = {}
    for number, line in lines[1:]:
        cells = _cells(line, source, number)
        if len(cells) != len(COLUMNS):
            raise WorkloadError(f"expected {len(COLUMNS)} comma-separated fields ({','.join(COLUMNS)}), "
                                f"got {len(cells)}", file=source, line=number)
        row = dict(zip(COLUMNS, (c.strip() for c in cells)))
        allocation = _allocation(row, source, number)
        if allocation.name in seen_names:
            raise WorkloadError(f"allocation {shown(allocation.name)} is already defined on line "
                                f"{seen_names[allocation.name]}", file=source, line=number, field="allocation")
        seen_names[allocation.name] = number
        for kind, ids in (("user", allocation.users), ("group", allocation.groups)):
            for member in sorted(ids):
                if (kind, member) in member_line:
                    raise WorkloadError(f"{kind}:{member} is already a member of an allocation on line "
                                        f"{member_line[kind, member]}", file=source, line=number, field="members")
                member_line[kind, member] = number
        allocations.append(allocation)
    return Allocations(tuple(allocations), source=source)


def _cells(line: str, source: str, number: int) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(line)))
    except csv.Error as exc:        # a field over csv's 131,072-character limit, a NUL byte
        raise WorkloadError(f"not a CSV line: {exc}", file=source, line=number) from None


def _allocation(row: dict[str, str], source: str, line: int) -> Allocation:
    def number(name: str, *, positive: bool = False) -> float | None:
        text = row[name]
        if not text:
            return None
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            expected = "a positive number" if positive else "a number >= 0"
            raise WorkloadError(f"expected {expected}, got {shown(text)}", file=source, line=line, field=name)
        return value

    name = row["allocation"]
    if not name:
        raise WorkloadError("an allocation needs a name", file=source, line=line, field="allocation")
    users, groups = _members(row["members"], source, line)
    if name == DEFAULT and (users or groups):
        raise WorkloadError(f"the {DEFAULT!r} allocation takes the jobs no other allocation lists: "
                            "leave its members empty", file=source, line=line, field="members")
    award, period = number("award"), number("period_days", positive=True)
    factor = number("target_factor", positive=True)
    target = number("target")
    if target is None:
        for field_name, value in (("award", award), ("period_days", period)):
            if value is None:
                raise WorkloadError("needed to compute the target (or give target in processors)",
                                    file=source, line=line, field=field_name)
        assert award is not None and period is not None   # checked just above
        target = (factor or DEFAULT_TARGET_FACTOR) * award / (period * 24.0)
    return Allocation(name, frozenset(users), frozenset(groups), award, period,
                      factor or DEFAULT_TARGET_FACTOR, target)


def _members(text: str, source: str, line: int) -> tuple[set[int], set[int]]:
    users: set[int] = set()
    groups: set[int] = set()
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        kind, sep, ident = part.partition(":")
        kind = kind.strip().lower()
        try:
            if not sep or kind not in ("user", "group"):
                raise ValueError
            value = int(ident.strip())
        except ValueError:
            raise WorkloadError(f"expected user:ID or group:ID (separated by ';'), got {shown(part)}",
                                file=source, line=line, field="members") from None
        (users if kind == "user" else groups).add(value)
    return users, groups


def allocations_in(context: Mapping[str, Any]) -> Allocations | None:
    """The allocations a simulation was given (``context["allocations"]``): an :class:`Allocations`,
    or a path to an allocations file; None when there are none."""
    value = context.get("allocations")
    if value is None or isinstance(value, Allocations):
        return value
    if isinstance(value, (str, Path)):
        return read_allocations(value)
    raise TypeError(f"context['allocations'] must be Allocations or a file path, not {type(value).__name__}")
