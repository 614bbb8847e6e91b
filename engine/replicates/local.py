"""Running a plan's runs on this machine: in this process, or in a pool of worker processes.

The web fans the same run specs out over its Celery workers; here a process pool of ``workers``
processes is the engine-side equivalent. The workers are forked from this process after it has
read the trace and compiled the policies' kernels (one tiny run of each policy), so the parsed
trace is read once and no worker compiles or parses again. Runs are handed out largest first
(whole-trace copies before weekly windows) so that no worker is left with a long run at the end.
A run that fails stops the set: the others are cancelled and a ReplicateError names the run.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from typing import Any

import numpy as np

from engine.errors import WorkloadError
from engine.policies.base import PolicyError
from engine.replicates.plan import plan_replicates
from engine.replicates.report import combine_replicates
from engine.replicates.runs import replica_workload, run_replicate
from engine.run import simulate
from engine.sim.simulator import SimulationError
from engine.workload.model import Workload

Progress = Callable[[float], None]
_TRACE: dict[str, Workload] = {}


class ReplicateError(SimulationError):
    """A run of a replicate set failed; the message names the run and its error (a SimulationError,
    so whoever reports failed runs reports this one the same way)."""


def run_plan(workload: Workload, plan: dict[str, Any], *, workers: int = 1,
             progress: Progress | None = None) -> list[dict[str, Any]]:
    """The outcomes of every run of ``plan`` (engine.replicates.runs.run_replicate), in plan order,
    on ``workers`` processes (1: in this process). ``progress(fraction)`` follows the work done
    (runs weighted by their jobs)."""
    runs = plan["runs"]
    sizes = [_size(workload, run) for run in runs]
    total = float(sum(sizes)) or 1.0
    done = 0.0
    outcomes: list[dict[str, Any] | None] = [None] * len(runs)
    if workers <= 1 or len(runs) < 2:
        for i, run in enumerate(runs):
            outcomes[i] = _guarded(workload, run)
            done += sizes[i]
            if progress:
                progress(done / total)
        return [o for o in outcomes if o is not None]
    _warm(workload, plan)
    _TRACE["trace"] = workload            # inherited by the forked workers
    order = sorted(range(len(runs)), key=lambda i: -sizes[i])
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(workers, len(runs)), mp_context=context) as pool:
        futures: dict[Future[dict[str, Any]], int] = {pool.submit(_run_in_worker, runs[i]): i for i in order}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in finished:
                error = future.exception()
                if error is not None:
                    for other in pending:
                        other.cancel()
                    raise error
                i = futures[future]
                outcomes[i] = future.result()
                done += sizes[i]
            if progress:
                progress(done / total)
    return [o for o in outcomes if o is not None]


def _run_in_worker(run: dict[str, Any]) -> dict[str, Any]:
    return _guarded(_TRACE["trace"], run)


def _guarded(workload: Workload, run: dict[str, Any]) -> dict[str, Any]:
    """The run's outcome, or a ReplicateError naming it (a bad input error keeps its type)."""
    try:
        return run_replicate(workload, run)
    except Exception as exc:   # one line naming the run, whatever failed inside it
        text = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, (WorkloadError, PolicyError)):
            raise type(exc)(f"run {run['id']}: {text}") from exc
        raise ReplicateError(f"run {run['id']} failed: {text}") from exc


def _size(workload: Workload, run: dict[str, Any]) -> int:
    """A run's jobs, roughly (a window's bounds are read in the unscaled trace): for ordering and progress."""
    replica = run["replica"]
    if replica["kind"] != "window":
        return len(workload) + 1
    submit = workload.jobs["submit"].to_numpy()
    return int(np.searchsorted(submit, replica["end"]) - np.searchsorted(submit, replica["start"])) + 1


def _warm(workload: Workload, plan: dict[str, Any]) -> None:
    """One tiny run of each policy in this process, so the forked workers inherit compiled kernels."""
    seen: set[str] = set()
    for run in plan["runs"]:
        if run["policy"] in seen:
            continue
        seen.add(run["policy"])
        sample = replica_workload(workload, run)
        sample = type(sample)(sample.jobs.head(64).copy(), dict(sample.metadata), sample.report, sample.source)
        if len(sample):
            simulate(sample, int(run["capacity"]), run["spec"], seed=int(run.get("seed", 0)))


def compare_here(workload: Workload, policies: list[Any], replicates: Any, *, workers: int = 1,
                 progress: Progress | None = None, **options: Any) -> dict[str, Any]:
    """Plan, run on this machine and combine: the report of a replicated comparison
    (``options`` as :func:`engine.replicates.plan.plan_replicates` takes them)."""
    plan = plan_replicates(workload, policies, replicates, **options)
    return combine_replicates(plan, run_plan(workload, plan, workers=workers, progress=progress))
