"""Fidelity: how close a simulated run is to the recorded one (the schedule as it happened).

Both schedules are matched by ``job_id``; every figure is over the jobs present in both, so the two
sides describe the same jobs. Overall and per queue (the queue the *recording* gives each job, so a
simulation that moves jobs between queues is still compared job for job):

* ``mean_wait`` and ``p95_wait`` (seconds) of each run, and their ratio simulated / recorded;
* ``utilization``: the jobs' work (processors x runtime) over capacity x the run's span (first
  submit to last end of the matched jobs); without a capacity, ``mean_busy`` (work / span, the
  processors busy on average) stands in;
* ``wait_rank_correlation``: Spearman's rank correlation of the per-job waits (ties get average
  ranks; None when either side has a single distinct wait or fewer than 3 jobs).

A comparison is **far** from the recording when any of these holds (:data:`FAR`):
the mean wait differs by more than a factor of 2 *and* by more than 10 minutes; the rank
correlation of waits is below 0.5; the utilization differs by more than 10 percentage points.

The recording itself is checked against the machine (``recording``): the most processors it holds
at once and the share of its work done above the capacity. A recording with more than
:data:`OVER_CAPACITY_SHARE` of its work above the capacity is not a schedule that machine can have
produced (a wrong machine description, or a log merged from several machines), so no simulation
of that machine can match it; the warning says so first.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from engine.metrics.units import duration_text

#: The thresholds of "far from the recording" (see the module docstring).
FAR = {"wait_ratio": 2.0, "wait_seconds": 600.0, "rank_correlation": 0.5, "utilization_points": 0.10}
#: Queues with fewer matched jobs than this are listed but never make the comparison "far".
MIN_QUEUE_JOBS = 30
#: A recording with more than this share of its work (processor-seconds) above the capacity is not
#: a schedule of the machine (a one-second overlap of a short job is tolerated as log rounding).
OVER_CAPACITY_SHARE = 0.01


class Side(TypedDict):
    """One side's figures (recorded or simulated); None where there is no span or no capacity."""

    mean_wait: float
    p95_wait: float
    mean_busy: float | None
    utilization: float | None


class Comparison(TypedDict):
    """The figures of one group of matched jobs (overall or one queue); the sides are None without jobs."""

    jobs: int
    recorded: Side | None
    simulated: Side | None
    mean_wait_ratio: float | None
    wait_rank_correlation: float | None
    reasons: list[str]
    far: bool


class RecordingCheck(TypedDict):
    """Whether the recording can be a schedule of the machine (see :func:`recording_check`)."""

    peak_procs: int
    capacity: int | None
    over_capacity_share: float | None
    fits: bool


class Fidelity(TypedDict):
    """What :func:`fidelity` returns (JSON-able)."""

    jobs: dict[str, int]
    capacity: int | None
    overall: Comparison
    per_queue: dict[str, Comparison]
    far: bool
    far_queues: list[str]
    recording: RecordingCheck
    warning: str | None
    thresholds: dict[str, float]


def fidelity(recorded: pd.DataFrame, simulated: pd.DataFrame, *, capacity: int | None = None,
             queue_names: dict[int, str] | None = None) -> Fidelity:
    """Recorded vs simulated, overall and per queue (see the module docstring). JSON-able."""
    matched = _matched(recorded, simulated, queue_names)
    per_queue = {str(name): compare(part, capacity, span=_span(matched))
                 for name, part in matched.groupby("queue_label", sort=True)} if len(matched) else {}
    overall = compare(matched, capacity)
    far_queues = [name for name, figures in per_queue.items()
                  if figures["far"] and figures["jobs"] >= MIN_QUEUE_JOBS]
    recording = recording_check(recorded, capacity)
    return {
        "jobs": {"recorded": len(recorded), "simulated": len(simulated), "matched": len(matched)},
        "capacity": capacity,
        "overall": overall,
        "per_queue": per_queue,
        "far": bool(overall["far"]),
        "far_queues": far_queues,
        "recording": recording,
        "warning": warning(overall, far_queues, recording),
        "thresholds": dict(FAR),
    }


def compare(matched: pd.DataFrame, capacity: int | None, *, span: dict[str, float] | None = None) -> Comparison:
    """The figures of one group of matched jobs (columns ``wait_r``, ``wait_s``, ``work``, and the
    submit/end of each side). ``span``: the overall spans, so per-queue utilizations add up."""
    jobs = len(matched)
    if not jobs:
        return Comparison(jobs=0, recorded=None, simulated=None, mean_wait_ratio=None, wait_rank_correlation=None,
                          reasons=[], far=False)
    spans = span or _span(matched)
    sides = {}
    for side, suffix in (("recorded", "r"), ("simulated", "s")):
        wait = matched[f"wait_{suffix}"].to_numpy(dtype=np.float64)
        work = float(matched["work"].sum())
        width = spans[suffix]
        sides[side] = Side(mean_wait=float(wait.mean()), p95_wait=float(np.percentile(wait, 95)),
                           mean_busy=work / width if width > 0 else None,
                           utilization=(work / (capacity * width)) if capacity and width > 0 else None)
    rec, sim = sides["recorded"]["mean_wait"], sides["simulated"]["mean_wait"]
    result = Comparison(jobs=int(jobs), recorded=sides["recorded"], simulated=sides["simulated"],
                        mean_wait_ratio=sim / rec if rec > 0 else (1.0 if sim == 0 else None),
                        wait_rank_correlation=spearman(matched["wait_r"].to_numpy(), matched["wait_s"].to_numpy()),
                        reasons=[], far=False)
    result["reasons"] = far_reasons(result)
    result["far"] = bool(result["reasons"])
    return result


