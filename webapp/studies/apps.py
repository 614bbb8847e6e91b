from django.apps import AppConfig


class StudiesConfig(AppConfig):
    name = "webapp.studies"
    verbose_name = "Studies (parameter grids over workers)"
