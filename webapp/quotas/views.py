"""A user's own usage of the shared server against their limits (page and JSON)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.views.decorators.http import require_GET

from webapp.core.workers import simulation_slots, slots_per_user
from webapp.quotas.services import DISK_METERS, limits_of, usage_of


def usage_payload(user: Any) -> dict[str, Any]:
    usage, limits = usage_of(user), limits_of(user)
    slots = simulation_slots()
    return {
        "runs": {"queued": usage.queued_runs, "running": usage.running_runs, "active": usage.active_runs,
                 "max_active": limits.max_active_runs, "max_per_experiment": limits.max_runs_per_experiment},
        "disk": {**usage.disk, "total": usage.disk_bytes, "quota": limits.disk_bytes},
        "server": {"simulation_slots": slots, "slots_per_user": slots_per_user(slots),
                   "upload_max_bytes": settings.SCHEDLAB_UPLOAD_MAX_BYTES,
                   "upload_max_decompressed_bytes": settings.SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES,
                   "parse_time_limit_seconds": settings.SCHEDLAB_PARSE_TIME_LIMIT,
                   "task_memory_bytes": settings.SCHEDLAB_TASK_MEMORY_BYTES,
                   "run_time_limit_seconds": settings.SCHEDLAB_RUN_TIME_LIMIT},
    }


@require_GET
def usage(request: HttpRequest) -> HttpResponse:
    data = usage_payload(request.user)
    if request.GET.get("format") == "json":
        return JsonResponse(data)
    disk = data["disk"]
    rows = [(meter.label, filesizeformat(disk[key])) for key, meter in DISK_METERS.items()]
    return render(request, "quotas/usage.html", {
        "data": data, "disk_rows": rows, "disk_total": filesizeformat(disk["total"]),
        "disk_quota": filesizeformat(disk["quota"]),
        "disk_percent": min(100, round(100 * disk["total"] / disk["quota"])) if disk["quota"] else 100,
        "upload_max": filesizeformat(data["server"]["upload_max_bytes"]),
        "decompressed_max": filesizeformat(data["server"]["upload_max_decompressed_bytes"]),
        "task_memory": filesizeformat(data["server"]["task_memory_bytes"]),
    })
