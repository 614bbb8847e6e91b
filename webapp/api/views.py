"""The JSON API for scripts (docs/web.md has curl examples). Same permission rules as the pages."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.contrib.auth import authenticate
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt

from webapp.accounts import throttle
from webapp.accounts.models import Token
from webapp.allocations.models import AllocationSet
from webapp.allocations.services import attach
from webapp.api.decorators import authorize, error, json_body
from webapp.core.permissions import M, Pk, Viewer, get_visible_or_404, visible_to
from webapp.experiments.models import MAX_PROCS, MAX_SEED, Experiment, ReplicateSet, Run
from webapp.experiments.replicates import add_replicates, choice_from_json, hidden_experiment_ids, set_progress
from webapp.experiments.provenance import schedule_download
from webapp.experiments.services import ExperimentError, create_experiment, parse_sweep_values, progress_payload
from webapp.experiments.tasks import reconcile
from webapp.studies import services as study_services
from webapp.studies.models import Study
from webapp.studies.presets import PRESETS, create_preset_study
from webapp.studies.views import csv_download
from webapp.traces.forms import TraceUploadForm
from webapp.traces.models import Machine, Trace
from webapp.traces.uploads import upload_refusal
from webapp.quotas.services import QuotaExceeded
from webapp.quotas.views import usage_payload
from webapp.traces.services import create_trace


@csrf_exempt
def token(request: HttpRequest) -> JsonResponse:
    """A new token for {username, password[, name]}; throttled like the login page (wrong passwords
    count as on the login page), and every request, right or wrong, counts as a token request."""
    if request.method != "POST":
        return error("use POST with {username, password}", 405)
    try:
        data = json_body(request)
    except ValueError as e:
        return error(str(e))
    username = str(data.get("username", ""))
    passwords = throttle.keys(throttle.PASSWORD, request, username)
    requests = throttle.keys(throttle.TOKEN, request, username)
    wait = throttle.wait_seconds(passwords + requests)
    if wait:
        response = error(throttle.refusal(wait), 429, retry_after=wait)
        response["Retry-After"] = str(wait)
        return response
    throttle.record(requests)
    user = authenticate(request, username=username, password=str(data.get("password", "")))
    if user is None:
        throttle.record(passwords)
        return error("wrong username or password", 401)
    throttle.forget(passwords)
    key, issued = Token.create_for(user, str(data.get("name", "")))
    return JsonResponse({"token": key, "expires": issued.expires.isoformat()})


def trace_json(trace: Trace) -> dict[str, Any]:
    return {
        "id": trace.pk, "name": trace.name, "description": trace.description, "owner": trace.owner.username,
        "shared": trace.shared, "status": trace.status, "error": trace.error, "sha256": trace.sha256,
        "size_bytes": trace.size_bytes, "procs": trace.procs, "summary": trace.summary,
        "created": trace.created.isoformat(), "url": trace.get_absolute_url(),
    }


@authorize("GET", "POST")
def traces(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        listed = visible_to(Trace, request.user).exclude(status=Trace.Status.REMOVED).select_related("owner")
        return JsonResponse({"traces": [trace_json(t) for t in listed]})
    form = TraceUploadForm(request.POST, request.FILES)  # parses the upload: sets upload_too_large
    refusal = upload_refusal(request)
    if refusal:
        form.is_valid()
        form.discard()
        return error(*refusal)
    if not form.is_valid():
        form.discard()
        problems = {field: list(msgs) for field, msgs in form.errors.items()}
        first = next(iter(problems.values()))[0]
        return error(first, 400, errors=problems)
    try:
        trace = create_trace(request.user, form.cleaned_data, form.inspected, form.cleaned_data["file"].name)
    except QuotaExceeded as e:
        return error(str(e))
    return JsonResponse({"id": trace.pk, "status": trace.status}, status=201)


@authorize("GET")
def trace_detail(request: HttpRequest, pk: int) -> JsonResponse:
    return JsonResponse(trace_json(get_visible_or_404(Trace.objects.select_related("owner"), request.user, pk)))


def experiment_json(experiment: Experiment) -> dict[str, Any]:
    data = progress_payload(experiment)
    data.update({"owner": experiment.owner.username, "shared": experiment.shared, "allocation": experiment.allocation,
                 "exact_estimates": experiment.exact_estimates, "seed": experiment.seed, "paper": experiment.paper,
                 "url": experiment.get_absolute_url()})
    for run in data["runs"]:
        run["schedule_csv"] = reverse("api:run_schedule_csv", args=[run["id"]])
    return data


@authorize("GET", "POST")
def experiments(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        qs = visible_to(Experiment, request.user).exclude(pk__in=hidden_experiment_ids()).select_related("owner")
        return JsonResponse({"experiments": [
            {"id": e.pk, "name": e.name, "trace": e.trace_id, "procs": e.procs, "owner": e.owner.username,
             "url": e.get_absolute_url()} for e in qs
        ]})
    try:
        data = json_body(request)
        arguments = experiment_arguments(request, data)
        replicates = choice_from_json(data["replicates"]) if data.get("replicates") else None
        allocation_set = (_visible(AllocationSet, request, data["allocations"], "allocations")
                          if data.get("allocations") is not None else None)
        with transaction.atomic():  # its runs are queued on commit: attach the allocations first
            experiment = create_experiment(request.user, **arguments)
            attach(experiment, allocation_set)
            if replicates is not None:
                add_replicates(experiment, replace(replicates, paper=experiment.paper) if experiment.paper else replicates)
    except (ValueError, ExperimentError) as e:
        return error(str(e))
    return JsonResponse({"id": experiment.pk, "runs": list(experiment.runs.values_list("pk", flat=True))}, status=201)


def experiment_arguments(request: HttpRequest, data: dict[str, Any]) -> dict[str, Any]:
    """Check the JSON of POST /api/experiments/ and turn it into create_experiment's arguments."""
    unknown = sorted(set(data) - {"trace", "procs", "machine", "policies", "allocation", "exact_estimates",
                                  "seed", "name", "description", "shared", "sweep", "load_factor",
                                  "allocations", "days", "replicates", "paper"})
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}")
    if "trace" not in data:
        raise ValueError("field trace: give a trace id")
    trace = _visible(Trace, request, data["trace"], "trace")
    machine = _visible(Machine, request, data["machine"], "machine") if data.get("machine") is not None else None
    procs = data.get("procs")
    if procs is not None and not _whole_in(procs, 1, MAX_PROCS):
        raise ValueError(f"field procs: a whole number from 1 to {MAX_PROCS}")
    policies = data.get("policies")
    if not isinstance(policies, list) or not policies:
        raise ValueError('field policies: a list such as [{"preset": "easy", "params": {}}]')
    sweep = data.get("sweep") or {}
    if not isinstance(sweep, dict):
        raise ValueError('field sweep: {"param": "masc", "values": [1, 2, "inf"]}')
    values = sweep.get("values", [])
    if isinstance(values, str):
        values = parse_sweep_values(values)
    seed = data.get("seed", 0)
    if not _whole_in(seed, 0, MAX_SEED):
        raise ValueError(f"field seed: a whole number from 0 to {MAX_SEED}")
    return {
        "name": str(data.get("name", "")), "description": str(data.get("description", "")), "trace": trace,
        "procs": procs, "machine": machine, "policies": policies, "allocation": str(data.get("allocation", "count")),
        "exact_estimates": bool(data.get("exact_estimates", False)), "seed": seed,
        "sweep_param": str(sweep.get("param", "")), "sweep_values": list(values), "shared": bool(data.get("shared", False)),
        "load_factor": data.get("load_factor", 1.0), "days": str(data.get("days") or ""),
        "paper": _paper(data.get("paper")),
    }


