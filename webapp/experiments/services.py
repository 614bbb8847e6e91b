"""Creating experiments and their runs; shared by the new-experiment page and the JSON API."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from engine import api
from webapp.core.files import media_path
from webapp.core.progress import time_left_text as progress_text
from webapp.experiments.fairqueue import Estimate, estimates, ordinal
from webapp.experiments.models import Experiment, Run
from webapp.experiments.reproduce import experiment_presets
from webapp.experiments.stopping import stop_running
from webapp.experiments.tasks import dispatch_later, remove_results
from webapp.quotas.services import QuotaExceeded, check_new_runs, limits_of, tree_size
from webapp.traces.models import Machine, Trace


class ExperimentError(ValueError):
    """Bad experiment input, with a message naming the policy, parameter or field."""


@dataclass
class PlannedRun:
    label: str
    policy: dict[str, Any]
    sweep_value: Any = None
    queues: str = ""   # a preview's run: the queue configuration it runs under (Run.queues)


def resolve_policy(spec: Any) -> dict[str, Any]:
    """Validate one policy spec through the engine's registry; returns {"preset", "params", "_label"}
    (and "ordering", "algorithm" for a custom composition, such as your own formula)."""
    try:
        resolved = api.resolve_policy(spec)
    except api.PolicyError as e:
        raise ExperimentError(api.error_line(e)) from None
    data = resolved.to_dict()
    stored = {"preset": data["preset"], "params": data["params"]}
    if data["preset"] == "custom":
        stored.update(ordering=data["ordering"], algorithm=data["algorithm"])
    return {**stored, "_label": resolved.label}


def parse_sweep_values(text: str) -> list[Any]:
    """ "1, 2, 5, inf" → [1, 2, 5, "inf"]; types are checked later by the registry."""
    values: list[Any] = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        if part.lower() in ("inf", "infinity", "∞"):
            values.append("inf")
            continue
        try:
            number = float(part)
        except ValueError:
            raise ExperimentError(f"sweep value {part!r} is not a number or inf") from None
        values.append(int(number) if number.is_integer() and not math.isinf(number) else number)
    return values


def plan_runs(policies: list[Any], sweep_param: str = "", sweep_values: list[Any] | None = None) -> list[PlannedRun]:
    """One run per policy; a policy whose schedule the swept parameter can change becomes one run per
    value. A policy that has the parameter but never reads it (a workload option only some algorithms
    read: EASY ignores deadline_fraction) runs once, unswept: at every value its schedule would be the
    same (engine registry's schedule_depends_on), and the sweep plot draws it as one flat line."""
    if not policies:
        raise ExperimentError("choose at least one policy")
    planned: list[PlannedRun] = []
    swept_any = False
    ignored = False
    for spec in policies:
        base = resolve_policy(spec)
        if sweep_param and sweep_param in base["params"] and not sweeps_change(sweep_param, base):
            ignored = True
            planned.append(PlannedRun(base.pop("_label"), base))
        elif sweep_param and sweep_param in base["params"]:
            if not sweep_values:
                raise ExperimentError(f"sweep over {sweep_param}: give at least one value")
            swept_any = True
            for value in sweep_values:
                params = {**base["params"], sweep_param: value}
                run = resolve_policy({**{k: v for k, v in base.items() if k != "_label"}, "params": params})
                planned.append(PlannedRun(run.pop("_label"), run, value))
        else:
            planned.append(PlannedRun(base.pop("_label"), base))
    if sweep_param and not swept_any:
        if ignored:
            raise ExperimentError(f"sweep parameter {sweep_param!r}: no chosen policy's schedule changes with it "
                                  "(add one that reads it, e.g. dbf for deadline_fraction)")
        raise ExperimentError(f"sweep parameter {sweep_param!r}: none of the chosen policies has it")
    shared = shared_workload_settings(planned)
    if shared:
        for plan in planned:   # "dbf (deadline_fraction=0.4)" for every run says nothing: the experiment says it once
            plan.label = api.resolve_policy(plan.policy).label_without(shared)
    return planned


def sweeps_change(param: str, stored: dict[str, Any]) -> bool:
    """Whether the stored policy's schedule can change with ``param`` (see plan_runs)."""
    spec = api.resolve_policy({k: v for k, v in stored.items() if k != "_label"})
    return bool(api.schedule_depends_on(param, spec))


def shared_workload_settings(planned: list[PlannedRun]) -> dict[str, Any]:
    """Workload options (engine registry) set to the same non-default value in every planned run."""
    shared = {}
    for option in api.workload_options():
        name = option["name"]
        values = {repr(plan.policy["params"].get(name)) for plan in planned}
        value = planned[0].policy["params"].get(name) if planned else None
        if len(values) == 1 and value is not None and value != option["default"]:
            shared[name] = value
    return shared


def create_experiment(
    owner: Any, *, name: str, trace: Trace, procs: int | None, machine: Machine | None,
    policies: list[Any], allocation: str = "count", exact_estimates: bool = False, seed: int = 0,
    sweep_param: str = "", sweep_values: list[Any] | None = None, shared: bool = False, description: str = "",
    load_factor: float = 1.0, days: str = "", with_recorded: bool = False, paper: str = "",
) -> Experiment:
    """Validate everything first, then create the experiment and its runs in one transaction and
    queue one task per run once it commits. Raises ExperimentError; nothing is stored then.

    ``with_recorded``: put the recorded run (what really happened, preset ``recorded``) first, when
    the trace records start times and the arrivals are not rescaled (load factor 1). ``paper``: the
    reproduce-a-paper preset it comes from (its result page holds the runs against the paper's claims)."""
    size = checked_setup(trace, procs, machine, allocation)
    paper = checked_paper(paper)
    if len(policies) * max(1, len(sweep_values or [])) > limits_of(owner).max_runs_per_experiment:
        checked_room(owner, len(policies) * max(1, len(sweep_values or [])))  # refused before resolving them all
    planned = plan_runs(policies, sweep_param, sweep_values)
    load_factor = checked_load_factor(load_factor)
    if with_recorded and load_factor == 1.0:
        planned = with_recorded_run(trace, planned)
    days = checked_days(days)
    checked_room(owner, len(planned))
    with transaction.atomic():
        experiment = Experiment.objects.create(
            owner=owner, name=name or default_name(trace, planned, load_factor, days),
            description=description, shared=shared, trace=trace, machine=machine, procs=size,
            allocation=allocation, exact_estimates=exact_estimates, seed=seed,
            sweep_param=sweep_param if sweep_values else "", sweep_values=sweep_values or [], days=days,
            paper=paper,
        )
        add_runs(experiment, planned, load_factor)
    return experiment


def checked_paper(key: str) -> str:
    """``key`` when it names a reproduce-a-paper preset that makes an experiment (not a study or a
    preview); ExperimentError naming the ones that do otherwise; "" stays ""."""
    key = str(key or "").strip()
    if key and key not in experiment_presets():
        raise ExperimentError(f"field paper: {key!r} is not a reproduce-a-paper preset of an experiment; "
                              f"choose from {', '.join(experiment_presets())}")
    return key


def add_runs(experiment: Experiment, planned: list[PlannedRun], load_factor: float = 1.0) -> None:
    """The planned runs, in order, queued for the fair dispatcher once the transaction commits."""
    Run.objects.bulk_create(
        Run(experiment=experiment, position=position, label=with_load(plan.label, load_factor)[:300],
            policy=plan.policy, sweep_value=plan.sweep_value, load_factor=load_factor, queues=plan.queues)
        for position, plan in enumerate(planned))
    dispatch_later()


def checked_room(owner: Any, count: int) -> None:
    """ExperimentError unless `count` more runs fit in the owner's limits (webapp.quotas)."""
    try:
        check_new_runs(owner, count)
    except QuotaExceeded as e:
        raise ExperimentError(str(e)) from None


def with_recorded_run(trace: Trace, planned: list[PlannedRun]) -> list[PlannedRun]:
    """``planned`` with the recorded run first, if the trace records start times and it is not there."""
    if not (trace.summary or {}).get("recorded_starts") or any(p.policy["preset"] == "recorded" for p in planned):
        return planned
    recorded = resolve_policy("recorded")
    return [PlannedRun(recorded.pop("_label"), recorded), *planned]


def default_name(trace: Trace, planned: list[PlannedRun], load_factor: float, days: str) -> str:
    """ "CTC: easy, conservative, dbf (deadline_fraction=0.4; days 0:30)": runs and what they all share."""
    labels = list(dict.fromkeys(p.label for p in planned))
    runs = ", ".join(labels[:6]) + (f" and {len(labels) - 6} more" if len(labels) > 6 else "")
    simulated = [p for p in planned if p.policy["preset"] != "recorded"]   # the recording has no workload options
    shared = [f"{k}={v}" for k, v in shared_workload_settings(simulated).items()]
    shared += [f"load ×{load_factor:g}"] if load_factor != 1.0 else []
    shared += [f"days {days}"] if days else []
    return (f"{trace.name}: {runs}" + (f" ({'; '.join(shared)})" if shared else ""))[:200]


def checked_setup(trace: Trace, procs: int | None, machine: Machine | None, allocation: str) -> int:
    """Check the trace is ready and the allocation rule known; the machine size to simulate."""
    if not trace.is_ready:
        raise ExperimentError(f"trace “{trace.name}” is not ready ({trace.status})")
    if allocation not in Experiment.Allocation.values:
        raise ExperimentError(f"allocation must be one of {', '.join(Experiment.Allocation.values)}")
    size = machine.procs if machine is not None else (procs or trace.procs)
    if not size or size < 1:
        raise ExperimentError("machine size unknown: give a number of processors or a machine")
    return size


def checked_load_factor(value: Any) -> float:
    """A load factor from a form or the API as a positive float, or ExperimentError."""
    try:
        return api.check_load_factor(1.0 if value in (None, "") else value)
    except api.WorkloadError as e:
        raise ExperimentError(api.error_line(e)) from None


def checked_days(text: str | None) -> str:
    """A time window "FROM:TO" (days from the first submit, either side may be empty) normalised, or
    ExperimentError; "" = the whole trace."""
    if not text or not text.strip():
        return ""
    try:
        low, high = api.parse_days(text.strip())
    except api.WorkloadError as e:
        raise ExperimentError(api.error_line(e).replace("--days", "time window")) from None
    return f"{low:g}:{'' if high == math.inf else f'{high:g}'}"


def with_load(label: str, load_factor: float) -> str:
    """A run's label, naming the load factor when the trace is replayed faster or slower."""
    return label if load_factor == 1.0 else f"{label} @ load ×{load_factor:g}"


def cancel_run(run: Run) -> str:
    """A queued run is cancelled at once; a running one's task is revoked (webapp.experiments.stopping),
    or stops at its next should_stop check where the worker's pool cannot end it.
    Returns what happened: "cancelled", "stopping", or "ended" (it had already ended)."""
    if Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).update(
        status=Run.Status.CANCELLED, cancel_requested=True, finished_at=timezone.now(), error="cancelled before it started"
    ):
        if run.dispatched_at is not None:
            dispatch_later()  # it held a slot
        return "cancelled"
    return "stopping" if stop_running(Run.objects.filter(pk=run.pk)) else "ended"


