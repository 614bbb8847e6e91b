"""The canonical workload every reader produces and every simulation consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

#: Columns every Workload.jobs frame has, in this order (readers may add more after them).
CANONICAL_COLUMNS = (
    "job_id",          # int, the trace's job number
    "submit",          # int seconds, the trace's own time base
    "runtime",         # int seconds the job really runs in the simulation (after cleaning)
    "requested_time",  # int seconds, the user's estimate / walltime limit
    "procs",           # int processors requested
    "user",            # int user id (-1 unknown)
    "group",           # int group id (-1 unknown)
    "queue",           # int queue number (-1 unknown)
    "partition",       # int partition number (-1 unknown)
    "killed",          # bool: runtime was cut at requested_time by cleaning
)


@dataclass
class CleaningReport:
    """Every decision cleaning took, counted by reason; nothing is dropped silently."""

    rejected: dict[str, int] = field(default_factory=dict)   # jobs removed, by reason
    repaired: dict[str, int] = field(default_factory=dict)   # jobs kept but changed, by reason
    bad_lines: int = 0                                        # lines skipped with skip_bad_lines
    kept: dict[str, int] = field(default_factory=dict)       # jobs kept unchanged but flagged, by reason

    def reject(self, reason: str, count: int) -> None:
        if count:
            self.rejected[reason] = self.rejected.get(reason, 0) + int(count)

    def repair(self, reason: str, count: int) -> None:
        if count:
            self.repaired[reason] = self.repaired.get(reason, 0) + int(count)

    def keep(self, reason: str, count: int) -> None:
        """Count jobs that were kept as they are but deserve a mention (e.g. runtime 0)."""
        if count:
            self.kept[reason] = self.kept.get(reason, 0) + int(count)

    @property
    def total_rejected(self) -> int:
        return sum(self.rejected.values())

    def to_dict(self) -> dict:
        return {
            "rejected": dict(self.rejected),
            "repaired": dict(self.repaired),
            "bad_lines": self.bad_lines,
            "kept": dict(self.kept),
        }

    @classmethod
    def from_dict(cls, data: dict) -> CleaningReport:
        return cls(
            dict(data.get("rejected", {})),
            dict(data.get("repaired", {})),
            int(data.get("bad_lines", 0)),
            dict(data.get("kept", {})),
        )


@dataclass
class Workload:
    """Jobs (a DataFrame with CANONICAL_COLUMNS, sorted by submit, stable) plus header metadata."""

    jobs: pd.DataFrame
    metadata: dict[str, Any] = field(default_factory=dict)  # header fields; "procs" (int) = machine size; names, ...
    report: CleaningReport = field(default_factory=CleaningReport)
    source: str = ""

    def __len__(self) -> int:
        return len(self.jobs)


#: metadata key of the text a log's job ids carry after the number kept in ``jobid`` (PBS ``.server``)
JOBID_SUFFIX = "JobIdSuffix"


def native_ids(workload: Workload) -> list[str] | None:
    """Each job's id as its scheduler wrote it (PBS ``112461.server``, Slurm ``123_4``), for logs
    that keep one (the ``jobid`` column of engine.workload.accounting), else None."""
    jobs = workload.jobs
    if "jobid" not in jobs:
        return None
    suffix = str(workload.metadata.get(JOBID_SUFFIX) or "")
    return [f"{jobid}{suffix}" for jobid in jobs["jobid"].astype(str).tolist()]
