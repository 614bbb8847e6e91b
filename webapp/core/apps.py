from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "webapp.core"
    label = "core"

    def ready(self) -> None:
        from webapp.core import workers  # noqa: F401 - connects a worker's slot reports (SCHEDLAB_SIM_SLOTS=auto)
