from django.urls import path

from webapp.studies import views

app_name = "studies"
urlpatterns = [
    path("", views.study_list, name="list"),
    path("new/", views.study_new, name="new"),
    path("preset/", views.study_preset, name="preset"),
    path("<int:pk>/", views.study_detail, name="detail"),
    path("<int:pk>/progress/", views.study_progress, name="progress"),
    path("<int:pk>/plot.json", views.study_plot, name="plot"),
    path("<int:pk>/study.csv", views.study_csv, name="csv"),
    path("<int:pk>/rerun-failed/", views.study_rerun_failed, name="rerun_failed"),
    path("runs/<int:pk>/rerun/", views.point_rerun, name="point_rerun"),
]