def rerun(run: Run) -> bool:
    """Queue a finished (done, failed or cancelled) run again from scratch."""
    with transaction.atomic():
        again = Run.objects.filter(pk=run.pk, status__in=Run.FINAL).update(
            status=Run.Status.QUEUED, progress=0.0, error="", summary=None, cancel_requested=False,
            attempts=0, resends=0, task_id="", started_at=None, heartbeat_at=None, finished_at=None,
            queued_at=timezone.now(), dispatched_at=None,
        )
        if again:
            remove_results(run)
            dispatch_later()
    return bool(again)


def delete_experiment(experiment: Experiment) -> None:
    runs = list(experiment.runs.all())
    for run in runs:
        cancel_run(run)
    experiment.delete()
    for run in runs:
        remove_results(run)


#: The summary metrics the CSV exports hold, in order (then one column per reason jobs were left out).
METRIC_COLUMNS = ["jobs", "rejected_total", "mean_wait", "median_wait", "p95_wait", "max_wait", "mean_response",
                  "mean_bsld", "p95_bsld", "max_bsld", "max_stretch", "weighted_turnaround", "mean_abs_skip",
                  "max_skip", "utilization", "makespan", "throughput", "jain_bsld", "wall_seconds"]


def rejection_reasons(summaries: list[dict[str, Any] | None]) -> list[str]:
    """Every reason some run left jobs out for (the runs' own window), in first-seen order."""
    return list(dict.fromkeys(reason for summary in summaries for reason in ((summary or {}).get("rejected") or {})))


