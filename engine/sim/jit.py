"""The engine's lazily compiled kernels live in :mod:`engine.jit` (a top-level module, so that the
workload readers below the simulator can have kernels too); this name stays for the simulator's
and the policies' imports."""

from engine.jit import Kernel, bind_direct, borrowed, compiled, direct, move, native, njit

__all__ = ["Kernel", "bind_direct", "borrowed", "compiled", "direct", "move", "native", "njit"]
