from django.apps import AppConfig


class QuotasConfig(AppConfig):
    name = "webapp.quotas"
    label = "quotas"