def metric_headings(reasons: list[str]) -> list[str]:
    """The export's metric columns: each metric's name and raw unit, then one column per reason."""
    return [api.metric_heading(code) for code in METRIC_COLUMNS] + [f"Left out: {reason} (jobs)" for reason in reasons]


def metric_cells(summary: dict[str, Any] | None, reasons: list[str]) -> list[Any]:
    """One run's raw values under :func:`metric_headings` (empty before it is done)."""
    if not summary:
        return [""] * (len(METRIC_COLUMNS) + len(reasons))
    rejected = summary.get("rejected") or {}
    return [_cell(summary.get(code)) for code in METRIC_COLUMNS] + [rejected.get(reason, 0) for reason in reasons]


def _cell(value: Any) -> Any:
    return "" if value is None else value


#: The metrics the experiment page shows for each run (names and units from engine.metrics.units).
PAGE_METRICS = ("jobs", "mean_wait", "mean_bsld", "utilization")


def shown_metrics(summary: dict[str, Any] | None) -> dict[str, str]:
    """The page's metrics of one run as people read them (``8.4 h``, ``58.6 %``); empty before it is done."""
    if not summary:
        return {}
    return {code: api.metric_text(code, summary.get(code)) for code in PAGE_METRICS}


def time_left_text(run: Run, place: Estimate | None = None) -> str:
    """"about 4 min 10 s left" for a running run (at its pace so far); for a queued one its place in
    the server's queue and expected start (`place`, from :func:`queue_places`); else ""."""
    if run.status == Run.Status.QUEUED:
        if run.dispatched_at is not None:
            return "next: a slot is free, waiting for the worker"
        if place is None:
            return ""
        where = "next in the queue" if place.position == 0 else f"{ordinal(place.position + 1)} in the queue"
        return f"{where}, starts in about {api.countdown_text(place.starts_in)}" if place.starts_in >= 1 \
            else f"{where}, starts now"
    return progress_text(run.status, run.progress, run.started_at)


