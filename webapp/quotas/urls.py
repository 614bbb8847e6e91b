from django.urls import path

from webapp.quotas import views

app_name = "quotas"
urlpatterns = [
    path("", views.usage, name="usage"),
]
