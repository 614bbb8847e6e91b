"""Planning a study's grid, creating its runs, handing them to the workers, reading results.

Each point is a run of the experiments app: once the rows are committed, the server's fair queue
(webapp.experiments.fairqueue) hands them to free simulation slots, taking turns with other users'
runs (a 66-point study is 66 runs). No chord: each run updates its own row, the study page counts
done/total from the rows, so a failed point never blocks the others and can be re-run alone
(``webapp.experiments.services.rerun``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from webapp.experiments.models import Experiment, Run
from webapp.experiments.services import (
    METRIC_COLUMNS,
    metric_cells,
    metric_headings,
    rejection_reasons,
    ExperimentError,
    checked_load_factor,
    checked_room,
    checked_setup,
    parse_sweep_values,
    queue_places,
    rerun,
    resolve_policy,
    time_left_text,
    with_load,
)
from webapp.experiments.tasks import dispatch_later
from webapp.studies.models import LOAD, Study, StudyPoint
from webapp.traces.models import Machine, Trace

#: More points than this is almost certainly a typo in a value list.
MAX_POINTS = 1000


@dataclass
class PlannedPoint:
    label: str
    policy: dict[str, Any]
    policy_label: str
    coords: dict[str, Any] = field(default_factory=dict)

    @property
    def load_factor(self) -> float:
        return float(self.coords.get(LOAD, 1.0))


def parse_grid(text_by_param: dict[str, str | Iterable[Any]]) -> dict[str, list[Any]]:
    """{"load": "0.5, 1", "masc": "5, 10, inf"} (or lists) → {"load": [0.5, 1], "masc": [5, 10, "inf"]};
    empty value lists are dropped."""
    grid: dict[str, list[Any]] = {}
    for name, values in text_by_param.items():
        name = name.strip()
        parsed = parse_sweep_values(values) if isinstance(values, str) else list(values)
        if name and parsed:
            grid[name] = parsed
    return grid


def plan_points(policies: list[Any], grid: dict[str, list[Any]]) -> list[PlannedPoint]:
    """Every policy × every combination of the grid values that apply to it (``load`` applies to
    all; a policy parameter to the policies that have it and do not set it in their spec, so
    ``{"preset": "sorted", "params": {"masc": "inf"}}`` stays unbounded). Raises ExperimentError."""
    if not policies:
        raise ExperimentError("choose at least one policy")
    if LOAD in grid:
        grid = {**grid, LOAD: [checked_load_factor(v) for v in grid[LOAD]]}
    bases = [resolve_policy(spec) for spec in policies]
    pinned = [set((spec.get("params") or {}) if isinstance(spec, dict) else ()) for spec in policies]
    for name in grid:
        if name != LOAD and not any(name in base["params"] and name not in fixed for base, fixed in zip(bases, pinned)):
            raise ExperimentError(f"grid parameter {name!r}: none of the chosen policies has it")
    planned: list[PlannedPoint] = []
    for base, fixed in zip(bases, pinned):
        names = [n for n in grid if n == LOAD or (n in base["params"] and n not in fixed)]
        for combo in itertools.product(*(grid[n] for n in names)):
            coords = dict(zip(names, combo))
            params = {**base["params"], **{k: v for k, v in coords.items() if k != LOAD}}
            point = resolve_policy({"preset": base["preset"], "params": params})
            coords = {k: (v if k == LOAD else point["params"][k]) for k, v in coords.items()}
            load = float(coords.get(LOAD, 1.0))
            planned.append(PlannedPoint(with_load(point.pop("_label"), load), point, base["_label"], coords))
    if len(planned) > MAX_POINTS:
        raise ExperimentError(f"{len(planned)} points: a study has at most {MAX_POINTS}")
    return planned


def create_study(
    owner: Any, *, name: str, trace: Trace, policies: list[Any], grid: dict[str, list[Any]],
    procs: int | None = None, machine: Machine | None = None, allocation: str = "count",
    exact_estimates: bool = False, seed: int = 0, shared: bool = False, description: str = "", preset: str = "",
) -> Study:
    """Validate, create the experiment, its runs and the study in one transaction, and fan the runs
    out as one group once it commits. Raises ExperimentError; nothing is stored then."""
    size = checked_setup(trace, procs, machine, allocation)
    planned = plan_points(policies, grid)
    checked_room(owner, len(planned))
    with transaction.atomic():
        swept = ", ".join(f"{k} × {len(v)}" for k, v in grid.items()) or "no grid"
        experiment = Experiment.objects.create(
            owner=owner, name=(name or f"{trace.name}: study over {swept}")[:200], description=description,
            shared=shared, trace=trace, machine=machine, procs=size, allocation=allocation,
            exact_estimates=exact_estimates, seed=seed,
        )
        study = Study.objects.create(experiment=experiment, grid=grid, policies=policies, preset=preset)
        for position, plan in enumerate(planned):
            run = Run.objects.create(experiment=experiment, position=position, label=plan.label[:300],
                                     policy=plan.policy, load_factor=plan.load_factor)
            StudyPoint.objects.create(study=study, run=run, policy_label=plan.policy_label[:300], coords=plan.coords)
        dispatch_later()  # its points take their turns in the server's fair queue, like single runs
    return study


def rerun_failed(study: Study) -> int:
    """Queue every failed or cancelled point again (done points are kept); returns how many."""
    runs = study.experiment.runs.filter(status__in=(Run.Status.FAILED, Run.Status.CANCELLED))
    return sum(1 for run in runs if rerun(run))


# --------------------------------------------------------------------------- reading results


def points(study: Study) -> list[StudyPoint]:
    return list(study.points.select_related("run").order_by("run__position", "pk"))


def progress(study: Study) -> dict[str, Any]:
    """Points done / total, and what is running or failed (the study page polls this)."""
    rows = points(study)
    counts = {status: 0 for status in Run.Status.values}
    for point in rows:
        counts[point.run.status] += 1
    return {
        "id": study.pk, "total": len(rows), "done": counts[Run.Status.DONE], "counts": counts,
        "queue": next_point_text([p.run for p in rows]),
        "finished": all(p.run.is_final for p in rows),
        "failed": [{"run": p.run.pk, "label": p.run.label, "error": p.run.error}
                   for p in rows if p.run.status == Run.Status.FAILED],
        "points": [{"run": p.run.pk, "status": p.run.status, "progress": round(p.run.progress, 4),
                    "attempts": p.run.attempts} for p in rows],
    }


def next_point_text(runs: list[Run]) -> str:
    """ "next point: 3rd in the queue, starts in about 2 min 10 s": the first of the study's points
    waiting for a slot in the server's fair queue; "" when none waits."""
    places = queue_places(runs)
    if not places:
        return ""
    first = min(places, key=lambda pk: places[pk].position)
    return f"next point: {time_left_text(next(r for r in runs if r.pk == first), places[first])}"


