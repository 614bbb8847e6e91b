from django.apps import AppConfig


class PreviewConfig(AppConfig):
    name = "webapp.preview"
    label = "preview"
    verbose_name = "Queue reconfiguration preview"

    def ready(self) -> None:
        from webapp.core.queues import sized_by
        from webapp.preview.services import disk_bytes_of, preview_kind
        from webapp.quotas.services import measures_disk

        measures_disk("previews", "Previews", disk_bytes_of)
        sized_by("webapp.preview.tasks.run_preview", preview_kind)
