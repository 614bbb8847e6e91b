"""Compiled kernels, compiled lazily: numba is imported when a kernel is first called, not when a
module that defines kernels is imported. Most commands never call one (FCFS, EASY, listing the
policies), and importing numba alone costs about half a second.

``@njit(cache=True)`` marks a kernel as numba's decorator would. At its first call the kernel
becomes a numba dispatcher, and so does every kernel its module's namespace names, so kernels can
call kernels (numba needs its callees compiled too). Without numba the kernels run as plain
Python: correct, only slower.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any
from collections.abc import Callable

from engine import numba_cache


class Kernel:
    """A function numba compiles at its first call (see the module docstring)."""

    def __init__(self, function: Callable[..., Any], options: dict[str, Any]) -> None:
        functools.update_wrapper(self, function)
        self.function, self.options = function, options
        self._compiled: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return (self._compiled or self.compiled())(*args, **kwargs)

    def compiled(self) -> Callable[..., Any]:
        """numba's dispatcher for this kernel (it compiles, or loads from numba's cache, per signature)."""
        if self._compiled is None:
            self._compiled = _numba_njit()(**self.options)(self.function)
            namespace = self.function.__globals__
            for name, value in list(namespace.items()):     # the kernels it may call, as dispatchers
                if isinstance(value, Kernel):
                    namespace[name] = value.compiled()
        return self._compiled


def njit(*args: Any, **options: Any) -> Any:
    """``@njit`` or ``@njit(cache=True, ...)``: a :class:`Kernel`, compiled by numba at its first call."""
    if args and callable(args[0]):
        return Kernel(args[0], options)
    return lambda function: Kernel(function, options)


@functools.lru_cache(maxsize=1)
def _numba_njit() -> Callable[..., Any]:
    numba_cache.configure()  # before numba reads its configuration
    try:
        return importlib.import_module("numba").njit
    except ImportError:  # pragma: no cover - numba is a dependency; this keeps the engine working
        return lambda **options: (lambda function: function)
