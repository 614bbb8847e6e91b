"""Input shaking: a slightly perturbed copy of a trace, drawn from a seed.

Tsafrir, Ouaknine & Feitelson, "Reducing performance evaluation sensitivity and variability by
input shaking", MASCOTS 2007: a simulation result that flips under tiny changes of its input is
an artifact of that one trace; running many slightly perturbed copies and averaging shows what
persists. Every policy of a comparison gets the same copies (common random numbers: copy ``k`` is
drawn from the set's seed and ``k`` only), so the difference between two policies on one copy
measures the policies, not the perturbation.

Our perturbation (the magnitudes are ours, stated in :class:`Shake`): every job's submit time
moves by an integer drawn uniformly from ``[-submit_seconds, +submit_seconds]``; optionally every
runtime and every requested time is multiplied by a factor drawn uniformly from ``[1 - f, 1 + f]``
(rounded to whole seconds, requested time at least 1 s). A runtime that was within its request
stays within it (the request is where cleaning killed the job); submit times stay at least the
trace's first submit, and the jobs are re-sorted by their new submit times (stable).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.workload.errors import WorkloadError
from engine.workload.model import Workload


@dataclass(frozen=True)
class Shake:
    """How much a shaken copy differs from the trace: submit times move by up to
    ``submit_seconds`` either way; runtimes and requested times are scaled by up to ``runtime``
    and ``estimate`` (fractions, 0 = unchanged)."""

    submit_seconds: int = 60
    runtime: float = 0.0
    estimate: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.submit_seconds, int) or self.submit_seconds < 0:
            raise WorkloadError(f"shaking: submit_seconds must be a whole number >= 0, got {self.submit_seconds!r}")
        for name in ("runtime", "estimate"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value < 1):
                raise WorkloadError(f"shaking: {name} must be a fraction in [0, 1), got {value!r}")

    def to_dict(self) -> dict[str, float]:
        return {"submit_seconds": self.submit_seconds, "runtime": self.runtime, "estimate": self.estimate}


def shake(workload: Workload, seed: int, how: Shake = Shake()) -> Workload:
    """A shaken copy of ``workload`` (see the module docstring); the same seed, the same copy."""
    jobs = workload.jobs.copy()
    if not len(jobs):
        return workload
    rng = np.random.default_rng(seed)
    count = len(jobs)
    submit = jobs["submit"].to_numpy(dtype=np.int64)
    moved = submit + rng.integers(-how.submit_seconds, how.submit_seconds + 1, size=count)
    jobs["submit"] = np.maximum(moved, int(submit.min()))
    runtime = jobs["runtime"].to_numpy(dtype=np.int64)
    requested = jobs["requested_time"].to_numpy(dtype=np.int64)
    within = runtime <= requested
    if how.estimate:
        requested = np.maximum(np.rint(requested * rng.uniform(1 - how.estimate, 1 + how.estimate, count)), 1)
        requested = requested.astype(np.int64)
    if how.runtime:
        runtime = np.rint(runtime * rng.uniform(1 - how.runtime, 1 + how.runtime, count)).astype(np.int64)
    jobs["requested_time"] = requested
    jobs["runtime"] = np.where(within, np.minimum(runtime, requested), runtime)
    jobs = jobs.sort_values("submit", kind="stable").reset_index(drop=True)
    metadata = {**workload.metadata, "shaken": {"seed": int(seed), **how.to_dict()}}
    return Workload(jobs, metadata, workload.report, workload.source)
