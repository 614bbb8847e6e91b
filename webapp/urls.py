"""Top-level URLs. Every page needs a login (see webapp.core.middleware); the API uses tokens."""

from __future__ import annotations

from importlib.util import find_spec

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from webapp.accounts.views import ThrottledLoginView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="traces:list"), name="home"),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/", include("webapp.accounts.urls")),
    # The admin's own login form would be a second, unthrottled password entry point.
    path("admin/login/", RedirectView.as_view(pattern_name="login", query_string=True)),
    path("admin/", admin.site.urls),
    path("traces/", include("webapp.traces.urls")),
    path("experiments/", include("webapp.experiments.urls")),
    path("api/", include("webapp.api.urls")),
    path("allocations/", include("webapp.allocations.urls")),
    path("studies/", include("webapp.studies.urls")),
    path("preview/", include("webapp.preview.urls")),
]

# The comparison and characterization pages live in webapp.dashboards (another engineer's
# package, app_name="dashboards"); included once it exists so this file works before and after.
if find_spec("webapp.dashboards") is not None and find_spec("webapp.dashboards.urls") is not None:
    urlpatterns.append(path("dashboards/", include("webapp.dashboards.urls")))
