"""What the comparison page itself computes from the runs' schedules, kept on disk like the plots.

The page's tables (the metrics over the jobs every run has, the runs that cannot be the baseline, the
fidelity table) and its Gantt window take the schedules of every run: reading them (0.3 s for six
CTC-SP2 runs) and the fidelity figures (0.4 s) made the page wait about a second on a quiet machine
before the browser had anything to show. They depend only on the finished runs (and the window on its
two parameters), so they are computed once, when the last run finishes (prebuild_comparison) or on
the first view, and read back (a few ms) afterwards; the key follows the runs (a re-run changes it)
and the code (plot_cache.code_fingerprint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webapp.dashboards import comparison as plots
from webapp.dashboards.data import (
    cached_schedule,
    common_jobs,
    comparable_runs,
    fidelity_table,
    trace_time_axis,
    unique_labels,
)
from webapp.dashboards.plot_cache import cache_key, cached_json, comparison_folder, runs_state
from webapp.experiments.models import Experiment, Run

#: Sub-folder of a comparison's cache folder (the plots' files stay alone beside it).
FOLDER = "page"


@dataclass(frozen=True)
class TableFacts:
    """The metrics table's inputs and the fidelity table, as the page shows them."""

    summaries: dict[str, dict]      # label → summary over the jobs every run has
    jobs_note: str                  # why and how the runs' job sets differ ("" when they do not)
    unusable: dict[str, str]        # runs that cannot be the metrics baseline → why
    fidelity: dict[str, Any] | None  # data.fidelity_table (None without a recorded run)


def _done(runs: list[Run]) -> list[tuple[str, Run]]:
    return [(label, run) for label, run in zip(unique_labels(runs), runs) if run.status == Run.Status.DONE]


def table_facts(experiment: Experiment, runs: list[Run], *, cross: bool) -> TableFacts:
    """data.comparable_runs and data.fidelity_table of ``runs`` (listed in page order), cached."""

    def build() -> dict[str, Any]:
        table = comparable_runs(_done(runs), int(experiment.procs), cross=cross)
        fidelity = fidelity_table(experiment, runs, unique_labels(runs), table.schedules if table.jobs_note else None)
        return {"summaries": table.summaries, "jobs_note": table.jobs_note, "unusable": table.unusable,
                "fidelity": fidelity}

    key = cache_key("table", cross, experiment.trace.format, runs_state(experiment, runs))
    data = cached_json(f"{comparison_folder(experiment, runs, not cross)}/{FOLDER}", "table", key, build)
    return TableFacts(**data)


def window_text(experiment: Experiment, runs: list[Run], params: dict[str, str], *, cross: bool = False) -> dict[str, str]:
    """The Gantt window as the form shows it (dates when the trace has a calendar), and the axis' zone;
    ``cross``: runs of several experiments, whose plots show only the jobs they all have. Cached per
    ``start``/``end`` (the only parameters it reads)."""
    asked = {key: params[key] for key in ("start", "end") if params.get(key)}

    def build() -> dict[str, str]:
        return _window_text(experiment, runs, asked, cross=cross)

    key = cache_key("window", cross, asked, runs_state(experiment, runs))
    return cached_json(f"{comparison_folder(experiment, runs, not cross)}/{FOLDER}", "window", key, build)


def _window_text(experiment: Experiment, runs: list[Run], params: dict[str, str], *, cross: bool) -> dict[str, str]:
    done = [run for run in runs if run.status == Run.Status.DONE]
    if not done:
        return {}
    schedules = {str(run.pk): cached_schedule(run) for run in done}
    if cross:
        schedules = common_jobs(schedules)
    if not any(len(schedule) for schedule in schedules.values()):
        return {}   # no job to draw (runs that share none): no window to offer
    axis = trace_time_axis(experiment.trace, schedules)
    shown = {"zone": axis.tz if axis.calendar else "", "calendar": "yes" if axis.calendar else ""}
    try:
        window = plots.gantt_window(schedules, params, axis)
    except plots.WindowError as e:
        window = plots.gantt_window(schedules, {}, axis)
        return {**shown, "start": axis.text(window.start), "end": axis.text(window.end), "error": str(e)}
    return {**shown, "start": axis.text(window.start), "end": axis.text(window.end)}


def prebuild_page(experiment: Experiment, runs: list[Run]) -> None:
    """Compute and keep the page's own figures of the experiment's runs (page order) with the default window."""
    if any(run.status == Run.Status.DONE for run in runs):
        table_facts(experiment, runs, cross=False)
        window_text(experiment, runs, {})
