"""The engine's public face: what the command line and the web application use, and nothing else.

``engine/cli.py`` and ``webapp/`` import only from here (a test walks their imports); everything
below it may change shape as long as these names keep their meaning. See docs/engine-api.md.

- read: :func:`read_trace` (any format the engine knows, by content), :func:`check_upload` (an
  upload's first lines), the parsed cache (:func:`save_parsed`, :func:`load_parsed`), machine
  descriptions, queue configurations, allocations;
- policies: :func:`list_policies`, :func:`resolve_policy`;
- run: one :class:`Scenario` -> :func:`run` -> :class:`SimResult` (:func:`simulate` keeps the older
  keyword form); :func:`summarize` turns a result into the JSON-able summary;
- errors: :data:`INPUT_ERRORS` (bad input a user can fix) and :func:`error_line` (the one line a
  user sees for any engine error);
- metrics the dashboards draw (time series, fairness, deadlines, per-group figures).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.metrics.changes import by_queue, user_changes, wall_clock
from engine.metrics.deadlines import compared_summaries, deadline_mask, deadline_usage, has_deadlines, usage_histogram
from engine.metrics.fairness import jain_index, per_user
from engine.metrics.diff import JobDiff, delta_histogram, gains_by, job_diff, moved_most
from engine.metrics.fidelity import fidelity, human_seconds
from engine.metrics.groups import busy_by_group, penalty_increase, weekly
from engine.metrics.summary import summarize as summarize_schedule
from engine.metrics.summary import summarize_result
from engine.metrics.timeseries import busy_processors, day_edges, downsample_steps, envelope, occupancy_by, queue_length
from engine.platform.allocations import Allocations, parse_allocations, read_allocations
from engine.platform.infer import InferredConfiguration
from engine.platform.infer import infer as infer_configuration
from engine.platform.infer import time_zone as trace_time_zone
from engine.platform.machines import Machine, parse_machines, read_machines
from engine.platform.queues import SHIPPED, QueueConfig, parse_queue_config, shipped_text
from engine.platform.queues import load_queue_config as read_queue_config
from engine.policies.base import PolicyError, PolicySpec
from engine.policies.fairshare import priority_series
from engine.policies.registry import FAMILIES as POLICY_FAMILIES
from engine.policies.registry import PAPERS
from engine.policies.registry import catalog as list_policies
from engine.policies.registry import resolve as resolve_policy
from engine.policies.registry import workload_option_schemas as workload_options
from engine.run import Cleaning, Clusters, Pool, Scenario, Transforms, run, simulate
from engine.sim.eta import format_duration, time_left
from engine.sim.simulator import SCHEDULE_COLUMNS, Cancelled, SimResult, SimulationError
from engine.sim.validate import InvalidSchedule
from engine.version import __version__
from engine.workload.cache import load as load_parsed
from engine.workload.cache import save as save_parsed
from engine.workload.characterize import describe
from engine.errors import WorkloadError
from engine.workload.load import check_load_factor
from engine.workload.export import swf_text, write_swf
from engine.workload.loading import check_trace_head, header_integer, load_workload
from engine.workload.metacentrum import EXEC_HOSTS, describe_requests
from engine.workload.model import Workload
from engine.workload.recorded import has_recorded_starts
from engine.workload.scenarios import sfs_scenario
from engine.workload.swf import read_header as read_trace_header
from engine.workload.window import parse_days

__all__ = [
    # reading
    "Workload", "read_trace", "read_trace_header", "check_upload", "declared_procs", "describe", "describe_requests",
    "has_recorded_starts", "EXEC_HOSTS", "trace_time_zone", "write_swf", "swf_text",
    "save_parsed", "load_parsed",
    "Machine", "read_machines", "parse_machines",
    "QueueConfig", "read_queue_config", "parse_queue_config", "SHIPPED_QUEUE_CONFIGS", "shipped_queue_text",
    "Allocations", "read_allocations", "parse_allocations", "sfs_scenario",
    "InferredConfiguration", "infer_configuration",
    # policies
    "PolicySpec", "list_policies", "resolve_policy", "workload_options", "POLICY_FAMILIES", "PAPERS",
    # running
    "Scenario", "Pool", "Clusters", "Cleaning", "Transforms", "run", "simulate", "SimResult",
    "SCHEDULE_COLUMNS", "check_load_factor", "parse_days", "summarize", "summarize_schedule",
    "time_left", "format_duration",
    # errors
    "WorkloadError", "PolicyError", "SimulationError", "InvalidSchedule", "Cancelled", "INPUT_ERRORS", "error_line",
    # metrics for figures
    "busy_processors", "queue_length", "occupancy_by", "downsample_steps", "jain_index", "per_user",
    "compared_summaries", "deadline_mask", "deadline_usage", "has_deadlines", "usage_histogram",
    "busy_by_group", "penalty_increase", "weekly", "priority_series", "fidelity", "human_seconds",
    "day_edges", "envelope", "wall_clock", "by_queue", "user_changes",
    "JobDiff", "job_diff", "delta_histogram", "gains_by", "moved_most",
    "__version__",
]

#: Errors that mean the input is bad (a user can fix it), as opposed to a failed run or a bug.
INPUT_ERRORS: tuple[type[Exception], ...] = (WorkloadError, PolicyError)

#: Names of the queue configurations shipped with the engine (``metacentrum-2014``, ...).
SHIPPED_QUEUE_CONFIGS: tuple[str, ...] = tuple(SHIPPED)


def read_trace(path: str | Path, *, procs: int | None = None, cleaning: Cleaning | None = None) -> Workload:
    """Read and clean a trace of any format the engine knows (plain SWF, MetaCentrum's and
    AleaNG's extended SWF; recognised by content). The machine size is ``procs``, else the
    header's MaxProcs, else MaxNodes; ``metadata["procs"]`` records it."""
    cleaning = cleaning or Cleaning()
    return load_workload(path, procs=procs, oversize=cleaning.oversize, overrun=cleaning.overrun,
                         skip_bad_lines=cleaning.skip_bad_lines, memory_unit=cleaning.memory_unit)


def check_upload(path: str | Path, *, max_lines: int = 200,
                 max_errors: int = 20) -> tuple[dict[str, str], list[WorkloadError], str]:
    """Cheap checks of an upload's first lines, any format: (header, problems, format). Never
    raises for bad content; each problem names its line and field."""
    return check_trace_head(path, max_lines=max_lines, max_errors=max_errors)


def declared_procs(header: dict[str, str]) -> int | None:
    """The machine size a trace header declares (MaxProcs, else MaxNodes), if any."""
    return header_integer(header.get("MaxProcs")) or header_integer(header.get("MaxNodes"))


def shipped_queue_text(name: str) -> str:
    """The YAML text of a shipped queue configuration (one of :data:`SHIPPED_QUEUE_CONFIGS`)."""
    return shipped_text(name)


def summarize(result: SimResult, **extra: object) -> dict[str, Any]:
    """Every metric of a result, what produced it and ``extra`` entries (e.g. ``load_factor``):
    the JSON-able summary the command line writes and the web stores."""
    return summarize_result(result, **extra)


def error_line(error: BaseException, *, name: str | None = None) -> str:
    """The one line a user sees for an engine error: its text with whitespace collapsed. For a
    WorkloadError about a stored file, ``name`` (the file as the user knows it) replaces the
    storage path: ``name, line L: field F: message``, as the error words it itself."""
    if name is not None and isinstance(error, WorkloadError):
        error = WorkloadError(error.message, file=name, line=error.line, field=error.field)
    return " ".join(str(error).split()) or type(error).__name__
