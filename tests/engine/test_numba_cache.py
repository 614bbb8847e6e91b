"""numba's cache folder follows the engine's whole source: a kernel whose callee changed in another
file is compiled again instead of loaded stale from the cache."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from engine import numba_cache

ROOT = Path(__file__).resolve().parents[2]


def test_the_folder_changes_with_any_engine_source_file(tmp_path, monkeypatch):
    copy = tmp_path / "engine"
    shutil.copytree(ROOT / "engine", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(numba_cache, "ENGINE", copy)
    before = numba_cache.cache_dir(str(tmp_path / "cache"))
    assert numba_cache.cache_dir(str(tmp_path / "cache")) == before          # stable for the same source
    callee = copy / "sim" / "fitindex.py"
    callee.write_text(callee.read_text() + "\n# an edit to a kernel's callee, not to the kernel's own file\n")
    after = numba_cache.cache_dir(str(tmp_path / "cache"))
    assert after != before and after.parent == before.parent


def test_a_child_keeps_its_parents_folder(tmp_path):
    folder = numba_cache.cache_dir(str(tmp_path))
    assert numba_cache.cache_dir(str(folder)) == folder                      # not nested once more


def test_numba_writes_its_cache_into_the_keyed_folder(tmp_path):
    child = ("import sys; sys.path.insert(0, sys.argv[1]); from engine.sim.jit import njit\n"
             "f = njit(cache=True)(lambda x: x + 1)\n"
             "def g(x):\n    return x + 1\n"
             "k = njit(cache=True)(g); assert k(1) == 2\n"
             "import os; print(os.environ['NUMBA_CACHE_DIR'])")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    script = tmp_path / "kernel.py"
    script.write_text(child)
    out = subprocess.run([sys.executable, str(script), str(ROOT)], env=env, check=True, capture_output=True,
                         text=True).stdout.strip()
    assert Path(out) == tmp_path / "numba" / numba_cache.source_key()
    assert any(Path(out).rglob("*.nbi"))                                     # numba's index landed there
