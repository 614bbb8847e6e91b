"""What each user may use of the shared server, what they use now, and the checks that refuse more.

Limits come from the settings (SCHEDLAB_MAX_ACTIVE_RUNS, SCHEDLAB_MAX_RUNS_PER_EXPERIMENT,
SCHEDLAB_DISK_QUOTA_BYTES) unless an admin gave the user a Quota of their own. Disk is counted from
the files themselves: a user's uploaded traces with their parsed caches, their runs' results, their
previews' results and their plots' cache (a trace two users uploaded counts for both).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Sum
from django.db.models.functions import Length

from webapp.core.files import media_path
from webapp.experiments.models import Run
from webapp.preview.models import Preview
from webapp.quotas.models import Quota
from webapp.traces.models import Trace


class QuotaExceeded(ValueError):
    """A limit would be passed; the message says which, what is used and what to do."""


@dataclass(frozen=True)
class Limits:
    max_active_runs: int
    max_runs_per_experiment: int
    disk_bytes: int


@dataclass(frozen=True)
class Usage:
    queued_runs: int
    running_runs: int
    traces_bytes: int
    results_bytes: int
    previews_bytes: int
    plots_bytes: int

    @property
    def active_runs(self) -> int:
        return self.queued_runs + self.running_runs

    @property
    def disk_bytes(self) -> int:
        return self.traces_bytes + self.results_bytes + self.previews_bytes + self.plots_bytes


def limits_of(user: Any) -> Limits:
    quota = Quota.objects.filter(user=user).first()

    def pick(field: str, default: int) -> int:
        value = getattr(quota, field, None) if quota is not None else None
        return default if value is None else value

    return Limits(pick("max_active_runs", settings.SCHEDLAB_MAX_ACTIVE_RUNS),
                  pick("max_runs_per_experiment", settings.SCHEDLAB_MAX_RUNS_PER_EXPERIMENT),
                  pick("disk_bytes", settings.SCHEDLAB_DISK_QUOTA_BYTES))


def usage_of(user: Any) -> Usage:
    runs = Run.objects.filter(experiment__owner=user)
    traces = Trace.objects.filter(owner=user)
    traces_bytes = sum(file_size(t.path) + sum(file_size(c) for c in t.path.parent.glob(f"{t.sha256}-p*.npz"))
                       for t in traces.only("file", "sha256"))
    previews = Preview.objects.filter(owner=user)
    texts = previews.aggregate(n=Sum(Length("machine_text")) + Sum(Length("current_text")) +
                               Sum(Length("proposed_text")))["n"] or 0
    experiment_ids = list(user.experiments.values_list("pk", flat=True))
    return Usage(
        queued_runs=runs.filter(status=Run.Status.QUEUED).count(),
        running_runs=runs.filter(status=Run.Status.RUNNING).count(),
        traces_bytes=traces_bytes,
        results_bytes=sum(tree_size(media_path(f"runs/{pk}")) for pk in runs.values_list("pk", flat=True)),
        previews_bytes=texts + sum(tree_size(p.result_dir) for p in previews.only("pk")),
        plots_bytes=sum(tree_size(media_path(f"dashboards/experiments/{pk}")) for pk in experiment_ids)
        + sum(tree_size(media_path(f"dashboards/traces/{pk}")) for pk in traces.values_list("pk", flat=True)),
    )


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def tree_size(folder: Path) -> int:
    """Bytes of the files under `folder` (0 when it does not exist)."""
    total = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                total += tree_size(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return total


def check_new_runs(user: Any, count: int) -> None:
    """Refuse an experiment, sweep or study of `count` runs that passes the user's limits."""
    limits = limits_of(user)
    if count > limits.max_runs_per_experiment:
        raise QuotaExceeded(f"{count} runs: an experiment, sweep or study may have at most "
                            f"{limits.max_runs_per_experiment} on this server; split it, or ask an admin "
                            "to raise your limit")
    usage = usage_of_runs(user)
    if usage + count > limits.max_active_runs:
        raise QuotaExceeded(f"{count} more runs would make {usage + count} queued or running: you may have at most "
                            f"{limits.max_active_runs} at once ({usage} now); wait for some to finish or "
                            "cancel some")
    check_disk(user, 0)


def usage_of_runs(user: Any) -> int:
    return Run.objects.filter(experiment__owner=user, status__in=(Run.Status.QUEUED, Run.Status.RUNNING)).count()


def check_disk(user: Any, incoming_bytes: int) -> None:
    """Refuse to store `incoming_bytes` more (0: anything more) when the user's disk quota is used up."""
    limits = limits_of(user)
    used = usage_of(user).disk_bytes
    if used >= limits.disk_bytes or used + incoming_bytes > limits.disk_bytes:
        raise QuotaExceeded(f"disk quota reached: you use {human_bytes(used)} of {human_bytes(limits.disk_bytes)}"
                            + (f" and this needs {human_bytes(incoming_bytes)} more" if incoming_bytes else "")
                            + "; delete traces or experiments you no longer need, or ask an admin for more")


def human_bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - the loop returns at GiB
