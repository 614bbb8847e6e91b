"""Compiled kernels, compiled lazily: numba is imported when a kernel is first called, not when a
module that defines kernels is imported. Most commands never call one (FCFS, EASY, listing the
policies), and importing numba alone costs about half a second.

``@njit(cache=True)`` marks a kernel as numba's decorator would. At its first call the kernel
becomes a numba dispatcher, and so does every kernel its module's namespace names, so kernels can
call kernels (numba needs its callees compiled too). Without numba the kernels run as plain
Python: correct, only slower.

A kernel found in numba's disk cache is loaded without numba's compiler set-up (see
:func:`_load_cached_lightly`): a fresh process's first simulate paid about 0.3 s of CPU for it.
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
            numba_njit, runtime = _numba()
            self._compiled = numba_njit(**self.options)(self.function)
            _load_cached_lightly(self._compiled, runtime)
            namespace = self.function.__globals__
            for name, value in list(namespace.items()):     # the kernels it may call, as dispatchers
                if isinstance(value, Kernel):
                    namespace[name] = value.compiled()
        return self._compiled


class Native(Kernel):
    """A kernel whose compiled form is written against numba's internals (an LLVM intrinsic such as
    memmove) in a module of its own, ``target`` ("module:name"), imported only when numba compiles;
    without numba, or with NUMBA_DISABLE_JIT, the plain Python function runs (the same result)."""

    def __init__(self, function: Callable[..., Any], target: str) -> None:
        super().__init__(function, {})
        self.target = target

    def compiled(self) -> Callable[..., Any]:
        if self._compiled is None:
            _, runtime = _numba()
            if runtime is None or importlib.import_module("numba").config.DISABLE_JIT:
                self._compiled = self.function
            else:
                module, name = self.target.split(":")
                self._compiled = getattr(importlib.import_module(module), name)
        return self._compiled


def compiled(kernel: Any) -> Callable[..., Any]:
    """What ``kernel`` runs as, to be called directly where the call is hot (no Python frame of
    :meth:`Kernel.__call__` between): its numba dispatcher, compiled or loaded at this call. A name
    imported from a kernels' module may already be a dispatcher (see :meth:`Kernel.compiled`): it is
    returned as it is."""
    return kernel.compiled() if isinstance(kernel, Kernel) else kernel


def direct(dispatcher: Any) -> Callable[..., Any]:
    """A dispatcher's one compiled signature, called without numba's dispatch: its machine code's
    Python entry point. numba types every argument of every call to choose a signature; for a kernel
    of some thirty array arguments called at every event that is about a microsecond a call, as long
    as the kernel itself. Only for call sites whose argument types never change (arrays made once
    with fixed dtypes, Python ints): the entry point converts what it is given to its signature's
    types, it does not compile another. A dispatcher with no or several signatures, or a plain
    function (numba missing, NUMBA_DISABLE_JIT), is returned as it is."""
    overloads = getattr(dispatcher, "overloads", None)
    if not overloads or len(overloads) != 1:
        return dispatcher
    entry = getattr(next(iter(overloads.values())), "entry_point", None)
    return entry if callable(entry) else dispatcher


def bind_direct(owner: Any, name: str, kernel: Any) -> None:
    """Set ``owner.<name>`` to call ``kernel``: through numba's dispatcher the first time (numba is
    imported then, and the kernel compiled or loaded, as at a Kernel's first call), then directly
    (:func:`direct`; the same call-site rules apply)."""

    def first_call(*args: Any) -> Any:
        dispatcher = compiled(kernel)
        result = dispatcher(*args)
        setattr(owner, name, direct(dispatcher))
        return result

    setattr(owner, name, first_call)


def native(target: str) -> Callable[[Callable[..., Any]], Native]:
    """``@native("module:name")``: a :class:`Native` kernel (see there)."""
    return lambda function: Native(function, target)


def njit(*args: Any, **options: Any) -> Any:
    """``@njit`` or ``@njit(cache=True, ...)``: a :class:`Kernel`, compiled by numba at its first call."""
    if args and callable(args[0]):
        return Kernel(args[0], options)
    return lambda function: Kernel(function, options)


@functools.lru_cache(maxsize=1)
def _numba() -> tuple[Callable[..., Any], Any]:
    """numba's njit and its runtime (NRT), or a decorator that leaves the function as it is and None."""
    numba_cache.configure()  # before numba reads its configuration
    try:
        numba = importlib.import_module("numba")
    except ImportError:  # pragma: no cover - numba is a dependency; this keeps the engine working
        return (lambda **options: (lambda function: function)), None
    try:
        runtime = importlib.import_module("numba.core.runtime.nrt").rtsys
    except (ImportError, AttributeError):  # pragma: no cover - another numba: its own cache loading
        runtime = None
    return numba.njit, runtime


def _load_cached_lightly(dispatcher: Any, runtime: Any) -> None:
    """Have ``dispatcher`` load a kernel from numba's disk cache without setting up the compiler.

    numba's ``Cache.load_overload`` first refreshes the CPU target: it imports and registers every
    typing and lowering registry numba has (unicode, linalg, random, typed containers: about 0.3 s
    of CPU, more than HPC2N-2002's whole EASY loop) although loaded machine code needs none of
    them, only the runtime (NRT) its arrays are allocated with. Here the load initialises the
    runtime alone. A cache miss still compiles as before: numba's compiler refreshes the target
    itself. A numba without these internals keeps its own loading."""
    cache: Any = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "_load_overload", None)
    guard = getattr(cache, "_guard_against_spurious_io_errors", None)
    if runtime is None or load is None or guard is None or not hasattr(runtime, "initialize"):
        return

    def load_overload(sig: Any, target_context: Any) -> Any:
        runtime.initialize(target_context)
        with guard():
            return load(sig, target_context)
        return None     # (a guard that swallowed an error: not found, as numba's own)

    cache.load_overload = load_overload


@native("engine.native:move")
def move(array: Any, dst: int, src: int, count: int) -> None:
    """``array[dst:dst + count] = array[src:src + count]`` for a contiguous 1-D array, the two ranges
    possibly overlapping (numpy copies overlapping ranges as memmove does); compiled, LLVM's memmove
    (some ten times faster than a loop, which numba leaves scalar)."""
    if count > 0:
        array[dst:dst + count] = array[src:src + count]


@native("engine.native:borrowed")
def borrowed(array: Any) -> Any:
    """``array``, unowned: compiled, the same data, shape and strides with no reference count, so that
    numba's atomic increments and decrements of it and of every view and argument made from it cost
    nothing (RICC-2010 conservative: ~50 M profile moves, several array arguments and views each;
    perf put a fifth of the samples on the atomic instructions, the run was 0.7 s faster without
    them). Only while something else holds ``array`` and the kernel never replaces it: a caller's
    own argument, for the length of the call."""
    return array
