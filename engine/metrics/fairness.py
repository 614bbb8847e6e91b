"""Fairness between users (or groups, queues): Jain's index and per-owner tables."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from engine.metrics.jobs import bounded_slowdowns, response_times, waits

PER_OWNER_COLUMNS = ("jobs", "core_hours", "share", "mean_wait", "mean_response", "mean_bsld")


def jain_index(values: Iterable[float] | np.ndarray | pd.Series) -> float | None:
    """Jain's fairness index ``(sum x)^2 / (n * sum x^2)``, between ``1/n`` and 1.

    NaN values are ignored; no values left -> ``None``. All values zero counts as perfectly
    equal (1.0) rather than 0/0.
    """
    if not isinstance(values, (np.ndarray, pd.Series, list, tuple)):
        values = list(values)
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return None
    # correctly rounded sums (math.fsum): the index does not change in its last digits with the
    # numpy build's summation order (pairwise, SIMD width, BLAS), as it did between numpy releases
    sum_of_squares = math.fsum((x * x).tolist())
    if sum_of_squares == 0.0:
        return 1.0
    return math.fsum(x.tolist()) ** 2 / (x.size * sum_of_squares)


def mean_by_owner(owner: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mean of ``values`` per distinct ``owner`` (order of first appearance); one bincount pass."""
    codes, _ = pd.factorize(owner, use_na_sentinel=False)
    counts = np.bincount(codes)
    return np.bincount(codes, weights=values) / counts


def per_key(schedule: pd.DataFrame, key: str) -> pd.DataFrame:
    """One row per distinct value of ``key`` (user, group, queue...), sorted by that value.

    Columns: ``key, jobs, core_hours`` (sum of procs x runtime / 3600), ``share`` (of all core-hours;
    NaN when nobody used any), ``mean_wait, mean_response, mean_bsld``.
    """
    if len(schedule) == 0:
        return pd.DataFrame({key: pd.Series(dtype=schedule[key].dtype if key in schedule else "int64"),
                             **{name: pd.Series(dtype="float64") for name in PER_OWNER_COLUMNS}})
    response = response_times(schedule["submit"].to_numpy(), schedule["end"].to_numpy())
    runtime = schedule["runtime"].to_numpy()
    frame = pd.DataFrame({
        key: schedule[key].to_numpy(),
        "core_seconds": schedule["procs"].to_numpy(dtype=np.float64) * runtime,
        "wait": waits(schedule).astype(np.float64),
        "response": response.astype(np.float64),
        "bsld": bounded_slowdowns(response, runtime),
    })
    grouped = frame.groupby(key, sort=True, dropna=False)
    table = grouped.agg(
        jobs=("wait", "size"),
        core_seconds=("core_seconds", "sum"),
        mean_wait=("wait", "mean"),
        mean_response=("response", "mean"),
        mean_bsld=("bsld", "mean"),
    )
    total = table["core_seconds"].sum()
    table["core_hours"] = table["core_seconds"] / 3600.0
    table["share"] = table["core_seconds"] / total if total > 0 else np.nan
    return table.reset_index()[[key, *PER_OWNER_COLUMNS]]


def per_user(schedule: pd.DataFrame) -> pd.DataFrame:
    """:func:`per_key` by ``user``: jobs, core_hours, share, mean_wait, mean_response, mean_bsld."""
    return per_key(schedule, "user")
