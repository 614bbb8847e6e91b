"""Workload readers and transforms: a file in, a canonical :class:`Workload` out."""

from engine.workload.characterize import describe
from engine.workload.errors import WorkloadError
from engine.workload.loading import load_workload
from engine.workload.model import CANONICAL_COLUMNS, CleaningReport, Workload

__all__ = ["CANONICAL_COLUMNS", "CleaningReport", "Workload", "WorkloadError", "describe", "load_workload"]
