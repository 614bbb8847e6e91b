"""SchedLab's web application: Django project, Celery app and the apps under it."""

from webapp.celery import app as celery_app

__all__ = ["celery_app"]