def _paper(value: object) -> str:
    """The API's "paper": a reproduce-a-paper preset's key (create_experiment checks which), or none."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise ValueError("field paper: a reproduce-a-paper preset's name such as \"dbf\"")
    return value


def _whole_in(value: object, low: int, high: int) -> bool:
    """Whether a JSON value is an integer (not a bool, not 1e999) from low to high."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _visible(model: type[M], request: HttpRequest, pk: Pk, field: str) -> M:
    try:
        number = int(pk)   # a form's "3" too
        if isinstance(pk, (bool, float)) or not 0 < number < 2**63:
            raise ValueError(pk)
        return get_visible_or_404(model, request.user, number)
    except (Http404, TypeError, ValueError, OverflowError):
        raise ValueError(f"field {field}: no {field} with id {repr(pk)[:40]} that you may use") from None


@authorize("GET")
def experiment_detail(request: HttpRequest, pk: int) -> JsonResponse:
    return JsonResponse(experiment_json(get_visible_or_404(Experiment.objects.select_related("owner"), request.user, pk)))


@authorize("GET")
def experiment_replicates(request: HttpRequest, pk: int) -> JsonResponse:
    """The replicated comparison's report, the structure `python -m engine compare --out report.json`
    writes ({"pairs": [{"a", "b", "metric", "difference", "ci", "replicates", "method", "verdict", ...}], ...});
    409 with the set's progress while it runs or after it failed, 404 for an experiment without replicates."""
    experiment = get_visible_or_404(Experiment, request.user, pk)
    replicates = ReplicateSet.objects.filter(experiment=experiment).first()
    if replicates is None:
        return error(f"experiment {pk} has no replicates", 404)
    if replicates.report is None:
        state = set_progress(replicates)
        return error(state["error"] or f"the replicates are {state['status']}: {state['done']} of {state['total']} done",
                     409, progress=state)
    return JsonResponse(replicates.report)


