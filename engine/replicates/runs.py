"""One run of a replicate set: rebuild its workload from the parsed trace and its spec, simulate,
and keep the counted metrics.

A run spec (one entry of a plan's ``runs``, engine.replicates.plan) is plain data, so it can
travel to a Celery worker or a child process; the worker reads the parsed trace once and calls
:func:`run_replicate` for every spec it is given. The trace prepared for the replicas (the
``days`` window, flurries removed, load scaled) is kept between calls of one process, since the
runs of a set all start from it, and so is the last replica, since a plan lists the policies of
one replica one after the other (a shaken copy of HPC2N-2002 takes 0.03-0.1 s to draw).
"""

from __future__ import annotations

import time
from typing import Any

from engine.metrics.counted import Counted, counted_mask
from engine.metrics.summary import plain, summarize
from engine.replicates.plan import prepared
from engine.run import simulate
from engine.workload.load import scale_load
from engine.workload.model import Workload
from engine.workload.resampling import resample_users
from engine.workload.shaking import Shake, shake
from engine.workload.window import submitted_between

#: the last prepared trace of this process: (the parsed trace, its options) -> the prepared trace
_PREPARED: dict[str, Any] = {}
#: the last replica of this process: (the prepared trace, the replica's spec) -> the replica
_REPLICA: dict[str, Any] = {}


def replica_workload(workload: Workload, spec: dict[str, Any]) -> Workload:
    """The workload of the run ``spec`` describes, built from the parsed trace ``workload``:
    the ``days`` window and flurry removal, then the replica (a window of the load-scaled trace, a
    shaken copy of it, or a user-resampled trace at the load)."""
    replica = spec["replica"]
    days = tuple(spec["days"]) if spec.get("days") else None
    load = float(spec.get("load", 1.0))
    scaled = replica["kind"] != "resample" and load != 1.0
    key = repr((days, spec.get("drop"), load if scaled else 1.0))
    if _PREPARED.get("trace") is not workload or _PREPARED.get("key") != key:
        base = prepared(workload, days, spec.get("drop") or [])   # type: ignore[arg-type]
        _PREPARED.update(trace=workload, key=key, base=scale_load(base, load) if scaled else base)
    base = _PREPARED["base"]
    if _REPLICA.get("base") is not base or _REPLICA.get("replica") != replica:
        _REPLICA.update(base=base, replica=dict(replica), workload=_built(base, replica, load))
    return _REPLICA["workload"]


def _built(base: Workload, replica: dict[str, Any], load: float) -> Workload:
    if replica["kind"] == "window":
        return submitted_between(base, int(replica["start"]), int(replica["end"]))
    if replica["kind"] == "shake":
        how = Shake(int(replica["submit_seconds"]), float(replica["runtime"]), float(replica["estimate"]))
        return shake(base, int(replica["seed"]), how)
    if replica["kind"] == "resample":
        return resample_users(base, int(replica["seed"]), load=load, tolerance=float(replica["tolerance"]))
    raise ValueError(f"unknown replica kind {replica['kind']!r}")


def run_replicate(workload: Workload, spec: dict[str, Any]) -> dict[str, Any]:
    """Simulate one run spec on the parsed trace ``workload`` and return its outcome (JSON-able):
    ``{"id", "set", "replicate", "policy", "jobs", "counted_jobs", "metrics": {name: value | None},
    "wall_seconds", "cpu_seconds"}`` (the CPU time of this process for the run: on a loaded machine
    the figure that says what the run costs). Metrics count only the jobs ``spec["counted"]`` says (warm-up and cool-down
    left out); a replica without jobs (an empty week) gives None for every metric."""
    began, cpu_began = time.perf_counter(), time.process_time()
    replica = replica_workload(workload, spec)
    values: dict[str, Any] = dict.fromkeys(spec["metrics"])
    counted_jobs = 0
    if len(replica):
        result = simulate(replica, int(spec["capacity"]), spec["spec"], seed=int(spec.get("seed", 0)))
        schedule = result.schedule
        mask = counted_mask(schedule, Counted.from_dict(spec["counted"]))
        counted_jobs = int(mask.sum())
        summary = summarize(schedule if mask.all() else schedule.loc[mask], result.capacity)
        values = {name: summary[name] for name in spec["metrics"]}
    return {"id": spec["id"], "set": spec["set"], "replicate": spec["replicate"], "policy": spec["policy"],
            "jobs": len(replica), "counted_jobs": counted_jobs, "metrics": plain(values),
            "wall_seconds": time.perf_counter() - began, "cpu_seconds": time.process_time() - cpu_began}
