"""Trace and machine pages: list, upload, detail (with live status), edit, delete, download."""

from __future__ import annotations

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine.api import duration_text, number_text, swf_text
from webapp.core.formpage import form_page
from webapp.core.permissions import can_change, get_owned_or_404, get_visible_or_404, visible_to
from webapp.traces.flurries import flurry_listing
from webapp.traces.forms import MachineForm, TraceEditForm, TraceUploadForm
from webapp.traces.models import Machine, Trace
from webapp.quotas.services import QuotaExceeded
from webapp.traces.services import create_trace, delete_trace, remove_trace
from webapp.traces.tasks import parse_again
from webapp.traces.uploads import upload_refusal


@require_GET
def trace_list(request: HttpRequest) -> HttpResponse:
    traces = visible_to(Trace, request.user).exclude(status=Trace.Status.REMOVED).select_related("owner")
    machines = visible_to(Machine, request.user).select_related("owner")
    return render(request, "traces/list.html", {"traces": traces, "machines": machines})


@require_http_methods(["GET", "POST"])
def trace_upload(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = TraceUploadForm(request.POST, request.FILES)  # parses the upload: sets upload_too_large
        refusal = upload_refusal(request)
        if refusal:
            form.is_valid()
            form.discard()
            form.errors.pop("file", None)
            form.add_error("file", refusal[0])
            return render(request, "traces/upload.html", {"form": form}, status=refusal[1])
        if form.is_valid():
            try:
                trace = create_trace(request.user, form.cleaned_data, form.inspected, form.cleaned_data["file"].name)
            except QuotaExceeded as e:
                form.add_error("file", str(e))
                return render(request, "traces/upload.html", {"form": form}, status=400)
            messages.success(request, f"Uploaded “{trace.name}”; parsing it now.")
            return redirect(trace)
        form.discard()
        return render(request, "traces/upload.html", {"form": form}, status=400)
    return render(request, "traces/upload.html", {"form": TraceUploadForm()})


def trace_plots_url(trace: Trace) -> str:
    """Where the characterization plots load from (the dashboards app)."""
    return reverse("dashboards:trace_plots", args=[trace.pk])


@require_GET
def trace_detail(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_visible_or_404(Trace.objects.select_related("owner"), request.user, pk)
    ctx = {
        "trace": trace,
        "can_change": can_change(trace, request.user),
        "plots_url": trace_plots_url(trace) if trace.is_ready else "",
        "report": (trace.summary or {}).get("report") or {},
        "job_stats": job_statistics(trace.summary or {}),
        "calendar": calendar_span(trace) if trace.is_ready else {},
        "flurries": flurry_listing(trace) if trace.is_ready else {},
        "machine": trace.machine_description(),
        "seen_hosts": sum(c["nodes"] for c in ((trace.summary or {}).get("clusters_seen") or {}).get("clusters", [])),
    }
    return render(request, "traces/detail.html", ctx)


#: The statistics rows of the trace page: (summary key, heading, how a value is written).
JOB_STATISTICS = (("size", "Processors", lambda v: number_text(v, 0 if float(v).is_integer() else 1)),
                  ("runtime", "Runtime", duration_text), ("requested_time", "Requested time", duration_text))


def job_statistics(summary: dict) -> dict:
    """The size, runtime and request statistics (min, median, mean, max) in words and units."""
    rows = [(heading, [write(v) if v is not None else "–" for v in summary[key].values()])
            for key, heading, write in JOB_STATISTICS if summary.get(key)]
    columns = next((list(summary[key]) for key, _, _ in JOB_STATISTICS if summary.get(key)), [])
    return {"columns": columns, "rows": rows} if rows else {}


def calendar_span(trace: Trace) -> dict[str, str]:
    """The first submit (day 0, with the zone) and the last as dates in the trace's zone; {} without a calendar."""
    first = trace.day_zero()
    if not first:
        return {}
    return {"first": first, "last": trace.time_axis().text((trace.summary or {})["last_submit"])}


@require_GET
def trace_status(request: HttpRequest, pk: int) -> JsonResponse:
    trace = get_visible_or_404(Trace, request.user, pk)
    return JsonResponse({"id": trace.pk, "status": trace.status, "error": trace.error})


@require_GET
def trace_download(request: HttpRequest, pk: int) -> FileResponse:
    trace = get_visible_or_404(Trace, request.user, pk)
    if not trace.path.exists():
        raise Http404("The trace file is missing on the server.")
    return FileResponse(open(trace.path, "rb"), as_attachment=True, filename=trace.download_name)


SWF_KINDS = {"swf": False, "extended": True}


@require_GET
def trace_download_swf(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    """The trace converted to SWF or extended SWF (whatever format it was uploaded in), as cleaned."""
    trace = get_visible_or_404(Trace, request.user, pk)
    if kind not in SWF_KINDS or not trace.is_ready:
        raise Http404("No such conversion, or the trace is not parsed yet.")
    text = swf_text(trace.workload(), extended=SWF_KINDS[kind])
    stem = (trace.original_name or trace.name).rsplit(".", 1)[0] or "trace"
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{stem}{"-extended" if SWF_KINDS[kind] else ""}.swf"'
    return response


@require_http_methods(["GET", "POST"])
def trace_edit(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_owned_or_404(Trace, request.user, pk)
    return form_page(request, TraceEditForm(request.POST or None, instance=trace), "traces/edit.html",
                     {"trace": trace}, "Saved.", invalid_status=200)


@require_POST
def trace_parse_again(request: HttpRequest, pk: int) -> HttpResponse:
    """The retry button of a trace whose parse was lost or failed."""
    trace = get_owned_or_404(Trace, request.user, pk)
    if parse_again(trace):
        messages.success(request, f"Parsing “{trace.name}” again.")
    return redirect(trace)


@require_POST
def trace_delete(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_owned_or_404(Trace, request.user, pk)
    if trace.experiments.exists():     # previews are experiments too
        remove_trace(trace)
        messages.success(request, f"Removed “{trace.name}”: the experiments that used it keep their results "
                                  "and say the trace was removed by its owner.")
        return redirect("traces:list")
    delete_trace(trace)
    messages.success(request, f"Deleted “{trace.name}”.")
    return redirect("traces:list")


@require_http_methods(["GET", "POST"])
def machine_new(request: HttpRequest) -> HttpResponse:
    form = MachineForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        machine = form.save(commit=False)
        machine.owner = request.user
        machine.save()
        messages.success(request, f"Added the machine “{machine.name}”.")
        return redirect("traces:list")
    return render(request, "traces/machine_form.html", {"form": form})


@require_POST
def machine_delete(request: HttpRequest, pk: int) -> HttpResponse:
    machine = get_owned_or_404(Machine, request.user, pk)
    if machine.experiments.exists():
        messages.error(request, f"“{machine.name}” is used by experiments; delete them first.")
    else:
        machine.delete()
        messages.success(request, f"Deleted the machine “{machine.name}”.")
    return redirect("traces:list")
