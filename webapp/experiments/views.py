"""Experiment pages: list, new (form from the policy registry), detail with live progress,
cancel, re-run, delete, and the CSV downloads."""

from __future__ import annotations

from dataclasses import replace

from django.contrib import messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from engine import api
from webapp.allocations.services import attach
from webapp.core.formpage import form_page
from webapp.core.permissions import Viewer, can_change, get_owned_or_404, get_visible_or_404, visible_to
from webapp.experiments.forms import ExperimentEditForm, ExperimentForm
from webapp.experiments.models import Experiment, Run
from webapp.experiments.provenance import metrics_download, schedule_download, window_text
from webapp.experiments.models import ReplicateSet
from webapp.experiments.replicates import (add_replicates, cancel_replicates, hidden_experiment_ids, retry_replicates,
                                           set_progress)
from webapp.experiments.reproduce import PRESETS as PAPER_PRESETS
from webapp.experiments.reproduce import PaperPreset, paper_allocations, paper_trace, paper_trace_note
from webapp.experiments.services import (
    PAGE_METRICS, ExperimentError, cancel_run, create_experiment, delete_experiment,
    progress_payload, queue_places, rerun, shown_metrics, time_left_text,
)
from webapp.experiments.tasks import reconcile


@require_GET
def experiment_list(request: HttpRequest) -> HttpResponse:
    experiments = (visible_to(Experiment, request.user).exclude(pk__in=hidden_experiment_ids())
                   .select_related("owner", "trace", "preview", "site_preview").prefetch_related("runs"))
    return render(request, "experiments/list.html", {"experiments": experiments})


@require_GET
def reproduce_index(request: HttpRequest) -> HttpResponse:
    return render(request, "experiments/reproduce.html", {"presets": paper_presets()})


def paper_presets() -> list[dict]:
    """Every "reproduce a paper" preset with its paper's citation and the form it fills."""
    return [{"preset": p, "citation": p.citation, "url": preset_url(p)} for p in PAPER_PRESETS.values()]


def preset_url(preset: PaperPreset) -> str:
    """The form a preset fills: the study form, the preview form or the new-experiment form."""
    if preset.study:
        return reverse("studies:new") + f"?preset={preset.key}#preset-{preset.study}"
    if preset.preview:
        return reverse("preview:new") + f"?reproduce={preset.key}"
    return reverse("experiments:new") + f"?reproduce={preset.key}"


@require_GET
def formula_check(request: HttpRequest) -> JsonResponse:
    """The new-experiment page's check of a formula as it is typed: {"ok": true, "label", "dynamic"}
    or {"ok": false, "error": the engine's one line} (an answer, not a failed request: status 200)."""
    spec = {"ordering": "formula", "algorithm": request.GET.get("algorithm") or "easy",
            "params": {"formula": request.GET.get("formula", ""), "first": request.GET.get("first") or "largest"}}
    try:
        resolved = api.resolve_policy(spec)
    except api.PolicyError as e:
        return JsonResponse({"ok": False, "error": api.error_line(e)})
    dynamic = api.check_formula(resolved.params["formula"]).dynamic
    return JsonResponse({"ok": True, "label": resolved.label, "dynamic": dynamic})


