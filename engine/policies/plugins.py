"""Python policies from outside the engine: found, imported and registered as presets of their own.

A plugin is a class, an :class:`~engine.policies.algorithm.Algorithm` (what starts when) or an
:class:`~engine.policies.ordering.Ordering` (the order of the waiting queue), the interfaces the
built-in policies implement (docs/policies.md). Each becomes a preset of the ``plugins`` family
named after the class (its ``name`` attribute), described by its docstring, so the command line,
the web picker and stored runs know it like any other. Where plugins come from:

- a file (``--policy-file my_policy.py``): every public policy class it defines, or those its
  ``POLICIES`` list names;
- a module (``--policy package.module:Name``), on the Python path;
- the packages the server's admin installed, through the entry-point group
  :data:`ENTRY_POINT_GROUP`, and a folder of files the server's settings name.

Importing a plugin runs its code: only the server's admin installs them, visitors never upload
one. A plugin that cannot be imported is one line naming its file, line and problem; one that
fails during a run fails that run with one line naming the file and line (:func:`failure_in_plugin`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from engine.policies.algorithm import Algorithm
from engine.policies.base import PLUGIN_GROUP, Param, PolicyError
from engine.policies.ordering import Ordering, ordering_component
from engine.policies.registry import (ALGORITHMS, ORDERINGS, PRESETS, WORKLOAD_OPTIONS, Component, Preset,
                                      load_families, register, register_algorithm, register_ordering)
from engine.sim.simulator import SimulationError

#: the entry-point group installed packages list their policies in (``[project.entry-points."schedlab.policies"]``)
ENTRY_POINT_GROUP = PLUGIN_GROUP
FAMILY = "plugins"
#: a plugin's preset name: what forms, ``--policy`` and stored runs spell
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")

#: the source files of the plugins loaded in this process (a failure in one is named by file and line)
PLUGIN_FILES: set[str] = set()


@dataclass(frozen=True)
class Source:
    """Where a registered plugin's code came from: what a run of it records (:func:`provenance`)."""

    origin: str            # the file as given, module:Class, or the entry point and its package
    file: str              # the Python file holding the class ("" if unknown)
    sha256: str            # of that file's bytes when it was loaded ("" if unknown)


#: registered plugins' sources, by component (ordering or algorithm) name
SOURCES: dict[str, Source] = {}


class PluginError(SimulationError):
    """A plugin's own code failed during a run (the message names its file and line)."""


@dataclass
class Loaded:
    """What a round of loading registered (preset names) and what it could not load (one line each)."""

    names: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def load_plugins(*, files: Iterable[str | Path] = (), modules: Iterable[str] = (),
                 directory: str | Path | None = None, entry_points: bool = False) -> Loaded:
    """Load plugins from ``files`` and ``modules`` ("module:Name" or "module"), every ``*.py`` of
    ``directory`` and, with ``entry_points``, the installed packages' :data:`ENTRY_POINT_GROUP`.
    A source that cannot be loaded is a line in ``problems``; the others load regardless."""
    loaded = Loaded()

    def attempt(load: Any, *args: Any) -> None:
        try:
            loaded.names.extend(load(*args))
        except PolicyError as error:
            loaded.problems.append(str(error))
    for path in files:
        attempt(load_file, path)
    for reference in modules:
        attempt(load_module, reference)
    if directory is not None:
        folder = Path(directory)
        if not folder.is_dir():
            loaded.problems.append(f"{folder}: the policy plugin folder does not exist")
        else:
            for path in sorted(folder.glob("*.py")):
                if not path.name.startswith("_"):
                    attempt(load_file, path)
    if entry_points:
        from importlib.metadata import entry_points as installed   # 25 ms: only when asked
        for point in installed(group=ENTRY_POINT_GROUP):
            attempt(load_entry_point, point)
    return loaded


