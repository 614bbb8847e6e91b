"""The command line imports only what a command uses: engine.api loads each name's module at its
first use (engine.api._LAZY), and ``simulate`` on one pool of processors never loads the
dashboards' metrics, configuration inference, machine descriptions (YAML) or the accounting readers."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from engine import api

ROOT = Path(__file__).resolve().parents[2]
#: modules a plain simulate command has no use for (each costs start-up time)
NOT_FOR_SIMULATE = ("yaml", "engine.platform.infer", "engine.platform.machines", "engine.platform.queues",
                    "engine.sim.nodes", "engine.metrics.timeseries", "engine.metrics.changes", "engine.metrics.diff",
                    "engine.metrics.fidelity", "engine.metrics.groups", "engine.workload.pbs",
                    "engine.workload.slurm", "engine.workload.export")


def loaded_after(code: str) -> list[str]:
    """Which of NOT_FOR_SIMULATE a fresh interpreter has loaded after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {list(NOT_FOR_SIMULATE)!r} if m in sys.modules]))"
    child = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(child.stdout.strip().splitlines()[-1])


def test_importing_the_command_line_loads_none_of_them():
    assert loaded_after("import engine.cli") == []


def test_a_simulate_command_loads_none_of_them(tmp_path):
    # (fcfs: EASY's compiled index loads numba, which imports yaml itself)
    code = (f"from engine.cli import main\nassert main(['simulate', 'tests/data/demo.swf', '--policy', 'fcfs', "
            f"'--out', {str(tmp_path / 's.csv')!r}, '--summary', {str(tmp_path / 's.json')!r}]) == 0")

    assert loaded_after(code) == []


def test_a_simulate_command_without_its_parse_cache_loads_no_cache_module(tmp_path):
    code = (f"from engine.cli import main\nassert main(['simulate', 'tests/data/demo.swf', '--policy', 'fcfs', "
            f"'--no-parse-cache', '--out', {str(tmp_path / 's.csv')!r}])== 0\n"
            "import sys\nassert 'engine.workload.cache' not in sys.modules")
    assert loaded_after(code) == []


def test_a_name_of_the_face_loads_its_module_at_first_use():
    assert loaded_after("from engine import api\napi.busy_processors") == ["engine.metrics.timeseries"]
    assert loaded_after("import engine\nengine.read_machines") == ["yaml", "engine.platform.machines"]


def type_checking_imports() -> dict[str, tuple[str, str]]:
    """{name: (module, name there)} of the imports under ``if TYPE_CHECKING:`` in engine/api.py."""
    tree = ast.parse((ROOT / "engine" / "api.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    return {alias.asname or alias.name: (node.module or "", alias.name)
            for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}


def test_what_mypy_reads_is_what_loads():
    assert type_checking_imports() == api._LAZY


def test_every_name_of_the_face_loads():
    assert all(getattr(api, name) is not None for name in api.__all__)
    assert set(api._LAZY) <= set(api.__all__)