@require_http_methods(["GET", "POST"])
def experiment_new(request: HttpRequest) -> HttpResponse:
    initial = {"trace": request.GET.get("trace")} if request.GET.get("trace") else {}
    reproduce = PAPER_PRESETS.get(request.GET.get("reproduce", ""))
    if reproduce is not None and reproduce.preview:
        return redirect(preset_url(reproduce))
    if reproduce is not None and not reproduce.study:
        initial.update(reproduce.initial())
    form = ExperimentForm(request.user, request.POST or None, initial=initial)
    trace_note = ""
    if reproduce is not None and not reproduce.study:
        chosen = paper_trace(reproduce, form.fields["trace"].queryset)
        if chosen is not None and "trace" not in initial:
            form.initial["trace"] = chosen.pk
        allocations = paper_allocations(reproduce, chosen, form.fields["allocations"].queryset)
        if allocations is not None:
            form.initial["allocations"] = allocations.pk
        trace_note = paper_trace_note(reproduce, chosen, allocations)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        source = data["machine_source"]
        try:
            with transaction.atomic():  # its runs are queued on commit: attach the allocations first
                experiment = create_experiment(
                    request.user, name=data["name"], trace=data["trace"],
                    procs=data["procs"] if source == "size" else None,
                    machine=data["machine"] if source == "machine" else None,
                    policies=data["policies"], allocation=data["allocation"], exact_estimates=data["exact_estimates"],
                    seed=data["seed"], sweep_param=data["sweep_param"] if data["sweep_list"] else "",
                    sweep_values=data["sweep_list"], shared=data["shared"], load_factor=data.get("load_factor") or 1.0,
                    days=data["days"], with_recorded=data.get("with_recorded", False),
                    paper=reproduce.key if reproduce is not None and not reproduce.study else "",
                )
                attach(experiment, data.get("allocations"))
                if data.get("replicate_choice") is not None:
                    choice = data["replicate_choice"]
                    add_replicates(experiment, replace(choice, paper=reproduce.key) if reproduce else choice)
        except ExperimentError as e:
            form.add_error(None, str(e))
        else:
            messages.success(request, f"Queued {experiment.runs.count()} run(s).")
            return redirect(experiment)
    status = 400 if request.method == "POST" else 200
    day_zero = {trace.pk: trace.day_zero() for trace in form.fields["trace"].queryset}
    return render(request, "experiments/new.html", {"form": form, "reproduce": reproduce, "presets": paper_presets(),
                                                    "day_zero": day_zero, "paper_trace_note": trace_note}, status=status)


def comparison_url(experiment: Experiment) -> str:
    return reverse("dashboards:comparison", args=[experiment.pk])


def with_time_left(runs: QuerySet[Run]) -> list[Run]:
    """The runs, each with `time_left` ("about … left" while it runs) for the first paint; the page's
    poll keeps it current."""
    listed = list(runs)
    places = queue_places(listed)
    for run in listed:
        run.time_left = time_left_text(run, places.get(run.pk))  # type: ignore[attr-defined]
        run.shown = [(code, text) for code, text in shown_metrics(run.summary).items()]  # type: ignore[attr-defined]
    return listed


def page_metrics() -> list[tuple[str, str]]:
    """The metrics the runs table shows, with their names in words."""
    return [(code, api.metric_label(code)) for code in PAGE_METRICS]


@require_GET
def experiment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_visible_or_404(Experiment.objects.select_related("owner", "trace", "machine", "preview", "replicate_set"),
                                    request.user, pk)
    preview = getattr(experiment, "preview", None)
    if preview is not None:   # a preview's page shows its runs beside what they mean
        return redirect(preview)
    ctx = {
        "experiment": experiment,
        "runs": with_time_left(experiment.runs.all()),
        "can_change": can_change(experiment, request.user),
        "comparison_url": comparison_url(experiment),
        "other_runs": comparable_runs(experiment, request.user),
        "page_metrics": page_metrics(),
        "window": window_text(experiment) if experiment.days else "",
        "replicates": replicates_state(experiment),
        "paper": PAPER_PRESETS.get(experiment.paper),
    }
    return render(request, "experiments/detail.html", ctx)


#: Runs of other experiments offered by the "compare with…" picker (the most recent first).
COMPARABLE_RUNS = 60


def comparable_runs(experiment: Experiment, user: Viewer) -> list[Run]:
    """Finished runs of other experiments on the same trace that ``user`` may see."""
    return list(visible_to(Run, user).filter(experiment__trace=experiment.trace_id, status=Run.Status.DONE)
                .exclude(experiment=experiment).exclude(experiment__in=hidden_experiment_ids())
                .select_related("experiment__owner")
                .only("pk", "label", "load_factor", "experiment__name", "experiment__days", "experiment__owner_id",
                      "experiment__owner__username")
                .order_by("-experiment__created", "position", "pk")[:COMPARABLE_RUNS])


def replicate_set(experiment: Experiment) -> ReplicateSet | None:
    """The experiment's replicate set, or None (no query when it was selected with the experiment)."""
    try:
        return experiment.replicate_set
    except ReplicateSet.DoesNotExist:
        return None