def load_file(path: str | Path) -> list[str]:
    """Import the Python file ``path`` and register the policies it defines; their preset names."""
    path = Path(path)
    if not path.is_file():
        raise PolicyError(f"{path}: no such policy file")
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    module_name = f"schedlab_plugin_{digest}_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise PolicyError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module     # (dataclasses and typing look their module up there)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[module_name]
        raise PolicyError(import_problem(error, str(path))) from None
    return register_module(module, str(path))


def load_module(reference: str) -> list[str]:
    """Import ``module:Name`` (that class) or ``module`` (every policy it defines) and register them."""
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise PolicyError(import_problem(error, getattr(error, "filename", None) or module_name,
                                         prefix=f"policy {reference}: ")) from None
    if not attribute:
        return register_module(module, reference)
    policy = getattr(module, attribute, None)
    if policy is None:
        found = ", ".join(cls.__name__ for cls in policies_in(module)) or "none"
        raise PolicyError(f"policy {reference}: module {module_name} has no {attribute} (its policies: {found})")
    remember_file(module)
    return [register_plugin(policy, reference)]


def load_entry_point(point: Any) -> list[str]:
    """Register what an installed package's entry point names (a policy class, or a module of them)."""
    dist = getattr(point, "dist", None)
    origin = f"entry point {point.name} = {point.value}" + (f" ({dist.name} {dist.version})" if dist else "")
    try:
        target = point.load()
    except Exception as error:
        raise PolicyError(import_problem(error, point.value, prefix=f"{origin}: ")) from None
    if isinstance(target, ModuleType):
        return register_module(target, origin)
    remember_file(sys.modules.get(getattr(target, "__module__", ""), None))
    return [register_plugin(target, origin)]


def register_module(module: ModuleType, origin: str) -> list[str]:
    policies = policies_in(module)
    if not policies:
        raise PolicyError(f"{origin}: defines no policy (a class deriving from Algorithm or Ordering, "
                          "imported from engine.api)")
    remember_file(module)
    return [register_plugin(policy, origin) for policy in policies]


def policies_in(module: ModuleType) -> list[type]:
    """The policy classes of ``module``: those its ``POLICIES`` lists, else each public subclass of
    Algorithm or Ordering defined there (not imported), in the order of the file."""
    listed = getattr(module, "POLICIES", None)
    if listed is not None:
        return list(listed)
    return [value for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, (Algorithm, Ordering)) and not name.startswith("_")
            and value.__module__ == module.__name__]


def remember_file(module: ModuleType | None) -> None:
    source = getattr(module, "__file__", None)
    if source:
        PLUGIN_FILES.add(str(Path(source).resolve()))


