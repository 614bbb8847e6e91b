"""What each user may use of the shared server, what they use now, and the checks that refuse more.

Limits come from the settings (SCHEDLAB_MAX_ACTIVE_RUNS, SCHEDLAB_MAX_RUNS_PER_EXPERIMENT,
SCHEDLAB_DISK_QUOTA_BYTES) unless an admin gave the user a Quota of their own.

This app sits below the apps whose use it counts: each of them registers a meter in its AppConfig.ready()
(:func:`measures_disk`: the traces app its uploads and parsed caches, the experiments app its run
results, ...; :func:`counts_runs`: the experiments app its queued and running runs), and the checks
here add up whatever is registered. Disk is counted from the files themselves (a trace two users
uploaded counts for both).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.template.defaultfilters import filesizeformat

from webapp.quotas.models import Quota


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
    disk: dict[str, int] = field(default_factory=dict)  # meter key -> bytes

    @property
    def active_runs(self) -> int:
        return self.queued_runs + self.running_runs

    @property
    def disk_bytes(self) -> int:
        return sum(self.disk.values())


@dataclass(frozen=True)
class DiskMeter:
    key: str
    label: str
    measure: Callable[[Any], int]  # user -> bytes


DISK_METERS: dict[str, DiskMeter] = {}
RUN_COUNTERS: list[Callable[[Any], tuple[int, int]]] = []  # user -> (queued, running)


def measures_disk(key: str, label: str, measure: Callable[[Any], int]) -> None:
    """Count `measure(user)` bytes in each user's disk use, shown as `label` (once per key)."""
    DISK_METERS[key] = DiskMeter(key, label, measure)


def counts_runs(count: Callable[[Any], tuple[int, int]]) -> None:
    """Count `count(user)` = (queued, running) runs in each user's use."""
    if count not in RUN_COUNTERS:
        RUN_COUNTERS.append(count)


def limits_of(user: Any) -> Limits:
    quota = Quota.objects.filter(user=user).first()

    def pick(name: str, default: int) -> int:
        value = getattr(quota, name, None) if quota is not None else None
        return default if value is None else value

    return Limits(pick("max_active_runs", settings.SCHEDLAB_MAX_ACTIVE_RUNS),
                  pick("max_runs_per_experiment", settings.SCHEDLAB_MAX_RUNS_PER_EXPERIMENT),
                  pick("disk_bytes", settings.SCHEDLAB_DISK_QUOTA_BYTES))


def usage_of(user: Any) -> Usage:
    queued, running = run_counts(user)
    return Usage(queued, running, {key: meter.measure(user) for key, meter in DISK_METERS.items()})


def run_counts(user: Any) -> tuple[int, int]:
    counts = [count(user) for count in RUN_COUNTERS]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


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
    usage = sum(run_counts(user))
    if usage + count > limits.max_active_runs:
        raise QuotaExceeded(f"{count} more runs would make {usage + count} queued or running: you may have at most "
                            f"{limits.max_active_runs} at once ({usage} now); wait for some to finish or "
                            "cancel some")
    check_disk(user, 0)


def check_disk(user: Any, incoming_bytes: int) -> None:
    """Refuse to store `incoming_bytes` more (0: anything more) when the user's disk quota is used up."""
    limits = limits_of(user)
    used = usage_of(user).disk_bytes
    if used >= limits.disk_bytes or used + incoming_bytes > limits.disk_bytes:
        raise QuotaExceeded(f"disk quota reached: you use {filesizeformat(used)} of {filesizeformat(limits.disk_bytes)}"
                            + (f" and this needs {filesizeformat(incoming_bytes)} more" if incoming_bytes else "")
                            + "; delete traces or experiments you no longer need, or ask an admin for more")
