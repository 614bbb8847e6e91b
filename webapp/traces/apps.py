from django.apps import AppConfig


class TracesConfig(AppConfig):
    name = "webapp.traces"
    label = "traces"

    def ready(self) -> None:
        from webapp.quotas.services import measures_disk
        from webapp.traces.services import disk_bytes_of

        measures_disk("traces", "Traces (uploads and parsed caches)", disk_bytes_of)
