"""A reconfiguration preview is an experiment (webapp.experiments) whose runs share one machine of
clusters and differ in the queue configuration:

* recorded: the schedule as it happened (when the trace records start times), the baseline the
  others are held against (engine.metrics.fidelity);
* current: the current queue configuration under the chosen policy — by default inferred from the
  trace (engine.platform.infer), as is the machine when none is chosen;
* proposed: the proposed configuration under the same policy;
* counterpart: the proposed configuration under the other fair-share (CPU-only <-> multi-resource),
  for the paper's Figs. 8–9.

A sweep makes one current, proposed and counterpart run per value. The runs are queued, computed,
cancelled, re-run and reconciled as every experiment's are; this module plans them and reads them back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from django.db import transaction
from django.db.models import Sum
from django.db.models.functions import Length

from engine.api import (
    EXEC_HOSTS,
    InferredConfiguration,
    Machine,
    Workload,
    WorkloadError,
    by_queue,
    check_pools,
    error_line,
    fidelity,
    has_recorded_starts,
    infer_configuration,
    parse_machines,
    parse_queue_config,
    trace_time_zone,
    user_changes,
)
from webapp.dashboards.data import trace_time_axis
from webapp.experiments.models import CURRENT, PROPOSED, Experiment, Run
from webapp.experiments.services import (
    ExperimentError,
    PlannedRun,
    add_runs,
    checked_days,
    checked_room,
    plan_runs,
    rerun,
    with_recorded_run,
)
from webapp.preview.models import INFERRED_LABEL, POLICIES, Preview, SitePreview

RECORDED = "recorded"
COUNTERPART = "counterpart"
DAY = 86_400


class PreviewError(ValueError):
    """A preview that cannot be made as asked, with a message naming the file, line and field."""


@dataclass
class Texts:
    """A preview's machine and configurations: (name, text) each; an empty text is inferred from the trace."""

    machine: tuple[str, str]
    current: tuple[str, str]
    proposed: tuple[str, str]


@dataclass
class Setup:
    """What every run of a preview shares besides its configuration."""

    policy: str
    params: dict[str, Any] = field(default_factory=dict)
    days: str = ""
    sweep_param: str = ""
    sweep_values: list[Any] = field(default_factory=list)


def create_preview(owner: Any, *, name: str, trace: Any, texts: Texts, setup: Setup, shared: bool = False) -> Preview:
    """Check everything, infer what is to be inferred, then store the experiment, its preview and its
    runs in one transaction (queued once it commits). Raises PreviewError; nothing is stored then."""
    machine_name, machine_text = texts.machine
    current_name, current_text = texts.current
    proposed_name, proposed_text = texts.proposed
    if not machine_text or not current_text or not proposed_text:
        given = checked_machine(machine_name, machine_text) if machine_text else None
        found = inferred_from(trace, given)
        if not found.queues:
            raise PreviewError("the trace records no start times: no configuration can be inferred from it")
        if not machine_text:
            if found.machine is None:
                raise PreviewError("the trace records no hosts its jobs ran on: choose a machine description")
            machine_text = found.machine_yaml()
        current_text = current_text or found.queues_yaml()
        proposed_text = proposed_text or found.queues_yaml()
    cores = checked_texts(machine_name, machine_text, [(current_name, current_text), (proposed_name, proposed_text)])
    try:
        days = checked_days(setup.days)
        planned = preview_runs(trace, setup)
        checked_room(owner, len(planned))
    except ExperimentError as error:
        raise PreviewError(str(error)) from None
    with transaction.atomic():
        experiment = Experiment.objects.create(
            owner=owner, name=name, shared=shared, trace=trace, procs=cores, days=days,
            sweep_param=setup.sweep_param if setup.sweep_values else "", sweep_values=setup.sweep_values)
        preview = Preview.objects.create(
            experiment=experiment, machine_name=machine_name, machine_text=machine_text, current_name=current_name,
            current_text=current_text, proposed_name=proposed_name, proposed_text=proposed_text,
            policy=setup.policy)
        add_runs(experiment, planned)
    return preview


def checked_machine(name: str, text: str) -> Machine:
    try:
        return parse_machines(text, source=name)
    except WorkloadError as error:
        raise PreviewError(error_line(error)) from None