def queue_places(runs: list[Run]) -> dict[int, Estimate]:
    """Place in the server's fair queue and expected start of each of `runs` that waits for a slot."""
    return estimates(r.pk for r in runs if r.status == Run.Status.QUEUED and r.dispatched_at is None)


def progress_payload(experiment: Experiment) -> dict[str, Any]:
    listed = list(experiment.runs.all())
    places = queue_places(listed)
    runs = [
        {"id": r.pk, "label": r.label, "policy": r.policy, "sweep_value": r.sweep_value,
         "load_factor": r.load_factor, "status": r.status,
         "progress": round(r.progress, 4), "percent": int(r.progress * 100) if r.status != "done" else 100,
         "time_left": time_left_text(r, places.get(r.pk)),
         "queue_position": places[r.pk].position + 1 if r.pk in places else None,
         "starts_in_seconds": round(places[r.pk].starts_in) if r.pk in places else None,
         "error": r.error, "attempts": r.attempts, "cancel_requested": r.cancel_requested,
         "summary": r.summary, "shown": shown_metrics(r.summary)}
        for r in listed
    ]
    return {"id": experiment.pk, "name": experiment.name, "trace": experiment.trace_id, "procs": experiment.procs,
            "finished": all(r["status"] in Run.FINAL for r in runs), "runs": runs}


def results_bytes_of(user: Any) -> int:
    """The results of the user's runs, in bytes (webapp.quotas meter)."""
    return sum(tree_size(media_path(f"runs/{pk}"))
               for pk in Run.objects.filter(experiment__owner=user).values_list("pk", flat=True))


def run_counts_of(user: Any) -> tuple[int, int]:
    """(queued, running) runs of the user (webapp.quotas counter)."""
    runs = Run.objects.filter(experiment__owner=user)
    return runs.filter(status=Run.Status.QUEUED).count(), runs.filter(status=Run.Status.RUNNING).count()
