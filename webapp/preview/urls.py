from django.urls import path

from webapp.preview import siteviews, views

app_name = "preview"
urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.preview_new, name="new"),
    path("<int:pk>/", views.preview_detail, name="detail"),
    path("<int:pk>/propose/", views.preview_propose, name="propose"),
    path("<int:pk>/preview.html", views.preview_download, name="download"),
    path("<int:pk>/tables.csv", views.preview_tables_csv, name="tables_csv"),
    path("<int:pk>/delete/", views.preview_delete, name="delete"),
    path("<int:pk>/edit-inferred/<str:kind>/", views.preview_edit_inferred, name="edit_inferred"),
    path("site/new/", siteviews.site_new, name="site_new"),
    path("site/<int:pk>/", siteviews.site_detail, name="site_detail"),
    path("site/<int:pk>/propose/", siteviews.site_propose, name="site_propose"),
    path("site/<int:pk>/sweep/", siteviews.site_sweep, name="site_sweep"),
    path("site/<int:pk>/site-preview.html", siteviews.site_download, name="site_download"),
    path("site/<int:pk>/tables.csv", siteviews.site_tables_csv, name="site_tables_csv"),
    path("site/<int:pk>/jobs.csv", siteviews.site_jobs_csv, name="site_jobs_csv"),
    path("site/<int:pk>/calibrate/", siteviews.site_calibrate, name="site_calibrate"),
    path("site/<int:pk>/calibration/", siteviews.site_calibration_progress, name="site_calibration_progress"),
    path("site/<int:pk>/calibration/apply/", siteviews.site_calibration_apply, name="site_calibration_apply"),
    path("site/<int:pk>/calibration/cancel/", siteviews.site_calibration_cancel, name="site_calibration_cancel"),
    path("site/<int:pk>/delete/", siteviews.site_delete, name="site_delete"),
    path("machines/new/", views.machine_new, name="machine_new"),
    path("machines/<int:pk>/", views.machine_detail, name="machine_detail"),
    path("machines/<int:pk>/edit/", views.machine_edit, name="machine_edit"),
    path("machines/<int:pk>/delete/", views.machine_delete, name="machine_delete"),
    path("queues/new/", views.queues_new, name="queues_new"),
    path("queues/<int:pk>/", views.queues_detail, name="queues_detail"),
    path("queues/<int:pk>/edit/", views.queues_edit, name="queues_edit"),
    path("queues/<int:pk>/delete/", views.queues_delete, name="queues_delete"),
]