@authorize("GET")
def run_schedule_csv(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_visible_or_404(Run, request.user, pk)
    if run.status != Run.Status.DONE or not run.schedule_csv.exists():
        return error(f"run {run.pk} has no schedule: it is {run.status}", 404)
    return schedule_download(run)


# --------------------------------------------------------------------------- studies


def study_json(study: Study) -> dict[str, Any]:
    """A study's grid and progress: points done / total, counts per status, each point's run."""
    experiment = study.experiment
    return {**study_services.progress(study), "name": study.name, "experiment": experiment.pk,
            "trace": experiment.trace_id, "procs": experiment.procs, "owner": experiment.owner.username,
            "shared": experiment.shared, "grid": study.grid, "policies": study.policies, "preset": study.preset,
            "url": study.get_absolute_url(), "csv": reverse("api:study_csv", args=[study.pk])}


def _studies(user: Viewer) -> QuerySet[Study]:
    return visible_to(Study, user).select_related("experiment__owner")


@authorize("GET", "POST")
def studies(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        return JsonResponse({"studies": [
            {"id": s.pk, "name": s.name, "trace": s.experiment.trace_id, "owner": s.experiment.owner.username,
             "grid": s.grid, "url": s.get_absolute_url()} for s in _studies(request.user)]})
    try:
        data = json_body(request)
        study = create_study_from(request, data)
    except (ValueError, ExperimentError) as e:
        return error(str(e))
    return JsonResponse({"id": study.pk, "points": study.points.count(),
                         "runs": list(study.experiment.runs.values_list("pk", flat=True))}, status=201)


def create_study_from(request: HttpRequest, data: dict[str, Any]) -> Study:
    """POST /api/studies/: a preset on a trace, or a trace, policies and a grid (see the README)."""
    unknown = sorted(set(data) - {"trace", "procs", "machine", "policies", "grid", "allocation", "exact_estimates",
                                  "seed", "name", "description", "shared", "preset"})
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}")
    if "trace" not in data:
        raise ValueError("field trace: give a trace id")
    trace = _visible(Trace, request, data["trace"], "trace")
    if data.get("preset"):
        if data["preset"] not in PRESETS:
            raise ValueError(f"field preset: one of {', '.join(PRESETS)}")
        return create_preset_study(request.user, data["preset"], trace, shared=bool(data.get("shared", False)))
    grid = data.get("grid")
    if not isinstance(grid, dict) or not all(isinstance(v, (list, str)) for v in grid.values()):
        raise ValueError('field grid: {"load": [0.8, 1, 1.2], "masc": [5, 10, "inf"]}')
    checked = experiment_arguments(request, {k: v for k, v in data.items() if k not in ("grid", "preset")})
    arguments = {k: checked[k] for k in ("name", "description", "trace", "procs", "machine", "policies",
                                         "allocation", "exact_estimates", "seed", "shared")}
    return study_services.create_study(request.user, grid=study_services.parse_grid(grid), **arguments)


@authorize("GET")
def study_detail(request: HttpRequest, pk: int) -> JsonResponse:
    study = get_visible_or_404(_studies(request.user), request.user, pk)
    reconcile(study.experiment.runs.all())  # as the page's poll: the lost-worker check
    return JsonResponse(study_json(study))


@authorize("GET")
def study_csv(request: HttpRequest, pk: int) -> HttpResponse:
    return csv_download(get_visible_or_404(_studies(request.user), request.user, pk))


@authorize("GET")
def usage(request: HttpRequest) -> JsonResponse:
    """The caller's runs and disk against their limits, and the server's limits (as /usage/ shows)."""
    return JsonResponse(usage_payload(request.user))
