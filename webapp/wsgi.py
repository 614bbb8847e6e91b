"""WSGI entry point (gunicorn webapp.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
application = get_wsgi_application()

# Import the plotting stack once here: with `gunicorn --preload` every worker forks with Bokeh
# already loaded, so a worker's first dashboard request does not pay for the import (~1 s).
import webapp.dashboards.views  # noqa: E402,F401
