"""Select the jobs submitted in a window of days, counted from the trace's first submit."""

from __future__ import annotations

from engine.workload.errors import WorkloadError
from engine.workload.model import Workload

DAY = 86_400


def parse_days(text: str) -> tuple[float, float]:
    """``"FROM:TO"`` in days (either side may be empty: ``":30"``, ``"10:"``)."""
    start, sep, end = text.partition(":")
    try:
        if not sep:
            raise ValueError
        low = float(start) if start.strip() else 0.0
        high = float(end) if end.strip() else float("inf")
    except ValueError:
        raise WorkloadError(f"--days expects FROM:TO in days (e.g. 0:30), got {text!r}") from None
    if high <= low:
        raise WorkloadError(f"--days {text}: TO must be after FROM")
    return low, high


def select_days(workload: Workload, low: float, high: float) -> Workload:
    """Only the jobs submitted in [first submit + low days, first submit + high days), and the cleaning
    report's rejections of the jobs submitted then."""
    jobs = workload.jobs
    if jobs.empty:
        return workload
    first = int(jobs["submit"].iloc[0])
    submit = jobs["submit"]
    keep = (submit >= first + low * DAY) & (submit < first + high * DAY)
    selected = jobs.loc[keep].reset_index(drop=True)
    metadata = dict(workload.metadata)
    metadata["days"] = f"{low:g}:{high:g}"
    report = workload.report.within(first + low * DAY, first + high * DAY)   # rejections of this window only
    return Workload(selected, metadata, report, workload.source)