def grid_metrics() -> list[str]:
    """Summary metrics a trend plot may show (numbers only)."""
    return [m for m in METRIC_COLUMNS if m not in ("rejected_total", "jobs")]


def table_columns(study: Study) -> list[str]:
    return list(study.grid)


def line_label(point: StudyPoint, x: str) -> str:
    """The line a point belongs to in a plot against ``x``: its policy and its other coordinates."""
    others = [f"{k}={_value_text(v)}" for k, v in point.coords.items() if k != x]
    return point.policy_label + (f" ({', '.join(others)})" if others else "")


def trend_series(study: Study, x: str) -> tuple[list[Any], dict[str, list[dict | None]]]:
    """The x values (grid order) and, per line, one summary per x value (None: not done / failed /
    the line has no point there). Points whose policy lacks ``x`` are left out."""
    values = list(study.grid.get(x, []))
    keys = [_key(v) for v in values]
    series: dict[str, list[dict | None]] = {}
    for point in points(study):
        if x not in point.coords:
            continue
        line = series.setdefault(line_label(point, x), [None] * len(values))
        index = keys.index(_key(point.coords[x]))
        line[index] = point.run.summary if point.run.status == Run.Status.DONE else None
    return values, series


def csv_rows(study: Study) -> Iterable[list[Any]]:
    """The study as CSV rows: a header, then one row per point with its coordinates and metrics."""
    names = table_columns(study)
    listed = points(study)
    reasons = rejection_reasons([point.run.summary for point in listed])
    yield ["run", "policy", *names, "status", "error", *metric_headings(reasons)]
    for point in listed:
        yield [point.run.pk, point.policy_label, *[_value_text(point.coords.get(n, "")) for n in names],
               point.run.status, point.run.error, *metric_cells(point.run.summary, reasons)]


def _key(value: Any) -> Any:
    """Grid values compared as numbers where they are numbers ("inf" = math.inf)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _value_text(value: Any) -> str:
    number = _key(value)
    if isinstance(number, float):
        if math.isinf(number):
            return "inf"
        return f"{number:g}"
    return str(value)
