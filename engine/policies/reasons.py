"""What held each waiting job and for how long, in the site scheduler's own words: a clock per job
that a policy's passes set (``note``), and the run's column and summary made from it (the ``pbs``
policy; the ``slurm`` policy keeps its own of the same shape in arrays its compiled walks write,
engine.policies.slurm, and shares :func:`refused_counts`)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from collections.abc import Callable


class ReasonClock:
    """Each waiting job's reason now, since when, and its seconds per reason so far."""

    def __init__(self, now: Callable[[], int]) -> None:
        self.now = now
        self.reason: dict[int, str] = {}
        self.since: dict[int, int] = {}
        self.seconds: defaultdict[int, dict[str, int]] = defaultdict(dict)

    def note(self, job: int, reason: str) -> None:
        """``reason`` holds ``job`` from now on; its time so far goes to the reason before."""
        if self.reason.get(job) != reason:
            self.close(job)
            self.reason[job] = reason

    def close(self, job: int) -> None:
        """Count the time since the last change under the job's reason now."""
        now = self.now()
        current = self.reason.get(job)
        since = self.since.get(job, now)
        if current is not None and now > since:
            seconds = self.seconds[job]
            seconds[current] = seconds.get(current, 0) + now - since
        self.since[job] = now

    def stop(self, job: int) -> None:
        """The job no longer waits (it started)."""
        self.close(job)
        self.reason.pop(job, None)
        self.since.pop(job, None)

    def totals(self, waiting: set[int]) -> dict[int, dict[str, int]]:
        """Seconds each job waited under each reason (the ``waiting`` ones: up to now)."""
        for job in waiting:
            self.close(job)
        return {job: dict(seconds) for job, seconds in self.seconds.items() if seconds}


def longest_reason_column(totals: dict[int, dict[str, int]], n: int) -> list[str]:
    """Per job, the reason that held it longest ("" if it never waited; ties: the first by name)."""
    column = [""] * n
    for job, seconds in totals.items():
        column[job] = max(sorted(seconds), key=lambda r: seconds[r])
    return column


def reason_summary(totals: dict[int, dict[str, int]], refused: dict[int, tuple[str, str]]) -> tuple[dict, dict]:
    """(per reason: the jobs it held and the hours, per refusal reason: the jobs refused)."""
    hours: dict[str, float] = {}
    jobs: dict[str, int] = {}
    for seconds in totals.values():
        for reason, value in seconds.items():
            hours[reason] = hours.get(reason, 0.0) + value / 3600.0
            jobs[reason] = jobs.get(reason, 0) + 1
    pending: dict[str, Any] = {reason: {"jobs": jobs[reason], "hours": round(hours[reason], 3)} for reason in sorted(hours)}
    return pending, refused_counts(refused)


def refused_counts(refused: dict[int, tuple[str, str]]) -> dict[str, int]:
    """The jobs refused at submission per reason (``sim.refused``: job -> (reason, limit)), by reason."""
    counts: dict[str, int] = {}
    for reason, _ in refused.values():
        counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items()))
