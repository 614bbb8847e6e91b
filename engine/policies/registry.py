"""The one place that names policies: orderings, algorithms, their parameters and the presets.

The command line (``python -m engine policies``) and the web form both read :func:`catalog`;
:func:`resolve` turns a preset name, a JSON string or a dict into a validated :class:`PolicySpec`.
A new preset added here appears in both without touching either.
"""

from __future__ import annotations

import json
import importlib
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Mapping

from engine.errors import shown
from engine.policies.base import Param, PolicyError, PolicySpec
from engine.sim.simulator import Simulation

@dataclass(frozen=True)
class Component:
    """An ordering or an algorithm: how to build it, its parameters and a line saying what it is."""

    name: str
    factory: Callable[..., Any]
    params: tuple[Param, ...] = ()
    description: str = ""
    #: for an algorithm that needs its own event loop (time sharing): the Simulation subclass that
    #: runs it; None = the space-sharing loop of engine.sim.simulator.Simulation
    simulation: type[Simulation] | None = None
    #: for an ordering whose parameters say what it is (a formula): the label of a custom policy
    #: with it, from the parameters' values; the parameters it names are not repeated after it
    title: Callable[[Mapping[str, Any]], str] | None = None
    titled: tuple[str, ...] = ()


#: Orderings and algorithms by name. Policy families add theirs with register_ordering /
#: register_algorithm when FAMILY_MODULES imports them.
ORDERINGS: dict[str, Component] = {}
ALGORITHMS: dict[str, Component] = {}

#: Modules that define orderings, algorithms and presets; imported once, on first use.
FAMILY_MODULES = (
    "engine.policies.ordering",
    "engine.policies.backfill",
    "engine.policies.conservative",
    "engine.policies.dbf",
    "engine.policies.timesharing",
    "engine.policies.priority",
    "engine.policies.sfs",
    "engine.policies.plan",
    "engine.policies.fairshare",
    "engine.policies.heterogeneous",
    "engine.policies.recorded",
    "engine.policies.formula",
    "engine.policies.slurm",
    "engine.policies.pbs",
)


def register_ordering(component: Component) -> None:
    ORDERINGS[component.name] = component


#: Variants of algorithms for a kind of machine (``"nodes"``: clusters of nodes, engine.sim.nodes),
#: by (kind, name); build_scheduler picks them when the simulation's allocator is of that kind.
MACHINE_ALGORITHMS: dict[tuple[str, str], Component] = {}


def register_algorithm(component: Component, *, machine: str | None = None) -> None:
    if machine is None:
        ALGORITHMS[component.name] = component
    else:
        MACHINE_ALGORITHMS[(machine, component.name)] = component


@dataclass(frozen=True)
class WorkloadOption:
    """A parameter every policy accepts that changes the *workload* before simulation (e.g. the
    deadline scenario: X % of the jobs get a deadline). It lives in the policy spec, so a run's spec
    says everything that produced it, ``--set`` and web sweeps reach it like any parameter, and
    every policy of an experiment given the same value (and seed) sees the same jobs.

    ``apply(workload, value, seed)`` returns the transformed workload; it is not called when the
    value equals the parameter's default (the option is off).

    ``read_by``: the algorithms whose decisions read what the option adds (deadline_fraction only marks
    jobs with a deadline: only DBF looks at it, so EASY's schedule is the same at every share, as the
    DBF paper's Fig. 2 reports EASY/CBF per share only through the regular-job subset). None: the
    option changes the jobs themselves (drop_interactive), so every policy's schedule changes.
    """

    param: Param
    apply: Callable[[Any, Any, int], Any]
    read_by: frozenset[str] | None = None


#: Workload options by parameter name (registered by the families that introduce them).
WORKLOAD_OPTIONS: dict[str, WorkloadOption] = {}


def register_workload_option(option: WorkloadOption) -> None:
    WORKLOAD_OPTIONS[option.param.name] = option


def apply_workload_options(workload: Any, params: dict[str, Any], *, seed: int = 0) -> Any:
    """``workload`` after every workload option set in ``params`` (in registration order)."""
    load_families()
    for name, option in WORKLOAD_OPTIONS.items():
        value = params.get(name, option.param.default)
        if value != option.param.default:
            workload = option.apply(workload, value, seed)
    return workload


def schedule_depends_on(name: str, spec: Any) -> bool:
    """Whether policy ``spec``'s schedule can change with parameter ``name``: always for the policy's own
    parameters and for workload options that change the jobs; for an option only some algorithms read
    (``read_by``), only when the spec's algorithm is one of them (a plugin policy, whose code may read
    anything, always). Used to run a sweep only where the swept value can change the schedule."""
    load_families()
    option = WORKLOAD_OPTIONS.get(name)
    if option is None or option.read_by is None:
        return True
    preset = PRESETS.get(getattr(spec, "preset", ""))
    if preset is not None and preset.plugin:
        return True
    return getattr(spec, "algorithm", "") in option.read_by


