from __future__ import annotations

from django.urls import path

from webapp.dashboards import views

app_name = "dashboards"
urlpatterns = [
    path("traces/<int:pk>/plots.json", views.trace_plots, name="trace_plots"),
    path("experiments/<int:pk>/", views.comparison, name="comparison"),
    path("experiments/<int:pk>/plots/<slug:name>.json", views.comparison_plot, name="comparison_plot"),
    path("experiments/<int:pk>/forest.json", views.forest_plot, name="forest"),
    path("experiments/<int:pk>/comparison.html", views.comparison_download, name="comparison_download"),
    path("compare/", views.compare_runs, name="compare"),
    path("compare/plots/<slug:name>.json", views.compare_plot, name="compare_plot"),
    path("compare/comparison.html", views.compare_download, name="compare_download"),
]
