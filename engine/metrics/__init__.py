"""Metrics computed from a simulated per-job schedule, the same way for every policy.

- :mod:`engine.metrics.jobs` -- per-job columns (response, slowdown, bsld, stretch, skip);
- :mod:`engine.metrics.summary` -- one JSON-able dict of headline figures;
- :mod:`engine.metrics.timeseries` -- busy processors, queue length, occupancy per owner, monthly;
- :mod:`engine.metrics.fairness` -- Jain's index and per-user tables.
"""

from __future__ import annotations

from engine.metrics.jobs import job_metrics
from engine.metrics.summary import summarize

__all__ = ["job_metrics", "summarize"]
