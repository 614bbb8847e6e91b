"""Holding one run's figure against a paper's claim such as "b's mean wait is lower than a's".

A replicated comparison judges a claim by its bootstrap interval (engine.replicates.report.judge_claim);
a comparison of single runs has one value per policy, so :func:`judge_difference` reads the relative
change of ``b`` against ``a`` directly:

- *agree*: the change goes the paper's way by more than ``tolerance`` (and, where the paper gives its
  size, ``expected``, at least half of it);
- *partly*: the paper's way but under half the paper's size, or no change beyond ``tolerance`` where
  the paper found one, or (:func:`overall`, over several pairs such as one per deadline share) some
  pairs agree and others do not;
- *disagree*: the other way, or a change where the paper found none;
- *cannot tell*: a value is missing.

Every verdict comes with the relative change and, unless it agrees, why in words.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

DIRECTIONS = ("lower", "higher", "same")
#: a relative change of at most this much is "about the same" unless a claim says otherwise
TOLERANCE = 0.01
STATUSES = ("agree", "partly", "disagree", "cannot tell")


def relative_change(a: float, b: float) -> float:
    """(b - a) / |a|; 0 when both are 0, +-inf when only ``a`` is."""
    if a == 0:
        return 0.0 if b == 0 else math.copysign(math.inf, b)
    return (b - a) / abs(a)


def change_text(relative: float) -> str:
    """"40 % lower", "12.5 % higher", "the same", "higher (from 0)"."""
    if relative == 0:
        return "the same"
    word = "lower" if relative < 0 else "higher"
    if math.isinf(relative):
        return f"{word} (from 0)"
    size = abs(relative) * 100
    return f"{size:.0f} % {word}" if size >= 10 else f"{size:.1f} % {word}"


def judge_difference(a: float | None, b: float | None, direction: str, *, expected: float | None = None,
                     tolerance: float = TOLERANCE) -> dict[str, Any]:
    """Whether ``b`` against ``a`` (one value each) bears out "b's figure is ``direction`` than a's";
    ``expected``: the relative change the paper reports, (b - a) / a (e.g. -0.4 for "40 % lower").
    Returns {"status": one of STATUSES, "relative": the change or None, "why": "" when it agrees}."""
    if direction not in DIRECTIONS:
        raise ValueError(f"a claim is lower, higher or same, got {direction!r}")
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        return {"status": "cannot tell", "relative": None, "why": "a value is missing"}
    relative = relative_change(float(a), float(b))
    seen = "same" if abs(relative) <= tolerance else ("lower" if relative < 0 else "higher")
    within = f"within {tolerance * 100:g} %"
    if direction == "same":
        if seen == "same":
            return {"status": "agree", "relative": relative, "why": ""}
        return {"status": "disagree", "relative": relative,
                "why": f"ours is {change_text(relative)}, the paper found no difference"}
    if seen == "same":
        return {"status": "partly", "relative": relative,
                "why": f"about the same here ({within}), the paper found it {direction}"}
    if seen != direction:
        return {"status": "disagree", "relative": relative,
                "why": f"ours is {change_text(relative)}, the paper found it {direction}"}
    if expected is not None and abs(relative) < abs(expected) / 2:
        return {"status": "partly", "relative": relative,
                "why": f"the paper's way, but {change_text(relative)} against the paper's "
                       f"{change_text(expected)}: under half of it"}
    return {"status": "agree", "relative": relative, "why": ""}


def overall(statuses: Iterable[str]) -> str:
    """One claim's verdict over its pairs (e.g. one per deadline share): "agree" when every pair agrees,
    "disagree" when every pair disagrees, "cannot tell" when none could be judged, else "partly"."""
    judged = [status for status in statuses if status != "cannot tell"]
    if not judged:
        return "cannot tell"
    if all(status == "agree" for status in judged):
        return "agree"
    if all(status == "disagree" for status in judged):
        return "disagree"
    return "partly"
