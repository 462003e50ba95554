"""Elementwise math written once: a scalar expression IR, rendered to numpy and to CUDA C.

The expression IR (node classes, builders, ``bind``, ``compose`` for fusion and the other tree
utilities) lives in the dialect, :mod:`tdflow.dialect.formula.expr`, because an op's
``formula`` field is parsed into it; its element-type rules live in
:mod:`tdflow.dialect.formula.types`. Both are re-exported here unchanged, so
``from tdflow.lowering.elementwise import Input`` keeps working:

>>> from tdflow.lowering.elementwise import Input, render_cuda, where
>>> x = Input(0)
>>> render_cuda(where(x > 0, x, x * 2.0), ["f32"])
'((x0 > 0.0f) ? x0 : (x0 * 2.0f))'

Renderers
    * :func:`render_numpy` (``lowering/elementwise_numpy.py``) walks a tree once into a chain of
      ufunc calls writing into reused scratch buffers and the caller's ``out``; no text is
      generated or evaluated.
    * :func:`render_cuda` (``lowering/elementwise_cuda.py``) returns a C expression string for a
      CUDA kernel body (``__expf``, ``tanhf``, ``erff``, ``fmaxf``... chosen by dtype; ``f16``
      computes in ``float``).

``ELEMENTWISE_OPS`` (``lowering/elementwise_ops.py``, re-exported here) maps each elementwise op
of the standard library to its :class:`~tdflow.lowering.elementwise_ops.ElementwiseDef`, derived
from the op's ``formula``.
"""

from __future__ import annotations

from tdflow.dialect.formula.expr import (  # noqa: F401 - re-exported (the IR moved to the dialect)
    ARITH_BINARY_OPS,
    BINARY_OPS,
    CAST_DTYPES,
    COMPARE_OPS,
    FLOAT_UNARY_OPS,
    LOGICAL_BINARY_OPS,
    UNARY_OPS,
    Attr,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Scalar,
    Select,
    Unary,
    __all__,
    abs_,
    arity,
    as_expr,
    attrs_used,
    bind,
    cast,
    ceil,
    compose,
    dedup_inputs,
    eq,
    erf,
    exp,
    expr_depth,
    floor,
    fold_constants,
    ge,
    gt,
    inputs_used,
    le,
    log,
    logical_and,
    logical_not,
    logical_or,
    lt,
    maximum,
    minimum,
    mod,
    ne,
    power,
    remap_inputs,
    rsqrt,
    sigmoid,
    sqrt,
    tanh,
    transform,
    walk,
    where,
)

_TYPE_NAMES = ("compute_dtype", "infer_dtypes", "operand_dtype", "promote")


def __getattr__(name: str):  # renderers and types live in their own modules (PEP 562 re-export)
    if name in _TYPE_NAMES:
        from tdflow.lowering import elementwise_types

        return getattr(elementwise_types, name)
    if name in ("render_numpy", "NumpyProgram"):
        from tdflow.lowering import elementwise_numpy

        return getattr(elementwise_numpy, name)
    if name in ("ELEMENTWISE_OPS", "ElementwiseDef"):
        from tdflow.lowering import elementwise_ops

        return getattr(elementwise_ops, name)
    if name == "render_cuda":
        from tdflow.lowering import elementwise_cuda

        return elementwise_cuda.render_cuda
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


