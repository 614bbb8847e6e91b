"""Preview pages: machine descriptions, queue configurations (upload or edit, validated line by line),
and "Preview a reconfiguration": an experiment whose runs compare the current and the proposed
configuration side by side, with the proposal edited and run again in its page."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine.api import SHIPPED_QUEUE_CONFIGS, WorkloadError, error_line, shipped_queue_text
from webapp.core.formpage import form_page
from webapp.core.responses import attachment
from webapp.core.permissions import (
    can_change,
    get_owned_or_404,
    get_visible_or_404,
    visible_to,
)
from webapp.experiments.reproduce import PRESETS as PAPER_PRESETS
from webapp.experiments.reproduce import PaperPreset
from webapp.experiments.services import delete_experiment
from webapp.experiments.views import comparable_runs
from webapp.preview.forms import MachineFileForm, PreviewForm, QueueFileForm
from webapp.preview.models import INFERRED_LABEL, MachineFile, Preview, QueueFile, SitePreview
from webapp.preview.page import (
    chosen_value,
    download_html,
    embedded,
    page_context,
    page_results,
    proposal_check,
    proposal_form,
    tables_csv,
)
from webapp.preview.proposal import ProposalForm
from webapp.preview.services import (
    PreviewError,
    change_proposal,
    copy_with_proposal,
    create_preview,
    inference_problem,
    inferred_from,
)
from webapp.traces.models import Trace

UNFINISHED = "This preview has not finished yet."
PREVIEWS = Preview.objects.select_related("experiment__owner", "experiment__trace")


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    user = request.user
    return render(request, "preview/index.html", {
        "traces": visible_to(Trace, user).filter(status=Trace.Status.READY),
        "previews": visible_to(PREVIEWS, user).prefetch_related("experiment__runs"),
        "sites": visible_to(SitePreview.objects.select_related("experiment__owner", "experiment__trace"), user),
        "machines": visible_to(MachineFile, user).select_related("owner"),
        "queue_files": visible_to(QueueFile, user).select_related("owner"),
    })


# -- machine descriptions and queue configurations (the same pages for both kinds) -------------------

KINDS = {"machine": (MachineFile, MachineFileForm, "machine description"),
         "queues": (QueueFile, QueueFileForm, "queue configuration")}


def _new(request: HttpRequest, kind: str, initial: dict | None = None) -> HttpResponse:
    model, form_class, label = KINDS[kind]
    form = form_class(request.POST or None, request.FILES or None, initial=initial)
    return form_page(request, form, "preview/form.html", {"label": label},
                     lambda saved: f"Saved the {label} “{saved.name}”.", owned=True)


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
    return form_page(request, form, "preview/form.html", {"label": label, "obj": obj},
                     "Saved. Previews already made keep the text they ran with.")


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
            data = form.cleaned_data
            try:
                preview = create_preview(user, name=data["name"], trace=data["trace"], texts=form.texts(),
                                         setup=form.setup(), shared=data["shared"])
            except PreviewError as error:
                form.add_error(None, str(error))
            else:
                runs = preview.experiment.runs.count()
                messages.success(request, f"Started “{preview.name}”: {runs} runs; this page shows them when done.")
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
    return _detail_page(request, get_visible_or_404(PREVIEWS, request.user, pk))


def _detail_page(request: HttpRequest, preview: Preview, proposal: ProposalForm | None = None,
                 status: int = 200) -> HttpResponse:
    """The preview's page; ``proposal``: the editor as posted (kept with its errors)."""
    context = {**page_context(request, preview), "other_runs": comparable_runs(preview.experiment, request.user),
               **page_results(preview, chosen_value(request, preview.experiment))}
    if context["can_change"]:
        context["proposal"] = proposal or proposal_form(preview)
    return render(request, "preview/detail.html", embedded(context), status=status)


@require_POST
def preview_propose(request: HttpRequest, pk: int) -> HttpResponse:
    """The proposal editor's three buttons: ``check`` (JSON: the YAML, the rows and the difference for the
    page's script), ``run`` (the proposed runs again, here) and ``copy`` (a new preview with it). A
    proposal that does not read comes back in the page with its errors (400)."""
    preview = get_owned_or_404(PREVIEWS, request.user, pk)
    form = proposal_form(preview, request.POST)
    action = request.POST.get("action", "run")
    if action == "check":
        if not form.is_valid():
            return JsonResponse({"errors": [str(e) for errors in form.errors.values() for e in errors]}, status=400)
        return JsonResponse(proposal_check(preview, form))
    if not form.is_valid():
        return _detail_page(request, preview, form, status=400)
    data = form.cleaned_data
    try:
        if action == "copy":
            copy = copy_with_proposal(preview, request.user, data["name"], data["text"])
            messages.success(request, f"Started “{copy.name}” with the changed proposal.")
            return redirect(copy)
        queued = change_proposal(preview, data["name"], data["text"])
    except PreviewError as error:
        form.add_error(None, str(error))
        return _detail_page(request, preview, form, status=400)
    messages.success(request, f"Running the {queued} proposed run(s) again with this change; the current ones stay.")
    return redirect(preview)


@require_GET
def preview_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The whole page (tables and figures) as one self-contained HTML file that works offline."""
    preview = get_visible_or_404(PREVIEWS, request.user, pk)
    return attachment(download_html(preview, chosen_value(request, preview.experiment)),
                      f"{slugify(preview.name) or 'preview'}-{preview.pk}.html", "text/html; charset=utf-8",
                      unfinished=UNFINISHED)


@require_GET
def preview_tables_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """The page's tables as one CSV: a row per (table, queue or user), waits in hours."""
    preview = get_visible_or_404(PREVIEWS, request.user, pk)
    return attachment(tables_csv(preview, chosen_value(request, preview.experiment)), f"preview-{preview.pk}-tables.csv",
                      "text/csv", unfinished=UNFINISHED)


@require_POST
def preview_edit_inferred(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    """Copy a preview's inferred configuration or machine into a file of its owner's, to edit like any other."""
    preview = get_owned_or_404(PREVIEWS, request.user, pk)
    if kind not in KINDS:
        raise Http404
    model, _, label = KINDS[kind]
    name, text = (preview.current_name, preview.current_text) if kind == "queues" \
        else (preview.machine_name, preview.machine_text)
    if name != INFERRED_LABEL or not text:
        raise Http404
    trace = preview.experiment.trace
    obj = model.objects.create(owner=request.user, name=f"{trace.name}: {INFERRED_LABEL}", text=text,
                               description=f"Inferred from the trace {trace.name} by the preview "
                                           f"“{preview.name}”; every value is commented with its evidence.")
    messages.success(request, f"Saved the inferred {label} as “{obj.name}”; edit it here.")
    return redirect(f"preview:{kind if kind == 'queues' else 'machine'}_edit", obj.pk)


@require_POST
def preview_delete(request: HttpRequest, pk: int) -> HttpResponse:
    preview = get_owned_or_404(PREVIEWS, request.user, pk)
    delete_experiment(preview.experiment)
    messages.success(request, f"Deleted “{preview.name}”.")
    return redirect("preview:index")
