from django.urls import path

app_name = "traces"
urlpatterns: list = []
