"""The engine's layers, read from the source with ast: no import cycle among engine modules, and the
command line and the web application go through the public face (engine.api) only."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: what the command line and the web may import: the package (its __init__ re-exports the face) and the face
FACE = {"engine", "engine.api"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def engine_modules() -> dict[str, Path]:
    return {module_name(p): p for p in (ROOT / "engine").rglob("*.py")}


def imported(path: Path) -> Iterator[tuple[str, list[str], int]]:
    """(module, names, line) of every absolute import anywhere in the file, function bodies included."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, [a.name for a in node.names], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno


def targets(importer: str, module: str, names: list[str], modules: dict[str, Path]) -> set[str]:
    """The engine modules an import executes: the module (or the submodules it names) and the
    packages between it and the root (each package's __init__ runs first). Left out: the root's
    (it only re-exports the face) and the importer's own packages (already being imported)."""
    found = {f"{module}.{n}" for n in names if f"{module}.{n}" in modules}
    if module in modules and (not names or any(f"{module}.{n}" not in modules for n in names)):
        found.add(module)
    parents = set()
    for target in found:
        parts = target.split(".")
        parents.update(".".join(parts[:i]) for i in range(2, len(parts)))
    parents = {p for p in parents if not importer.startswith(p + ".")}
    return {t for t in found | parents if t in modules}


def import_graph() -> dict[str, set[str]]:
    modules = engine_modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for module, names, _ in imported(path):
            if module == "engine" or module.startswith("engine."):
                graph[name] |= targets(name, module, names, modules) - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_engine_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_simulator_knows_no_policy_registry_metrics_or_file_format():
    graph = import_graph()
    below = {m: deps for m, deps in graph.items() if m.startswith("engine.sim")}
    for module, deps in below.items():
        upward = {d for d in deps if d.startswith(("engine.policies", "engine.metrics", "engine.run", "engine.api"))
                  or d in ("engine.workload.metacentrum", "engine.workload.swf")}
        assert not upward, f"{module} imports {sorted(upward)}"


def face_users() -> list[Path]:
    paths = [p for p in (ROOT / "webapp").rglob("*.py") if "migrations" not in p.parts]
    return [*paths, ROOT / "engine" / "cli.py"]


def test_the_command_line_and_the_web_import_only_the_face():
    modules = engine_modules()
    wrong = []
    for path in face_users():
        for module, names, line in imported(path):
            if not (module == "engine" or module.startswith("engine.")):
                continue
            submodules = {n for n in names if f"{module}.{n}" in modules} - {"api"}
            if module not in FACE or submodules:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {module} {names}")
    assert wrong == []


def test_the_face_lists_only_names_it_has():
    import engine
    from engine import api

    assert [name for name in api.__all__ if not hasattr(api, name)] == []
    assert all(getattr(engine, name) is getattr(api, name) for name in api.__all__)
