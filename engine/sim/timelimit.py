"""A controller's periodic time-limit check: jobs over their limit are killed only when it runs.

Slurm's controller does not kill a job the second its time limit ends: its background loop calls
job_time_limit() every PERIODIC_TIMEOUT (30 s; controller.c _slurmctld_background), which kills
each running job whose end time (start + limit) lies OverTimeLimit minutes or more in the past
(job_mgr.c: ``end_time <= now - over_time_limit * 60``). So a job that would run past its limit
ends at the first check at or after start + limit + OverTimeLimit; sacct shows such TIMEOUT jobs
some 0-30 s past their Timelimit (the three recordings in tests/data: every TIMEOUT job ended on
one 30-s grid per recording). A job that ends by itself before that runs its own runtime.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

#: seconds between two time-limit checks (slurmctld's PERIODIC_TIMEOUT)
PERIODIC_TIMEOUT = 30


def first_check(due: int, origin: int, period: int = PERIODIC_TIMEOUT) -> int:
    """The first check at or after ``due`` on the grid origin + k * period (k >= 0)."""
    if due <= origin:
        return origin
    return origin + -(-(due - origin) // period) * period


@dataclass
class TimeLimitCheck:
    """Which jobs the check kills and when. Per job: ``limit`` (seconds; < 0: none), ``grace``
    (OverTimeLimit seconds; None: UNLIMITED, never killed) and ``cut``: the reader cut the job at
    its limit (a recording's TIMEOUT job read with overruns cut), so how long it would have run is
    unknown and the check kills it. A job whose runtime passes its limit without being cut ran
    that long in the recording (Slurm's own check killed it there): it keeps its runtime. The
    checks run every ``period`` seconds from ``origin``."""

    limit: list[int]
    grace: list[int | None]
    cut: list[bool]
    origin: int
    period: int = PERIODIC_TIMEOUT

    def runtime(self, job: int, start: int, runtime: int) -> tuple[int, bool]:
        """The job's runtime when it starts at ``start``, and whether the check killed it."""
        limit, grace = self.limit[job], self.grace[job]
        if not self.cut[job] or limit < 0 or grace is None:
            return runtime, False
        return first_check(start + limit + max(grace, 0), self.origin, self.period) - start, True

    def without(self, jobs: Collection[int]) -> TimeLimitCheck:
        """The check over the other jobs, renumbered in order (a schedule without refused jobs)."""
        kept = [i for i in range(len(self.limit)) if i not in jobs]
        return TimeLimitCheck([self.limit[i] for i in kept], [self.grace[i] for i in kept],
                              [self.cut[i] for i in kept], self.origin, self.period)
