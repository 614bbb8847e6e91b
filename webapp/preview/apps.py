from django.apps import AppConfig


class PreviewConfig(AppConfig):
    name = "webapp.preview"
    label = "preview"
    verbose_name = "Queue reconfiguration preview"
