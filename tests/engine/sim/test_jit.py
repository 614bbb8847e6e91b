"""Kernels are compiled at their first call: commands that call none never import numba."""

import subprocess
import sys
from pathlib import Path

from engine.sim.jit import Kernel, njit

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from engine.cli import main
main(["policies"])
main(["simulate", sys.argv[1] + "/tests/data/demo.swf", "--policy", "fcfs", "--out", sys.argv[2]])
print("numba" in sys.modules)
"""


def test_listing_policies_and_an_fcfs_run_do_not_import_numba(tmp_path):
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(tmp_path / "s.csv")], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    assert out[-1] == "False"


@njit(cache=False)
def _twice(x):
    return 2 * _plus_one(x) - 2


@njit(cache=False)
def _plus_one(x):
    return x + 1


def test_a_kernel_calling_a_kernel_compiles_both_at_the_first_call():
    assert isinstance(_twice, Kernel)
    assert _twice(20) == 40
    assert not isinstance(globals()["_plus_one"], Kernel)   # now numba's dispatcher
