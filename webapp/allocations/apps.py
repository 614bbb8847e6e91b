from django.apps import AppConfig


class AllocationsConfig(AppConfig):
    name = "webapp.allocations"
    label = "allocations"
    verbose_name = "Allocations"