def far_reasons(figures: Comparison) -> list[str]:
    """Why one comparison is far from the recording, in plain words (empty: it is close)."""
    reasons: list[str] = []
    rec, sim = figures["recorded"], figures["simulated"]
    if rec is None or sim is None:  # no matched jobs: nothing is far
        return reasons
    low, high = sorted((rec["mean_wait"], sim["mean_wait"]))
    if high - low > FAR["wait_seconds"] and (low == 0 or high / low > FAR["wait_ratio"]):
        reasons.append(f"mean wait {duration_text(sim['mean_wait'])} simulated vs "
                       f"{duration_text(rec['mean_wait'])} recorded")
    rho = figures["wait_rank_correlation"]
    if rho is not None and rho < FAR["rank_correlation"]:
        reasons.append(f"the order of waits hardly matches (rank correlation {rho:.2f})")
    rec_use, sim_use = rec["utilization"], sim["utilization"]
    if rec_use is not None and sim_use is not None and abs(sim_use - rec_use) > FAR["utilization_points"]:
        reasons.append(f"utilization {sim_use:.0%} simulated vs {rec_use:.0%} recorded")
    return reasons


def recording_check(recorded: pd.DataFrame, capacity: int | None) -> RecordingCheck:
    """The most processors the recording holds at once, and (with a capacity) the share of its work
    done above it; ``fits`` is False when that share exceeds :data:`OVER_CAPACITY_SHARE`."""
    ran = recorded[recorded["start"] >= 0] if "start" in recorded else recorded.iloc[:0]
    procs = ran["procs"].to_numpy(np.int64) if len(ran) else np.zeros(0, np.int64)
    starts, ends = (ran["start"].to_numpy(np.int64), ran["end"].to_numpy(np.int64)) if len(ran) else (procs, procs)
    times = np.concatenate([starts, ends])
    order = np.argsort(times, kind="stable")
    moments, first = np.unique(times[order], return_index=True)
    change = np.add.reduceat(np.concatenate([procs, -procs])[order], first) if len(times) else procs
    busy = np.cumsum(change)                      # processors busy from each moment to the next
    peak = int(busy.max()) if len(busy) else 0
    result = RecordingCheck(peak_procs=peak, capacity=capacity, over_capacity_share=None, fits=True)
    if capacity and len(busy) > 1:
        widths = np.diff(moments).astype(np.float64)
        work = float((busy[:-1] * widths).sum())
        above = float((np.maximum(busy[:-1] - capacity, 0) * widths).sum())
        share = above / work if work > 0 else 0.0
        result["over_capacity_share"] = share
        result["fits"] = share <= OVER_CAPACITY_SHARE
    return result


def warning(overall: Comparison, far_queues: list[str], recording: RecordingCheck | None = None) -> str | None:
    """One plain sentence for the top of a comparison, or None when the baseline is close."""
    parts = []
    if recording and not recording["fits"]:
        parts.append(f"The recording is not a schedule of this machine: it holds {recording['peak_procs']:,} "
                     f"processors at once on {recording['capacity']:,}, and "
                     f"{recording['over_capacity_share']:.0%} of its work runs above the capacity, so no "
                     "simulation of this machine can match it.")
    if overall.get("far"):
        parts.append("The simulated baseline is far from what really happened: " + "; ".join(overall["reasons"]) + ".")
    if far_queues:
        parts.append(f"Queues far from the recording: {', '.join(far_queues)}.")
    return " ".join(parts) or None


def spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None when undefined."""
    if len(a) < 3:
        return None
    ra = pd.Series(a).rank(method="average").to_numpy()
    rb = pd.Series(b).rank(method="average").to_numpy()
    if ra.std() == 0 or rb.std() == 0:
        return None
    value = float(np.corrcoef(ra, rb)[0, 1])
    return value if math.isfinite(value) else None


def _matched(recorded: pd.DataFrame, simulated: pd.DataFrame, queue_names: dict[int, str] | None) -> pd.DataFrame:
    rec = pd.DataFrame({"job_id": recorded["job_id"].to_numpy(), "wait_r": recorded["wait"].to_numpy(),
                        "submit_r": recorded["submit"].to_numpy(), "end_r": recorded["end"].to_numpy(),
                        "work": recorded["procs"].to_numpy(np.float64) * recorded["runtime"].to_numpy(np.float64),
                        "queue_label": _queue_labels(recorded, queue_names)})
    sim = pd.DataFrame({"job_id": simulated["job_id"].to_numpy(), "wait_s": simulated["wait"].to_numpy(),
                        "submit_s": simulated["submit"].to_numpy(), "end_s": simulated["end"].to_numpy()})
    rec = rec.drop_duplicates("job_id")
    sim = sim.drop_duplicates("job_id")
    return rec.merge(sim, on="job_id", how="inner", sort=False)


def _queue_labels(schedule: pd.DataFrame, queue_names: dict[int, str] | None) -> np.ndarray:
    if "queue" not in schedule:
        return np.full(len(schedule), "all", dtype=object)
    values = schedule["queue"]
    if queue_names and pd.api.types.is_integer_dtype(values):
        return values.map(lambda q: queue_names.get(int(q), str(q))).astype(str).to_numpy()
    return values.astype(str).to_numpy()


def _span(matched: pd.DataFrame) -> dict[str, float]:
    if not len(matched):
        return {"r": 0.0, "s": 0.0}
    return {side: float(matched[f"end_{side}"].max() - matched[f"submit_{side}"].min()) for side in ("r", "s")}