#: Policy families, in the order forms show them: key -> heading.
FAMILIES: dict[str, str] = {
    "queue": "Queue order and backfilling",
    "formula": "Priority formulas from the literature",
    "plan": "Plan-based",
    "fairshare": "Fair-share and queues",
    "allocations": "Allocations",
    "deadlines": "Deadlines",
    "timesharing": "Time sharing",
    "recorded": "As recorded (the trace's own schedule)",
    "plugins": "Python plugins (installed on this server)",
}


@dataclass(frozen=True)
class Paper:
    """A paper a policy comes from (the text is in ../shared/papers/<file>)."""

    key: str
    citation: str
    file: str


#: The papers presets name (Preset.paper), by key.
PAPERS: dict[str, Paper] = {p.key: p for p in (
    Paper("paragon", "Suzuoka, Subhlok & Gross, Evaluating job scheduling techniques for highly parallel "
                     "computers, CMU-CS-95-149, 1995", "paragon-sorting-backfilling-timesharing.txt"),
    Paper("plan", "Zheng, Zhou, Yang, Lan & Wang, Exploring plan-based scheduling for large-scale computing "
                  "systems, IEEE CLUSTER 2016", "plan-based-simulated-annealing.txt"),
    Paper("metacentrum", "Klusáček, Tóth & Podolníková, Real-life experience with major reconfiguration of job "
                         "scheduling system, JSSPP 2015", "metacentrum-queues-multiresource-fairshare.txt"),
    Paper("sfs", "Steffen, A better way of scheduling jobs on HPC systems: Simultaneous Fair-Share, "
                 "HPCSYSPROS 2019", "simultaneous-fair-share.txt"),
    Paper("dbf", "N'Takpé & Suter, Don't hurry be happy: a deadline-based backfilling approach, JSSPP 2017",
          "deadline-based-backfilling.txt"),
)}


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    ordering: str
    algorithm: str
    overrides: dict[str, Any] = field(default_factory=dict)
    family: str = "queue"       # a FAMILIES key
    paper: str = ""             # a PAPERS key, "" for a textbook policy
    plugin: str = ""            # where a Python plugin's code came from (engine.policies.plugins), "" if built in

    def params(self) -> tuple[Param, ...]:
        return (ORDERINGS[self.ordering].params + ALGORITHMS[self.algorithm].params
                + tuple(option.param for option in WORKLOAD_OPTIONS.values()))

    def defaults(self) -> dict[str, Any]:
        values = {p.name: p.default for p in self.params()}
        values.update(self.overrides)
        return values


PRESETS: dict[str, Preset] = {p.name: p for p in (  # the core presets; families register more
    Preset("fcfs", "First come, first served: start jobs in submit order while the head fits (SSS).",
           "fcfs", "none", paper="paragon"),
    Preset("sjf", "Shortest requested time first, no backfilling.", "sjf", "none"),
    Preset("sorted", "Largest job first, unlimited skipping (Paragon paper §5.1).", "largest", "none",
           paper="paragon"),
    Preset("sorted-masc", "Largest job first, no job passed by more than MASC later arrivals (MASC 10).",
           "largest", "none", {"masc": 10}, paper="paragon"),
    Preset("easy", "FCFS with EASY backfilling: a reservation for the head job only.", "fcfs", "easy"),
    Preset("conservative", "FCFS with conservative backfilling: a reservation for every waiting job.",
           "fcfs", "conservative"),
    Preset("firstfit", "Any waiting job that fits starts, in submit order; no reservation.", "fcfs", "firstfit"),
    Preset("sorted-easy", "Largest job first with EASY backfilling (Paragon paper §5.2).", "largest", "easy",
           paper="paragon"),
)}


def register(preset: Preset) -> None:
    """Add a preset (policy families call this next to their ordering/algorithm)."""
    PRESETS[preset.name] = preset


_loaded = False


def load_families() -> None:
    """Import every policy family once, so their components and presets are registered."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in FAMILY_MODULES:
            importlib.import_module(module)


def catalog() -> list[dict[str, Any]]:
    """Every preset with its description, family, paper and parameter schema, JSON-able (for forms
    and --help). A parameter that is a workload option has ``"workload": True``."""
    load_families()
    result = []
    for preset in PRESETS.values():
        defaults = preset.defaults()
        params = []
        for param in preset.params():
            entry = param.to_dict()
            entry["default"] = Param(**{**param.__dict__, "default": defaults[param.name]}).to_dict()["default"]
            entry["workload"] = param.name in WORKLOAD_OPTIONS
            params.append(entry)
        paper = PAPERS.get(preset.paper)
        result.append({"name": preset.name, "description": preset.description,
                       "ordering": preset.ordering, "algorithm": preset.algorithm, "params": params,
                       "family": preset.family, "family_title": FAMILIES.get(preset.family, preset.family),
                       "paper": preset.paper, "paper_citation": paper.citation if paper else "",
                       "plugin": preset.plugin})
    return result


def workload_option_schemas() -> list[dict[str, Any]]:
    """The workload options' parameter schemas (one set for every policy of an experiment)."""
    load_families()
    return [option.param.to_dict() for option in WORKLOAD_OPTIONS.values()]


