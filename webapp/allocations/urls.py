from django.urls import path

from webapp.allocations import views

app_name = "allocations"
urlpatterns = [
    path("", views.allocation_list, name="list"),
    path("new/", views.allocation_new, name="new"),
    path("scenario/", views.scenario_new, name="scenario"),
    path("<int:pk>/", views.allocation_detail, name="detail"),
    path("<int:pk>/edit/", views.allocation_edit, name="edit"),
    path("<int:pk>/delete/", views.allocation_delete, name="delete"),
    path("<int:pk>/download/", views.allocation_download, name="download"),
]