def checked_texts(machine_name: str, machine_text: str, configurations: list[tuple[str, str]]) -> int:
    """The machine's cores, once the machine and every configuration read and name only its clusters."""
    machine = checked_machine(machine_name, machine_text)
    try:
        for name, text in configurations:
            check_pools(parse_queue_config(text, source=name), [c.name for c in machine.clusters])
    except WorkloadError as error:
        raise PreviewError(error_line(error)) from None
    return machine.cores


def preview_runs(trace: Any, setup: Setup) -> list[PlannedRun]:
    """recorded (when the trace has it), then per policy (and swept value): current and proposed under
    the chosen fair-share, proposed under the other one (the counterpart)."""
    policies = [{"preset": preset, "params": dict(setup.params)} for preset in (setup.policy, POLICIES[setup.policy])]
    planned = []
    for plan in plan_runs(policies, setup.sweep_param, setup.sweep_values):
        sides = (CURRENT, PROPOSED) if plan.policy["preset"] == setup.policy else (PROPOSED,)
        planned += [PlannedRun(f"{side}: {plan.label}", plan.policy, plan.sweep_value, side) for side in sides]
    return with_recorded_run(trace, planned)


def change_proposal(preview: Preview, name: str, text: str) -> int:
    """Run the proposed side again under a new proposed configuration (the current runs stay as they
    are). Refused while a proposed run is unfinished. Returns how many runs were queued again."""
    checked_texts(preview.machine_name, preview.machine_text, [(name, text)])
    runs = idle_proposed_runs(preview.experiment)
    with transaction.atomic():
        Preview.objects.filter(pk=preview.pk).update(proposed_name=name, proposed_text=text)
        preview.proposed_name, preview.proposed_text = name, text
        queued = sum(rerun(run) for run in runs)
    return queued


def idle_proposed_runs(experiment: Experiment) -> list[Run]:
    """The experiment's proposed runs, to be run again under a new proposal: PreviewError naming the
    first one still unfinished (a proposal never changes under a running run)."""
    runs = list(experiment.runs.filter(queues=PROPOSED))
    busy = [run.label for run in runs if not run.is_final]
    if busy:
        raise PreviewError(f"{busy[0]} is still running: wait for it or cancel it first")
    return runs


def copy_with_proposal(preview: Preview, owner: Any, name: str, text: str) -> Preview:
    """A new preview like ``preview`` (same trace, machine, current configuration and runs' settings)
    with another proposed configuration."""
    experiment = preview.experiment
    proposed_run = experiment.runs.filter(queues=PROPOSED).first()
    params = dict((proposed_run.policy or {}).get("params", {})) if proposed_run else {}
    if experiment.sweep_param:
        params.pop(experiment.sweep_param, None)
    return create_preview(
        owner, name=f"{experiment.name}: {name}"[:190], trace=experiment.trace, shared=experiment.shared,
        texts=Texts((preview.machine_name, preview.machine_text), (preview.current_name, preview.current_text),
                    (name, text)),
        setup=Setup(preview.policy, params, experiment.days, experiment.sweep_param, list(experiment.sweep_values)))


# -- reading a preview back -------------------------------------------------------------------------


@dataclass
class Side:
    """The runs one comparison of a preview reads: one sweep value's current, proposed and counterpart."""

    runs: dict[str, Run]
    value: Any = None

    @property
    def done(self) -> bool:
        return all(run.status == Run.Status.DONE for run in self.runs.values())


def sweep_values(preview: Preview) -> list[Any]:
    return list(preview.experiment.sweep_values) if preview.experiment.sweep_param else [None]


def side_of(preview: Preview, runs: list[Run], value: Any = None) -> Side:
    """The recorded run and the current / proposed / counterpart runs of the swept ``value``."""
    chosen: dict[str, Run] = {}
    for run in runs:
        preset = (run.policy or {}).get("preset")
        if preset == RECORDED:
            chosen[RECORDED] = run
        elif run.sweep_value == value or not preview.experiment.sweep_param:
            key = run.queues if preset == preview.policy else COUNTERPART
            chosen.setdefault(key, run)
    return Side(chosen, value)


def schedules(side: Side) -> dict[str, pd.DataFrame]:
    """The stored schedules of a finished side, by run name (OSError when a file is missing)."""
    return {name: run.load_schedule() for name, run in side.runs.items()}


