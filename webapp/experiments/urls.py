from django.urls import path

from webapp.experiments import views

app_name = "experiments"
urlpatterns = [
    path("", views.experiment_list, name="list"),
    path("new/", views.experiment_new, name="new"),
    path("reproduce/", views.reproduce_index, name="reproduce"),
    path("formula-check/", views.formula_check, name="formula_check"),
    path("<int:pk>/", views.experiment_detail, name="detail"),
    path("<int:pk>/progress/", views.experiment_progress, name="progress"),
    path("<int:pk>/edit/", views.experiment_edit, name="edit"),
    path("<int:pk>/cancel/", views.experiment_cancel, name="cancel"),
    path("<int:pk>/delete/", views.experiment_delete, name="delete"),
    path("<int:pk>/replicates/retry/", views.replicates_retry, name="replicates_retry"),
    path("<int:pk>/metrics.csv", views.experiment_metrics_csv, name="metrics_csv"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/rerun/", views.run_rerun, name="run_rerun"),
    path("runs/<int:pk>/schedule.csv", views.run_schedule_csv, name="run_schedule_csv"),
    path("runs/<int:pk>/rejected.csv", views.run_rejected_csv, name="run_rejected_csv"),
]
