from django.contrib import admin

from webapp.allocations.models import AllocationSet


@admin.register(AllocationSet)
class AllocationSetAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "shared", "updated")
    search_fields = ("name", "owner__username")
