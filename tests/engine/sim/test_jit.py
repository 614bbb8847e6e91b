"""Kernels are compiled at their first call: commands that call none never import numba."""

import subprocess
import sys
from pathlib import Path

import numpy as np

from engine import jit
from engine.sim.jit import Kernel, borrowed, move, njit

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


KERNELS = '''
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from engine.sim.jit import njit


@njit(cache=True)
def ramp(n):
    out = np.empty(n, dtype=np.int64)   # an array: the loaded code needs numba's runtime (NRT)
    for i in range(n):
        out[i] = double(i)
    return out


@njit(cache=True)
def double(x):
    return 2 * x


total = int(ramp(1000).sum())
hits = sum(ramp.stats.cache_hits.values())   # (ramp is now numba's dispatcher)
registries = "numba.np.linalg" in sys.modules
if sys.argv[2] == "then-compile":            # a new signature after a light load: numba's compiler, set up fully
    assert double(1.5) == 3.0 and int(ramp(10).sum()) == 90
print(total, hits, registries)
'''


def test_a_cached_kernel_loads_without_numbas_compiler_set_up(tmp_path):
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}

    def child(then: str = "") -> list[str]:
        return subprocess.run([sys.executable, str(script), str(ROOT), then], env=env, check=True,
                              capture_output=True, text=True).stdout.split()

    compiled, loaded, loaded_then_compiled = child(), child(), child("then-compile")
    assert compiled == [str(999 * 1000), "0", "True"]     # compiled: numba set its compiler up
    assert loaded == [str(999 * 1000), "1", "False"]      # loaded from the cache: none of the registries
    assert loaded_then_compiled == loaded


@njit(cache=False)
def _shifted(values, dst, src, count):
    move(values, dst, src, count)
    return values


def test_move_copies_overlapping_ranges_as_memmove_compiled_and_in_python():
    for dst, src, count in [(3, 1, 6), (1, 3, 6), (0, 0, 9), (2, 5, 0), (0, 4, 5), (4, 0, 5)]:
        expected = np.arange(10, dtype=np.int64)
        expected[dst:dst + count] = np.arange(10)[src:src + count]
        assert _shifted(np.arange(10, dtype=np.int64), dst, src, count).tolist() == expected.tolist()
        plain = np.arange(10, dtype=np.int64)
        jit.move.function(plain, dst, src, count)     # the plain Python form
        assert plain.tolist() == expected.tolist()


@njit(cache=False)
def _through_borrowed(rows, column):
    """Writes through unowned views of a 2-D array and of a strided 1-D one, and through their slices."""
    lent_rows, lent_column = borrowed(rows), borrowed(column)
    tail = lent_rows[1:]
    for i in range(tail.shape[0]):
        for j in range(tail.shape[1]):
            tail[i, j] = 10 * i + j
    part = lent_column[2:]
    for i in range(part.shape[0]):
        part[i] = -i
    return lent_rows.shape[0] * 100 + lent_column.shape[0]


def test_a_borrowed_array_is_the_same_data_shape_and_strides():
    rows, column = np.zeros((3, 4), dtype=np.int64), np.zeros(12, dtype=np.int64)
    assert _through_borrowed(rows, column[::2]) == 306
    assert rows.tolist() == [[0, 0, 0, 0], [0, 1, 2, 3], [10, 11, 12, 13]]
    assert column.tolist() == [0, 0, 0, 0, 0, 0, -1, 0, -2, 0, -3, 0]
    assert jit.borrowed.function(rows) is rows      # the plain Python form: the array itself


@njit(cache=False)
def _fill(values, value):
    for i in range(values.shape[0]):
        values[i] = value
    return values.shape[0]


class _Owner:
    kernel = None


def test_a_kernel_bound_direct_goes_through_numba_once_then_calls_its_entry_point():
    from engine.jit import bind_direct, direct

    owner = _Owner()
    bind_direct(owner, "kernel", _fill)
    first = owner.kernel
    values = np.zeros(4, dtype=np.int64)
    assert owner.kernel(values, 3) == 4 and values.tolist() == [3] * 4
    assert owner.kernel is not first            # rebound after the first call
    assert owner.kernel(values, 5) == 4 and values.tolist() == [5] * 4
    dispatcher = jit.compiled(_fill)
    if getattr(dispatcher, "overloads", None):  # numba (not NUMBA_DISABLE_JIT): the machine code's entry
        assert owner.kernel is not dispatcher and owner.kernel is direct(dispatcher)
    assert direct(len) is len                   # no numba dispatcher: as it is
