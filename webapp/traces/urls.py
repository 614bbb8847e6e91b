from django.urls import path

from webapp.traces import views

app_name = "traces"
urlpatterns = [
    path("", views.trace_list, name="list"),
    path("upload/", views.trace_upload, name="upload"),
    path("<int:pk>/", views.trace_detail, name="detail"),
    path("<int:pk>/status/", views.trace_status, name="status"),
    path("<int:pk>/download/", views.trace_download, name="download"),
    path("<int:pk>/download/<str:kind>.swf", views.trace_download_swf, name="download_swf"),
    path("<int:pk>/edit/", views.trace_edit, name="edit"),
    path("<int:pk>/delete/", views.trace_delete, name="delete"),
    path("<int:pk>/parse-again/", views.trace_parse_again, name="parse_again"),
    path("machines/new/", views.machine_new, name="machine_new"),
    path("machines/<int:pk>/delete/", views.machine_delete, name="machine_delete"),
]
