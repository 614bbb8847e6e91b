"""What held each waiting job and for how long, in the site scheduler's own words, for the ``slurm``
and the ``pbs`` policies alike: per job its pending reason now (a code: its index in the policy's
names), since when, its seconds under each reason so far and the order in which jobs first had
some, in arrays that the ``slurm`` policy's compiled walks write too
(engine.policies.slurmkernels.set_reason); the run's column and summary made from them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from engine.policies import slurmkernels as kernels


class ReasonTable:
    """Each waiting job's reason now (-1: none), since when, and its seconds per reason so far."""

    def __init__(self, n: int, names: Sequence[str], now: Callable[[], int]) -> None:
        if len(names) > 127:
            raise ValueError(f"{len(names)} reasons: at most 127 fit the table's codes")
        self.names = tuple(names)
        self.code = {name: code for code, name in enumerate(self.names)}
        self.now = now
        self.n = n
        self.reason = np.full(n, -1, dtype=np.int8)
        self.since = np.zeros(n, dtype=np.int64)
        self.seconds = np.zeros((n, len(self.names)), dtype=np.int64)
        self.first = np.full(n, -1, dtype=np.int64)      # the order jobs first had seconds in
        self.tally = np.zeros(1, dtype=np.int64)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The arrays the compiled walks write (slurmkernels.set_reason's last five arguments)."""
        return self.reason, self.since, self.seconds, self.first, self.tally

    def queued(self, job: int, code: int) -> None:
        """The job waits from now with reason ``code`` (a new job: nothing before it to count)."""
        self.reason[job] = code
        self.since[job] = self.now()

    def note(self, job: int, code: int) -> None:
        """Reason ``code`` holds ``job`` from now on (-1: it no longer waits); its time so far goes
        to the reason before."""
        kernels.set_reason(job, code, self.now(), *self.arrays())

    def note_name(self, job: int, name: str) -> None:
        self.note(job, self.code[name])

    def stop(self, job: int) -> None:
        """The job no longer waits (it started or left)."""
        self.note(job, -1)

    def closed(self, waiting: np.ndarray) -> None:
        """Count the time of the ``waiting`` jobs under their reason up to now (they keep it)."""
        now = self.now()
        for job in np.asarray(waiting, dtype=np.int64).tolist():
            code = int(self.reason[job])
            self.note(job, -1)
            self.reason[job] = code
            self.since[job] = now

    def table(self, waiting: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The jobs that waited under some reason, in the order they first did, and their seconds
        per reason (a row per job, a column per code; the ``waiting`` ones: up to now)."""
        self.closed(waiting)
        jobs = np.flatnonzero(self.first >= 0)
        jobs = jobs[np.argsort(self.first[jobs], kind="stable")]
        return jobs, self.seconds[jobs]

    def longest(self, waiting: np.ndarray) -> list[str]:
        """Per job, the reason that held it longest ("" if it never waited; of equal ones, the
        first by name)."""
        jobs, seconds = self.table(waiting)
        by_name = sorted(range(len(self.names)), key=lambda code: self.names[code])
        longest = np.asarray(by_name)[np.argmax(seconds[:, by_name], axis=1)] if len(jobs) else np.zeros(0, int)
        column = np.full(self.n, "", dtype=object)
        column[jobs] = np.asarray(self.names, dtype=object)[longest]
        return column.tolist()

    def pending(self, waiting: np.ndarray) -> dict[str, dict[str, Any]]:
        """Per reason (by name), the jobs it held and for how many hours (summed job after job, in
        the order they first waited)."""
        _, seconds = self.table(waiting)
        pending: dict[str, dict[str, Any]] = {}
        for code in sorted(range(len(self.names)), key=lambda c: self.names[c]):
            values = seconds[:, code]
            values = values[values > 0]
            if len(values):
                hours = float(np.cumsum(values / 3600.0)[-1])
                pending[self.names[code]] = {"jobs": int(len(values)), "hours": round(hours, 3)}
        return pending


def refused_counts(refused: dict[int, tuple[str, str]]) -> dict[str, int]:
    """The jobs refused at submission per reason (``sim.refused``: job -> (reason, limit)), by reason."""
    counts: dict[str, int] = {}
    for reason, _ in refused.values():
        counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items()))
