from django.contrib import admin

from webapp.traces.models import Machine, Trace


@admin.register(Trace)
class TraceAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "status", "shared", "size_bytes", "created")
    list_filter = ("status", "shared")
    search_fields = ("name", "sha256", "owner__username")
    readonly_fields = ("sha256", "file", "cache", "summary", "header")


@admin.register(Machine)
class MachineAdmin(admin.ModelAdmin):
    list_display = ("name", "procs", "owner", "shared", "created")
