"""Preview pages: machine descriptions, queue configurations (upload or edit, validated line by line),
and "Preview a reconfiguration" (current vs proposed configuration, side by side)."""

from __future__ import annotations

import shutil

from bokeh.embed import json_item
from django.contrib import messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine.api import HELD_REASONS, SHIPPED_QUEUE_CONFIGS, WorkloadError, error_line, shipped_queue_text
from webapp.core.progress import time_left_text
from webapp.core.permissions import (
    can_change,
    get_owned_or_404,
    get_visible_or_404,
    visible_to,
)
from webapp.dashboards.figures.preview import preview_layout
from webapp.experiments.reproduce import PRESETS as PAPER_PRESETS
from webapp.experiments.reproduce import PaperPreset
from webapp.preview.forms import MachineFileForm, PreviewForm, QueueFileForm
from webapp.preview.models import INFERRED_LABEL, MachineFile, Preview, QueueFile
from webapp.preview.services import RECORDED, inference_problem, inferred_from, schedules
from webapp.preview.tasks import queue_preview, run_again
from webapp.traces.models import Trace


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    user = request.user
    return render(request, "preview/index.html", {
        "traces": visible_to(Trace, user).filter(status=Trace.Status.READY),
        "previews": visible_to(Preview, user).select_related("owner", "trace"),
        "machines": visible_to(MachineFile, user).select_related("owner"),
        "queue_files": visible_to(QueueFile, user).select_related("owner"),
    })


# -- machine descriptions and queue configurations (the same pages for both kinds) -------------------

KINDS = {"machine": (MachineFile, MachineFileForm, "machine description"),
         "queues": (QueueFile, QueueFileForm, "queue configuration")}


def _new(request: HttpRequest, kind: str, initial: dict | None = None) -> HttpResponse:
    model, form_class, label = KINDS[kind]
    form = form_class(request.POST or None, request.FILES or None, initial=initial)
    if request.method == "POST":
        if form.is_valid():
            obj = form.save(commit=False)
            obj.owner = request.user
            obj.save()
            messages.success(request, f"Saved the {label} “{obj.name}”.")
            return redirect(obj)
        return render(request, "preview/form.html", {"form": form, "label": label}, status=400)
    return render(request, "preview/form.html", {"form": form, "label": label})


