from django.apps import AppConfig


class PreviewConfig(AppConfig):
    name = "webapp.preview"
    label = "preview"
    verbose_name = "Queue reconfiguration preview"

    def ready(self) -> None:
        from webapp.preview.services import disk_bytes_of
        from webapp.preview.tasks import register_calibrations
        from webapp.quotas.services import measures_disk

        measures_disk("previews", "Previews", disk_bytes_of)
        register_calibrations()
