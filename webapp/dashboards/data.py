"""Read-only helpers over the platform's models: what the dashboards need, loaded once.

Schedules of finished runs are immutable, so they are kept in a small in-process cache keyed by
run id and finish time (a re-run gets a new finish time).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from django.contrib.staticfiles import finders

from engine.api import fidelity, human_seconds, number_text, percent_text, recording_check, summarize_schedule
from webapp.allocations.services import with_allocations
from webapp.dashboards.comparison import Comparison
from webapp.core.time_axis import TimeAxis
from webapp.experiments.models import AT_SWEEP_VALUES, Experiment, Run

CACHED_SCHEDULES = 8
_cache: OrderedDict[tuple, pd.DataFrame] = OrderedDict()
_cache_lock = threading.Lock()


def cached_schedule(run: Run) -> pd.DataFrame:
    key = (run.pk, run.finished_at.isoformat() if run.finished_at else "")
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    schedule = run.load_schedule()
    with _cache_lock:
        _cache[key] = schedule
        while len(_cache) > CACHED_SCHEDULES:
            _cache.popitem(last=False)
    return schedule


def unique_labels(runs: list[Run]) -> list[str]:
    """Run labels, made unique with the run id where two runs share one (legends need distinct names)."""
    labels = [run.label or f"run {run.pk}" for run in runs]
    return [f"{label} (#{run.pk})" if labels.count(label) > 1 else label for label, run in zip(labels, runs)]


def _why_missing(run: Run, label: str) -> str:
    if run.status == Run.Status.FAILED:
        return f"{label} failed" + (f" ({run.error.splitlines()[0][:120]})" if run.error else "")
    return f"{label} is {run.status}"


@dataclass(frozen=True)
class JobSets:
    """Whether runs picked from several experiments simulate the same jobs, and if not, how they differ."""

    differences: list[str]      # each setting that differs, in words, naming the runs
    counts: dict[str, int]      # jobs simulated, per run label
    common: int                 # jobs (by job id) every run simulated

    @property
    def differ(self) -> bool:
        return bool(self.differences) or any(count != self.common for count in self.counts.values())

    def message(self) -> str:
        """The warning the comparison shows (empty when the runs simulate the same jobs)."""
        if not self.differ:
            return ""
        counts = ", ".join(f"{number_text(n)} in “{label}”" for label, n in self.counts.items())
        why = "; ".join(self.differences) or "their cleaning left out different jobs"
        if not self.common:
            return f"These runs share no job ({why}; jobs: {counts}): there is nothing to compare job for job."
        return (f"These runs do not simulate the same jobs ({why}; jobs: {counts}). The metrics and plots "
                f"below compare the {number_text(self.common)} jobs every run has.")


def run_settings(run: Run) -> dict[str, str]:
    """What decides which jobs a run simulates, and when they arrive, in words."""
    experiment, params = run.experiment, (run.policy or {}).get("params") or {}
    cleaning = []
    if params.get("drop_interactive") in (True, "true", "True"):
        cleaning.append("interactive queues dropped")
    if (run.policy or {}).get("preset") == "recorded":
        cleaning.append("only jobs with a recorded start")
    return {"window": f"days {experiment.days}" if experiment.days else "the whole trace",
            "load": f"load ×{run.load_factor:g}",
            "cleaning": ", ".join(cleaning) or "jobs as cleaned at upload",
            "machine": f"{experiment.procs:,} processors"}


def job_sets(runs: list[tuple[str, Run]], schedules: dict[str, pd.DataFrame]) -> JobSets:
    """Compare the done runs' settings (window, load, cleaning, machine size) and their job ids."""
    settings = {label: run_settings(run) for label, run in runs}
    differences = []
    for key in ("window", "load", "cleaning", "machine"):
        values: dict[str, list[str]] = {}
        for label, shown in settings.items():
            values.setdefault(shown[key], []).append(f"“{label}”")
        if len(values) > 1:
            differences.append(" vs ".join(f"{value} for {', '.join(names)}" for value, names in values.items()))
    ids = [set(schedule["job_id"].tolist()) for schedule in schedules.values()]
    common = set.intersection(*ids) if ids else set()
    return JobSets(differences, {label: len(s) for label, s in schedules.items()}, len(common))


