"""The canonical workload every reader produces and every simulation consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Iterable, Sequence
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


#: How many skipped lines a cleaning report names (the rest are counted).
BAD_LINE_EXAMPLES = 10


@dataclass
class CleaningReport:
    """Every decision cleaning took, counted by reason; nothing is dropped silently."""

    rejected: dict[str, int] = field(default_factory=dict)   # jobs removed, by reason
    repaired: dict[str, int] = field(default_factory=dict)   # jobs kept but changed, by reason
    bad_lines: int = 0                                        # lines skipped with skip_bad_lines
    kept: dict[str, int] = field(default_factory=dict)       # jobs kept unchanged but flagged, by reason
    #: the first BAD_LINE_EXAMPLES skipped lines: {"line", "field", "message"} (no path: callers name the file)
    bad_line_examples: list[dict[str, Any]] = field(default_factory=list)
    #: the submit times of the rejected jobs, by reason, where the reader knows them (a time window then
    #: counts only its own: :meth:`within`); kept in the parse cache, not in :meth:`to_dict`
    rejected_submits: dict[str, list[int]] = field(default_factory=dict)

    def reject(self, reason: str, count: int, submits: Sequence[int] | None = None) -> None:
        """Count ``count`` jobs rejected for ``reason``; ``submits``: their submit times, when known."""
        if count:
            self.rejected[reason] = self.rejected.get(reason, 0) + int(count)
            if submits is not None and len(submits) == count:
                self.rejected_submits.setdefault(reason, []).extend(int(s) for s in submits)

    def within(self, low: float, high: float) -> CleaningReport:
        """The report of the jobs submitted in [low, high) (a time window): each rejection counted by its
        job's submit time; a reason whose jobs' submit times the reader did not keep keeps its count for
        the whole trace, and its name says so. Repairs, flags and skipped lines stay the whole trace's."""
        rejected: dict[str, int] = {}
        submits: dict[str, list[int]] = {}
        for reason, count in self.rejected.items():
            times = self.rejected_submits.get(reason)
            if times is None or len(times) != count:
                rejected[f"{reason} (whole trace: submit times unknown)"] = count
                continue
            inside = [t for t in times if low <= t < high]
            if inside:
                rejected[reason], submits[reason] = len(inside), inside
        return CleaningReport(rejected=rejected, repaired=dict(self.repaired), bad_lines=self.bad_lines,
                              kept=dict(self.kept), bad_line_examples=list(self.bad_line_examples),
                              rejected_submits=submits)

    def repair(self, reason: str, count: int) -> None:
        if count:
            self.repaired[reason] = self.repaired.get(reason, 0) + int(count)

    def keep(self, reason: str, count: int) -> None:
        """Count jobs that were kept as they are but deserve a mention (e.g. runtime 0)."""
        if count:
            self.kept[reason] = self.kept.get(reason, 0) + int(count)

    def note_bad_lines(self, errors: Iterable[Any]) -> None:
        """Keep the first BAD_LINE_EXAMPLES of the skipped lines' errors (WorkloadError-like: line,
        field, message), so a user sees which lines were skipped, not only how many."""
        self.keep_examples([{"line": getattr(error, "line", None), "field": getattr(error, "field", None),
                             "message": str(getattr(error, "message", error))} for error in errors])

    def keep_examples(self, examples: Iterable[dict[str, Any]]) -> None:
        """Add examples of skipped lines; the BAD_LINE_EXAMPLES first by line are kept."""
        noted = self.bad_line_examples + list(examples)
        noted.sort(key=lambda example: example["line"] if example["line"] is not None else -1)
        self.bad_line_examples = noted[:BAD_LINE_EXAMPLES]

    @property
    def total_rejected(self) -> int:
        return sum(self.rejected.values())

    def to_dict(self) -> dict:
        data: dict[str, Any] = {
            "rejected": dict(self.rejected),
            "repaired": dict(self.repaired),
            "bad_lines": self.bad_lines,
            "kept": dict(self.kept),
        }
        if self.bad_line_examples:    # only with skipped lines: a clean trace's report keeps its shape
            data["bad_line_examples"] = [dict(example) for example in self.bad_line_examples]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> CleaningReport:
        return cls(
            dict(data.get("rejected", {})),
            dict(data.get("repaired", {})),
            int(data.get("bad_lines", 0)),
            dict(data.get("kept", {})),
            [dict(example) for example in data.get("bad_line_examples", [])],
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