def _detail(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    model, _, label = KINDS[kind]
    obj = get_visible_or_404(model.objects.select_related("owner"), request.user, pk)
    try:
        described, error = obj.parsed().describe(), ""
    except WorkloadError as problem:
        described, error = None, error_line(problem)
    return render(request, "preview/file_detail.html", {"obj": obj, "kind": kind, "label": label,
                                                        "described": described, "error": error,
                                                        "can_change": can_change(obj, request.user)})


def _edit(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    model, form_class, label = KINDS[kind]
    obj = get_owned_or_404(model, request.user, pk)
    form = form_class(request.POST or None, request.FILES or None, instance=obj)
    if request.method == "POST":
        if form.is_valid():
            form.save()
            messages.success(request, "Saved. Previews already made keep the text they ran with.")
            return redirect(obj)
        return render(request, "preview/form.html", {"form": form, "label": label, "obj": obj}, status=400)
    return render(request, "preview/form.html", {"form": form, "label": label, "obj": obj})


def _delete(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    model, _, label = KINDS[kind]
    obj = get_owned_or_404(model, request.user, pk)
    obj.delete()
    messages.success(request, f"Deleted the {label} “{obj.name}”.")
    return redirect("preview:index")


def _inferred_initial(request: HttpRequest, kind: str) -> dict | None:
    """``?trace=ID``: the form starts from what that trace's recorded schedule shows (or says why not)."""
    if "trace" not in request.GET or request.method != "GET":
        return None
    try:
        pk = int(request.GET["trace"])
    except ValueError:
        raise Http404 from None
    trace = get_visible_or_404(Trace.objects.filter(status=Trace.Status.READY), request.user, pk)
    problem = inference_problem(trace, queues=kind == "queues", machine=kind == "machine")
    if problem:
        messages.error(request, f"{trace.name}: {problem}")
        return None
    found = inferred_from(trace)
    text = found.queues_yaml() if kind == "queues" else found.machine_yaml()
    return {"name": f"{trace.name}: inferred from the trace", "text": text,
            "description": f"Inferred from the trace {trace.name}; every value is commented with its evidence."}


@require_http_methods(["GET", "POST"])
def machine_new(request: HttpRequest) -> HttpResponse:
    return _new(request, "machine", _inferred_initial(request, "machine"))


@require_GET
def machine_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _detail(request, "machine", pk)


@require_http_methods(["GET", "POST"])
def machine_edit(request: HttpRequest, pk: int) -> HttpResponse:
    return _edit(request, "machine", pk)


@require_POST
def machine_delete(request: HttpRequest, pk: int) -> HttpResponse:
    return _delete(request, "machine", pk)


@require_http_methods(["GET", "POST"])
def queues_new(request: HttpRequest) -> HttpResponse:
    """A new configuration, optionally starting from a shipped one (?from=metacentrum-2014)."""
    start = request.GET.get("from")
    initial = {"name": f"{start} (copy)", "text": shipped_queue_text(start)} \
        if start in SHIPPED_QUEUE_CONFIGS else _inferred_initial(request, "queues")
    return _new(request, "queues", initial)


@require_GET
def queues_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _detail(request, "queues", pk)


@require_http_methods(["GET", "POST"])
def queues_edit(request: HttpRequest, pk: int) -> HttpResponse:
    return _edit(request, "queues", pk)


@require_POST
def queues_delete(request: HttpRequest, pk: int) -> HttpResponse:
    return _delete(request, "queues", pk)


# -- previews -------------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
def preview_new(request: HttpRequest) -> HttpResponse:
    """A new preview; ``?reproduce=KEY`` fills it with a "reproduce a paper" preset (e.g. metacentrum)."""
    user = request.user
    traces = visible_to(Trace, user).filter(status=Trace.Status.READY)
    machines = visible_to(MachineFile, user)
    reproduce = PAPER_PRESETS.get(request.GET.get("reproduce", ""))
    if reproduce is not None and not reproduce.preview:
        reproduce = None
    initial = reproduce_initial(reproduce, traces, machines) if reproduce else {}
    form = PreviewForm(request.POST or None, traces=traces, machines=machines,
                       queue_files=visible_to(QueueFile, user), initial=initial)
    context = {"form": form, "reproduce": reproduce}
    if request.method == "POST":
        if form.is_valid():
            preview = queue_preview(user, form)
            messages.success(request, f"Started “{preview.name}”: three simulations; this page shows them when done.")
            return redirect(preview)
        return render(request, "preview/new.html", context, status=400)
    return render(request, "preview/new.html", context)


def reproduce_initial(preset: PaperPreset, traces: QuerySet, machines: QuerySet) -> dict:
    """The preset's form values, with the first visible trace and machine whose names contain its match."""
    initial: dict = dict(preset.preview)
    if preset.match:
        trace = traces.filter(name__icontains=preset.match).order_by("-pk").first()
        machine = machines.filter(name__icontains=preset.match).order_by("-pk").first()
        initial.update({key: obj.pk for key, obj in (("trace", trace), ("machine", machine)) if obj is not None})
    return initial


@require_GET
def preview_detail(request: HttpRequest, pk: int) -> HttpResponse:
    preview = get_visible_or_404(Preview.objects.select_related("owner", "trace"), request.user, pk)
    context = {"preview": preview, "can_change": can_change(preview, request.user),
               "time_left": time_left_text(preview.status, preview.progress, preview.started)}
    if preview.status == Preview.Status.DONE:
        context.update(_results(preview))
    return render(request, "preview/detail.html", context)


def held_rows(current: dict, proposed: dict) -> list[dict]:
    """Hours the waiting jobs were held per reason (engine.sim.pending), per queue of each
    configuration and in all, current beside proposed: rows of (queue, configuration, hours)."""
    rows = []
    for side, run in (("current", current), ("proposed", proposed)):
        pending = run.get("pending") or {}
        for queue, hours in sorted((pending.get("per_queue") or {}).items()):
            rows.append({"queue": queue, "side": side, "hours": [hours.get(r, 0.0) for r in HELD_REASONS]})
        if pending.get("hours"):
            rows.append({"queue": "all", "side": side, "hours": [pending["hours"].get(r, 0.0) for r in HELD_REASONS]})
    rows.sort(key=lambda row: (row["queue"] != "all", row["queue"], row["side"]))
    return rows


def _results(preview: Preview) -> dict:
    """What the admin reads first (fidelity of 'current', recorded / current / proposed per trace
    queue, the users who gain and lose most), the per-configuration-queue rows and the figures."""
    summary = preview.summary or {}
    runs = summary.get("runs", {})
    current, proposed = runs.get("current", {}), runs.get("proposed", {})
    names = sorted(set(current.get("per_queue", {})) | set(proposed.get("per_queue", {})))
    rows = [{"queue": name, "current": current.get("per_queue", {}).get(name),
             "proposed": proposed.get("per_queue", {}).get(name)} for name in names]
    changes = summary.get("changes", {})
    held = held_rows(current, proposed)
    inferred = [(kind, label, text) for kind, label, name, text in (
        ("queues", "queue configuration", preview.current_name, preview.current_text),
        ("machine", "machine description", preview.machine_name, preview.machine_text)) if name == INFERRED_LABEL]
    context = {"inferred": inferred, "rows": rows, "runs": runs, "recorded": summary.get(RECORDED), "fidelity": summary.get("fidelity"),
               "changes": changes.get("by_queue", []), "users": changes.get("users", {}),
               "time_zone": summary.get("time_zone", "UTC"), "held": held,
               "held_labels": [reason.replace("_", " ").capitalize() for reason in HELD_REASONS]}
    try:
        frames = schedules(preview)
    except OSError:
        return {**context, "missing": True}
    labels = (f"current: {preview.current_name}", f"proposed: {preview.proposed_name}")
    layout = preview_layout(frames["current"], frames["proposed"], frames["counterpart"], labels=labels,
                            clusters=summary.get("clusters", {}), policy_is_multi=preview.policy.startswith("mrfs"),
                            recorded=frames.get(RECORDED), zone=context["time_zone"])
    # A json_item in a JSON data block, embedded by a static script: the CSP allows no inline script.
    return {**context, "bokeh_item": json_item(layout, "preview-plots")}


@require_POST
def preview_edit_inferred(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    """Copy a preview's inferred configuration or machine into a file of its owner's, to edit like any other."""
    preview = get_owned_or_404(Preview.objects.select_related("trace"), request.user, pk)
    if kind not in KINDS:
        raise Http404
    model, _, label = KINDS[kind]
    name, text = (preview.current_name, preview.current_text) if kind == "queues" \
        else (preview.machine_name, preview.machine_text)
    if name != INFERRED_LABEL or not text:
        raise Http404
    obj = model.objects.create(owner=request.user, name=f"{preview.trace.name}: {INFERRED_LABEL}", text=text,
                               description=f"Inferred from the trace {preview.trace.name} by the preview "
                                           f"“{preview.name}”; every value is commented with its evidence.")
    messages.success(request, f"Saved the inferred {label} as “{obj.name}”; edit it here.")
    return redirect(f"preview:{kind if kind == 'queues' else 'machine'}_edit", obj.pk)


@require_POST
def preview_run_again(request: HttpRequest, pk: int) -> HttpResponse:
    preview = get_owned_or_404(Preview, request.user, pk)
    if run_again(preview):
        messages.success(request, f"Queued “{preview.name}” again.")
    return redirect(preview)


@require_POST
def preview_delete(request: HttpRequest, pk: int) -> HttpResponse:
    preview = get_owned_or_404(Preview, request.user, pk)
    shutil.rmtree(preview.result_dir, ignore_errors=True)
    preview.delete()
    messages.success(request, f"Deleted “{preview.name}”.")
    return redirect("preview:index")
