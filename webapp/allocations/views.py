"""Allocations pages: list, new (upload or paste), detail (targets as the engine reads them), edit,
delete, download, and "generate a scenario" (the SFS paper's §9 trace with its allocations)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine.api import WorkloadError, error_line
from webapp.allocations.forms import AllocationSetForm, ScenarioForm
from webapp.allocations.models import AllocationSet
from webapp.allocations.services import create_scenario
from webapp.core.formpage import form_page
from webapp.core.permissions import can_change, get_owned_or_404, get_visible_or_404, visible_to


@require_GET
def allocation_list(request: HttpRequest) -> HttpResponse:
    sets = visible_to(AllocationSet, request.user).select_related("owner")
    return render(request, "allocations/list.html", {"sets": sets})


@require_http_methods(["GET", "POST"])
def allocation_new(request: HttpRequest) -> HttpResponse:
    return form_page(request, AllocationSetForm(request.POST or None, request.FILES or None), "allocations/form.html",
                     {}, lambda saved: f"Saved the allocations “{saved.name}”.", owned=True)


def _rows(allocation_set: AllocationSet) -> tuple[list[dict], str]:
    """The allocations as the engine reads them (or the reader's error, for a file saved before a check)."""
    try:
        parsed = allocation_set.parsed()
    except WorkloadError as error:
        return [], error_line(error)
    rows = [{"name": a.name, "users": sorted(a.users), "groups": sorted(a.groups), "award": a.award,
             "period_days": a.period_days, "ideal": a.ideal, "target": a.target} for a in parsed.allocations]
    return rows, ""


@require_GET
def allocation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    allocation_set = get_visible_or_404(AllocationSet.objects.select_related("owner"), request.user, pk)
    rows, error = _rows(allocation_set)
    return render(request, "allocations/detail.html", {
        "set": allocation_set, "rows": rows, "error": error, "can_change": can_change(allocation_set, request.user),
        "experiments": allocation_set.experiments_using.select_related("experiment").count(),
    })


@require_http_methods(["GET", "POST"])
def allocation_edit(request: HttpRequest, pk: int) -> HttpResponse:
    allocation_set = get_owned_or_404(AllocationSet, request.user, pk)
    form = AllocationSetForm(request.POST or None, request.FILES or None, instance=allocation_set)
    return form_page(request, form, "allocations/form.html", {"set": allocation_set},
                     "Saved. Experiments already started keep the allocations they ran with.")


@require_POST
def allocation_delete(request: HttpRequest, pk: int) -> HttpResponse:
    allocation_set = get_owned_or_404(AllocationSet, request.user, pk)
    if allocation_set.experiments_using.exists():
        messages.error(request, f"“{allocation_set.name}” is used by experiments; delete them first.")
        return redirect(allocation_set)
    allocation_set.delete()
    messages.success(request, f"Deleted “{allocation_set.name}”.")
    return redirect("allocations:list")


@require_GET
def allocation_download(request: HttpRequest, pk: int) -> HttpResponse:
    allocation_set = get_visible_or_404(AllocationSet, request.user, pk)
    response = HttpResponse(allocation_set.text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{allocation_set.file_name}"'
    return response


@require_http_methods(["GET", "POST"])
def scenario_new(request: HttpRequest) -> HttpResponse:
    form = ScenarioForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            trace, allocation_set = create_scenario(request.user, seed=data["seed"], name=data["name"],
                                                    shared=data["shared"])
            messages.success(request, f"Generated the trace “{trace.name}” (parsing it now) and the allocations "
                                      f"“{allocation_set.name}”; choose both in a new experiment.")
            return redirect(trace)
        return render(request, "allocations/scenario.html", {"form": form}, status=400)
    return render(request, "allocations/scenario.html", {"form": form})
