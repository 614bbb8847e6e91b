"""Load scaling: replay one trace at a higher or lower offered load.

The Paragon paper (§5) plots its curves against the *job invocation ratio*; we obtain the same
axis from a real trace by dividing every inter-arrival time by ``factor``: factor 2 submits the
same jobs twice as fast (about twice the offered load), factor 0.5 half as fast. Job sizes,
runtimes and requested times are unchanged and every job is kept, in the same order.

Submit times stay integer seconds: job ``i`` is submitted at
``first + round_half_up((submit_i - first) / factor)``. Rounding the cumulative offset (not each
gap) means rounding errors never accumulate, and since the mapping is monotone the arrival order
(and ties) of the original trace are kept.
"""

from __future__ import annotations

import math

import numpy as np

from engine.workload.errors import WorkloadError
from engine.workload.model import Workload


def check_load_factor(factor: float) -> float:
    """``factor`` as a positive finite float, or WorkloadError naming the problem."""
    try:
        value = float(factor)
    except (TypeError, ValueError):
        raise WorkloadError(f"load factor must be a positive number, got {factor!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise WorkloadError(f"load factor must be a positive number, got {factor!r}")
    return value


def scale_load(workload: Workload, factor: float) -> Workload:
    """The same jobs with inter-arrival times divided by ``factor`` (see the module docstring)."""
    factor = check_load_factor(factor)
    metadata = dict(workload.metadata)
    metadata["load_factor"] = factor
    jobs = workload.jobs.copy()
    if factor != 1.0 and len(jobs):
        submit = jobs["submit"].to_numpy(dtype=np.int64)
        first = submit[0]
        offset = np.floor((submit - first) / factor + 0.5).astype(np.int64)
        jobs["submit"] = first + offset
    return Workload(jobs, metadata, workload.report, workload.source)