#: the keys of a policy object
POLICY_KEYS = frozenset({"preset", "ordering", "algorithm", "params"})


def resolve(spec: str | Mapping[str, Any] | PolicySpec) -> PolicySpec:
    """A preset name, a JSON string, ``{"preset": ..., "params": {...}}`` or
    ``{"ordering": ..., "algorithm": ..., "params": {...}}`` -> a validated PolicySpec."""
    load_families()
    if isinstance(spec, PolicySpec):
        spec = spec.to_dict()
    elif isinstance(spec, Mapping):
        spec = dict(spec)
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith("{"):
            try:
                spec = json.loads(text)
            except json.JSONDecodeError as exc:
                raise PolicyError(f"policy is not valid JSON: {exc.msg} at column {exc.colno}") from None
            except ValueError:      # a number of more than 4,300 digits (Python's limit on converting them)
                raise PolicyError("policy is not valid JSON: a number has more than 4300 digits") from None
            except RecursionError:
                raise PolicyError("policy is not valid JSON: nested too deeply") from None
        else:
            spec = {"preset": text}
    if not isinstance(spec, dict):
        raise PolicyError(f"a policy is a preset name or an object, got {type(spec).__name__}")
    stray = sorted(set(spec) - POLICY_KEYS)
    if stray:
        raise PolicyError(f"policy: unknown key {stray[0]!r} (keys: {', '.join(sorted(POLICY_KEYS))}; "
                          "parameters go under \"params\")")
    preset = _preset_of(spec)
    given = spec.get("params") or {}
    if not isinstance(given, dict):
        raise PolicyError("policy params must be an object of name: value")
    schema = {p.name: p for p in preset.params()}
    unknown = sorted(set(given) - set(schema))
    if unknown:
        known = ", ".join(schema) or "none"
        raise PolicyError(f"policy {preset.name}: unknown parameter {unknown[0]!r} (parameters: {known})")
    defaults = preset.defaults()
    values = dict(defaults)
    for name, value in given.items():
        values[name] = schema[name].coerce(value)
    # a preset's label names what differs from its defaults; a custom ordering x algorithm's names every
    # value, unless its ordering has a title (a formula: the formula, then what differs from the defaults)
    if preset.name in PRESETS:
        return PolicySpec(preset.name, preset.ordering, preset.algorithm, values, defaults)
    ordering = ORDERINGS[preset.ordering]
    if ordering.title is None:
        return PolicySpec(preset.name, preset.ordering, preset.algorithm, values)
    said = {**defaults, **{name: values[name] for name in ordering.titled}}
    return PolicySpec(preset.name, preset.ordering, preset.algorithm, values, said,
                      f"{ordering.title(values)}, {preset.algorithm}")


def _preset_of(spec: dict) -> Preset:
    if "preset" in spec and spec["preset"] not in (None, "custom"):
        name = str(spec["preset"])
        if name not in PRESETS:
            raise PolicyError(f"unknown policy {name!r}: choose from {', '.join(PRESETS)}")
        return PRESETS[name]
    ordering, algorithm = spec.get("ordering"), spec.get("algorithm")
    if not isinstance(ordering, str) or ordering not in ORDERINGS:
        raise PolicyError(f"unknown ordering {shown(ordering)}: choose from {', '.join(ORDERINGS)}")
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise PolicyError(f"unknown algorithm {shown(algorithm)}: choose from {', '.join(ALGORITHMS)}")
    return Preset("custom", f"{ORDERINGS[ordering].description} with {algorithm}", ordering, algorithm)


def simulation_class(spec: PolicySpec) -> type[Simulation]:
    """The Simulation (sub)class that runs ``spec``'s algorithm (see Component.simulation)."""
    load_families()
    return ALGORITHMS[spec.algorithm].simulation or Simulation


def replays(spec: PolicySpec) -> bool:
    """True for a run that replays a trace's recorded schedule (the ``recorded`` preset)."""
    return bool(getattr(simulation_class(spec), "replays", False))


def build_scheduler(spec: PolicySpec, sim: Any, *, seed: int = 0) -> Any:
    """The scheduler object the simulator drives for ``spec``: algorithm(sim, queue, params)."""
    load_families()
    params = {**spec.params, "seed": seed}
    queue = ORDERINGS[spec.ordering].factory(sim, params)
    kind = getattr(getattr(sim, "allocator", None), "kind", None)
    algorithm = MACHINE_ALGORITHMS.get((kind, spec.algorithm)) if kind else None
    return (algorithm or ALGORITHMS[spec.algorithm]).factory(sim, queue, params)
