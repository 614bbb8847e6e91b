"""A process that must not outlive its parent: the kernel signals it when the parent dies.

`make run`'s supervisor starts its workers and web server in sessions of their own (so that Ctrl-C
reaches only the supervisor, which stops them in order). Killed itself (SIGKILL, the out-of-memory
killer), it can stop nothing: without this, its Celery worker would go on simulating for hours.
Linux's PR_SET_PDEATHSIG asks the kernel to send a signal to this process when its parent dies;
elsewhere these calls do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int = signal.SIGKILL) -> bool:
    """Ask for `signum` when the parent process dies; False where the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def child_setup(parent: int, signum: int) -> Callable[[], None]:
    """For subprocess.Popen(preexec_fn=...): in the child, before it runs its program, die with
    `signum` when `parent` dies, also when it died while the child was being started."""

    def setup() -> None:
        die_with_parent(signum)
        if os.getppid() != parent:  # the parent died before the request: nobody will signal us
            os.kill(os.getpid(), signum)

    return setup
