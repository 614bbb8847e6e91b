from django.contrib import admin

from webapp.api.models import Token


@admin.register(Token)
class TokenAdmin(admin.ModelAdmin):
    list_display = ("user", "created", "last_used")
    readonly_fields = ("digest",)
