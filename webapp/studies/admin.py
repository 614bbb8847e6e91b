from django.contrib import admin

from webapp.studies.models import Study, StudyPoint


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("experiment", "preset")
    raw_id_fields = ("experiment",)


@admin.register(StudyPoint)
class StudyPointAdmin(admin.ModelAdmin):
    list_display = ("study", "policy_label", "coords", "run")
    raw_id_fields = ("study", "run")
