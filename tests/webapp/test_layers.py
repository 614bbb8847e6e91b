"""The web apps import downwards, read from the source with ast: no import cycle among webapp
modules (imports inside functions included) nor among its apps. Imports under
``if TYPE_CHECKING:`` are names for type hints only and are left out; management commands are entry
points (like webapp/run.py), so they may use any app and are left out of the apps' order."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.engine.test_layers import cycles

ROOT = Path(__file__).resolve().parents[2]


def webapp_modules() -> dict[str, Path]:
    modules = {}
    for path in (ROOT / "webapp").rglob("*.py"):
        if "migrations" in path.parts:
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def runtime_imports(path: Path) -> set[str]:
    """Absolute webapp modules the file imports at run time (function bodies included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                 and getattr(block.test, "id", getattr(block.test, "attr", None)) == "TYPE_CHECKING"
                 for statement in block.body for n in ast.walk(statement)}
    found = set()
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:   # relative: from .x import y
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found.update(f"{base}.{a.name}" for a in node.names)
            found.add(base)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {name for name in found if name.startswith("webapp")}


def graphs() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    modules = webapp_modules()
    by_module: dict[str, set[str]] = {m: set() for m in modules}
    by_app: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {t for t in runtime_imports(path) if t in modules and t != name}
        by_module[name] = targets
        app = name.split(".")[1] if name.count(".") else name
        if ".management.commands." in name:
            continue
        for target in targets:
            other = target.split(".")[1] if target.count(".") else target
            if other != app:
                by_app.setdefault(app, set()).add(other)
                by_app.setdefault(other, set())
    return by_module, by_app


def test_no_webapp_module_imports_itself_back():
    assert cycles(graphs()[0]) == []


def test_the_apps_import_downwards():
    assert cycles(graphs()[1]) == []
