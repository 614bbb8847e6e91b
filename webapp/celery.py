"""The Celery app: configured from Django settings (CELERY_*), tasks found in each app's tasks.py."""

from __future__ import annotations

import os
import signal

from celery import Celery
from celery.signals import worker_process_init
from django.conf import settings

from webapp.lifeline import die_with_parent

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

app = Celery("webapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def yield_to_the_web_server(**_: object) -> None:
    """Each pool process (they run the simulations, CPU-bound for minutes) lowers its priority by
    SCHEDLAB_WORKER_NICE: on a host the web server shares (`make run`, a small lab server), pages stay
    quick while the worker computes, and the worker still gets every cycle the web server leaves.
    A quick worker's processes (SCHEDLAB_WORKER_KIND=quick: parsing, previews) by half as much, so an
    upload is parsed while simulations compute. A pool process dies with its worker (never computes
    on, orphaned, after the worker was killed)."""
    quick = settings.SCHEDLAB_WORKER_KIND == "quick"
    os.nice(settings.SCHEDLAB_WORKER_NICE // 2 if quick else settings.SCHEDLAB_WORKER_NICE)
    die_with_parent(signal.SIGKILL)
