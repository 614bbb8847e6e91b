"""Pages of a preview on a site's own files: upload the files with a trace, then propose an edited copy
(the common keys as fields, every file as text) and read recorded / current / proposed per partition,
account and user, with what held the jobs in the scheduler's words."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine.api import SITE_FILES, WorkloadError, error_line
from webapp.core.permissions import get_owned_or_404, get_visible_or_404, visible_to
from webapp.experiments.models import CURRENT, PROPOSED
from webapp.experiments.services import delete_experiment
from webapp.preview.models import SitePreview
from webapp.preview.page import chosen_value, embedded, page_context, sweep_overview
from webapp.preview.services import RECORDED, PreviewError
from webapp.preview.siteforms import SiteProposalForm, SiteUploadForm
from webapp.preview.sites import (
    Sweep,
    apply_changes,
    changed_keys,
    checked_site,
    create_site_preview,
    keys_of,
    pending_table,
    propose,
    side_runs,
    text_diff,
    wait_tables,
)
from webapp.traces.models import Trace

SITES = SitePreview.objects.select_related("experiment__owner", "experiment__trace")


@require_http_methods(["GET", "POST"])
def site_new(request: HttpRequest) -> HttpResponse:
    traces = visible_to(Trace, request.user).filter(status=Trace.Status.READY)
    form = SiteUploadForm(request.POST or None, request.FILES or None, traces=traces)
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                preview = create_site_preview(request.user, name=data["name"], trace=data["trace"], kind=data["kind"],
                                              texts=data["texts"], shared=data["shared"], cpus=data.get("cpus"),
                                              sweep=Sweep(data.get("sweep_key") or "", data.get("sweep_values") or ""))
            except PreviewError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, f"Started “{preview.name}”: the current run replays the trace under "
                                          "your files; propose a change below.")
                return redirect(preview)
        return render(request, "preview/site_new.html", {"form": form}, status=400)
    return render(request, "preview/site_new.html", {"form": form})


def proposal_form(preview: SitePreview, data: dict | None = None) -> SiteProposalForm:
    """The editor, starting from the last proposal (or the current files when none was made)."""
    side = PROPOSED if preview.proposed else CURRENT
    base = preview.texts(side)
    name = preview.proposed_name or "my change"
    return SiteProposalForm(data, kind=preview.kind, base=base, keys=keys_of(preview, side),
                            swept=preview.experiment.sweep_param, initial={"name": name})


@require_GET
def site_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _page(request, get_visible_or_404(SITES, request.user, pk))


def _page(request: HttpRequest, preview: SitePreview, form: SiteProposalForm | None = None,
          status: int = 200) -> HttpResponse:
    experiment = preview.experiment
    value = chosen_value(request, experiment)
    every = list(experiment.runs.all())
    runs = side_runs(preview, value, every)
    context = {**page_context(request, preview), "files": SITE_FILES[preview.kind],
               "sides": [s for s in (RECORDED, CURRENT, PROPOSED) if s in runs], "value": value,
               "values": list(enumerate(experiment.sweep_values)) if experiment.sweep_param else [],
               "sweep": sweep_overview(experiment, ((CURRENT, "as configured"),
                                                    (PROPOSED, preview.proposed_name or "none yet")),
                                       lambda at: side_runs(preview, at, every), value, label=experiment.sweep_param)}
    if preview.proposed:
        context["diff"] = text_diff(preview.current, preview.proposed, SITE_FILES[preview.kind])
        try:
            context["changes"] = changed_keys(preview.site(CURRENT), preview.site(PROPOSED))
        except WorkloadError as error:
            context["changes_error"] = error_line(error)
    done = [run for run in runs.values() if run.status == run.Status.DONE]
    context["all_done"] = len(done) == len(runs)
    if done:
        sides = context["sides"]
        try:
            context["tables"] = [(heading, [{**row, "values": [row.get(side) for side in sides]} for row in rows])
                                 for heading, rows in wait_tables(preview, runs).items()]
        except OSError:
            context["missing"] = True
        context["pending"] = [{"reason": row["reason"], "values": [row.get(side) for side in sides]}
                              for row in pending_table(runs)]
    if context["can_change"]:
        context["proposal"] = form or proposal_form(preview)
    return render(request, "preview/site_detail.html", embedded(context), status=status)


@require_POST
def site_propose(request: HttpRequest, pk: int) -> HttpResponse:
    """Run the proposal: the posted texts with every changed field written into them, checked by the
    readers (one line naming file, line and key when they do not read; nothing is stored then)."""
    preview = get_owned_or_404(SITES, request.user, pk)
    form = proposal_form(preview, request.POST)
    if not form.is_valid():
        return _page(request, preview, form, status=400)
    try:
        texts = apply_changes(form.texts(), form.keys, form.values())
        checked_site(preview.kind, texts)
        queued = propose(preview, form.cleaned_data["name"], texts)
    except PreviewError as error:
        form.add_error(None, str(error))
        return _page(request, preview, form, status=400)
    messages.success(request, f"Running the proposal “{preview.proposed_name}” ({queued} run); the current run stays.")
    return redirect(preview)


@require_POST
def site_delete(request: HttpRequest, pk: int) -> HttpResponse:
    preview = get_owned_or_404(SITES, request.user, pk)
    delete_experiment(preview.experiment)
    messages.success(request, f"Deleted “{preview.name}”.")
    return redirect("preview:index")
