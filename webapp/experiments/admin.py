from django.contrib import admin

from webapp.experiments.models import Experiment, Run


class RunInline(admin.TabularInline):
    model = Run
    extra = 0
    fields = ("label", "status", "progress", "attempts", "error")
    readonly_fields = fields


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "trace", "procs", "shared", "created")
    inlines = [RunInline]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("pk", "experiment", "label", "status", "progress", "attempts", "started_at", "finished_at")
    list_filter = ("status",)
