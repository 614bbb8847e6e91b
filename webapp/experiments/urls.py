from django.urls import path

app_name = "experiments"
urlpatterns: list = []