def register_plugin(policy: Any, origin: str) -> str:
    """Register ``policy`` (an Algorithm or Ordering subclass) as a component and a preset of the
    plugins family; its preset name. Loading the same origin again replaces it; a name another
    policy has is refused."""
    load_families()
    if not (inspect.isclass(policy) and issubclass(policy, (Algorithm, Ordering))):
        raise PolicyError(f"{origin}: {policy!r} is not a policy (a class deriving from Algorithm or Ordering)")
    name = policy.name or policy.__name__.lower()
    if not NAME.fullmatch(name):
        raise PolicyError(f"{origin}: policy name {name!r}: use 1-64 lower-case letters, digits, - and _")
    taken = PRESETS.get(name)
    ours = taken is not None and taken.plugin == origin
    if taken is not None and not ours:
        raise PolicyError(f"{origin}: policy name {name!r} is taken by "
                          f"{'the plugin ' + taken.plugin if taken.plugin else 'a built-in policy'}; "
                          "give the class another name attribute")
    description = " ".join((inspect.getdoc(policy) or f"{policy.__name__} (its class has no docstring)").split())
    summary = description.split(". ")[0].rstrip(".")
    bad = [p for p in policy.parameters if not isinstance(p, Param)]
    if bad:
        raise PolicyError(f"{origin}: {policy.__name__}.parameters holds {bad[0]!r}, not a Param")
    if issubclass(policy, Algorithm):
        if name in ALGORITHMS and not ours:
            raise PolicyError(f"{origin}: algorithm name {name!r} is taken by a built-in algorithm")
        if policy.ordering not in ORDERINGS:
            raise PolicyError(f"{origin}: {policy.__name__}.ordering: unknown ordering {policy.ordering!r} "
                              f"(orderings: {', '.join(ORDERINGS)})")
        component, preset = Component(name, policy, policy.parameters, summary), (policy.ordering, name)
    else:
        if name in ORDERINGS and not ours:
            raise PolicyError(f"{origin}: ordering name {name!r} is taken by a built-in ordering")
        if policy.algorithm not in ALGORITHMS:
            raise PolicyError(f"{origin}: {policy.__name__}.algorithm: unknown algorithm {policy.algorithm!r} "
                              f"(algorithms: {', '.join(ALGORITHMS)})")
        component, preset = ordering_component(policy, name, summary), (name, policy.algorithm)
    other = ORDERINGS[preset[0]].params if issubclass(policy, Algorithm) else ALGORITHMS[preset[1]].params
    clash = {p.name for p in policy.parameters} & ({p.name for p in other} | set(WORKLOAD_OPTIONS))
    if clash:
        raise PolicyError(f"{origin}: parameter {sorted(clash)[0]!r} is taken by its "
                          f"{'ordering' if issubclass(policy, Algorithm) else 'algorithm'} or a workload option")
    (register_algorithm if issubclass(policy, Algorithm) else register_ordering)(component)
    register(Preset(name, description, preset[0], preset[1], family=FAMILY, plugin=origin))
    SOURCES[name] = source_of(policy, origin)
    return name


def source_of(policy: type, origin: str) -> Source:
    file = getattr(sys.modules.get(policy.__module__), "__file__", None) or ""
    try:
        digest = hashlib.sha256(Path(file).read_bytes()).hexdigest() if file else ""
    except OSError:
        digest = ""
    return Source(origin, file, digest)


def provenance(ordering: str, algorithm: str) -> list[dict[str, str]]:
    """The plugins a policy of ``ordering`` x ``algorithm`` runs (none for a built-in one): each
    one's name, origin, file and the sha256 of its code, for the run's record."""
    return [{"name": name, "origin": source.origin, "file": source.file, "sha256": source.sha256}
            for name in dict.fromkeys((ordering, algorithm)) if (source := SOURCES.get(name)) is not None]


def import_problem(error: BaseException, where: str, *, prefix: str = "") -> str:
    """One line for a plugin that failed to import: the file and line in it, and the error."""
    if isinstance(error, SyntaxError) and error.lineno is not None:
        return f"{prefix}{error.filename or where}, line {error.lineno}: SyntaxError: {error.msg}"
    frame = last_frame_in(error, {str(Path(where).resolve())} if where.endswith(".py") else None)
    if frame is None or frame.filename.startswith("<") or frame.filename in (__file__, importlib.__file__):
        frame = None
    at = f"{frame.filename}, line {frame.lineno}" if frame is not None else where
    return f"{prefix}{at}: {describe(error)}"


def failure_in_plugin(error: BaseException) -> PluginError | None:
    """A plugin's failure during a run as one line naming its file, line and function; None when
    the error did not come from a plugin's code."""
    frame = last_frame_in(error, PLUGIN_FILES)
    if frame is None:
        return None
    return PluginError(f"policy plugin {frame.filename}, line {frame.lineno}, in {frame.name}: {describe(error)}")


def last_frame_in(error: BaseException, files: set[str] | None) -> traceback.FrameSummary | None:
    """The innermost frame of ``error``'s traceback in one of ``files`` (None: in any file)."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if files is None or str(Path(f.filename).resolve()) in files]
    return inside[-1] if inside else None


def describe(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
