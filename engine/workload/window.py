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


WEEK = 7 * DAY


def week_edges(workload: Workload, weeks: int | None = None) -> list[tuple[int, int]]:
    """Consecutive weeks ``[start, end)`` of submit time from the first submit, enough to hold
    every job (or only the first ``weeks``): the paired windows of a replicate set. Every job falls
    in exactly one of them (its submit decides), since the edges tile time without gap or overlap."""
    submit = workload.jobs["submit"].to_numpy()
    if not len(submit):
        return []
    first, last = int(submit.min()), int(submit.max())
    count = (last - first) // WEEK + 1
    if weeks is not None:
        count = min(count, int(weeks))
    return [(first + i * WEEK, first + (i + 1) * WEEK) for i in range(count)]


def equal_edges(workload: Workload, count: int) -> list[tuple[int, int]]:
    """``count`` windows ``[start, end)`` of (nearly) equal length in whole seconds, from the first
    submit to just after the last: every job falls in exactly one of them."""
    if count < 1:
        raise WorkloadError(f"the number of windows must be at least 1, got {count}")
    submit = workload.jobs["submit"].to_numpy()
    if not len(submit):
        return []
    first, stop = int(submit.min()), int(submit.max()) + 1
    bounds = [first + (stop - first) * i // count for i in range(count + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(count)]


def submitted_between(workload: Workload, start: int, end: int) -> Workload:
    """Only the jobs submitted in ``[start, end)`` (trace seconds), in their order, and the cleaning
    report's rejections of the jobs submitted then."""
    submit = workload.jobs["submit"]
    selected = workload.jobs.loc[(submit >= start) & (submit < end)].reset_index(drop=True)
    return Workload(selected, dict(workload.metadata), workload.report.within(start, end), workload.source)
