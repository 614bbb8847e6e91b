from django.contrib import admin
from django.template.defaultfilters import filesizeformat

from webapp.quotas.models import Quota
from webapp.quotas.services import limits_of, usage_of


@admin.register(Quota)
class QuotaAdmin(admin.ModelAdmin):
    """Admins change a user's limits here (add a Quota for the user; empty fields: the defaults)."""

    list_display = ("user", "max_active_runs", "max_runs_per_experiment", "disk_bytes", "in_use")
    search_fields = ("user__username",)

    @admin.display(description="in use now")
    def in_use(self, quota: Quota) -> str:
        usage, limits = usage_of(quota.user), limits_of(quota.user)
        return (f"{usage.active_runs}/{limits.max_active_runs} runs, "
                f"{filesizeformat(usage.disk_bytes)} of {filesizeformat(limits.disk_bytes)}")
