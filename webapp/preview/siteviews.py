"""Pages of a preview on a site's own files: upload the files with a trace, then propose an edited copy
(the common keys as fields, every file as text) and read recorded / current / proposed per partition,
account and user, with what held the jobs in the scheduler's words."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine.api import SITE_FILES, WorkloadError, error_line
from webapp.core.permissions import get_owned_or_404, get_visible_or_404, visible_to
from webapp.core.responses import attachment
from webapp.experiments.models import CURRENT, PROPOSED
from webapp.experiments.services import delete_experiment
from webapp.preview.calibration import apply_candidate, calibration_table, settled
from webapp.preview.tasks import cancel_calibration, start_calibration
from webapp.preview.models import SiteCalibration, SitePreview
from webapp.preview.page import chosen_value, embedded, page_context
from webapp.preview.services import PreviewError
from webapp.preview.siteforms import SiteProposalForm, SiteSweepForm, SiteUploadForm
from webapp.preview.sitereport import changes_context, download_html, jobs_csv, sweep_of, tables_csv
from webapp.preview.sites import (
    Sweep,
    add_sweep,
    apply_changes,
    checked_site,
    create_site_preview,
    keys_of,
    propose,
    side_runs,
    site_readings,
    site_results,
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
          status: int = 200, sweep_form: SiteSweepForm | None = None) -> HttpResponse:
    experiment = preview.experiment
    value = chosen_value(request, experiment)
    context = page_context(request, preview)
    every = context["runs"]           # the experiment's runs, read once for the whole page
    runs = side_runs(preview, value, every)
    context.update({"files": SITE_FILES[preview.kind], "value": value,
                    "values": list(enumerate(experiment.sweep_values)) if experiment.sweep_param else [],
                    "sweep": sweep_of(preview, value, every), **changes_context(preview),
                    **site_results(preview, runs), **site_readings(preview)})
    context["downloads"] = context["all_done"] and not context.get("missing")
    context["runs_final"] = all(run.is_final for run in every)
    context["value_query"] = f"?value={request.GET['value']}" if experiment.sweep_param and "value" in request.GET else ""
    calibration = settled(getattr(preview, "calibration", None)) if preview.kind == "slurm" else None
    context["calibration"], context["calibration_phases"] = calibration, settings.SCHEDLAB_CALIBRATION_PHASES
    if calibration is not None and calibration.status == SiteCalibration.Status.DONE and calibration.report:
        context["calibration_table"] = calibration_table(calibration.report)
    if context["can_change"]:
        try:
            context["proposal"] = form or proposal_form(preview)
        except WorkloadError as error:    # stored files this engine no longer reads: say so, no form to fill
            context["files_error"] = error_line(error)
        context["sweep_form"] = sweep_form or SiteSweepForm(initial={
            "sweep_key": experiment.sweep_param, "sweep_values": ", ".join(map(str, experiment.sweep_values))})
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
def site_sweep(request: HttpRequest, pk: int) -> HttpResponse:
    """Sweep a key of the preview: its current and proposed runs (and an earlier sweep's) replaced by one
    per value of each side (a bad key or value: one line naming it, nothing changes)."""
    preview = get_owned_or_404(SITES, request.user, pk)
    form = SiteSweepForm(request.POST)
    if not form.is_valid():
        return _page(request, preview, status=400, sweep_form=form)
    try:
        queued = add_sweep(preview, Sweep(form.cleaned_data["sweep_key"], form.cleaned_data["sweep_values"]))
    except PreviewError as error:
        form.add_error(None, str(error))
        return _page(request, preview, status=400, sweep_form=form)
    messages.success(request, f"Sweeping {preview.experiment.sweep_param}: {queued} run(s) queued; the recorded run stays.")
    return redirect(preview)


UNFINISHED = "This site preview's runs have not finished yet."


@require_GET
def site_download(request: HttpRequest, pk: int) -> HttpResponse:
    """The page (setup, changes, sweep, tables) as one self-contained HTML file that works offline."""
    preview = get_visible_or_404(SITES, request.user, pk)
    return attachment(download_html(preview, chosen_value(request, preview.experiment)),
                      f"{slugify(preview.name) or 'site-preview'}-{preview.pk}.html", "text/html; charset=utf-8",
                      unfinished=UNFINISHED)


@require_GET
def site_tables_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """Per partition, account and user the mean waits, and the pending reasons' jobs and hours, as CSV."""
    preview = get_visible_or_404(SITES, request.user, pk)
    return attachment(tables_csv(preview, chosen_value(request, preview.experiment)),
                      f"site-preview-{preview.pk}-tables.csv", "text/csv", unfinished=UNFINISHED)


@require_GET
def site_jobs_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """Each job's recorded, current and proposed start, wait and reason, as CSV."""
    preview = get_visible_or_404(SITES, request.user, pk)
    try:
        text = jobs_csv(preview, chosen_value(request, preview.experiment))
    except WorkloadError as error:    # stored files this engine no longer reads (the recorded run's reasons)
        return HttpResponse(f"The stored files no longer read: {error_line(error)}", status=409, content_type="text/plain")
    return attachment(text, f"site-preview-{preview.pk}-jobs.csv", "text/csv", unfinished=UNFINISHED)


@require_POST
def site_calibrate(request: HttpRequest, pk: int) -> HttpResponse:
    """Calibrate the baseline in the background (webapp.preview.calibration)."""
    preview = get_owned_or_404(SITES, request.user, pk)
    try:
        start_calibration(preview)
    except PreviewError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Calibrating the baseline: the site as configured and each candidate explanation "
                                  "replayed against the recording (the table shows here when it is done).")
    return redirect(preview.get_absolute_url() + "#calibration")


@require_GET
def site_calibration_progress(request: HttpRequest, pk: int) -> JsonResponse:
    """The calibration's status and progress, for the page's poll."""
    preview = get_visible_or_404(SITES, request.user, pk)
    calibration = settled(getattr(preview, "calibration", None))
    if calibration is None:
        return JsonResponse({"status": "none", "progress": 0.0, "finished": True})
    return JsonResponse({"status": calibration.status, "shown": calibration.shown_status, "progress": calibration.progress,
                         "finished": calibration.is_final, "error": calibration.error})


@require_POST
def site_calibration_apply(request: HttpRequest, pk: int) -> HttpResponse:
    """Replay both sides with a candidate of the calibration (its --set parameters)."""
    preview = get_owned_or_404(SITES, request.user, pk)
    try:
        queued = apply_candidate(preview, request.POST.get("candidate", ""))
    except PreviewError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Replaying both sides with {preview.calibrated.get('name') or 'the site as configured'}: "
                                  f"{queued} run(s) queued.")
    return redirect(preview)


#: what cancelling said, by cancel_calibration's answer
CANCELLED_TEXT = {"cancelled": "Calibration cancelled before it started.",
                  "stopping": "Cancelling the calibration: it stops at its next progress check.",
                  "ended": "The calibration had already ended: nothing to cancel."}


@require_POST
def site_calibration_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Cancel the calibration (a queued one at once, a running one at its next progress check)."""
    preview = get_owned_or_404(SITES, request.user, pk)
    messages.info(request, CANCELLED_TEXT[cancel_calibration(preview)])
    return redirect(preview.get_absolute_url() + "#calibration")


@require_POST
def site_delete(request: HttpRequest, pk: int) -> HttpResponse:
    preview = get_owned_or_404(SITES, request.user, pk)
    delete_experiment(preview.experiment)
    messages.success(request, f"Deleted “{preview.name}”.")
    return redirect("preview:index")
