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

from webapp.core.queues import QUICK, SIMULATION
from webapp.experiments.tasks import dispatch, reconcile, requeue_interrupted, resend_lost
from webapp.traces.tasks import reconcile_parsing, reconcile_traces
from webapp.traces.uploads import clean_upload_temp


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


def recover_lost_worker(kind: str) -> str:
    """The only worker of this kind (webapp.core.queues) died: what it was computing is lost now, not
    in a minute: the simulation worker's runs (a preview's too), the quick worker's parses. Queued again
    once (the attempt counts: a run that kills its worker twice fails with "worker lost")."""
    empty = {"requeued": 0, "failed": 0}
    try:
        runs = reconcile(stale_seconds=0) if kind == SIMULATION else empty
        parses = reconcile_parsing(worker_gone=True) if kind == QUICK else {"resent": 0, "failed": 0}
    except Exception as e:  # noqa: BLE001 - the supervisor must go on; the minute check retries
        return f"could not re-queue its work ({type(e).__name__}: {e})"
    finally:
        close_old_connections()
    parsed = (f"; {parses['resent']} parse(s) sent again, {parses['failed']} failed"
              if parses["resent"] or parses["failed"] else "")
    return f"{runs['requeued']} run(s) it was computing queued again, {runs['failed']} failed as worker lost{parsed}"


def dispatch_runs() -> None:
    """Hand waiting runs to free simulation slots (webapp.experiments.fairqueue); runs that end do it
    too, this catches the rest (a slot freed by a lost worker, a cancelled run)."""
    try:
        dispatch()
    except Exception as e:  # noqa: BLE001 - retried in a few seconds
        print(f"SchedLab supervisor: dispatching runs failed ({type(e).__name__}: {e})", file=sys.stderr)
    finally:
        close_old_connections()


def recover_interrupted() -> int:
    """No worker runs (before the first start, after stopping): whatever is marked running was
    interrupted, not lost by its own fault; queued again without counting the attempt."""
    try:
        clean_upload_temp()      # uploads the previous start's web server was receiving when it stopped
        return requeue_interrupted() + reconcile_parsing(worker_gone=True, count=False)["resent"]
    finally:
        close_old_connections()


def check_lost_work() -> None:
    """The minute check (what beat does on a lab server): stale heartbeats, lost queue messages."""
    try:
        reconcile()
        resend_lost()
        reconcile_traces()
    except Exception as e:  # noqa: BLE001 - retried next minute
        print(f"SchedLab supervisor: the lost-work check failed ({type(e).__name__}: {e})", file=sys.stderr)
    finally:
        close_old_connections()