def common_jobs(schedules: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each schedule restricted to the job ids every schedule has (the cached frames are left alone)."""
    ids = [set(schedule["job_id"].tolist()) for schedule in schedules.values()]
    common = sorted(set.intersection(*ids)) if ids else []
    return {label: s[s["job_id"].isin(common)].reset_index(drop=True) for label, s in schedules.items()}


def is_recorded(run: Run) -> bool:
    return (run.policy or {}).get("preset") == "recorded"


def unusable_baselines(done: list[tuple[str, Run]], schedules: dict[str, pd.DataFrame],
                       capacity: int) -> dict[str, str]:
    """Runs that cannot be the metrics baseline, with why in words: a recording the machine cannot
    have produced (more work above its capacity than log rounding explains, e.g. 211 % utilization),
    or any run whose utilization is above 100 %."""
    unusable: dict[str, str] = {}
    for label, run in done:
        use = (run.summary or {}).get("utilization")
        if is_recorded(run) and label in schedules:
            check = recording_check(schedules[label], capacity)
            if not check["fits"]:
                unusable[label] = (f"not a schedule of this machine: it holds {number_text(check['peak_procs'])} "
                                   f"processors at once on {number_text(capacity)}")
                continue
        if isinstance(use, (int, float)) and use > 1.0 + 1e-9:
            unusable[label] = f"its utilization ({percent_text(use)}) is above 100 %, which no schedule of this machine has"
    return unusable


def choose_baseline(labels: list[str], unusable: dict[str, str], requested: str | None = None) -> str:
    """The requested run when it can be a baseline, else the first run that can ("" when none can)."""
    usable = [label for label in labels if label not in unusable]
    if requested in usable:
        return str(requested)
    return usable[0] if usable else ""


@dataclass(frozen=True)
class TableRuns:
    """What the metrics table compares: the runs' schedules over the jobs they all have, their summaries
    over those jobs, a sentence when the job sets differ, and the runs that cannot be the baseline."""

    schedules: dict[str, pd.DataFrame]
    summaries: dict[str, dict]
    jobs_note: str
    unusable: dict[str, str]


def own_jobs_note(counts: dict[str, int], common: int) -> str:
    """How the job sets of one experiment's runs differ (e.g. a recorded run keeps the interactive jobs a
    policy's cleaning dropped), and what the table compares instead."""
    groups: dict[int, list[str]] = {}
    for label, n in counts.items():
        groups.setdefault(n, []).append(f"“{label}”")
    shown = "; ".join(f"{number_text(n)} in {', '.join(names)}" for n, names in groups.items())
    if not common:
        return f"These runs share no job ({shown}): there is nothing to compare job for job."
    return (f"These runs do not simulate the same jobs ({shown}). The metrics and plots compare the "
            f"{number_text(common)} jobs every run has; {number_text(max(counts.values()) - common)} are left out.")


def comparable_runs(done: list[tuple[str, Run]], capacity: int, *, cross: bool) -> TableRuns:
    """The done runs made comparable (see TableRuns): stored summaries when every run has the same jobs,
    else each schedule cut to the common jobs and summarized again, so that every figure of the table
    (and of the fidelity table) is over the same jobs."""
    full = {label: cached_schedule(run) for label, run in done}
    unusable = unusable_baselines(done, full, capacity)
    if cross:
        sets = job_sets(done, full)
        differ, note = sets.differ, sets.message()
    else:
        ids = [frozenset(schedule["job_id"].tolist()) for schedule in full.values()]
        common = frozenset.intersection(*ids) if ids else frozenset()
        differ = any(len(i) != len(common) for i in ids)
        note = own_jobs_note({label: len(s) for label, s in full.items()}, len(common)) if differ else ""
    if not differ:
        return TableRuns(full, {label: run.summary or summarize_schedule(full[label], capacity)
                                for label, run in done}, "", unusable)
    schedules = common_jobs(full)
    summaries = ({label: summarize_schedule(s, capacity) for label, s in schedules.items()}
                 if any(len(s) for s in schedules.values()) else {})
    return TableRuns(schedules, summaries, note, unusable)


def load_comparison(experiment: Experiment, runs: list[Run] | None = None) -> Comparison:
    """Done runs as a Comparison (the others are listed in `missing` with why): the experiment's own
    runs, or ``runs`` of any experiments on its trace (then no sweep); machine, allocation rule and
    allocations come from ``experiment``."""
    own = runs is None
    runs = list(experiment.runs.order_by("position", "pk")) if runs is None else runs
    labels = unique_labels(runs)
    done = [(label, run) for label, run in zip(labels, runs) if run.status == Run.Status.DONE]
    table = comparable_runs(done, int(experiment.procs), cross=not own)
    schedules, summaries = table.schedules, table.summaries
    missing = [_why_missing(run, label) for label, run in zip(labels, runs) if run.status != Run.Status.DONE]
    series, baselines, derived = sweep_series(experiment, runs, labels) if own else ({}, {}, {})
    schedules, targets = with_allocations(experiment, schedules)
    return Comparison(
        schedules=schedules, capacity=int(experiment.procs), summaries=summaries,
        busy_column="alloc" if experiment.allocation == Experiment.Allocation.BUDDY else "procs",
        sweep_parameter=experiment.sweep_param if series else "", sweep_values=list(experiment.sweep_values or []),
        sweep_series=series, sweep_baselines=baselines, sweep_derived=derived, missing=missing, targets=targets,
        time_axis=trace_time_axis(experiment.trace, schedules), table_css=table_css(),
        baseline=choose_baseline(list(schedules), table.unusable), unusable=table.unusable,
    )


#: Trace formats that are a site's accounting log: their users ask how close the runs are to what
#: happened, so the fidelity table comes first; for an archive trace (SWF) it is a footnote.
ACCOUNTING_LOG_FORMATS = frozenset({"pbs", "slurm"})


def fidelity_table(experiment: Experiment, runs: list[Run], labels: list[str],
                   schedules: dict[str, pd.DataFrame] | None = None) -> dict[str, Any] | None:
    """Each finished simulated run against the finished recorded run (engine.metrics.fidelity), as the
    rows of one compact table; None without a recorded run. ``schedules``: the runs cut to the jobs they
    all have (the metrics table's), so both tables describe the same jobs."""
    done = [(label, run) for label, run in zip(labels, runs) if run.status == Run.Status.DONE]
    recorded = [(label, run) for label, run in done if is_recorded(run)]
    if not recorded:
        return None
    label, run = recorded[0]

    def schedule(label: str, run: Run) -> pd.DataFrame:
        return schedules[label] if schedules and label in schedules else cached_schedule(run)

    reference = schedule(label, run)
    figures = {other_label: fidelity(reference, schedule(other_label, other), capacity=int(experiment.procs))
               for other_label, other in done if other is not run}
    return fidelity_view(label, figures, prominent=experiment.trace.format in ACCOUNTING_LOG_FORMATS)


def fidelity_view(recorded: str, figures: dict[str, dict[str, Any]], *, prominent: bool = True) -> dict[str, Any]:
    """What templates/_fidelity.html shows: one row per simulated run, one sentence about the recording
    itself when the machine cannot have produced it, and whether it is shown first or as a footnote."""
    rows = [fidelity_row(label, values) for label, values in figures.items()]
    check = next((values["recording"] for values in figures.values() if values.get("recording")), None)
    sentence = ""
    if check and not check["fits"]:
        sentence = (f"The recording “{recorded}” is not a schedule of this machine: it holds "
                    f"{number_text(check['peak_procs'])} processors at once on {number_text(check['capacity'])} "
                    f"({percent_text(check['over_capacity_share'])} of its work above the capacity), so no simulation of "
                    "this machine can match it and it is not used as a baseline.")
    return {"recorded": recorded, "rows": rows, "prominent": prominent, "recording_note": sentence,
            "far": sum(row["far"] for row in rows)}


def queue_name(name: str) -> str:
    """A queue as people read it: the trace's "-1" (no queue recorded) in words."""
    return "jobs without a queue" if name in ("-1", "") else name


def fidelity_row(label: str, figures: dict[str, Any]) -> dict[str, Any]:
    """One run's fidelity figures in human units (hours, percent) and its verdict in a few words."""
    overall = figures["overall"]
    rec, sim = overall.get("recorded") or {}, overall.get("simulated") or {}

    def wait(side: dict, key: str) -> str:
        return human_seconds(side[key]) if side.get(key) is not None else "–"

    def share(side: dict) -> str:
        return percent_text(side["utilization"]) if side.get("utilization") is not None else "–"

    rho = overall.get("wait_rank_correlation")
    queues = [queue_name(q) for q in figures["far_queues"]]
    verdict = "; ".join(overall.get("reasons") or []) or "close"
    if queues:
        verdict += f" (far in {', '.join(queues)})" if verdict != "close" else f"; far in {', '.join(queues)}"
    return {"label": label, "jobs": number_text(figures["jobs"]["matched"]), "far": figures["far"],
            "verdict": verdict,
            "mean_wait": f"{wait(sim, 'mean_wait')} vs {wait(rec, 'mean_wait')}",
            "p95_wait": f"{wait(sim, 'p95_wait')} vs {wait(rec, 'p95_wait')}",
            "utilization": f"{share(sim)} vs {share(rec)}", "rank": f"{rho:.2f}" if rho is not None else "–",
            "far_queues": queues}


def trace_time_axis(trace: Any, schedules: dict[str, pd.DataFrame]) -> TimeAxis:
    """The trace's calendar (its header's start time and zone, or epoch submits), else time since start."""
    submits = [float(s["submit"].min()) for s in schedules.values() if len(s)]
    return trace.time_axis(min(submits) if submits else None)


def table_css() -> str:
    """The comparison page's stylesheet, which the self-contained download carries inline."""
    path = finders.find("css/dashboards.css")
    return Path(path).read_text() if path else ""


def sweep_series(experiment: Experiment, runs: list[Run],
                 labels: list[str]) -> tuple[dict[str, list], dict[str, dict], dict[str, list]]:
    """Swept runs grouped by policy preset, and by side in a preview ("slurm (current)"; one summary per
    swept value), the runs not swept, and the figures of runs not swept that were derived at each swept
    value (AT_SWEEP_VALUES: a deadline-share sweep's deadline figures of EASY and conservative, one
    summary per value)."""
    values = list(experiment.sweep_values or [])
    if not experiment.sweep_param or not values:
        return {}, {}, {}
    series: dict[str, list[Any]] = {}
    baselines: dict[str, dict] = {}
    derived: dict[str, list[Any]] = {}
    for label, run in zip(labels, runs):
        if run.sweep_value is None:
            if run.summary:
                baselines[label] = run.summary
                at_values = {repr(entry.get("value")): entry for entry in run.summary.get(AT_SWEEP_VALUES) or []}
                if at_values:
                    derived[label] = [at_values.get(repr(value)) for value in values]
            continue
        preset = str((run.policy or {}).get("preset", label))
        # a preview's current and proposed runs share a preset: each side is its own line
        row = series.setdefault(f"{preset} ({run.queues})" if run.queues else preset, [None] * len(values))
        if run.sweep_value in values and run.status == Run.Status.DONE:
            row[values.index(run.sweep_value)] = run.summary
    return series, baselines, derived