def replicates_state(experiment: Experiment) -> dict | None:
    """The replicate set's one progress bar (None: the experiment has no replicates)."""
    replicates = replicate_set(experiment)
    return set_progress(replicates) if replicates is not None else None


@require_GET
def experiment_progress(request: HttpRequest, pk: int) -> JsonResponse:
    experiment = get_visible_or_404(Experiment.objects.select_related("replicate_set"), request.user, pk)
    reconcile(experiment.runs.all())  # the page's poll doubles as the periodic lost-worker check
    payload = progress_payload(experiment)
    replicates = replicate_set(experiment)
    if replicates is not None:
        reconcile(replicates.runs_experiment.runs.all())
        payload["replicates"] = set_progress(replicates)
        payload["finished"] = payload["finished"] and payload["replicates"]["status"] in ("done", "failed", "cancelled")
    return JsonResponse(payload)


@require_POST
def replicates_retry(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_owned_or_404(Experiment, request.user, pk)
    replicates = replicate_set(experiment)
    if replicates is None:
        raise Http404("This experiment has no replicates.")
    count = retry_replicates(replicates)
    messages.success(request, f"Queued {count} replicate run(s) again.")
    return redirect(experiment)


@require_http_methods(["GET", "POST"])
def experiment_edit(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_owned_or_404(Experiment, request.user, pk)
    return form_page(request, ExperimentEditForm(request.POST or None, instance=experiment), "experiments/edit.html",
                     {"experiment": experiment}, "Saved.", invalid_status=200)


@require_POST
def experiment_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_owned_or_404(Experiment, request.user, pk)
    outcomes = [cancel_run(run) for run in experiment.runs.exclude(status__in=Run.FINAL)]
    replicates = replicate_set(experiment)
    if replicates is not None:
        cancel_replicates(replicates)
    messages.info(request, cancel_message(outcomes.count("cancelled"), outcomes.count("stopping")))
    return redirect(experiment)


def cancel_message(cancelled: int, stopping: int) -> str:
    """What "Cancel unfinished" did, counted: the page's runs may all have ended before the click arrived."""
    if not cancelled and not stopping:
        return "Every run had already ended: nothing to cancel."
    parts = []
    if cancelled:
        parts.append(f"Cancelled {cancelled} queued run{'s' if cancelled != 1 else ''}")
    if stopping:
        parts.append(f"asked {stopping} running run{'s' if stopping != 1 else ''} to stop")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


@require_POST
def experiment_delete(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_owned_or_404(Experiment, request.user, pk)
    replicates = replicate_set(experiment)
    delete_experiment(experiment)
    if replicates is not None:
        delete_experiment(replicates.runs_experiment)
    messages.success(request, f"Deleted “{experiment.name}”.")
    return redirect("experiments:list")


@require_GET
def experiment_metrics_csv(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_visible_or_404(Experiment.objects.select_related("owner", "trace", "machine"), request.user, pk)
    return metrics_download(experiment)


@require_POST
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_owned_or_404(Run.objects.select_related("experiment"), request.user, pk)
    cancel_run(run)
    messages.info(request, f"Cancelling {run.label}.")
    return redirect(run.experiment)


@require_POST
def run_rerun(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_owned_or_404(Run.objects.select_related("experiment"), request.user, pk)
    if rerun(run):
        messages.success(request, f"Queued {run.label} again.")
    else:
        messages.error(request, f"{run.label} is still {run.status}; cancel it or wait for it to finish.")
    return redirect(run.experiment)


@require_GET
def run_schedule_csv(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_visible_or_404(Run.objects.select_related("experiment__trace", "experiment__owner"), request.user, pk)
    if run.status != Run.Status.DONE or not run.schedule_csv.exists():
        raise Http404("This run has no schedule (yet).")
    return schedule_download(run)


@require_GET
def run_rejected_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """The jobs the run rejected at submission, one row each (native ids and user names where the trace
    has them); only the columns when it rejected none."""
    run = get_visible_or_404(Run.objects.select_related("experiment__trace", "experiment__owner"), request.user, pk)
    if run.status != Run.Status.DONE:
        raise Http404("This run has not finished.")
    return schedule_download(run, "rejected")