def results(preview: Preview, side: Side, frames: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """What the admin reads first: fidelity of 'current', recorded / current / proposed per trace queue,
    the users who gain and lose most, and each configuration's own queues."""
    trace = preview.experiment.trace
    workload = trace.workload()
    machine = preview.machine()
    summaries = {name: run.summary or {} for name, run in side.runs.items()}
    current, proposed = summaries.get(CURRENT, {}), summaries.get(PROPOSED, {})
    names = sorted(set(current.get("per_queue", {})) | set(proposed.get("per_queue", {})))
    rows = [{"queue": name, "current": current.get("per_queue", {}).get(name),
             "proposed": proposed.get("per_queue", {}).get(name)} for name in names]
    compared = {k: frames[k] for k in (RECORDED, CURRENT, PROPOSED) if k in frames}
    return {
        "rows": rows, "summaries": summaries, "recorded": summaries.get(RECORDED),
        "fidelity": fidelity(frames[RECORDED], frames[CURRENT], capacity=machine.cores) if RECORDED in frames else None,
        "changes": by_queue(compared, trace_queues(workload)), "users": user_changes(compared),
        "time_zone": trace.zone() or trace_time_zone(workload)[1],
        "clusters": {c.name: c.total_cores for c in machine.clusters},
    }


def window_dates(preview: Preview) -> tuple[str, str] | None:
    """The time window ("FROM:TO" days from the first submit) as the trace's dates, or None (whole trace)."""
    days = preview.experiment.days
    if not days:
        return None
    low, _, high = days.partition(":")
    trace = preview.experiment.trace
    jobs = trace.workload().jobs
    first = float(jobs["submit"].min()) if len(jobs) else 0.0
    axis = trace_time_axis(trace, {"trace": jobs})
    return (axis.text(first + float(low or 0) * DAY),
            axis.text(first + float(high) * DAY) if high else "the end of the trace")


def trace_queues(workload: Workload) -> pd.Series:
    """job_id -> the queue the trace gives the job (its name where the trace names queues)."""
    jobs = workload.jobs
    names = jobs["queue_name"] if "queue_name" in jobs else jobs["queue"].astype(str)
    return pd.Series(names.astype(str).to_numpy(), index=jobs["job_id"].to_numpy())


def inferred_from(trace: Any, machine: Machine | None = None) -> InferredConfiguration:
    """What ``trace``'s recorded schedule shows (engine.platform.infer) on ``machine`` (None: inferred
    too, from the hosts its jobs ran on), named after the trace."""
    found = infer_configuration(trace.workload(), machine)
    found.source = trace.name
    return found


def inference_problem(trace: Any, *, queues: bool, machine: bool) -> str | None:
    """Why a configuration / machine cannot be inferred from ``trace`` (None when it can)."""
    try:
        workload = trace.workload()
    except (WorkloadError, OSError) as error:
        return f"cannot read the trace: {error}"
    if not has_recorded_starts(workload):
        return "this trace records no start times (SWF wait field -1): nothing to infer; choose a configuration"
    if queues and "queue_name" not in workload.jobs:
        return "this trace names no queues: choose a configuration"
    if machine and (EXEC_HOSTS not in workload.jobs or not (workload.jobs[EXEC_HOSTS].astype(str) != "").any()):
        return "this trace records no hosts its jobs ran on: choose a machine description"
    return None


def inferred_texts(preview: Preview) -> list[tuple[str, str, str]]:
    """(kind, label, text) of what was inferred from the trace (shown with its evidence, editable)."""
    return [(kind, label, text) for kind, label, name, text in (
        ("queues", "queue configuration", preview.current_name, preview.current_text),
        ("machine", "machine description", preview.machine_name, preview.machine_text)) if name == INFERRED_LABEL]


def disk_bytes_of(user: Any) -> int:
    """The user's previews' texts, in bytes (webapp.quotas meter); their runs' results are counted with
    every run's (the experiments app's meter)."""
    texts = Preview.objects.filter(experiment__owner=user).aggregate(
        n=Sum(Length("machine_text")) + Sum(Length("current_text")) + Sum(Length("proposed_text")))
    sites = SitePreview.objects.filter(experiment__owner=user).values_list("current", "proposed")
    return (texts["n"] or 0) + sum(len(text) for files in sites for side in files for text in side.values())
