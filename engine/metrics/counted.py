"""Warm-up and cool-down: which jobs of a run its metrics count.

A simulation starts on an empty machine and ends draining its queue with no new arrivals, so the
jobs of the first and last part of a run see a system unlike the steady state (Frachtenberg &
Feitelson, "Pitfalls in parallel job scheduling evaluation", JSSPP 2005). The run itself keeps
every job (they load the machine for the others); only the metrics leave the first and last part
out, stated in days of submit time or in jobs (by arrival order):

- warm-up ``2d``: jobs submitted less than 2 days after the run's first submit are not counted;
- cool-down ``2d``: jobs submitted less than 2 days before the run's last submit are not counted;
- ``500j``: the first (last) 500 jobs by arrival are not counted.

The summary is then computed over the counted jobs as over a whole schedule (engine.metrics.summary):
utilization is their work over their own span, skipping counts rank them among themselves.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from engine.errors import WorkloadError

DAY = 86_400
Unit = Literal["days", "jobs"]
_TRIM = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(d|days?|j|jobs?)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Trim:
    """A part of a run left out of its metrics: ``amount`` days of submit time, or jobs."""

    amount: float
    unit: Unit = "days"

    def __str__(self) -> str:
        if self.unit == "jobs":
            return f"{self.amount:g} job{'s' if self.amount != 1 else ''}"
        return f"{self.amount:g} day{'s' if self.amount != 1 else ''}"


def parse_trim(text: str, *, name: str = "--warmup") -> Trim:
    """``"2d"`` (days; also ``2days``), ``"500j"`` (jobs; also ``500jobs``) or ``"0"``; a WorkloadError
    naming ``name`` otherwise."""
    match = _TRIM.match(str(text))
    if not match:
        raise WorkloadError(f"{name} expects days or jobs, e.g. 2d or 500j; got {text!r}")
    amount, unit = float(match.group(1)), (match.group(2) or "").lower()
    if amount and not unit:
        raise WorkloadError(f"{name} {text}: say days or jobs, e.g. {text}d or {text}j")
    if unit.startswith("j"):
        if amount != int(amount):
            raise WorkloadError(f"{name} {text}: a number of jobs must be whole")
        return Trim(amount, "jobs")
    return Trim(amount, "days")


@dataclass(frozen=True)
class Counted:
    """Which jobs of each run the metrics count: all but the ``warmup`` and the ``cooldown``."""

    warmup: Trim = Trim(0)
    cooldown: Trim = Trim(0)

    def describe(self) -> str:
        """What was counted, in words, for the report."""
        parts = [f"the first {self.warmup} (warm-up)" if self.warmup.amount else "",
                 f"the last {self.cooldown} (cool-down)" if self.cooldown.amount else ""]
        left_out = " and ".join(p for p in parts if p)
        return f"every job of each run except {left_out}" if left_out else "every job of each run"

    def to_dict(self) -> dict[str, object]:
        return {"warmup": [self.warmup.amount, self.warmup.unit], "cooldown": [self.cooldown.amount, self.cooldown.unit],
                "description": self.describe()}

    @classmethod
    def from_dict(cls, data: dict) -> Counted:
        return cls(Trim(float(data["warmup"][0]), data["warmup"][1]), Trim(float(data["cooldown"][0]),
                                                                          data["cooldown"][1]))


def counted_mask(schedule: pd.DataFrame, counted: Counted) -> np.ndarray:
    """True for the rows (jobs, in arrival order) whose metrics count (see the module docstring)."""
    count = len(schedule)
    keep = np.ones(count, dtype=bool)
    if not count:
        return keep
    submit = schedule["submit"].to_numpy(dtype=np.int64)
    first, last = int(submit.min()), int(submit.max())
    for trim, head in ((counted.warmup, True), (counted.cooldown, False)):
        if not trim.amount:
            continue
        if trim.unit == "jobs":
            cut = min(int(trim.amount), count)
            if head:
                keep[:cut] = False
            else:
                keep[count - cut:] = False
        elif head:
            keep &= submit >= first + math.ceil(trim.amount * DAY)
        else:
            keep &= submit <= last - math.ceil(trim.amount * DAY)
    return keep
