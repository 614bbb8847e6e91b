"""A replicate set of one comparison, planned as plain-data run specs.

A comparison of policies on one trace is one sample; replicates give many, on which every policy
runs, so each difference between two policies comes with an interval (engine.metrics.bootstrap).
Three kinds of replicate sets (``parse_replicates``):

- ``weeks`` / ``weeks:N`` / ``windows:N``: *paired windows*, the trace cut by submit time into
  consecutive weeks from its first submit (all of them, or the first N), or into N windows of
  equal length; every job is in exactly one window and every policy runs on each window alone.
- ``shake:K``: *input shaking* (Tsafrir, Ouaknine & Feitelson, MASCOTS 2007), K copies of the
  whole trace with small seeded perturbations (engine.workload.shaking); the same K copies for
  every policy (common random numbers).
- ``resample:N``: *user resampling* (Zakay & Feitelson, ICPE 2013), N traces recombined from whole
  user job streams shifted by whole weeks (keeping the daily and weekly cycle), at ``load`` times
  the trace's offered work (engine.workload.resampling).

:func:`plan_replicates` turns a comparison into a JSON-able plan whose ``runs`` are independent run
specs (one policy on one replicate): the web hands them to Celery workers, the command line to a
process pool, each calls :func:`engine.replicates.runs.run_replicate` with the parsed trace, and
:func:`engine.replicates.report.combine_replicates` turns the plan and the finished runs into the
report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.errors import WorkloadError
from engine.metrics.bootstrap import Bootstrap
from engine.metrics.counted import Counted
from engine.metrics.summary import SUMMARY_KEYS
from engine.policies.base import PolicyError
from engine.policies.registry import resolve
from engine.run import PolicyLike
from engine.workload.flurries import FlurryRule, find_flurries
from engine.workload.flurries import without_flurries as drop_flurries
from engine.workload.load import check_load_factor, scale_load
from engine.workload.model import Workload
from engine.workload.shaking import Shake
from engine.workload.window import equal_edges, select_days, week_edges

FORMAT = "schedlab-replicates"
VERSION = 1

#: what each kind of replicate set is, in words, and where it comes from
KINDS: dict[str, tuple[str, str]] = {
    "weeks": ("weekly windows", "paired windows: every policy runs on each week of the trace"),
    "windows": ("windows", "paired windows: every policy runs on each of N equal stretches of the trace"),
    "shake": ("shaken copies", "input shaking: Tsafrir, Ouaknine & Feitelson, \"Reducing performance evaluation "
                               "sensitivity and variability by input shaking\", MASCOTS 2007"),
    "resample": ("user-resampled traces", "user resampling: Zakay & Feitelson, \"Workload resampling for "
                                          "performance evaluation of parallel job schedulers\", ICPE 2013"),
}
#: the words a verdict uses for "under this kind of replicates"
UNDER = {"weeks": "weekly windows", "windows": "windows", "shake": "shaking", "resample": "user resampling"}
#: seed stream of each randomised kind: copy k of kind X is the same whatever else the plan holds
_SEED_KEY = {"shake": 1, "resample": 2}
#: metrics a comparison may ask for (every summary figure that is a number of a run)
COMPARABLE = tuple(key for key in SUMMARY_KEYS
                   if key not in ("jobs", "rejected", "rejected_total", "killed", "wall_seconds"))
DEFAULT_METRICS = ("mean_wait", "mean_response", "mean_bsld", "p95_wait", "utilization")
_SET = re.compile(r"^(weeks|windows|shake|resample)(?::(\d+))?$")


@dataclass(frozen=True)
class ReplicateSet:
    """One kind of replicates and how many: ``weeks`` (count None: every week), ``windows``,
    ``shake`` or ``resample``."""

    kind: str
    count: int | None = None

    @property
    def name(self) -> str:
        return self.kind if self.count is None else f"{self.kind}:{self.count}"


def parse_replicates(text: str) -> list[ReplicateSet]:
    """``"weeks"``, ``"weeks:52"``, ``"windows:12"``, ``"shake:10"``, ``"resample:20"``, or several
    separated by commas (the first is the primary set; the others confirm or not its verdicts)."""
    sets: list[ReplicateSet] = []
    for item in (part.strip() for part in str(text).split(",")):
        match = _SET.match(item)
        if not match:
            raise WorkloadError(f"--replicates: {item!r} is not one of weeks, weeks:N, windows:N, shake:K, "
                                "resample:N")
        kind, count = match.group(1), match.group(2)
        if count is None and kind != "weeks":
            raise WorkloadError(f"--replicates {kind} needs a count, e.g. {kind}:10")
        if count is not None and not 2 <= int(count) <= 10_000:
            raise WorkloadError(f"--replicates {item}: the count must be from 2 to 10000")
        replicate_set = ReplicateSet(kind, None if count is None else int(count))
        if any(s.kind == kind for s in sets):
            raise WorkloadError(f"--replicates names {kind} twice")
        sets.append(replicate_set)
    return sets


def copy_seed(seed: int, kind: str, copy: int) -> int:
    """The seed of copy ``copy`` of a randomised set: depends on the plan's seed, the kind and the
    copy only, so every policy gets the same copy (common random numbers)."""
    return int(np.random.SeedSequence(entropy=seed, spawn_key=(_SEED_KEY[kind], copy)).generate_state(1)[0])


def prepared(workload: Workload, days: tuple[float, float] | None, flurries: list[dict]) -> Workload:
    """The trace every replicate starts from: the ``days`` window, without ``flurries``."""
    if days is not None:
        workload = select_days(workload, *days)
    return drop_flurries(workload, flurries) if flurries else workload


def plan_replicates(workload: Workload, policies: Sequence[PolicyLike], replicates: Sequence[ReplicateSet] | str, *,
                    names: Sequence[str] | None = None, capacity: int | None = None, load: float = 1.0,
                    days: tuple[float, float] | None = None, counted: Counted | None = None,
                    flurry_rule: FlurryRule | None = None, without_flurries: bool = False,
                    shaking: Shake | None = None, tolerance: float = 0.02,
                    metrics: Sequence[str] = DEFAULT_METRICS, bootstrap: Bootstrap | None = None,
                    seed: int = 0) -> dict[str, Any]:
    """The plan of a replicated comparison (JSON-able; see the module docstring and docs/engine-api.md).
    ``None`` options take their defaults: every job counted, FlurryRule(), Shake(), Bootstrap().
    Raises PolicyError or WorkloadError for bad input, before any run."""
    counted, flurry_rule = counted or Counted(), flurry_rule or FlurryRule()
    shaking, bootstrap = shaking or Shake(), bootstrap or Bootstrap()
    sets = parse_replicates(replicates) if isinstance(replicates, str) else list(replicates)
    if not sets:
        raise WorkloadError("--replicates: no replicate set given")
    specs = [resolve(policy) for policy in policies]
    labels = list(names) if names is not None else [p if isinstance(p, str) and not p.lstrip().startswith("{")
                                                     else s.label for p, s in zip(policies, specs)]
    if len(specs) < 2:
        raise PolicyError("a comparison needs at least two policies")
    if len(labels) != len(specs):
        raise PolicyError(f"{len(labels)} names for {len(specs)} policies")
    if len(set(labels)) != len(labels):
        raise PolicyError(f"each policy may be named once, got {', '.join(labels)}")
    unknown = [m for m in metrics if m not in COMPARABLE]
    if unknown or not metrics:
        raise WorkloadError(f"--metrics: unknown {', '.join(unknown) or '(none given)'}; choose from "
                            f"{', '.join(COMPARABLE)}")
    load = check_load_factor(load)
    if not 0 <= tolerance < 1:
        raise WorkloadError(f"resampling: the load tolerance must be in [0, 1), got {tolerance!r}")
    size = int(capacity if capacity is not None else workload.metadata["procs"])
    window = select_days(workload, *days) if days is not None else workload
    found = [f.to_dict() for f in find_flurries(window, flurry_rule)]
    dropped = found if without_flurries else []
    base = prepared(workload, days, dropped)
    if not len(base):
        raise WorkloadError("no jobs to compare (after the --days window and flurry removal)")
    runs = []
    set_info = []
    for replicate_set in sets:
        replicas = _replicas(base, replicate_set, seed, load, shaking, tolerance)
        noun, citation = KINDS[replicate_set.kind]
        set_info.append({"name": replicate_set.name, "kind": replicate_set.kind, "replicates": len(replicas),
                         "description": f"{len(replicas)} {noun}", "citation": citation})
        for number, replica in enumerate(replicas):
            for label, spec in zip(labels, specs):
                runs.append({"id": f"{replicate_set.name}/{number}/{label}", "set": replicate_set.name,
                             "replicate": number, "policy": label, "spec": spec.to_dict(), "capacity": size,
                             "days": list(days) if days is not None else None, "drop": dropped,
                             "load": load, "replica": replica, "counted": counted.to_dict(),
                             "metrics": list(metrics), "seed": seed})
    return {
        "format": FORMAT, "version": VERSION,
        "trace": {"source": workload.source, "jobs": len(base), "capacity": size},
        "policies": [{"name": label, "label": spec.label, "spec": spec.to_dict()} for label, spec in zip(labels, specs)],
        "sets": set_info, "load": load, "days": list(days) if days is not None else None,
        "flurries": {"rule": flurry_rule.to_dict(), "definition": flurry_rule.describe(), "found": found,
                     "removed": bool(without_flurries), "jobs_removed": len(window) - len(base)},
        "counted": counted.to_dict(), "bootstrap": bootstrap.to_dict(), "metrics": list(metrics), "seed": seed,
        "runs": runs,
    }


def _replicas(base: Workload, replicate_set: ReplicateSet, seed: int, load: float, shaking: Shake,
              tolerance: float) -> list[dict[str, Any]]:
    """The replicas of one set, as the plain data a run needs to rebuild its workload."""
    kind, count = replicate_set.kind, replicate_set.count
    if kind in ("weeks", "windows"):
        if load != 1.0:   # windows of the load-scaled trace: cut after scaling, as the run does
            base = scale_load(base, load)
        edges = week_edges(base, count) if kind == "weeks" else equal_edges(base, int(count or 0))
        return [{"kind": "window", "start": start, "end": end} for start, end in edges]
    assert count is not None
    if kind == "shake":
        return [{"kind": "shake", "seed": copy_seed(seed, kind, k), **shaking.to_dict()} for k in range(count)]
    return [{"kind": "resample", "seed": copy_seed(seed, kind, k), "load": load, "tolerance": tolerance}
            for k in range(count)]
