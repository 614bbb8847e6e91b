"""Bounds on one piece of quick work (parsing a trace): time and memory.

Time: Celery's soft limit (SoftTimeLimitExceeded raised in the task, which then fails with a message)
and hard limit (the pool process is killed) from the settings. Memory: while the block runs, the
process may map at most SCHEDLAB_TASK_MEMORY_BYTES more than it did when the block began
(RLIMIT_AS); an allocation past it raises MemoryError in the task instead of the machine swapping or
the out-of-memory killer taking a random process. Linux and macOS; elsewhere no memory bound.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from celery.exceptions import SoftTimeLimitExceeded
from django.template.defaultfilters import filesizeformat

try:
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

LIMIT_ERRORS = (SoftTimeLimitExceeded, MemoryError)


@contextmanager
def memory_limit(extra_bytes: int) -> Iterator[None]:
    """At most `extra_bytes` more address space for this process while the block runs (0: no bound)."""
    if extra_bytes <= 0 or resource is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mapped_bytes() + extra_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY:
        limit = min(limit, soft)  # never loosen a bound set from outside
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def mapped_bytes() -> int:
    """The process's address space now (what RLIMIT_AS bounds)."""
    try:
        with open(f"/proc/{os.getpid()}/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: the peak resident size is the best available floor
        assert resource is not None
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def limit_message(error: BaseException, what: str, seconds: int, memory_bytes: int) -> str:
    """The user's line for a reached limit: "time limit: parsing took longer than 600 s ..."."""
    if isinstance(error, SoftTimeLimitExceeded):
        return (f"time limit: {what} took longer than {seconds} s (this server's limit); "
                "try a smaller file or window, or ask an admin")
    return (f"memory limit: {what} needed more than {filesizeformat(memory_bytes)} (this server's limit); "
            "try a smaller file or window, or ask an admin")
