"""Replicated comparisons on the web (issue 26): choosing them, fanning their runs out, reading them.

An experiment with replicates keeps its ordinary runs (one per policy on the whole trace: the
schedules, the comparison's plots) and gains a :class:`~webapp.experiments.models.ReplicateSet`:
the engine's plan (engine.api.plan_replicates), one hidden run per replicate (its policies one after
the other, so a shaken copy is drawn once) and, when every one is done, the combined report with the
paired bootstrap intervals and verdicts (engine.api.combine_replicates), cached with the set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from engine import api
from webapp.experiments.models import Experiment, ReplicateSet, Run
from webapp.experiments.replicate_runs import settle, workload_of
from webapp.experiments.services import ExperimentError, cancel_run, checked_room, rerun

#: The kinds of replicates offered, each with the paper it comes from (shown where it is offered).
KINDS: dict[str, tuple[str, str]] = {
    "": ("none: one run per policy on the whole trace", ""),
    "weeks": ("weekly windows: every policy on each week of the trace", ""),
    "windows": ("N equal windows of the trace", ""),
    "shake": ("input shaking: K slightly perturbed copies of the whole trace",
              "Tsafrir, Ouaknine & Feitelson, “Reducing performance evaluation sensitivity and variability by "
              "input shaking”, MASCOTS 2007"),
    "resample": ("user resampling: N traces of whole users' job streams at load F",
                 "Zakay & Feitelson, “Workload resampling for performance evaluation of parallel job "
                 "schedulers”, ICPE 2013"),
}


@dataclass(frozen=True)
class ReplicateChoice:
    """What the form (or the API) asked for."""

    kind: str                      # a key of KINDS other than ""
    count: int | None = None       # N windows, K copies, N resampled traces; None: every week
    load: float = 1.0              # resampling's load (x the trace's offered work)
    warmup: str = "0"              # "2d" or "500j" (engine.api.parse_trim)
    cooldown: str = "0"
    without_flurries: bool = False
    paper: str = ""                # the reproduce-a-paper preset it came from (its claims are judged)
    confirm: int | None = None     # K shaken copies confirming the first set's verdicts ("holds under shaking")

    @property
    def spec(self) -> str:
        """The command line's --replicates for it: "weeks", "windows:8", "shake:10", "resample:20",
        "weeks,shake:10" (confirmed by shaking)."""
        first = self.kind if self.count is None else f"{self.kind}:{self.count}"
        return first if not self.confirm or self.kind == "shake" else f"{first},shake:{self.confirm}"

    def options(self) -> dict[str, Any]:
        return {"load": self.load, "warmup": self.warmup, "cooldown": self.cooldown,
                "without_flurries": self.without_flurries, "paper": self.paper}


def choice_from_json(value: Any) -> ReplicateChoice:
    """The API's "replicates": "weeks" | "shake:10" | {"spec": "resample:20", "load": 1.2, "warmup": "2d",
    "cooldown": "500j", "without_flurries": true}; ExperimentError naming the field otherwise."""
    data = {"spec": value} if isinstance(value, str) else value
    if not isinstance(data, dict) or not isinstance(data.get("spec"), str):
        raise ExperimentError('field replicates: "weeks", "windows:N", "shake:K", "resample:N" or {"spec": ..., '
                              '"load", "warmup", "cooldown", "without_flurries"}')
    unknown = sorted(set(data) - {"spec", "load", "warmup", "cooldown", "without_flurries"})
    if unknown:
        raise ExperimentError(f"field replicates: unknown key {unknown[0]!r}")
    first, _, confirming = data["spec"].strip().partition(",")
    confirm = None
    if confirming:
        copies = confirming.strip().removeprefix("shake:")
        if not confirming.strip().startswith("shake:") or not copies.isdigit():
            raise ExperimentError(f"field replicates: a second set confirms by shaking (shake:K), got {confirming!r}")
        confirm = int(copies)
    kind, _, count = first.partition(":")
    if kind not in KINDS or not kind or (kind != "weeks" and not count) or (count and not count.isdigit()):
        raise ExperimentError(f"field replicates: {data['spec']!r} is not weeks, weeks:N, windows:N, shake:K or resample:N")
    load = data.get("load", 1.0)
    if isinstance(load, bool) or not isinstance(load, (int, float)):
        raise ExperimentError("field replicates.load: a number")
    choice = ReplicateChoice(kind, int(count) if count else None, float(load), str(data.get("warmup", "0")),
                             str(data.get("cooldown", "0")), bool(data.get("without_flurries", False)), confirm=confirm)
    counted_of(choice)
    return choice


def counted_of(choice: ReplicateChoice) -> Any:
    """The warm-up and cool-down as the engine takes them, or ExperimentError naming the field."""
    try:
        return api.Counted(api.parse_trim(choice.warmup or "0", name="warm-up"),
                           api.parse_trim(choice.cooldown or "0", name="cool-down"))
    except api.WorkloadError as e:
        raise ExperimentError(api.error_line(e)) from None


def add_replicates(experiment: Experiment, choice: ReplicateChoice) -> ReplicateSet:
    """Plan the replicates of ``experiment``'s policies (its recorded run left out) and create one
    hidden run per replicate, queued like any run. Call inside the transaction that created the
    experiment; raises ExperimentError (nothing then stored)."""
    if experiment.machine_id:
        raise ExperimentError("replicates run on a number of processors, not on a machine description")
    runs = [r for r in experiment.runs.order_by("position", "pk") if r.policy.get("preset") != "recorded"]
    if len(runs) < 2:
        raise ExperimentError("replicates compare policies: choose at least two")
    if len({r.load_factor for r in runs}) > 1:
        raise ExperimentError("replicates compare policies at one load")
    load = choice.load if choice.kind == "resample" else runs[0].load_factor
    try:
        plan = api.plan_replicates(
            workload_of(experiment.trace), [r.policy for r in runs], choice.spec, names=[r.label for r in runs],
            capacity=experiment.procs, load=load,
            days=api.parse_days(experiment.days) if experiment.days else None, counted=counted_of(choice),
            without_flurries=choice.without_flurries, seed=experiment.seed)
    except api.INPUT_ERRORS as e:
        raise ExperimentError(api.error_line(e).replace("--replicates", "replicates")) from None
    batches = replicate_batches(plan)
    checked_room(experiment.owner, len(batches) + len(runs))
    hidden = Experiment.objects.create(
        owner=experiment.owner, name=f"{experiment.name} (replicates)"[:200], shared=experiment.shared,
        trace=experiment.trace, procs=experiment.procs, allocation=experiment.allocation,
        exact_estimates=experiment.exact_estimates, seed=experiment.seed, days=experiment.days)
    replicates = ReplicateSet.objects.create(experiment=experiment, runs_experiment=hidden, spec=choice.spec,
                                             options=choice.options(), plan=plan)
    Run.objects.bulk_create(
        Run(experiment=hidden, position=position, label=label[:300], policy={"replicate_runs": indices},
            load_factor=load)
        for position, (label, indices) in enumerate(batches.items()))
    return replicates


def replicate_batches(plan: dict[str, Any]) -> dict[str, list[int]]:
    """The plan's run specs grouped by replicate ("weeks #3" -> their indices), in plan order."""
    batches: dict[str, list[int]] = {}
    for index, spec in enumerate(plan["runs"]):
        batches.setdefault(f"{spec['set']} #{spec['replicate'] + 1}", []).append(index)
    return batches


