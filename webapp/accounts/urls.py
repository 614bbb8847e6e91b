from django.urls import path

from webapp.accounts import views

app_name = "accounts"
urlpatterns = [
    path("tokens/", views.tokens, name="tokens"),
    path("tokens/new/", views.token_new, name="tokens_new"),
    path("tokens/create/", views.token_create, name="token_create"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="token_revoke"),
    path("password/", views.password_change, name="password_change"),
]
