from __future__ import annotations

from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "webapp.dashboards"
    label = "dashboards"
    verbose_name = "Dashboards"
    default_auto_field = "django.db.models.BigAutoField"
