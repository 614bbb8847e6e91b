"""Top-level URLs. Every page needs a login (see webapp.core.middleware); the API uses tokens."""

from __future__ import annotations

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
    path("dashboards/", include("webapp.dashboards.urls")),
    path("usage/", include("webapp.quotas.urls")),
]
