"""Compiled forms of :class:`engine.jit.Native` kernels, written against numba's internals.

Imported only when numba compiles a kernel that calls one (engine.jit), never without numba.
"""

from __future__ import annotations

from typing import Any

from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def _memmove(typingctx: Any, array: Any, dst: Any, src: Any, count: Any) -> Any:
    """LLVM's memmove of ``count`` items of a contiguous array, from item ``src`` to item ``dst``."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array_type = signature.args[0]
        data = context.make_array(array_type)(context, builder, args[0]).data
        itemsize = context.get_abi_sizeof(context.get_data_type(array_type.dtype))
        cgutils.raw_memmove(builder, builder.gep(data, [args[1]]), builder.gep(data, [args[2]]), args[3], itemsize)
        return context.get_dummy_value()

    return types.void(array, types.intp, types.intp, types.intp), codegen


@njit(cache=True)
def move(array, dst, src, count):  # type: ignore[no-untyped-def]
    """array[dst:dst + count] = array[src:src + count], the two ranges may overlap (see engine.jit.move).
    Nothing to do when dst == src: the profile's add asks for such shifts of its tail or middle whenever
    its step count does not change (most moved reservations), and the call alone cost as much as a short copy."""
    if count > 0 and dst != src:
        _memmove(array, dst, src, count)


@intrinsic
def _unowned(typingctx: Any, array: Any) -> Any:
    """The same array with no owner (a null meminfo): numba counts no references to it."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array_type = signature.args[0]
        source = context.make_array(array_type)(context, builder, args[0])
        view = context.make_array(array_type)(context, builder)
        context.populate_array(view, data=source.data, shape=source.shape, strides=source.strides,
                               itemsize=source.itemsize, meminfo=None)
        return view._getvalue()

    return array(array), codegen


@njit(cache=True)
def borrowed(array):  # type: ignore[no-untyped-def]
    """See engine.jit.borrowed."""
    return _unowned(array)