def hidden_experiment_ids() -> Any:
    """The experiments that only hold replicate runs (left out of the experiment list)."""
    return ReplicateSet.objects.values("runs_experiment_id")


# --------------------------------------------------------------------------- reading


def set_progress(replicates: ReplicateSet) -> dict[str, Any]:
    """One bar for the whole set: done/total, the fraction, the time left at the pace so far, and
    the one line of a failure. ``report_ready`` only once the combined report is stored."""
    runs = list(replicates.runs_experiment.runs.only("status", "progress", "started_at", "finished_at"))
    if replicates.report is None and not replicates.error and runs and (
            all(r.is_final for r in runs) or any(r.status == Run.Status.FAILED for r in runs)):
        settle(replicates.runs_experiment_id)   # a worker lost before settling it, or failed by the reconcile step
        replicates.refresh_from_db(fields=["report", "error"])
    total = len(runs)
    done = sum(r.status == Run.Status.DONE for r in runs)
    fraction = sum(1.0 if r.status == Run.Status.DONE else r.progress for r in runs) / total if total else 1.0
    started = [r.started_at for r in runs if r.started_at is not None]
    left = None
    if started and not replicates.error and done < total:
        left = api.time_left(fraction, (timezone.now() - min(started)).total_seconds())
    status = ("failed" if replicates.error else "done" if replicates.report is not None else
              "cancelled" if any(r.status == Run.Status.CANCELLED for r in runs) and all(r.is_final for r in runs)
              else "running" if started else "queued")
    return {"spec": replicates.spec, "status": status, "total": total, "done": done,
            "percent": int(fraction * 100), "fraction": round(fraction, 4),
            "time_left": f"about {api.countdown_text(left)} left" if left is not None else "",
            "error": replicates.error, "report_ready": replicates.report is not None}


def cancel_replicates(replicates: ReplicateSet) -> None:
    for run in replicates.runs_experiment.runs.exclude(status__in=Run.FINAL):
        cancel_run(run)


def retry_replicates(replicates: ReplicateSet) -> int:
    """Queue the failed and cancelled replicate runs again (done ones are kept); clears the set's failure."""
    with transaction.atomic():
        ReplicateSet.objects.filter(pk=replicates.pk).update(error="", report=None)
        runs = replicates.runs_experiment.runs.filter(status__in=(Run.Status.FAILED, Run.Status.CANCELLED))
        return sum(1 for run in runs if rerun(run))
