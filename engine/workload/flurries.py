"""Workload flurries: one user's burst of jobs that dominates a short stretch of a trace.

Tsafrir & Feitelson, "Instability in parallel job scheduling simulation: the role of workload
flurries", IPDPS 2006: a flurry (many similar jobs of a single user in a short time) is moved
through the queue in unison by a scheduler, so a tiny change of the setup can flip a comparison
between two policies; they advise evaluating with the flurries removed, and separately with them.

Definition used here (the thresholds are ours, stated in :class:`FlurryRule` and in every report):
a user's job belongs to a flurry when, within some window of ``window_hours`` that contains it,
that user submitted at least ``max(share x N, min_jobs)`` jobs, ``N`` being the jobs of the whole
trace. A flurry is a maximal run of such jobs of one user (in submit order); it is reported with
its user, first and last submit, job count and share of the trace's jobs. With the defaults (2 %
of the trace in 24 hours, at least 100 jobs; measured 2026-11-27 on /work/shared/data/swf):
the uncleaned RICC-2010 log has 3 flurries (users 27 and 152, 21 % of its jobs, each within 32-130
hours) and METACENTRUM-2009 4 (users 116 and 17, 21 %); of the Parallel Workloads Archive's cleaned
("cln") logs, from which the archive removed flurries, LPC-EGEE-2004 and CEA-Curie-2011 have one
each (3.7 %, 2.5 %) and KTH-SP2, SDSC-SP2, SDSC-Par, CTC-SP2, LANL-CM5, SDSC-BLUE, HPC2N-2002,
SDSC-DS, LLNL-Thunder, Sandia-Ross and OSC-Clust none.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from engine.workload.errors import WorkloadError
from engine.workload.model import Workload

HOUR = 3600


@dataclass(frozen=True)
class FlurryRule:
    """What counts as a flurry: at least ``share`` of the trace's jobs (and at least ``min_jobs``)
    from one user within ``window_hours``."""

    share: float = 0.02
    window_hours: float = 24.0
    min_jobs: int = 100

    def __post_init__(self) -> None:
        if not (math.isfinite(self.share) and 0 < self.share <= 1):
            raise WorkloadError(f"flurries: share must be in (0, 1], got {self.share!r}")
        if not (math.isfinite(self.window_hours) and self.window_hours > 0):
            raise WorkloadError(f"flurries: window_hours must be positive, got {self.window_hours!r}")
        if self.min_jobs < 1:
            raise WorkloadError(f"flurries: min_jobs must be at least 1, got {self.min_jobs!r}")

    def threshold(self, jobs: int) -> int:
        """The number of jobs in one window that makes a flurry, for a trace of ``jobs`` jobs."""
        return max(math.ceil(self.share * jobs), self.min_jobs)

    def describe(self) -> str:
        return (f"a user's jobs within {self.window_hours:g} h numbering at least {self.share * 100:g} % of the trace's "
                f"jobs and at least {self.min_jobs} (after Tsafrir & Feitelson, IPDPS 2006)")

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Flurry:
    """One flurry: ``user``'s ``jobs`` jobs submitted from ``first`` to ``last`` (trace seconds),
    ``share`` of the trace's jobs."""

    user: int
    first: int
    last: int
    jobs: int
    share: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def find_flurries(workload: Workload, rule: FlurryRule = FlurryRule()) -> list[Flurry]:
    """Every flurry of ``workload`` under ``rule`` (see the module docstring), by first submit."""
    jobs = workload.jobs
    total = len(jobs)
    if not total or "user" not in jobs:
        return []
    need, width = rule.threshold(total), rule.window_hours * HOUR
    found: list[Flurry] = []
    for user, submits in jobs.groupby("user", sort=True)["submit"]:
        if int(user) < 0 or len(submits) < need:     # unknown user: no stream to speak of
            continue
        times = np.sort(submits.to_numpy(dtype=np.int64))
        found.extend(Flurry(int(user), int(times[a]), int(times[b - 1]), b - a, (b - a) / total)
                     for a, b in _burst_runs(times, need, width))
    return sorted(found, key=lambda f: (f.first, f.user))


def _burst_runs(times: np.ndarray, need: int, width: float) -> list[tuple[int, int]]:
    """Maximal runs ``[a, b)`` of positions in sorted ``times`` covered by a window of ``width``
    seconds that starts at a job and holds at least ``need`` jobs."""
    count = len(times)
    ends = np.searchsorted(times, times + width, side="left")
    starts = np.flatnonzero(ends - np.arange(count) >= need)
    if not len(starts):
        return []
    cover = np.zeros(count + 1, dtype=np.int64)
    np.add.at(cover, starts, 1)
    np.add.at(cover, ends[starts], -1)
    inside = np.cumsum(cover[:-1]) > 0
    edges = np.flatnonzero(np.diff(np.concatenate(([False], inside, [False])).astype(np.int8)))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def without_flurries(workload: Workload, flurries: list[Flurry] | list[dict]) -> Workload:
    """``workload`` without the jobs of ``flurries`` (each user's jobs submitted from its first to
    its last submit); ``metadata["flurries_removed"]`` counts them."""
    jobs = workload.jobs
    drop = np.zeros(len(jobs), dtype=bool)
    user, submit = jobs["user"].to_numpy(), jobs["submit"].to_numpy()
    for flurry in flurries:
        f = flurry if isinstance(flurry, dict) else flurry.to_dict()
        drop |= (user == f["user"]) & (submit >= f["first"]) & (submit <= f["last"])
    if not drop.any():
        return workload
    metadata = {**workload.metadata, "flurries_removed": int(drop.sum())}
    return Workload(jobs.loc[~drop].reset_index(drop=True), metadata, workload.report, workload.source)
