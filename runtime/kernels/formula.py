"""CPU kernels derived from an op's ``formula`` (its ``.td`` record): every formula op of the
standard library (elementwise arithmetic, math functions, activations and their gradients) and a
user's formula-only op.

Each kernel renders its formula with :func:`~tdflow.lowering.elementwise_numpy.render_numpy` on first
use for a given (input dtypes, attribute values) and caches the program; later calls cost one
dict lookup plus the ufunc calls. Output 0 may be input 0's buffer (``inplace={0: 0}``).

>>> import numpy as np
>>> from tdflow.runtime.kernels.registry import select_kernel
>>> k = select_kernel("tdflow.leaky_relu", "cpu", ("f32",), {"alpha": 0.5})
>>> k({"alpha": 0.5}, [np.array([-2.0, 3.0], np.float32)])[0].tolist()
[-1.0, 3.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.dialect.formula.types import default_out_dtype
from tdflow.dialect.types import dtype_from_numpy
from tdflow.lowering.elementwise_numpy import NumpyProgram, render_numpy
from tdflow.lowering.elementwise_ops import (
    ELEMENTWISE_OPS,
    ElementwiseDef,
    elementwise_def,
)
from tdflow.runtime.kernels.registry import (
    KernelFn,
    input_dtype_in,
    kernel_table,
    register_generated,
    register_kernel,
    same_dtype,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tdflow.dialect.opdef import OpDef


def _mlir(dt: np.dtype) -> str:
    return dtype_from_numpy(dt)


def build_program(d: ElementwiseDef, in_dtypes: Sequence[str], attrs: Mapping[str, Any],
                  out_dtype: str | None = None, result: int = 0) -> NumpyProgram:
    """The numpy program of result ``result`` of ``d`` for these input dtypes and attribute
    values (into ``out_dtype``, by default the type the formula computes)."""
    expr = d.bind(attrs, result)
    return render_numpy(expr, in_dtypes, out_dtype or default_out_dtype(expr, in_dtypes))


def make_elementwise_kernel(d: ElementwiseDef) -> KernelFn:
    """A kernel function for ``d`` that caches programs by dtypes and attribute values; one
    program per result (an op with several results computes each from the same inputs)."""
    cache: dict[Any, Any] = {}
    has_attrs = bool(d.attrs)

    def fn(attrs: Mapping[str, Any], inputs: Sequence[np.ndarray],
           outs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        if len(inputs) == 1:
            key: Any = inputs[0].dtype
        else:
            key = tuple(a.dtype for a in inputs)
        key = (key, tuple(None if o is None else o.dtype for o in outs))
        if has_attrs:
            key = (key, d.attr_key(attrs))
        runs = cache.get(key)
        if runs is None:
            dts = [_mlir(a.dtype) for a in inputs]
            runs = cache[key] = [build_program(d, dts, attrs, None if o is None else _mlir(o.dtype),
                                               i).run for i, o in enumerate(outs)]
        return [run(inputs, o) for run, o in zip(runs, outs)]

    fn.__doc__ = f"{d.name}: {d.summary or d.expr!r}"
    return fn


def _register(d: ElementwiseDef, priority: int) -> None:
    preds = [same_dtype(*d.same_dtype_inputs)] if d.same_dtype_inputs else []
    preds += [input_dtype_in(i, dts) for i, dts in sorted(d.input_dtypes.items())]
    match = None
    for p in preds:
        match = p if match is None else match & p
    n = len(d.exprs)
    # Several results are computed one after another from the inputs: none may overwrite one.
    register_kernel(d.name, "cpu", dtypes=d.dtypes, match=match,
                    inplace={0: 0} if n == 1 else None, num_outputs=n,
                    elementwise=d, priority=priority)(make_elementwise_kernel(d))


def register_formula_kernel(opdef: OpDef) -> bool:
    """Give an op with a ``formula`` its CPU kernel, derived from the formula (every dtype the
    formula admits), unless it has one; True when it has one afterwards. Idempotent.

    This is how a user's formula-only op runs with no Python: compiling a program and calling
    an op eagerly call it for the ops they use.
    """
    d = elementwise_def(opdef)
    if d is None:
        return False
    if not kernel_table("cpu").candidates(opdef.name):
        # Below a hand-written kernel of the op (priority 0), which wins if one is added.
        _register(d, -1)
    register_generated(opdef.name, opdef)  # and its generated CUDA C on the GPU devices
    return True


def register_formula_kernels(ops: Iterable[OpDef]) -> None:
    """:func:`register_formula_kernel` for every op with a formula in a dialect or context."""
    for op in ops:
        if op.formula is not None:
            register_formula_kernel(op)


# The standard library's, when the kernels load.
for _d in ELEMENTWISE_OPS.values():
    _register(_d, 0)
