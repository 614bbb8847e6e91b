"""The engine's public face: what the command line and the web application use, and nothing else.

``engine/cli.py`` and ``webapp/`` import only from here (a test walks their imports); everything
below it may change shape as long as these names keep their meaning. See docs/engine-api.md.

- read: :func:`read_trace` (any format the engine knows, by content), :func:`check_upload` (an
  upload's first lines), the parsed cache (:func:`save_parsed`, :func:`load_parsed`), machine
  descriptions, queue configurations, allocations;
- policies: :func:`list_policies`, :func:`resolve_policy`; Python plugins: :func:`load_policy_plugins`
  and what a plugin is written against (:class:`Algorithm`, :class:`Ordering`, :class:`Param`,
  :class:`Simulation`, :class:`Profile`, :func:`running_jobs_profile`; docs/policies.md);
- run: one :class:`Scenario` -> :func:`run` -> :class:`SimResult` (:func:`simulate` keeps the older
  keyword form); :func:`summarize` turns a result into the JSON-able summary;
- errors: :data:`INPUT_ERRORS` (bad input a user can fix) and :func:`error_line` (the one line a
  user sees for any engine error);
- metrics the dashboards draw (time series, fairness, deadlines, per-group figures);
- replicated comparisons (weekly windows, input shaking, user resampling; bootstrap intervals and
  verdicts; flurries; warm-up and cool-down): :func:`plan_replicates` -> :func:`run_replicate` for
  each run spec, anywhere -> :func:`combine_replicates`; :func:`compare_replicates` does all three
  on this machine. See docs/engine-api.md, "Replicated comparisons".

What a run says about queue limits (issue 23; the preview shows these, the command line writes them):

- **Admission** (engine.sim.admission): with a queue configuration every job is checked at
  submission against its queue (walltime, single_node, job_max_cores, the queue's core limit,
  user_max_cores, job_max_mem, pool); a refused job goes to the first queue of ``route_to`` that
  accepts it, else it is rejected and never simulated. ``summarize(result)["admission"]`` (runs on
  clusters with queues only)::

      {"rejected_total": 4681, "routed_total": 0,
       "groups": [{"queue": "q_1d", "reason": "walltime", "outcome": "rejected" | "routed",
                   "to": None | "q_2d", "jobs": 4681, "users": 48,
                   "line": "4,681 jobs of 48 users ask for more than q_1d's 12 h: rejected at submission"}],
       "lines": [...the groups' lines, rejected first, largest first...],
       "per_queue": {"q_1d": {"rejected": 4681, "routed": 0}},
       "per_user": {"alice": {"rejected": 12, "routed": 3}}}        # user names where the trace has them

  ``reason`` is one of ``walltime, nodes, job_cores, queue_cores, user_cores, memory, pool``.
  ``summarize(result)["rejected"]`` also counts them (``refused at submission by queue q_1d
  (walltime)``), beside the machine's own rejections. ``result.rejected_jobs`` lists every job
  rejected at submission, one row each (:data:`REJECTED_COLUMNS`: job_id, native_id and user_name
  where the trace has them, user, submit, procs, requested_time, queue, reason (``machine`` when
  no cluster can run it), limit such as ``walltime 12 h``); an empty frame when none was.
  A routed job runs in its new queue (the schedule's ``queue``) and the schedule gains
  ``routed_from`` (the queue that refused it, "" for the others) when any job was routed.
- **Pending reasons** (engine.sim.pending): every simulated schedule (not time sharing, not the
  recorded run) has the columns :data:`HELD_COLUMNS` (``held_queue_limit``, ``held_user_limit``,
  ``held_pool``, ``held_resources``, ``held_priority``: seconds the job waited for that reason;
  they sum to its wait) and ``held_by`` (the reason that held it longest, "" if it never waited).
  ``summarize(result)["pending"]``::

      {"reasons": ["queue_limit", "user_limit", "pool", "resources", "priority"],
       "hours": {"queue_limit": 2671.7, ...},          # job-hours held, all jobs
       "jobs": {"queue_limit": 199, ...},              # jobs held some time by it
       "per_queue": {"q_1d": {"queue_limit": ..., ...}},   # runs with a queue configuration
       "per_user": {"alice": {...}}}                   # users held at all, by name where known

- **Native ids**: a schedule of an accounting log has ``native_id`` (PBS ``112461.server``, Slurm
  ``123_4``) beside the internal ``job_id``.
- **Deadlock**: if a policy ever leaves jobs waiting on an idle machine, the SimulationError's line
  names them (native ids), their queues and what holds them, at a date in the trace's time zone.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import WorkloadError
from engine.policies.base import PolicyError

if TYPE_CHECKING:   # the same names as _LAZY below, for mypy (a test checks the two agree)
    from engine.platform.pbsconf import PbsServer, describe_pbs_site, print_server_text, read_pbs_site
    from engine.platform.slurmconf import SlurmSite, describe_site, read_slurm_site, slurm_time
    from engine.platform.sitefiles import FILES as SITE_FILES
    from engine.platform.sitefiles import Key as SiteKey
    from engine.platform.sitefiles import common_keys, site_from_texts, split_values, sweep_key, sweepable_keys, with_change
    from engine.platform.sitefiles import SiteReading, site_reading
    from engine.calibrate import calibrate as calibrate_site
    from engine.calibrate import calibration_lines
    from engine.metrics.sitepending import held_by_reason, pending_reasons, policy_pending
    from engine.command import simulate_command
    from engine.csvcells import safe_cells
    from engine.metrics.changes import by_queue, user_changes, wall_clock
    from engine.metrics.claims import change_text, judge_difference
    from engine.metrics.claims import overall as overall_verdict
    from engine.metrics.deadlines import (compared_summaries, deadline_mask, deadline_usage, has_deadlines,
                                          usage_histogram)
    from engine.metrics.diff import JobDiff, delta_histogram, gains_by, job_diff, moved_most
    from engine.metrics.fairness import jain_index, per_user
    from engine.metrics.fidelity import fidelity, recording_check
    from engine.metrics.groups import busy_by_group, penalty_increase, weekly
    from engine.metrics.bootstrap import Bootstrap
    from engine.metrics.counted import Counted, Trim, parse_trim
    from engine.metrics.summary import summarize as summarize_schedule
    from engine.metrics.units import (DURATION_UNITS, METRICS, Metric, countdown_text, date_text, duration_text, metric,
                                      metric_heading, metric_label, metric_text, number_text, percent_text)
    from engine.metrics.units import memory_text, walltime_text
    from engine.metrics.units import duration_text as human_seconds
    from engine.metrics.timeseries import (busy_processors, day_edges, downsample_steps, envelope, occupancy_by,
                                           queue_length)
    from engine.platform.allocations import Allocations, parse_allocations, read_allocations
    from engine.platform.infer import InferredConfiguration
    from engine.platform.infer import infer as infer_configuration
    from engine.platform.infer import time_zone as trace_time_zone
    from engine.platform.infer import zone_named as time_zone_named
    from engine.platform.infer import clusters_seen
    from engine.workload.slurm import WALL_CLOCK_FORMATS
    from engine.platform.machines import Machine, parse_machines, read_machines
    from engine.platform.queues import QueueConfig, check_pools, config_yaml, parse_queue_config, walltime_yaml
    from engine.platform.queues import load_queue_config as read_queue_config
    from engine.policies.algorithm import Algorithm
    from engine.policies.base import Param, PolicySpec
    from engine.policies.fairshare import priority_series
    from engine.policies.formula import check_formula, formula_grammar
    from engine.policies.ordering import Ordering, WaitingQueue
    from engine.policies.base import PLUGIN_GROUP as POLICY_ENTRY_POINT_GROUP
    from engine.policies.plugins import load_plugins as load_policy_plugins
    from engine.sim.profile import Profile, running_jobs_profile
    from engine.sim.simulator import Simulation
    from engine.policies.registry import FAMILIES as POLICY_FAMILIES
    from engine.policies.registry import PAPERS
    from engine.policies.registry import catalog as list_policies
    from engine.policies.registry import resolve as resolve_policy
    from engine.policies.registry import workload_option_schemas as workload_options
    from engine.policies.registry import schedule_depends_on
    from engine.replicates.local import ReplicateError
    from engine.replicates.local import compare_here as compare_replicates
    from engine.replicates.local import run_plan as run_replicates
    from engine.replicates.plan import COMPARABLE as REPLICATE_METRICS
    from engine.replicates.plan import DEFAULT_METRICS as DEFAULT_REPLICATE_METRICS
    from engine.replicates.plan import ReplicateSet, parse_replicates, plan_replicates
    from engine.replicates.report import combine_replicates, judge_claim, verdict_table
    from engine.replicates.runs import run_replicate
    from engine.run import Cleaning, Clusters, Pool, Scenario, Transforms, deadline_summaries_at, run, simulate
    from engine.sim.eta import time_left
    from engine.sim.admission import REJECTED_COLUMNS
    from engine.sim.pending import HELD_COLUMNS, HELD_REASONS
    from engine.sim.simulator import SCHEDULE_COLUMNS, Cancelled, SimResult, SimulationError
    from engine.sim.validate import InvalidSchedule
    from engine.version import __version__
    from engine.workload.cache import default_folder as parse_cache_folder
    from engine.workload.cache import load as load_parsed
    from engine.workload.cache import save as save_parsed
    from engine.workload.characterize import describe
    from engine.workload.export import swf_text, write_swf
    from engine.workload.flurries import Flurry, FlurryRule, find_flurries, without_flurries
    from engine.workload.load import check_load_factor
    from engine.workload.metacentrum import EXEC_HOSTS, describe_requests
    from engine.workload.model import Workload
    from engine.workload.recorded import has_recorded_starts, parsed_without_recorded_starts
    from engine.workload.resampling import resample_users
    from engine.workload.scenarios import sfs_scenario
    from engine.workload.shaking import Shake
    from engine.workload.shaking import shake as shake_workload
    from engine.workload.swf import read_header as read_trace_header
    from engine.workload.timebase import epoch_origin
    from engine.workload.window import equal_edges, parse_days, week_edges

    SHIPPED_QUEUE_CONFIGS: tuple[str, ...]

__all__ = [
    # reading
    "Workload", "read_trace", "read_trace_header", "check_upload", "declared_procs", "describe", "describe_requests",
    "has_recorded_starts", "parsed_without_recorded_starts", "EXEC_HOSTS", "trace_time_zone", "time_zone_named",
    "epoch_origin", "WALL_CLOCK_FORMATS",
    "write_swf", "swf_text", "safe_cells",
    "save_parsed", "load_parsed", "parse_cache_folder",
    "Machine", "read_machines", "parse_machines",
    "QueueConfig", "read_queue_config", "parse_queue_config", "config_yaml", "check_pools", "walltime_yaml",
    "SHIPPED_QUEUE_CONFIGS", "shipped_queue_text",
    "Allocations", "read_allocations", "parse_allocations", "sfs_scenario",
    "InferredConfiguration", "infer_configuration", "clusters_seen",
    # policies
    "PolicySpec", "list_policies", "resolve_policy", "workload_options", "schedule_depends_on", "POLICY_FAMILIES", "PAPERS",
    "check_formula", "formula_grammar", "load_policy_plugins", "POLICY_ENTRY_POINT_GROUP",
    # writing a policy plugin (docs/policies.md)
    "Algorithm", "Ordering", "Param", "WaitingQueue", "Simulation", "Profile", "running_jobs_profile",
    # running
    "Scenario", "Pool", "Clusters", "Cleaning", "Transforms", "run", "simulate", "SimResult", "deadline_summaries_at",
    "SCHEDULE_COLUMNS", "HELD_COLUMNS", "HELD_REASONS", "REJECTED_COLUMNS",
    "check_load_factor", "parse_days", "summarize", "summarize_schedule",
    "time_left", "simulate_command",
    # formatting (engine.metrics.units)
    "DURATION_UNITS", "duration_text", "countdown_text", "percent_text", "number_text", "date_text", "METRICS", "Metric", "metric",
    "metric_label", "metric_heading", "metric_text", "walltime_text", "memory_text",
    # errors
    "WorkloadError", "PolicyError", "SimulationError", "InvalidSchedule", "Cancelled", "INPUT_ERRORS", "error_line",
    # metrics for figures
    "busy_processors", "queue_length", "occupancy_by", "downsample_steps", "jain_index", "per_user",
    "compared_summaries", "deadline_mask", "deadline_usage", "has_deadlines", "usage_histogram",
    "busy_by_group", "penalty_increase", "weekly", "priority_series", "fidelity", "recording_check", "human_seconds",
    "day_edges", "envelope", "wall_clock", "by_queue", "user_changes",
    "JobDiff", "job_diff", "delta_histogram", "gains_by", "moved_most",
    # replicated comparisons (issue 26): plan -> run each spec (anywhere) -> combine
    "ReplicateSet", "parse_replicates", "plan_replicates", "run_replicate", "combine_replicates", "verdict_table",
    "judge_claim", "judge_difference", "overall_verdict", "change_text",
    "run_replicates", "compare_replicates", "ReplicateError", "REPLICATE_METRICS", "DEFAULT_REPLICATE_METRICS",
    "Bootstrap", "Counted", "Trim", "parse_trim", "Shake", "shake_workload", "resample_users",
    "Flurry", "FlurryRule", "find_flurries", "without_flurries", "week_edges", "equal_edges",
    # a Slurm site as configured (issue 24): slurm.conf + sacctmgr dumps
    "SlurmSite", "read_slurm_site", "describe_site", "slurm_time", "PbsServer", "read_pbs_site", "describe_pbs_site",
    "print_server_text",
    "SITE_FILES", "SiteKey", "common_keys", "site_from_texts", "with_change", "held_by_reason", "pending_reasons",
    "split_values", "sweep_key", "sweepable_keys", "SiteReading", "site_reading",
    "policy_pending", "calibrate_site", "calibration_lines", "__version__",
]

#: Where each name of the face lives: {name: (module, name there)}. A name's module is imported
#: at its first use (a module ``__getattr__``, PEP 562), not with this module: importing them all
#: took 0.3 s of CPU of every command's start-up (``python -X importtime -c "import engine.cli"``,
#: 2026-11-23, beyond numpy and pandas), while ``simulate`` needs neither the dashboards' metrics
#: nor configuration inference, machine descriptions or the other trace readers.
_LAZY: dict[str, tuple[str, str]] = {
    "simulate_command": ("engine.command", "simulate_command"),
    **{name: ("engine.metrics.changes", name) for name in ("by_queue", "user_changes", "wall_clock")},
    **{name: ("engine.metrics.claims", name) for name in ("change_text", "judge_difference")},
    "overall_verdict": ("engine.metrics.claims", "overall"),
    **{name: ("engine.metrics.deadlines", name) for name in ("compared_summaries", "deadline_mask", "deadline_usage",
                                                             "has_deadlines", "usage_histogram")},
    **{name: ("engine.metrics.diff", name) for name in ("JobDiff", "delta_histogram", "gains_by", "job_diff",
                                                        "moved_most")},
    **{name: ("engine.metrics.fairness", name) for name in ("jain_index", "per_user")},
    **{name: ("engine.metrics.fidelity", name) for name in ("fidelity", "recording_check")},
    **{name: ("engine.platform.slurmconf", name) for name in ("SlurmSite", "read_slurm_site", "describe_site", "slurm_time")},
    **{name: ("engine.platform.pbsconf", name) for name in ("PbsServer", "read_pbs_site", "describe_pbs_site",
                                                                  "print_server_text")},
    **{name: ("engine.platform.sitefiles", name) for name in ("common_keys", "site_from_texts", "with_change",
                                                              "split_values", "sweep_key", "sweepable_keys",
                                                              "SiteReading", "site_reading")},
    "SITE_FILES": ("engine.platform.sitefiles", "FILES"),
    "calibrate_site": ("engine.calibrate", "calibrate"),   # (not "calibrate": the package's submodule of that name)
    "calibration_lines": ("engine.calibrate", "calibration_lines"),
    "SiteKey": ("engine.platform.sitefiles", "Key"),
    **{name: ("engine.metrics.sitepending", name) for name in ("held_by_reason", "pending_reasons",
                                                                   "policy_pending")},
    **{name: ("engine.metrics.units", name) for name in ("DURATION_UNITS", "METRICS", "Metric", "countdown_text", "date_text",
                                                         "duration_text", "metric", "metric_heading", "metric_label",
                                                         "metric_text", "number_text", "percent_text",
                                                         "walltime_text", "memory_text")},
    "human_seconds": ("engine.metrics.units", "duration_text"),   # the older name of duration_text
    **{name: ("engine.metrics.groups", name) for name in ("busy_by_group", "penalty_increase", "weekly")},
    "summarize_schedule": ("engine.metrics.summary", "summarize"),
    "Bootstrap": ("engine.metrics.bootstrap", "Bootstrap"),
    **{name: ("engine.metrics.counted", name) for name in ("Counted", "Trim", "parse_trim")},
    "ReplicateError": ("engine.replicates.local", "ReplicateError"),
    "compare_replicates": ("engine.replicates.local", "compare_here"),
    "run_replicates": ("engine.replicates.local", "run_plan"),
    "REPLICATE_METRICS": ("engine.replicates.plan", "COMPARABLE"),
    "DEFAULT_REPLICATE_METRICS": ("engine.replicates.plan", "DEFAULT_METRICS"),
    **{name: ("engine.replicates.plan", name) for name in ("ReplicateSet", "parse_replicates", "plan_replicates")},
    **{name: ("engine.replicates.report", name) for name in ("combine_replicates", "judge_claim",
                                                              "verdict_table")},
    "run_replicate": ("engine.replicates.runs", "run_replicate"),
    **{name: ("engine.workload.flurries", name) for name in ("Flurry", "FlurryRule", "find_flurries",
                                                             "without_flurries")},
    "resample_users": ("engine.workload.resampling", "resample_users"),
    "Shake": ("engine.workload.shaking", "Shake"),
    "shake_workload": ("engine.workload.shaking", "shake"),
    **{name: ("engine.metrics.timeseries", name) for name in ("busy_processors", "day_edges", "downsample_steps",
                                                              "envelope", "occupancy_by", "queue_length")},
    **{name: ("engine.platform.allocations", name) for name in ("Allocations", "parse_allocations",
                                                                "read_allocations")},
    "InferredConfiguration": ("engine.platform.infer", "InferredConfiguration"),
    "infer_configuration": ("engine.platform.infer", "infer"),
    "trace_time_zone": ("engine.platform.infer", "time_zone"),
    "time_zone_named": ("engine.platform.infer", "zone_named"),
    "clusters_seen": ("engine.platform.infer", "clusters_seen"),
    "WALL_CLOCK_FORMATS": ("engine.workload.slurm", "WALL_CLOCK_FORMATS"),
    **{name: ("engine.platform.machines", name) for name in ("Machine", "parse_machines", "read_machines")},
    **{name: ("engine.platform.queues", name) for name in ("QueueConfig", "parse_queue_config", "config_yaml",
                                                           "check_pools", "walltime_yaml")},
    "read_queue_config": ("engine.platform.queues", "load_queue_config"),
    "PolicySpec": ("engine.policies.base", "PolicySpec"),
    "Param": ("engine.policies.base", "Param"),
    "Algorithm": ("engine.policies.algorithm", "Algorithm"),
    **{name: ("engine.policies.ordering", name) for name in ("Ordering", "WaitingQueue")},
    "load_policy_plugins": ("engine.policies.plugins", "load_plugins"),
    "POLICY_ENTRY_POINT_GROUP": ("engine.policies.base", "PLUGIN_GROUP"),
    **{name: ("engine.sim.profile", name) for name in ("Profile", "running_jobs_profile")},
    "Simulation": ("engine.sim.simulator", "Simulation"),
    "priority_series": ("engine.policies.fairshare", "priority_series"),
    **{name: ("engine.policies.formula", name) for name in ("check_formula", "formula_grammar")},
    "POLICY_FAMILIES": ("engine.policies.registry", "FAMILIES"),
    "PAPERS": ("engine.policies.registry", "PAPERS"),
    "list_policies": ("engine.policies.registry", "catalog"),
    "resolve_policy": ("engine.policies.registry", "resolve"),
    "workload_options": ("engine.policies.registry", "workload_option_schemas"),
    "schedule_depends_on": ("engine.policies.registry", "schedule_depends_on"),
    **{name: ("engine.run", name) for name in ("Cleaning", "Clusters", "Pool", "Scenario", "Transforms", "run",
                                               "simulate", "deadline_summaries_at")},
    "time_left": ("engine.sim.eta", "time_left"),
    "REJECTED_COLUMNS": ("engine.sim.admission", "REJECTED_COLUMNS"),
    **{name: ("engine.sim.pending", name) for name in ("HELD_COLUMNS", "HELD_REASONS")},
    **{name: ("engine.sim.simulator", name) for name in ("SCHEDULE_COLUMNS", "Cancelled", "SimResult",
                                                         "SimulationError")},
    "InvalidSchedule": ("engine.sim.validate", "InvalidSchedule"),
    "__version__": ("engine.version", "__version__"),
    "load_parsed": ("engine.workload.cache", "load"),
    "parse_cache_folder": ("engine.workload.cache", "default_folder"),
    "safe_cells": ("engine.csvcells", "safe_cells"),
    "save_parsed": ("engine.workload.cache", "save"),
    "describe": ("engine.workload.characterize", "describe"),
    **{name: ("engine.workload.export", name) for name in ("swf_text", "write_swf")},
    "check_load_factor": ("engine.workload.load", "check_load_factor"),
    **{name: ("engine.workload.metacentrum", name) for name in ("EXEC_HOSTS", "describe_requests")},
    "Workload": ("engine.workload.model", "Workload"),
    "has_recorded_starts": ("engine.workload.recorded", "has_recorded_starts"),
    "parsed_without_recorded_starts": ("engine.workload.recorded", "parsed_without_recorded_starts"),
    "sfs_scenario": ("engine.workload.scenarios", "sfs_scenario"),
    "read_trace_header": ("engine.workload.swf", "read_header"),
    **{name: ("engine.workload.window", name) for name in ("equal_edges", "parse_days", "week_edges")},
    "epoch_origin": ("engine.workload.timebase", "epoch_origin"),
}


def __getattr__(name: str) -> Any:
    """A name of the face, imported from its module at first use (see _LAZY), then kept here."""
    if name == "SHIPPED_QUEUE_CONFIGS":
        value: Any = tuple(importlib.import_module("engine.platform.queues").SHIPPED)
    elif name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module), attribute)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


#: Errors that mean the input is bad (a user can fix it), as opposed to a failed run or a bug.
INPUT_ERRORS: tuple[type[Exception], ...] = (WorkloadError, PolicyError)

#: SHIPPED_QUEUE_CONFIGS: the names of the queue configurations shipped with the engine
#: (``metacentrum-2014``, ...), made at first use by __getattr__.


def read_trace(path: str | Path, *, procs: int | None = None, cleaning: Cleaning | None = None,
               cache: str | Path | None = None) -> Workload:
    """Read and clean a trace of any format the engine knows (plain SWF, MetaCentrum's and
    AleaNG's extended SWF; recognised by content). The machine size is ``procs``, else the
    header's MaxProcs, else MaxNodes; ``metadata["procs"]`` records it. ``cache``: a folder where
    the parsed trace is kept by content and options, and found by the next read (the command line's
    parse cache, engine.workload.cache.read_through)."""
    from engine.run import Cleaning                     # at first use, as the names in _LAZY
    from engine.workload.loading import load_workload
    cleaning = cleaning or Cleaning()
    options = {"procs": procs, "oversize": cleaning.oversize, "overrun": cleaning.overrun,
               "skip_bad_lines": cleaning.skip_bad_lines, "memory_unit": cleaning.memory_unit}

    def read() -> Workload:
        return load_workload(path, procs=procs, oversize=cleaning.oversize, overrun=cleaning.overrun,
                             skip_bad_lines=cleaning.skip_bad_lines, memory_unit=cleaning.memory_unit)
    if cache is None:
        return read()
    from engine.workload.cache import read_through     # only with a cache (as the names in _LAZY)
    return read_through(path, options, read, cache)


def check_upload(path: str | Path, *, max_lines: int = 200,
                 max_errors: int = 20) -> tuple[dict[str, str], list[WorkloadError], str]:
    """Cheap checks of an upload's first lines, any format: (header, problems, format). Never
    raises for bad content; each problem names its line and field."""
    from engine.workload.loading import check_trace_head   # at first use, as the names in _LAZY
    return check_trace_head(path, max_lines=max_lines, max_errors=max_errors)


def declared_procs(header: dict[str, str]) -> int | None:
    """The machine size a trace header declares (MaxProcs, else MaxNodes), if any."""
    from engine.workload.loading import header_integer     # at first use, as the names in _LAZY
    return header_integer(header.get("MaxProcs")) or header_integer(header.get("MaxNodes"))


def shipped_queue_text(name: str) -> str:
    """The YAML text of a shipped queue configuration (one of :data:`SHIPPED_QUEUE_CONFIGS`)."""
    from engine.platform.queues import shipped_text         # at first use, as the names in _LAZY
    return shipped_text(name)


def summarize(result: SimResult, **extra: object) -> dict[str, Any]:
    """Every metric of a result, what produced it and ``extra`` entries (e.g. ``load_factor``):
    the JSON-able summary the command line writes and the web stores."""
    from engine.metrics.summary import summarize_result    # at first use, as the names in _LAZY
    return summarize_result(result, **extra)


def error_line(error: BaseException, *, name: str | None = None) -> str:
    """The one line a user sees for an engine error: its text with whitespace collapsed. For a
    WorkloadError about a stored file, ``name`` (the file as the user knows it) replaces the
    storage path: ``name, line L: field F: message``, as the error words it itself."""
    if name is not None and isinstance(error, WorkloadError):
        error = WorkloadError(error.message, file=name, line=error.line, field=error.field)
    return " ".join(str(error).split()) or type(error).__name__
