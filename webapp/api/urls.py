from django.urls import path

from webapp.api import views

app_name = "api"
urlpatterns = [
    path("auth/token/", views.token, name="token"),
    path("traces/", views.traces, name="traces"),
    path("traces/<int:pk>/", views.trace_detail, name="trace"),
    path("experiments/", views.experiments, name="experiments"),
    path("experiments/<int:pk>/", views.experiment_detail, name="experiment"),
    path("experiments/<int:pk>/replicates/", views.experiment_replicates, name="experiment_replicates"),
    path("runs/<int:pk>/schedule.csv", views.run_schedule_csv, name="run_schedule_csv"),
    path("studies/", views.studies, name="studies"),
    path("studies/<int:pk>/", views.study_detail, name="study"),
    path("studies/<int:pk>/study.csv", views.study_csv, name="study_csv"),
    path("usage/", views.usage, name="usage"),
]
