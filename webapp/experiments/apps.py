from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "webapp.experiments"
    label = "experiments"

    def ready(self) -> None:
        from webapp.experiments.plugins import load_installed_policies
        from webapp.experiments.services import results_bytes_of, run_counts_of
        from webapp.quotas.services import counts_runs, measures_disk

        measures_disk("results", "Run results", results_bytes_of)
        counts_runs(run_counts_of)
        # Python policy plugins the server's admin installed, in the picker and in the workers
        load_installed_policies()
