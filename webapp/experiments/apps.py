from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "webapp.experiments"
    label = "experiments"

    def ready(self) -> None:
        # Python policy plugins the server's admin installed, in the picker and in the workers
        from webapp.experiments.plugins import load_installed_policies

        load_installed_policies()
