"""The Celery app: configured from Django settings (CELERY_*), tasks found in each app's tasks.py."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

app = Celery("webapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
