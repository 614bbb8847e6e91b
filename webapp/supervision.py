"""What `make run`'s supervisor (webapp/run.py) does through Django: the admin account of the first
start, and queuing again the work of a worker that died or was stopped.

webapp/run.py imports this module only after django.setup(): the models it reaches cannot be loaded
before. The docker image's first start uses :func:`ensure_admin` too (manage.py ensure_admin).
"""

from __future__ import annotations

import os
import secrets
import sys

from django.contrib.auth import get_user_model
from django.db import close_old_connections

from webapp.experiments.tasks import reconcile, requeue_interrupted, resend_lost


def ensure_admin() -> str:
    """Create the admin on the first start; say how to log in."""
    User = get_user_model()
    username = os.environ.get("SCHEDLAB_ADMIN_USER", "admin")
    if User.objects.filter(is_superuser=True).exists():
        return ("log in with the admin account made on the first start "
                "(forgot the password? .venv/bin/python manage.py changepassword <user>)")
    password = os.environ.get("SCHEDLAB_ADMIN_PASSWORD")
    if password:
        User.objects.create_superuser(username, password=password)
        return f"log in as {username} with the password from SCHEDLAB_ADMIN_PASSWORD"
    password = secrets.token_urlsafe(12)
    User.objects.create_superuser(username, password=password)
    return f"log in as {username} with password {password}   (shown only this once)"


def recover_lost_worker() -> str:
    """The only worker died: its running runs (a preview's too) are lost now, not in a minute. Queued
    again once (the attempt counts: a run that kills its worker twice fails with "worker lost")."""
    try:
        runs = reconcile(stale_seconds=0)
    except Exception as e:  # noqa: BLE001 - the supervisor must go on; the minute check retries
        return f"could not re-queue its runs ({type(e).__name__}: {e})"
    finally:
        close_old_connections()
    return f"{runs['requeued']} run(s) it was computing queued again, {runs['failed']} failed as worker lost"


def recover_interrupted() -> int:
    """No worker runs (before the first start, after stopping): whatever is marked running was
    interrupted, not lost by its own fault; queued again without counting the attempt."""
    try:
        return requeue_interrupted()
    finally:
        close_old_connections()


def check_lost_work() -> None:
    """The minute check (what beat does on a lab server): stale heartbeats, lost queue messages."""
    try:
        reconcile()
        resend_lost()
    except Exception as e:  # noqa: BLE001 - retried next minute
        print(f"SchedLab supervisor: the lost-work check failed ({type(e).__name__}: {e})", file=sys.stderr)
    finally:
        close_old_connections()
