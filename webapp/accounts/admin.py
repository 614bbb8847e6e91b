from django.contrib import admin

from webapp.accounts.models import Token


@admin.register(Token)
class TokenAdmin(admin.ModelAdmin):
    list_display = ("user", "name", "prefix", "created", "expires", "last_used")
    readonly_fields = ("digest", "prefix")
